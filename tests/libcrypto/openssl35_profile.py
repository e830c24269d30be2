#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""OpenSSL 3.5's ML-KEM in the CPU profile (Debian 13's own openssl, fetched by fetch.sh, run
through its glibc's loader): `openssl speed -kem-algorithms ML-KEM-768` under cryptrace, whose
libcrypto is stripped of ml_kem.c's names: the profile names its code ML-KEM (by q = 3329 beside
its Barrett multiplier 5039, and the helpers only it calls) in the public-key group, most of the
samples, with the SHAKE (Keccak) code it hashes with named SHA-3. (That Debian 12's OpenSSL 3.0,
which has no ML-KEM, has no function named so is the profile suite's check.)"""
import ctlib
import osslver
from ctlib import check


def test():
    t = osslver.tree("3.5")
    p, doc = osslver.traced(t, ["speed", "-seconds", "1", "-kem-algorithms", "ML-KEM-768"],
                            "mlkem", CRYPTRACE_PROFILE_HZ="1000")
    why = ctlib.profile_refused(doc)
    if why:
        ctlib.skip(f"this machine takes no CPU profile: {why}")
    procs = [pr for pr in doc["processes"] if (pr.get("profile") or {}).get("samples")]
    check(procs, "3.5 speed ML-KEM-768: a profile was taken")
    prof = max(procs, key=lambda pr: pr["profile"]["samples"])["profile"]
    cats = {}
    for i in prof["items"]:
        cats[i["category"]] = cats.get(i["category"], 0) + i["samples"]
    print(f"ML-KEM-768: {prof['samples']} samples; by category {cats}")
    check(cats.get("ML-KEM", 0) >= 0.3 * prof["samples"],
          f"3.5's ML-KEM code is named: {cats.get('ML-KEM', 0)} of {prof['samples']} samples")
    check(all(i["group"] == "public key" for i in prof["items"] if i["category"] == "ML-KEM"),
          "ML-KEM is in the public-key group")
    check(cats.get("SHA-3", 0) > 0, "its SHAKE hashing is named SHA-3 (Keccak's round constants)")


ctlib.main(test)
