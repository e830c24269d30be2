#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""OpenSSL 3.5 routed: `cryptrace run --route 'aes-*=aesni'` hands `openssl enc`'s contexts to
the cryptrace provider (route:aesni, one route event per context, no fallback) and the output
of both directions is byte-identical to 3.5's native output, with exactly the file's bytes in
4 KiB calls; no finding. The low-level AES_* route too: lowlevel_diff's digests (built against
this host's 3.0 headers: the same AES_* ABI) are bit-exact routed and native on 3.5."""
import os

import ctlib
from ctlib import check
import osslver


def test():
    t = osslver.tree("3.5")
    docs = osslver.enc_exact(t, "route:aesni", route="aes-*=aesni")
    for direction, doc in docs.items():
        fb = [e["detail"] for e in ctlib.events(doc, kind="fallback")]
        routes = [e["detail"] for e in ctlib.events(doc, kind="route")]
        check(not fb, f"3.5 {direction}: no route fallback ({fb})")
        check(any("aes-256-cbc" in r and "aesni" in r for r in routes),
              f"3.5 {direction}: the route event names aes-256-cbc -> aesni ({routes})")
        bad = [(f["kind"], f["message"][:120]) for f in doc["findings"] if f["severity"] != "info"]
        check(not bad, f"3.5 routed {direction}: no warning or error ({bad})")
    osslver.lowlevel_route(t, os.environ["LOWLEVEL_DIFF"])


ctlib.main(test)
