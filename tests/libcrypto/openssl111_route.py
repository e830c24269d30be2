#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""OpenSSL 1.1.1w and the EVP route: the route serves EVP through an OpenSSL 3 provider, and 1.1
has no providers, so `--route 'aes-*=aesni'` is refused per context with a fallback event that
says why ("libcrypto has no providers (OpenSSL 1.x)"); 1.1's own code serves the work (paths
stay `builtin`), and `openssl enc`'s output, both directions, is byte-identical to the native
run. The report says the route did not happen (silent-fallback, with the reason)."""
import ctlib
from ctlib import check
import osslver


def test():
    t = osslver.tree("1.1.1")
    docs = osslver.enc_exact(t, "builtin", route="aes-*=aesni")
    for direction, doc in docs.items():
        fb = [e["detail"] for e in ctlib.events(doc, kind="fallback")]
        check(fb and all("no providers (OpenSSL 1.x)" in d for d in fb),
              f"1.1.1 {direction}: the route refused with its reason ({fb})")
        check(not ctlib.paths(doc, impl="route:aesni"), f"1.1.1 {direction}: nothing routed")
        f = ctlib.finding(doc, "silent-fallback")
        check("no providers (OpenSSL 1.x)" in f["message"] + f["evidence"],
              f"1.1.1 {direction}: silent-fallback gives the route's reason: {f['message'][:300]}"
              f" / {f['evidence'][:200]}")


ctlib.main(test)
