#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Debian's python3 serving a 16 MiB file with http.server over the ssl module (TLS 1.3 on
loopback, one request), fetched by curl, both under cryptrace. The server's aes-256-gcm encrypt
path and curl's decrypt path carry the file (within 1% + 64 KiB of TLS records), both made by
libssl for TLS 1.3 records; the fetched file is identical; no warning, no error. Under
OPENSSL_ia32cap masking AES-NI: software-aes naming the mask on each side."""
import os

import ctlib
from ctlib import check, daemons

DATA = 16 * ctlib.MIB
PYTHON = "/usr/bin/python3"  # Debian's, linked against the system libssl (not a pyenv shim)

SERVER = r"""
import http.server, os, ssl, sys
os.chdir(sys.argv[1])
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(sys.argv[2], sys.argv[3])
class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a):
        pass
srv = http.server.HTTPServer(("127.0.0.1", 0), Quiet)
srv.socket = ctx.wrap_socket(srv.socket, server_side=True)
print("serving on port", srv.server_address[1], "now", flush=True)
srv.handle_request()
"""


def one(tmp, cert, key, env, tag):
    sdir, cdir = ctlib.tmpdir(f"pyhttps-{tag}"), ctlib.tmpdir(f"curl-{tag}")
    got = os.path.join(tmp, f"got-{tag}.bin")
    server = daemons.Daemon([PYTHON, "-c", SERVER, tmp, cert, key], sdir, " now", env=env)
    try:
        port = int(server.output().split("serving on port")[1].split()[0])
        p = ctlib.run_traced(["curl", "-sS", "-k", "-o", got, f"https://127.0.0.1:{port}/src.bin"],
                             cdir, env=env)
        check(p.returncode == 0, f"{tag}: curl exited 0 ({p.stderr.decode(errors='replace')[-200:]})")
        server.wait()
    finally:
        server.stop()
    check(daemons.same_file(os.path.join(tmp, "src.bin"), got), f"{tag}: the file arrived intact")
    return ctlib.report_ok([sdir]), ctlib.report_ok([cdir])


def test():
    _, curl = daemons.need_openssl_curl()
    if not os.access(PYTHON, os.X_OK):
        ctlib.skip(f"{PYTHON} is not installed")
    tmp = ctlib.tmpdir("real-pytls")
    key, cert = ctlib.throwaway_cert(tmp)
    daemons.random_file(os.path.join(tmp, "src.bin"), DATA)

    def clean():
        srv, cli = one(tmp, cert, key, dict(os.environ), "clean")
        for doc, side, direction in ((srv, "python3 server", "encrypt"), (cli, "curl", "decrypt")):
            ctlib.check_complete(doc, side)
            ctlib.check_tls13_bulk(doc, side, direction, DATA)
            ctlib.check_clean(doc, side)

    def masked():
        if not ctlib.cpu_has_aes():
            print("skip masked case: this CPU has no AES-NI")
            return False
        srv, cli = one(tmp, cert, key, ctlib.masked_env(), "masked")
        ctlib.check_masked(srv, "python3 server")
        ctlib.check_masked(cli, "curl")

    ctlib.run_cases([("clean", clean), ("masked", masked)])


ctlib.main(test)
