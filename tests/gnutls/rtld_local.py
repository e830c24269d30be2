#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""GnuTLS brought in by a plugin loaded RTLD_LOCAL (local_host dlopens local_plugin.so, which
links GnuTLS; the program links none): the plugin's gnutls_* calls land in the preload's hooks,
whose real functions dlsym(RTLD_NEXT) cannot see. They must still run (the same output and exit
status as untraced: a hook that cannot find its real function would fail the call) and be
counted: one gnutls aes-128-cbc encrypt path of 4 calls, 256 bytes."""
import os

import ctlib
from ctlib import check


def test():
    d = os.environ.get("CT_GNUTLS_BIN", "")
    host, plugin = os.path.join(d, "local_host"), os.path.join(d, "local_plugin.so")
    check(os.access(host, os.X_OK) and os.path.exists(plugin), f"built: {host}, {plugin}")
    plain = ctlib.run([host, plugin])
    check(plain.returncode == 0 and plain.stdout == b"local_plugin_run=0\n",
          f"runs untraced ({plain.stdout!r} {plain.stderr[-200:]!r})")
    p, doc, _ = ctlib.traced("rtld-local", [host, plugin])
    check(p.returncode == plain.returncode and p.stdout == plain.stdout,
          f"same output and exit status traced ({p.stdout!r}, exit {p.returncode})")
    got = ctlib.paths(doc, api="gnutls", cipher="aes-128-cbc", dir="encrypt")
    check(len(got) == 1 and got[0]["calls"] == 4 and got[0]["bytes"] == 256,
          f"the plugin's calls counted ({ctlib.describe_paths(doc)})")
    ctlib.check_clean(doc, "rtld-local")


ctlib.main(test)
