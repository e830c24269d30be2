#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""OpenSSL 1.1.1w's low-level AES_* API: examples/lowlevel_aes built for 1.1 (linked against
openssl111_stub.c's libcrypto.so.1.1, run on the real one) has exactly the calls and bytes it
prints, and its lowlevel-api finding gives 1.1's advice (EVP_CipherInit_ex with EVP_aes_*(), no
EVP_CIPHER_fetch, no providers); the low-level route needs no provider, so it does serve 1.1's
AES_* calls: lowlevel_diff's digests are bit-exact routed and native."""
import os

import ctlib
import osslver


def test():
    t = osslver.tree("1.1.1")
    build = os.environ.get("CT_LIBCRYPTO_TESTS", "")
    osslver.lowlevel_example(t, os.path.join(build, "lowlevel_aes_111"),
                             "EVP_CipherInit_ex with EVP_aes_128_cbc()")
    osslver.lowlevel_route(t, os.path.join(build, "lowlevel_diff_111"))


ctlib.main(test)
