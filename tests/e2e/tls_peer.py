#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tls_peer.py - one side of a TLS 1.2 connection over loopback with Python's ssl (the system
OpenSSL), for tls_exact.py: a chosen cipher suite, encrypt-then-MAC off (as Java, Go and NSS
clients often negotiate), and a chosen write pattern.

  tls_peer.py server PORTFILE CERT KEY CIPHERS   write its port to PORTFILE, print "listening",
                                                 accept one connection, read until EOF, print
                                                 the bytes received
  tls_peer.py client PORT CIPHERS TOTAL WRITE     send TOTAL bytes in sendall() calls of WRITE
                                                 bytes (0: one sendall of everything)
"""
import os
import socket
import ssl
import sys

NO_ENCRYPT_THEN_MAC = 0x80000  # SSL_OP_NO_ENCRYPT_THEN_MAC (Python's ssl has no name for it)


def context(side, ciphers):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER if side == "server" else ssl.PROTOCOL_TLS_CLIENT)
    ctx.minimum_version = ctx.maximum_version = ssl.TLSVersion.TLSv1_2
    ctx.set_ciphers(ciphers)
    ctx.options |= NO_ENCRYPT_THEN_MAC
    if side == "client":
        ctx.check_hostname = False
        ctx.verify_mode = ssl.CERT_NONE
    return ctx


def server(portfile, cert, key, ciphers):
    ctx = context("server", ciphers)
    ctx.load_cert_chain(cert, key)
    with socket.create_server(("127.0.0.1", 0)) as ls:
        with open(portfile + ".tmp", "w") as f:
            f.write(str(ls.getsockname()[1]))
        os.rename(portfile + ".tmp", portfile)
        print("listening", flush=True)
        conn, _ = ls.accept()
        with ctx.wrap_socket(conn, server_side=True) as s:
            got = 0
            while True:
                b = s.recv(1 << 20)
                if not b:  # the client's close_notify: answer it (the client waits for it)
                    break
                got += len(b)
            s.unwrap()
    print(got)


def client(port, ciphers, total, write):
    ctx = context("client", ciphers)
    data = bytes(range(256)) * (total // 256 + 1)
    with socket.create_connection(("127.0.0.1", port)) as raw:
        with ctx.wrap_socket(raw) as s:
            print(s.version(), s.cipher()[0], file=sys.stderr)
            view = memoryview(data)[:total]
            step = write or total
            for off in range(0, total, step):
                s.sendall(view[off:off + step])
            s.unwrap()


if sys.argv[1] == "server":
    server(*sys.argv[2:6])
else:
    client(int(sys.argv[2]), sys.argv[3], int(sys.argv[4]), int(sys.argv[5]))
