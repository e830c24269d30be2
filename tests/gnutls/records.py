#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""GnuTLS's TLS records on real programs: wget and gnutls-cli fetch a file (16 MiB; 4 MiB for
gnutls-cli, which writes what it receives a byte at a time, a system call a byte) from
`openssl s_server -WWW` on loopback (the server untraced) over TLS 1.2 and TLS 1.3, with
AES-128-GCM and AES-256-GCM. Each run must show one tls decrypt path of that cipher and protocol
whose bytes are the file plus s_server's 45-byte response header (the whole of what the client
received: the protocol's own overhead, record headers, tags and the handshake, is not
application data and is not counted), one tls encrypt path whose bytes are the request the
client sent (wget's from its -d output, gnutls-cli's our own), both marked io_wait, the code
GnuTLS ran named (gnutls:aesni on an x86-64 CPU with AES), the text report saying
"aes-256-gcm TLS1.3 dec ... 16.0 MiB" (4.00 MiB); the file intact; no nothing-intercepted, no warning or
error. The secrets scan looks for the file's bytes and the request in every trace."""
import os
import platform

import ctlib
from ctlib import check, daemons
from lib_gnutls import CASES, WWW_HEADER, WWWServer, need_clients, wget_request

FILE_SIZE = 16 * ctlib.MIB
CLI_FILE_SIZE = 4 * ctlib.MIB  # 16 MiB took gnutls-cli 15-30 s a case


def check_paths(doc, text, tag, proto, cipher, received, sent):
    dec = ctlib.paths(doc, api="tls", dir="decrypt")
    enc = ctlib.paths(doc, api="tls", dir="encrypt")
    check(len(dec) == 1 and len(enc) == 1,
          f"{tag}: one tls path each way ({ctlib.describe_paths(doc)})")
    for p, want, what in ((dec[0], received, "received"), (enc[0], sent, "sent")):
        check(p["cipher"] == cipher and p["proto"] == proto and p["entry"] == "gnutls_record_*",
              f"{tag}: {what} on {cipher} {proto} ({p['cipher']} {p['proto']} {p['entry']})")
        check(p["bytes"] == want, f"{tag}: {what} bytes {p['bytes']} == {want}")
        check(p["io_wait"] and p["timing"]["cpu_samples"] == p["calls"],
              f"{tag}: {what} path waits for the peer, every call's CPU read "
              f"({p['io_wait']}, {p['timing']['cpu_samples']} of {p['calls']})")
        if ctlib.cpu_has_aes() and platform.machine() == "x86_64":
            check(p["impl"] == "gnutls:aesni", f"{tag}: GnuTLS's AES-NI code ({p['impl']})")
    mib = ("%.2f MiB" if received < 10 * ctlib.MIB else "%.1f MiB") % (received / ctlib.MIB)  # 3 digits
    line = [l for l in text.splitlines() if f"{cipher} {proto} dec" in l]
    check(line and mib in line[0] and line[0].split()[1] == "tls",
          f"{tag}: the text report says {cipher} {proto} dec ... {mib} ({line})")
    # a record call's size and time say what the program read and how long it waited, not the
    # cipher's speed: the by-size table leaves tls paths out, and says so
    check("Throughput by request size: none for TLS record" in text,
          f"{tag}: no rate by size for the record paths")
    check("nothing-intercepted" not in ctlib.kinds(doc), f"{tag}: intercepted")
    ctlib.check_clean(doc, tag)


def test():
    wget, cli, openssl = need_clients()
    tmp = ctlib.tmpdir("gnutls-records")
    key, cert = ctlib.throwaway_cert(tmp)
    src, cli_src = os.path.join(tmp, "f.bin"), os.path.join(tmp, "g.bin")
    daemons.random_file(src, FILE_SIZE)
    daemons.random_file(cli_src, CLI_FILE_SIZE)
    for path in (src, cli_src):
        with open(path, "rb") as f:  # what travelled inside TLS: never in a trace
            ctlib.secret(f"served file {os.path.basename(path)} (its first 4 KiB)", f.read(4096))
    ctlib.secret("gnutls-cli's request", b"GET /g.bin HTTP/1.0\r\n\r\n")
    received = FILE_SIZE + len(WWW_HEADER)
    cli_received = CLI_FILE_SIZE + len(WWW_HEADER)
    print(f"received = {FILE_SIZE} file bytes (gnutls-cli {CLI_FILE_SIZE}) + {len(WWW_HEADER)} "
          f"response header bytes")
    for (proto, cipher), opts in CASES.items():
        tag = f"wget {proto} {cipher}"
        got = os.path.join(tmp, "got.bin")
        with WWWServer(openssl, tmp, key, cert, opts) as srv:
            p, doc, out = ctlib.traced(tag, [wget, "-d", "--no-check-certificate", "-O", got,
                                             f"https://127.0.0.1:{srv.port}/f.bin"])
        check(p.returncode == 0, f"{tag}: wget exited 0")
        check(daemons.same_file(src, got), f"{tag}: the file arrived intact")
        text = ctlib.run([ctlib.CRYPTRACE, "report", out]).stdout.decode()
        check_paths(doc, text, tag, proto, cipher, received, len(wget_request(p.stderr)))

        tag = f"gnutls-cli {proto} {cipher}"
        request = b"GET /g.bin HTTP/1.0\r\n\r\n"
        with WWWServer(openssl, tmp, key, cert, opts) as srv:
            p, doc, out = ctlib.traced(tag, [cli, "--insecure", "--logfile=/dev/null", "-p",
                                             str(srv.port), "127.0.0.1"], input_bytes=request)
        check(p.returncode == 0, f"{tag}: gnutls-cli exited 0")
        with open(cli_src, "rb") as f:
            check(p.stdout == WWW_HEADER + f.read(), f"{tag}: the response arrived intact")
        text = ctlib.run([ctlib.CRYPTRACE, "report", out]).stdout.decode()
        check_paths(doc, text, tag, proto, cipher, cli_received, len(request))


ctlib.main(test)
