#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""software-aes for GnuTLS: wget fetching 4 MiB over TLS 1.3 (AES-256-GCM) from s_server on
loopback, with GnuTLS's and nettle's CPU-feature overrides in its environment:
  - none: gnutls:aesni, no software-aes;
  - GNUTLS_CPUID_OVERRIDE=0x1 (GnuTLS's own x86 code off): nettle:aesni, nettle's fat build still
    runs AES-NI: no software-aes;
  - GNUTLS_CPUID_OVERRIDE=0x1 NETTLE_FAT_OVERRIDE=vendor:intel (nettle without AES-NI too):
    nettle:generic, one software-aes warning naming the path, both variables and their fix;
  - GNUTLS_CPUID_OVERRIDE=0x4 (SSSE3 only): gnutls:ssse3 (vector-permute AES), one software-aes.
The CPU profile confirms each name from the instructions that ran (AES-NI, tables, vpaes).
x86-64 with AES only (elsewhere GnuTLS has no x86 code to turn off)."""
import os
import platform

import ctlib
from ctlib import check, daemons
from lib_gnutls import CASES, WWW_HEADER, WWWServer, need_clients

RUNS = [
    ({}, "gnutls:aesni", False, "AES-NI"),
    ({"GNUTLS_CPUID_OVERRIDE": "0x1"}, "nettle:aesni", False, "AES-NI"),
    ({"GNUTLS_CPUID_OVERRIDE": "0x1", "NETTLE_FAT_OVERRIDE": "vendor:intel"}, "nettle:generic", True,
     "tables"),
    ({"GNUTLS_CPUID_OVERRIDE": "0x4"}, "gnutls:ssse3", True, "vpaes"),
]


def test():
    wget, _, openssl = need_clients()
    if platform.machine() != "x86_64" or not ctlib.cpu_has_aes():
        ctlib.skip("needs an x86-64 CPU with AES instructions (GnuTLS's x86 code and its override)")
    tmp = ctlib.tmpdir("gnutls-swaes")
    key, cert = ctlib.throwaway_cert(tmp)
    src = os.path.join(tmp, "f.bin")
    daemons.random_file(src, 4 * ctlib.MIB)
    for env_extra, impl, software, profile_impl in RUNS:
        tag = " ".join(f"{k}={v}" for k, v in env_extra.items()) or "no override"
        env = {k: v for k, v in os.environ.items()
               if k not in ("GNUTLS_CPUID_OVERRIDE", "NETTLE_FAT_OVERRIDE")}
        env.update(env_extra)
        got = os.path.join(tmp, "got.bin")
        with WWWServer(openssl, tmp, key, cert, CASES[("TLS1.3", "aes-256-gcm")]) as srv:
            p, doc, out = ctlib.traced(tag, [wget, "-q", "--no-check-certificate", "-O", got,
                                             f"https://127.0.0.1:{srv.port}/f.bin"], env=env)
        check(p.returncode == 0 and daemons.same_file(src, got), f"{tag}: wget fetched the file")
        dec = ctlib.paths(doc, api="tls", dir="decrypt")
        check(len(dec) == 1 and dec[0]["impl"] == impl and
              dec[0]["bytes"] == 4 * ctlib.MIB + len(WWW_HEADER),
              f"{tag}: the tls decrypt path in {impl} ({ctlib.describe_paths(doc)})")
        # the truth: what the CPU profile saw run (its AES code named by its instructions)
        prof = [i for pr in doc["processes"] for i in (pr.get("profile") or {}).get("items", [])
                if i.get("category") == "AES"]
        if prof:
            top = max(prof, key=lambda i: i["samples"])
            check(profile_impl in top["impl"],
                  f"{tag}: the profile saw {profile_impl} AES run ({top['impl']} in {top['module']})")
        sw = [f for f in doc["findings"] if f["kind"] == "software-aes"]
        if not software:
            check(not sw, f"{tag}: no software-aes ({[f['message'][:120] for f in sw]})")
            ctlib.check_clean(doc, tag)
            continue
        check(len(sw) == 1 and sw[0]["severity"] == "warning",
              f"{tag}: one software-aes warning ({[(f['severity'], f['message'][:80]) for f in sw]})")
        f = sw[0]
        check(impl in f["message"] and "GnuTLS" in f["message"],
              f"{tag}: names GnuTLS and {impl}: {f['message'][:300]}")
        for k, v in env_extra.items():
            check(f"{k}={v}" in f["message"] and f"{k}={v}" in f["evidence"],
                  f"{tag}: message and evidence say {k}={v}")
        check("tls" in f["evidence"] and "aes-256-gcm TLS1.3 decrypt" in f["evidence"],
              f"{tag}: evidence names the path: {f['evidence']}")
        check("GNUTLS_CPUID_OVERRIDE" in f["fix"] and "NETTLE_FAT_OVERRIDE" in f["fix"] and
              "Unset" in f["fix"], f"{tag}: the fix undoes the overrides: {f['fix']}")


ctlib.main(test)
