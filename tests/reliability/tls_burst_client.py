#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A TLS client that does a burst and then waits: connects to PORT on loopback (TLS 1.2 or 1.3,
any certificate), sends COUNT lines of SIZE bytes (newline included), reading each one's answer
(an echo, or openssl s_server -rev's reversed line: a line of the same length) before the next,
and prints `burst sent=N received=N` with the application bytes it counted. Then it idles until
the server ends the connection (the test kills it) and exits 0 without a word more (no
close_notify, no alert), so that every TLS record one side encrypted the other side decrypted.
Usage: tls_burst_client.py PORT COUNT SIZE 1.2|1.3"""
import os
import socket
import ssl
import sys

port, count, size, version = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
ctx.check_hostname = False
ctx.verify_mode = ssl.CERT_NONE
v = ssl.TLSVersion.TLSv1_2 if version == "1.2" else ssl.TLSVersion.TLSv1_3
ctx.minimum_version = ctx.maximum_version = v
s = ctx.wrap_socket(socket.create_connection(("127.0.0.1", port)))
line = b"q" * (size - 1) + b"\n"
sent = received = 0
for _ in range(count):
    s.sendall(line)
    sent += len(line)
    got = 0
    while got < len(line):
        data = s.recv(65536)
        if not data:
            sys.exit(f"the server ended the connection during the burst ({received + got} of "
                     f"{sent} bytes back)")
        got += len(data)
    received += got
print(f"burst sent={sent} received={received}", flush=True)
# Wait for the connection to end below TLS: OpenSSL answers an EOF without close_notify with a
# fatal alert, which the dead server would never decrypt. Nothing more comes from the server.
while os.read(s.fileno(), 65536):
    pass
print("ended", flush=True)
