#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""OpenSSL 3.5's findings: software-aes under the OPENSSL_ia32cap mask, none without it;
`openssl speed aes-128-cbc` without -evp runs EVP_Cipher (as in 3.0) with exactly speed's count
and no warning; the low-level AES_* example (examples/lowlevel_aes, built against this host's
3.0 headers: the AES_* ABI is the same) run on 3.5's libcrypto through its loader, with exactly
the calls and bytes it prints; `-engine afalg` on a kernel without AF_ALG: engine-failed and
silent-fallback."""
import ctlib
from ctlib import check
import osslver


def speed_no_evp(t):
    p, doc = osslver.traced(t, ["speed", "-seconds", "1", "-bytes", "16384", "aes-128-cbc"],
                            "no-evp")
    n = ctlib.speed_count(p.stderr.decode(errors="replace"), "aes-128-cbc")
    print(ctlib.describe_paths(doc))
    got = ctlib.totals(doc, api="evp", impl="provider:default", cipher="aes-128-cbc",
                       dir="encrypt", entry="EVP_Cipher")
    check(got == (n, n * 16384), f"3.5 EVP_Cipher: (calls, bytes) {got} == {(n, n * 16384)}")
    ctlib.check_clean(doc, "3.5 speed without -evp")


def lowlevel_example(t):
    out = ctlib.tmpdir("lowlevel")
    p = ctlib.run_traced(t.argv([], program=ctlib.example("lowlevel_aes")), out, env=t.env())
    check(p.returncode == 0, f"lowlevel_aes on 3.5 exited 0 ({p.stderr[-300:]!r})")
    doc = ctlib.report_ok([out])
    procs = ctlib.processes(doc)
    check(procs and procs[0]["libcrypto"].startswith("OpenSSL 3.5"),
          f"lowlevel_aes ran on 3.5's libcrypto ({procs[0]['libcrypto'] if procs else None})")
    print(ctlib.describe_paths(doc))
    ctlib.check_expect(doc, p.stdout.decode(), "3.5 lowlevel_aes")
    fs = [f for f in doc["findings"] if f["kind"] == "lowlevel-api" and
          "aes-256-cbc encrypt" in f["message"]]
    check(len(fs) == 1, f"3.5: one lowlevel-api finding for aes-256-cbc encrypt ({len(fs)})")
    f = fs[0]
    check("OpenSSL 3.x it does not use AES-NI" in f["message"] and "EVP_CIPHER_fetch" in f["fix"],
          f"3.5 lowlevel-api in 3.x's terms: {f['message'][:300]} / {f['fix'][:200]}")


def test():
    t = osslver.tree("3.5")
    osslver.masked(t, "provider:default")
    speed_no_evp(t)
    lowlevel_example(t)
    osslver.engine_afalg_refused(t, "provider:default")


ctlib.main(test)
