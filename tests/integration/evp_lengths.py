#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/integration/evp_lengths (equal, alternating, zero, negative and large request lengths, two
contexts taking turns, EVP_CipherUpdate and EVP_Cipher on one ctx): every size bucket of the report
holds exactly the calls and bytes the program made, per entry, the errors are the calls OpenSSL
refused, and EVP_Cipher without input is a "final" phase, not a data call. This pins down the fast
path's cached length and its misses. AES-128-GCM messages shaped as openssl speed's and as TLS 1.3
records count every phase call (key, message, AAD, final, tag: the inline phase path of
evp_internal.h and its slow path), and the AAD calls that fail as errors, exactly too, and so do
OpenSSH's packets (decrypting, through EVP_Cipher, every final failing); once more routed to our
AES code, where the direct lane serves most calls."""
import os
import re

import ctlib
from ctlib import check

ENTRIES = {"update": "EVP_*Update", "cipher": "EVP_Cipher"}


def expected(text):
    buckets, errors = {}, {}
    for m in re.finditer(r"^bucket entry=(\w+) low=(\d+) calls=(\d+) bytes=(\d+)$", text, re.M):
        buckets[(ENTRIES[m[1]], int(m[2]))] = (int(m[3]), int(m[4]))
    for m in re.finditer(r"^errors entry=(\w+) n=(\d+)$", text, re.M):
        errors[ENTRIES[m[1]]] = int(m[2])
    phases = {(ENTRIES[m[1]], m[2]): int(m[3])
              for m in re.finditer(r"^phase entry=(\w+) name=(\w+) calls=(\d+)$", text, re.M)}
    gcm = {("phase", m[1]): (int(m[2]), int(m[3]))
           for m in re.finditer(r"^gcm phase=(\w+) calls=(\d+) bytes=(\d+)$", text, re.M)}
    m = re.search(r"^gcm data calls=(\d+) bytes=(\d+)$", text, re.M)
    check(buckets and len(errors) == 2 and phases and len(gcm) == 5 and m,
          f"the program printed its expectations ({text[:200]!r})")
    gcm["data"] = (int(m[1]), int(m[2]))
    m = re.search(r"^gcm errors n=(\d+)$", text, re.M)
    check(m, "the program printed its GCM errors")
    gcm["errors"] = int(m[1])
    ssh = {m[1]: (int(m[2]), int(m[3]))
           for m in re.finditer(r"^ssh (\w+) calls=(\d+) bytes=(\d+)$", text, re.M)}
    m = re.search(r"^ssh errors n=(\d+)$", text, re.M)
    check(len(ssh) == 5 and m, "the program printed its SSH packets' counts")
    ssh["errors"] = int(m[1])
    return buckets, errors, phases, gcm, ssh


def verify_gcm(doc, gcm, how):
    """The AES-128-GCM messages: every phase call (inits, ctrls, finals: most counted on the
    thread's cached context between samples) and the data calls, exactly."""
    got = {}
    for p in ctlib.paths(doc, api="evp", cipher="aes-128-gcm", dir="encrypt"):
        for ph in p.get("phases", []):
            c, b = got.get(("phase", ph["phase"]), (0, 0))
            got[("phase", ph["phase"])] = (c + ph["calls"], b + ph.get("bytes", 0))
        c, b = got.get("data", (0, 0))
        got["data"] = (c + sum(s["calls"] for s in p["sizes"]), b + sum(s["bytes"] for s in p["sizes"]))
        got["errors"] = got.get("errors", 0) + p.get("errors", 0)
    for k, v in gcm.items():
        if k == "errors" or v[0] or k in got:
            check(got.get(k) == v, f"{how}: aes-128-gcm {k}: report {got.get(k)}, program {v}")


def verify_ssh(doc, ssh, how):
    """OpenSSH's GCM packets, decrypting through EVP_Cipher: the AAD, data and final calls, the IV
    and tag ctrls, and the finals that failed, exactly."""
    got = {}
    for p in ctlib.paths(doc, api="evp", cipher="aes-128-gcm", dir="decrypt"):
        for ph in p.get("phases", []):
            c, b = got.get(ph["phase"], (0, 0))
            got[ph["phase"]] = (c + ph["calls"], b + ph.get("bytes", 0))
        c, b = got.get("data", (0, 0))
        got["data"] = (c + sum(s["calls"] for s in p["sizes"]), b + sum(s["bytes"] for s in p["sizes"]))
        got["errors"] = got.get("errors", 0) + p.get("errors", 0)
    for k, v in ssh.items():
        if k in ("message", "tag"):  # their ctrls count calls only
            check(got.get(k, (0, 0))[0] == v[0], f"{how}: ssh {k} calls: report {got.get(k)}, program {v}")
        else:
            check(got.get(k) == v, f"{how}: ssh {k}: report {got.get(k)}, program {v}")


def verify(doc, expect, how):
    buckets, errors, phases, gcm, ssh = expect
    verify_gcm(doc, gcm, how)
    verify_ssh(doc, ssh, how)
    got, got_err, got_ph = {}, {}, {}
    for p in ctlib.paths(doc, api="evp", cipher="aes-128-ctr", dir="encrypt"):
        entry = p.get("entry")
        for ph in p.get("phases", []):
            if ph["phase"] == "final":
                got_ph[(entry, "final")] = got_ph.get((entry, "final"), 0) + ph["calls"]
        got_err[entry] = got_err.get(entry, 0) + p.get("errors", 0)
        for s in p["sizes"]:
            if s["calls"]:
                k = (entry, s["bucket_low"])
                c, b = got.get(k, (0, 0))
                got[k] = (c + s["calls"], b + s["bytes"])
    for k in sorted(set(buckets) | set(got)):
        check(got.get(k) == buckets.get(k),
              f"{how}: {k[0]} bucket {k[1]}: report {got.get(k)}, program {buckets.get(k)}")
    for e, n in errors.items():
        check(got_err.get(e, 0) == n, f"{how}: {e} errors: report {got_err.get(e, 0)}, program {n}")
    for k, n in phases.items():
        check(got_ph.get(k, 0) == n, f"{how}: {k[0]} {k[1]} phase: report {got_ph.get(k, 0)}, program {n}")


def test():
    prog = os.environ["CT_EVP_LENGTHS"]
    out = ctlib.tmpdir("lengths")
    p = ctlib.run_traced([prog], out)
    check(p.returncode == 0, f"evp_lengths exited 0 under cryptrace ({p.stderr.decode()[:200]})")
    expect = expected(p.stdout.decode())
    verify(ctlib.report_ok([out]), expect, "launcher")
    bare = ctlib.tmpdir("lengths-bare")
    p = ctlib.run([prog], env=ctlib.preload_env(bare))
    check(p.returncode == 0, "evp_lengths exited 0 under a bare LD_PRELOAD")
    verify(ctlib.report_ok([bare]), expect, "bare preload")
    # the default sampling times only some small calls; every call timed must count the same
    timed = ctlib.tmpdir("lengths-sample1")
    p = ctlib.run([prog], env=dict(ctlib.preload_env(timed), CRYPTRACE_SAMPLE="1"))
    check(p.returncode == 0, "evp_lengths exited 0 with every call timed")
    verify(ctlib.report_ok([timed]), expect, "CRYPTRACE_SAMPLE=1")
    # routed to our AES code: most calls take the direct lane (route/lane.h), counted the same
    routed = ctlib.tmpdir("lengths-routed")
    p = ctlib.run([prog], env=dict(ctlib.preload_env(routed), CRYPTRACE_ROUTE="aes-*=aesni"))
    check(p.returncode == 0, "evp_lengths exited 0 routed")
    verify(ctlib.report_ok([routed]), expect, "routed")


ctlib.main(test)
