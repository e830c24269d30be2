#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""OpenSSL 3.5's findings: software-aes under the OPENSSL_ia32cap mask, none without it;
`openssl speed aes-128-cbc` without -evp runs EVP_Cipher (as in 3.0) with exactly speed's count,
no warning, and the -evp advice (the loader that ran openssl is not taken for the program); the low-level AES_* example (examples/lowlevel_aes, built against this host's
3.0 headers: the AES_* ABI is the same) run on 3.5's libcrypto through its loader, with exactly
the calls and bytes it prints; `-engine afalg` on a kernel without AF_ALG: engine-failed and
silent-fallback; `-engine devcrypto` (not built in Debian's OpenSSL): engine-failed says so."""
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
    # run by its loader, it is still `openssl speed`: the advice is -evp, not a rewrite
    f = ctlib.finding(doc, "lowlevel-api")
    check(f["severity"] == "info" and "Add -evp" in f["fix"],
          f"3.5 speed without -evp: lowlevel-api says -evp ({f['severity']}: {f['fix']})")


def test():
    t = osslver.tree("3.5")
    osslver.masked(t, "provider:default")
    speed_no_evp(t)
    osslver.lowlevel_example(t, ctlib.example("lowlevel_aes"), "EVP_CIPHER_fetch")
    osslver.engine_afalg_refused(t, "provider:default")
    osslver.engine_devcrypto_refused(t, "provider:default")


ctlib.main(test)
