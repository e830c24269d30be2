#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""wget (Debian's is built on GnuTLS) fetching 4 MiB over TLS from `openssl s_server -WWW` on
loopback (the server untraced), under cryptrace: its GnuTLS records are a tls path with the
file's bytes (tests/gnutls/ has the protocols and ciphers). No warning, no error; the file
arrives intact."""
import os
import select
import subprocess
import time

import ctlib
from ctlib import check, daemons

WWW_HEADER = b"HTTP/1.0 200 ok\r\nContent-type: text/plain\r\n\r\n"  # s_server -WWW's


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
    # GnuTLS's records are hooked: the file arrived on one tls decrypt path (its bytes: the file
    # and s_server -WWW's 45-byte response header), in the code GnuTLS ran
    check("nothing-intercepted" not in ctlib.kinds(doc), "wget: its GnuTLS records are intercepted")
    got_paths = ctlib.paths(doc, api="tls", dir="decrypt")
    check(len(got_paths) == 1 and got_paths[0]["bytes"] == 4 * ctlib.MIB + len(WWW_HEADER),
          f"wget: one tls decrypt path of the file + its header ({ctlib.describe_paths(doc)})")
    ctlib.check_clean(doc, "wget")


ctlib.main(test)
