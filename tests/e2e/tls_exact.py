#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Exact counts over TLS (issue [exact] 1-2), real peers on loopback, every traced side checked:

  - TLS 1.3 with AES-CCM (curl against openssl s_server -WWW, TLS_AES_128_CCM_SHA256) counts
    the file's bytes once: CCM takes each record's length first in an update with no data, which
    must not count as data. The same transfer with TLS_AES_128_GCM_SHA256 counts the same bytes
    and calls; each side's AAD is 5 bytes per record (the TLS 1.3 record header) and apart from
    the data, and the messages are the records.
  - TLS 1.2 AES128-SHA without encrypt-then-MAC (Python's ssl on both sides, the system OpenSSL:
    libssl then uses the stitched aes-128-cbc-hmac-sha1 cipher) sending 8 MiB in writes of 16384,
    65535 and 65536 bytes and in one sendall: writes of 64 KiB or more go through the multi-block
    ctrl, which seals several records in one call. Every pattern counts the payload plus the
    records' IV, MAC and padding (at most 1 % and a few KiB more), and the writes of 64 KiB and
    more show the multi-block entry; the server opens exactly the bytes the client sealed.
  - TLS 1.2 AES128-SHA without encrypt-then-MAC from openssl s_server -WWW to curl: the server
    seals the file's bytes, the client opens exactly those.
Before these counts were exact, CCM counted 2x and a 64 KiB write pattern 3 % of its bytes."""
import os
import sys

import ctlib
from ctlib import check, daemons

MIB = 1 << 20
FILE_BYTES = 16 * MIB
SEND_BYTES = 8 * MIB
PEER = os.path.join(os.path.dirname(os.path.abspath(__file__)), "tls_peer.py")


def within(n, payload):
    return payload <= n <= payload * 1.01 + 64 * 1024


def data_paths(doc, cipher, direction):
    return [p for p in doc["paths"] if p["api"] == "evp" and p["cipher"] == cipher and
            p["dir"] == direction]


def totals(paths):
    return sum(p["calls"] for p in paths), sum(p["bytes"] for p in paths)


def tls13_ccm(tmp, cert, key, src):
    got = {}
    for suite, cipher in (("TLS_AES_128_CCM_SHA256", "aes-128-ccm"),
                          ("TLS_AES_128_GCM_SHA256", "aes-128-gcm")):
        name = f"TLS 1.3 {suite}"
        srv, cli = daemons.s_server_curl(tmp, cert, key, name,
                                         ["--tlsv1.3", "--tls13-ciphers", suite], src,
                                         server_opts=["-ciphersuites", suite])
        for side, doc, direction in (("server", srv, "encrypt"), ("client", cli, "decrypt")):
            paths = data_paths(doc, cipher, direction)
            calls, nbytes = totals(paths)
            check(within(nbytes, FILE_BYTES), f"{name} {side}: {nbytes} data bytes for a "
                  f"{FILE_BYTES}-byte file, each byte once")
            aad = sum(p["aad_bytes"] for p in paths)
            msgs = sum(p["messages"] for p in paths)
            check(msgs and aad == 5 * msgs, f"{name} {side}: {aad} AAD bytes = 5 x {msgs} records, "
                  "apart from the data")
            got[(cipher, side)] = (calls, nbytes)
    for side in ("server", "client"):
        ccm, gcm = got[("aes-128-ccm", side)], got[("aes-128-gcm", side)]
        check(ccm == gcm, f"TLS 1.3 {side}: CCM counts what GCM counts for the same transfer "
              f"(calls, bytes: {ccm} and {gcm})")


def tls12_multiblock(tmp, cert, key):
    py = sys.executable
    for write in (16384, 65535, 65536, 0):
        name = f"TLS 1.2 AES128-SHA no-EtM, writes of {write or 'all'}"
        portfile = os.path.join(tmp, f"port-{write}")
        sdir, cdir = ctlib.tmpdir(f"exact-py-s-{write}"), ctlib.tmpdir(f"exact-py-c-{write}")
        server = daemons.Daemon([py, PEER, "server", portfile, cert, key, "AES128-SHA"], sdir,
                               "listening")
        try:
            with open(portfile) as f:
                port = f.read().strip()
            p = ctlib.run_traced([py, PEER, "client", port, "AES128-SHA", str(SEND_BYTES),
                                  str(write)], cdir)
            check(p.returncode == 0 and b"TLSv1.2 AES128-SHA" in p.stderr,
                  f"{name}: the client sent over TLS 1.2 AES128-SHA "
                  f"({p.stderr.decode(errors='replace').strip()[-300:]})")
            server.wait()
        finally:
            log = server.stop()
        check(str(SEND_BYTES) in log, f"{name}: the server received {SEND_BYTES} bytes ({log[-200:]!r})")
        cli, srv = ctlib.report_ok([cdir]), ctlib.report_ok([sdir])
        counted = {}
        for side, doc, direction in (("client", cli, "encrypt"), ("server", srv, "decrypt")):
            paths = data_paths(doc, "aes-128-cbc-hmac-sha1", direction)
            calls, counted[side] = totals(paths)
            check(within(counted[side], SEND_BYTES), f"{name}: {side} counts {counted[side]} bytes "
                  f"for {SEND_BYTES} of payload (+ each record's IV, MAC and padding)")
        # the reader opens record by record what the writer sealed, many at a time or not
        check(counted["client"] == counted["server"], f"{name}: the client sealed exactly the "
              f"bytes the server opened ({counted['client']}, {counted['server']})")
        entries = {p["entry"] for p in data_paths(cli, "aes-128-cbc-hmac-sha1", "encrypt")}
        if write >= 65536 or write == 0:
            check("EVP ctrl multi-block" in entries, f"{name}: libssl's multi-block writes are "
                  f"counted on their own entry ({sorted(entries)})")


def tls12_s_server(tmp, cert, key, src):
    name = "TLS 1.2 AES128-SHA no-EtM s_server"
    srv, cli = daemons.s_server_curl(tmp, cert, key, name,
                                     ["--tlsv1.2", "--tls-max", "1.2", "--ciphers", "AES128-SHA"],
                                     src, server_opts=["-tls1_2", "-no_etm", "-cipher", "AES128-SHA"])
    counted = {}
    for side, doc, direction in (("server", srv, "encrypt"), ("client", cli, "decrypt")):
        calls, counted[side] = totals(data_paths(doc, "aes-128-cbc-hmac-sha1", direction) or
                                      data_paths(doc, "aes-128-cbc", direction))
        check(within(counted[side], FILE_BYTES), f"{name} {side}: {counted[side]} bytes for the "
              f"{FILE_BYTES}-byte file (+ each record's IV, MAC and padding)")
    check(counted["server"] == counted["client"], f"{name}: curl opened exactly the bytes "
          f"s_server sealed ({counted['server']}, {counted['client']})")


def test():
    openssl, curl = daemons.need_openssl_curl()
    ctlib.need_program("cmp")
    tmp = ctlib.tmpdir("e2e-exact")
    key, cert = ctlib.throwaway_cert(tmp)
    src = os.path.join(tmp, "file.bin")
    daemons.random_file(src, FILE_BYTES)
    tls13_ccm(tmp, cert, key, src)
    tls12_multiblock(tmp, cert, key)
    tls12_s_server(tmp, cert, key, src)


ctlib.main(test)
