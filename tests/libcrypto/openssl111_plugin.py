#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Two OpenSSL versions in one process (preload/foreign.c): foreign_host dlopens this host's 3.0
libcrypto RTLD_LOCAL and uses it, then a plugin built against 1.1's EVP API and bound to the real
1.1.1w libcrypto (RTLD_LOCAL too, as python loads a module that bundles its own copy). The
plugin's EVP calls reach cryptrace's hooks through the global scope; forwarded to the first
libcrypto, 3.0 got a 1.1 cipher and context and the program died of SIGSEGV. Now:
  - the program's output and exit status are the same with and without cryptrace, and the
    plugin's ciphertext is the one 3.0 computes for the same input (the host checks it);
  - the report traces one libcrypto: nothing of the plugin's is counted as the host's work, and
    multiple-libcrypto names the plugin as passed through (a foreign-libcrypto event)."""
import os

import ctlib
from ctlib import check
import osslver


def test():
    t = osslver.tree("1.1.1")
    host, plugin = os.environ["CT_FOREIGN_HOST"], os.environ["CT_FOREIGN_PLUGIN_111"]
    lib30 = ctlib.openssl_libcrypto()
    if not lib30:
        ctlib.skip("no OpenSSL 3 libcrypto found (ldd openssl): nothing to load before 1.1's")
    # the plugin's libcrypto.so.1.1 from the 1.1.1w tree; the host's 3.0 by its path
    env = dict(os.environ, LD_LIBRARY_PATH=t.libdir)
    argv = [host, lib30, plugin]
    bare = ctlib.run(argv, env=env)
    print(f"bare: exit {bare.returncode}: {bare.stdout.decode().strip()} {bare.stderr.decode()[-200:]}")
    check(bare.returncode == 0, f"the plugin's AES-128-CBC on 1.1.1 equals 3.0's, without cryptrace "
          f"({bare.returncode})")
    out = ctlib.tmpdir("foreign")
    p = ctlib.run_traced(argv, out, env=env)
    print(f"traced: exit {p.returncode}: {p.stdout.decode().strip()} {p.stderr.decode()[-300:]}")
    check((p.returncode, p.stdout) == (bare.returncode, bare.stdout),
          f"under cryptrace the same output and exit status ({p.returncode}, {p.stdout[-120:]!r})")
    doc = ctlib.report_ok([out])
    print(ctlib.describe_paths(doc))
    calls, _ = ctlib.totals(doc, api="evp", cipher="aes-128-cbc")
    check(calls == 0, f"the plugin's calls went to its own libcrypto untraced, none counted ({calls})")
    f = ctlib.finding(doc, "multiple-libcrypto")
    check(os.path.basename(plugin) in f["message"] and "passed through" in f["message"],
          f"multiple-libcrypto names the plugin as passed through: {f['message'][-400:]}")
    events = ctlib.events(doc, call="foreign-libcrypto")
    check(any(os.path.basename(plugin) in (e.get("detail") or "") and "libcrypto.so.1.1" in
              (e.get("detail") or "") for e in events),
          f"a foreign-libcrypto event names the plugin and its libcrypto.so.1.1 ({events})")


ctlib.main(test)
