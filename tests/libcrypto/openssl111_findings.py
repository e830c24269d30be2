#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""OpenSSL 1.1.1w's findings: software-aes under the OPENSSL_ia32cap mask, none without it;
`openssl speed aes-128-cbc` without -evp times AES_cbc_encrypt there (1.1's speed calls the
low-level API; 3.x's calls EVP_Cipher): an api=aes path with exactly speed's count, and a
lowlevel-api finding in 1.1's terms (engines, no providers; table code without AES-NI) whose fix
is -evp; `-engine afalg` on a kernel without AF_ALG: engine-failed and silent-fallback;
`-engine devcrypto` (not built in Debian's OpenSSL): engine-failed says so."""
import ctlib
from ctlib import check
import osslver


def lowlevel(t):
    # 1.1's speed takes its options before the algorithm names
    p, doc = osslver.traced(t, ["speed", "-seconds", "1", "-bytes", "16384", "aes-128-cbc"],
                            "lowlevel")
    n = ctlib.speed_count(p.stderr.decode(errors="replace"), "aes-128 cbc")
    print(ctlib.describe_paths(doc))
    got = ctlib.totals(doc, api="aes", impl="lowlevel", cipher="aes-128-cbc", dir="encrypt")
    check(got == (n, n * 16384), f"1.1.1 AES_cbc_encrypt: (calls, bytes) {got} == {(n, n * 16384)}")
    f = ctlib.finding(doc, "lowlevel-api")
    check("OpenSSL 1.1 has no providers" in f["message"] and "does not use AES-NI" in f["message"],
          f"1.1.1 lowlevel-api in 1.1's terms: {f['message'][:300]}")
    check("Add -evp" in f["fix"] and "EVP_CIPHER_fetch" not in f["fix"],
          f"1.1.1 lowlevel-api fix: -evp on the command line: {f['fix']}")


def test():
    t = osslver.tree("1.1.1")
    osslver.masked(t, "builtin")
    lowlevel(t)
    osslver.engine_afalg_refused(t, "builtin")
    osslver.engine_devcrypto_refused(t, "builtin")


ctlib.main(test)
