#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""wget (Debian's is built on GnuTLS) fetching 4 MiB over TLS from `openssl s_server -WWW` on
loopback (the server untraced), under cryptrace. wget maps libnettle before libgnutls, and
GnuTLS ran the AES-GCM in its own accelerated code: the report must name GnuTLS, not nettle,
say cryptrace does not hook it, and keep it at info with nothing to change. No warning, no
error; the file arrives intact."""
import os
import select
import subprocess
import time

import ctlib
from ctlib import check, daemons


def test():
    if ctlib.asan_runtime():
        ctlib.skip("sanitizer pass: wget hangs with the ASan runtime in LD_PRELOAD, even with no "
                   "cryptrace loaded (`wget --version`); the normal pass runs this test")
    wget = ctlib.need_program("wget")
    openssl = ctlib.need_program("openssl")
    if b"+ssl/gnutls" not in ctlib.run([wget, "--version"]).stdout:
        ctlib.skip("this wget is not built on GnuTLS")
    tmp = ctlib.tmpdir("real-wget")
    key, cert = ctlib.throwaway_cert(tmp)
    src = os.path.join(tmp, "f.bin")
    daemons.random_file(src, 4 * ctlib.MIB)
    port = ctlib.free_port()
    server = subprocess.Popen([openssl, "s_server", "-WWW", "-naccept", "1", "-accept",
                               f"127.0.0.1:{port}", "-cert", cert, "-key", key], cwd=tmp,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    try:
        buf, deadline = b"", time.monotonic() + daemons.START_TIMEOUT
        while b"ACCEPT" not in buf and time.monotonic() < deadline:
            if select.select([server.stdout], [], [], 0.5)[0]:
                buf += os.read(server.stdout.fileno(), 4096)
        check(b"ACCEPT" in buf, f"s_server started ({buf[-200:]!r})")
        got = os.path.join(tmp, "got.bin")
        p, doc, _ = ctlib.traced("wget", [wget, "-q", "--no-check-certificate", "-O", got,
                                            f"https://127.0.0.1:{port}/f.bin"])
        check(p.returncode == 0, f"wget exited 0 ({p.stderr.decode(errors='replace')[-200:]})")
    finally:
        server.kill()
        server.wait()
    check(daemons.same_file(src, got), "the file arrived intact")
    ctlib.check_complete(doc, "wget")
    libs = [l for pr in doc["processes"] for l in pr["crypto_libs"]]
    check(any("libnettle" in l for l in libs) and any("libgnutls" in l for l in libs),
          f"wget mapped both nettle and GnuTLS ({libs})")
    f = ctlib.finding(doc, "nothing-intercepted")
    check("it used GnuTLS (" in f["message"] and "nettle.so" not in f["message"].split(".")[0],
          f"GnuTLS is named as the library that did the work: {f['message'][:300]}")
    check(f["severity"] == "info" and "Nothing to change here" in f["fix"],
          f"info, nothing to change in a packaged program ({f['severity']}: {f['fix']})")
    ctlib.check_clean(doc, "wget")


ctlib.main(test)
