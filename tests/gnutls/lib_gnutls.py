# SPDX-License-Identifier: MIT
"""What the gnutls suite's tests share: `openssl s_server -WWW` on loopback serving a file over
one TLS version and one cipher, and the programs that fetch it."""
import os
import select
import subprocess
import time

import ctlib
from ctlib import check, daemons

# s_server -WWW's response header before the file's bytes (apps/s_server.c, www_body): what a
# client receives besides the file
WWW_HEADER = b"HTTP/1.0 200 ok\r\nContent-type: text/plain\r\n\r\n"

# (TLS version, cipher as the report names it) -> s_server's options that force it
CASES = {
    ("TLS1.3", "aes-128-gcm"): ["-tls1_3", "-ciphersuites", "TLS_AES_128_GCM_SHA256"],
    ("TLS1.3", "aes-256-gcm"): ["-tls1_3", "-ciphersuites", "TLS_AES_256_GCM_SHA384"],
    ("TLS1.2", "aes-128-gcm"): ["-tls1_2", "-cipher", "ECDHE-RSA-AES128-GCM-SHA256"],
    ("TLS1.2", "aes-256-gcm"): ["-tls1_2", "-cipher", "ECDHE-RSA-AES256-GCM-SHA384"],
}


def need_clients():
    if ctlib.asan_runtime():
        ctlib.skip("sanitizer pass: wget hangs with the ASan runtime in LD_PRELOAD, even with no "
                   "cryptrace loaded; the normal pass runs this test")
    wget = ctlib.need_program("wget")
    cli = ctlib.need_program("gnutls-cli")
    openssl = ctlib.need_program("openssl")
    if b"+ssl/gnutls" not in ctlib.run([wget, "--version"]).stdout:
        ctlib.skip("this wget is not built on GnuTLS")
    return wget, cli, openssl


class WWWServer:
    """openssl s_server -WWW serving tmp's files to one client (-naccept 1), untraced."""

    def __init__(self, openssl, tmp, key, cert, opts):
        self.port = ctlib.free_port()
        self.p = subprocess.Popen([openssl, "s_server", "-WWW", "-naccept", "1", "-accept",
                                   f"127.0.0.1:{self.port}", "-cert", cert, "-key", key] + opts,
                                  cwd=tmp, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        buf, deadline = b"", time.monotonic() + daemons.START_TIMEOUT
        while b"ACCEPT" not in buf and time.monotonic() < deadline:
            if select.select([self.p.stdout], [], [], 0.5)[0]:
                buf += os.read(self.p.stdout.fileno(), 4096)
        check(b"ACCEPT" in buf, f"s_server started ({buf[-200:]!r})")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.p.kill()
        self.p.wait()


def wget_request(stderr):
    """The HTTP request wget sent, from its -d output (printed between these markers, with its
    CRLFs)."""
    text = stderr.replace(b"\r\n", b"\n")
    a = text.find(b"---request begin---\n")
    b = text.find(b"---request end---", a)
    check(a >= 0 and b > a, "wget -d printed its request")
    lines = text[a + len(b"---request begin---\n"):b]
    return lines.replace(b"\n", b"\r\n")
