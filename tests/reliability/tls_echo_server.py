#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A forking TLS echo server, for daemon_signals.py and idle_kill.py: socketserver's
ForkingTCPServer with ssl, one child per connection, each echoing what it reads until the peer
closes. Usage: tls_echo_server.py CERT KEY; prints `listening PORT` once it accepts.

Python ignores SIGPIPE and catches SIGINT (KeyboardInterrupt) by default; this server puts both
back to SIG_DFL, as a C daemon leaves them, so that every signal the test sends has its default
action (SIGTERM, SIGHUP and SIGQUIT are at SIG_DFL already)."""
import signal
import socketserver
import ssl
import sys

signal.signal(signal.SIGINT, signal.SIG_DFL)
signal.signal(signal.SIGPIPE, signal.SIG_DFL)

ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
ctx.load_cert_chain(sys.argv[1], sys.argv[2])


class Echo(socketserver.BaseRequestHandler):
    def handle(self):
        with ctx.wrap_socket(self.request, server_side=True) as s:
            while True:
                data = s.recv(65536)
                if not data:
                    break
                s.sendall(data)


class Server(socketserver.ForkingTCPServer):
    allow_reuse_address = True


with Server(("127.0.0.1", 0), Echo) as srv:
    print(f"listening {srv.server_address[1]}", flush=True)
    srv.serve_forever()
