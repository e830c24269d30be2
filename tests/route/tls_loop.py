#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A TLS 1.2 client and server in one process (Python's ssl module, i.e. libssl): 3 MiB each way
with the given cipher suite; prints the suite and "ok" when every byte arrived intact. Run by
enc_routed.py under the preload. usage: tls_loop.py CERT KEY SUITE etm|noetm"""
import hashlib
import os
import socket
import ssl
import sys
import threading

cert, key, suite, etm = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "etm"
data = os.urandom(3 << 20)
srv_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
srv_ctx.load_cert_chain(cert, key)
cli_ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
cli_ctx.check_hostname = False
cli_ctx.verify_mode = ssl.CERT_NONE
for c in (srv_ctx, cli_ctx):
    c.maximum_version = ssl.TLSVersion.TLSv1_2
    c.set_ciphers(suite)
    if not etm:
        c.options |= 0x00080000  # SSL_OP_NO_ENCRYPT_THEN_MAC: MAC-then-encrypt CBC records
listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen(1)
received = []


def server():
    s, _ = listener.accept()
    t = srv_ctx.wrap_socket(s, server_side=True)
    buf = bytearray()
    while len(buf) < len(data):
        chunk = t.recv(65536)
        if not chunk:
            break
        buf += chunk
    t.sendall(hashlib.sha256(buf).digest())
    received.append(bytes(buf))
    t.close()


th = threading.Thread(target=server)
th.start()
client = cli_ctx.wrap_socket(socket.create_connection(listener.getsockname()))
for i in range(0, len(data), 4097):
    client.sendall(data[i:i + 4097])
digest = client.recv(32)
th.join()
intact = digest == hashlib.sha256(data).digest() and received and received[0] == data
print(client.cipher()[0], "ok" if intact else "MISMATCH")
sys.exit(0 if intact else 1)
