#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`openssl s_server -WWW` serving a 64 MiB file on loopback (throwaway self-signed cert) and
`curl` fetching it over TLS 1.2 (ECDHE-RSA-AES128-GCM-SHA256) and TLS 1.3
(TLS_AES_256_GCM_SHA384), both sides under cryptrace. Each side's report must show the GCM
path with the file's bytes (server encrypt, client decrypt: >= 64 MiB, <= 64 MiB * 1.01 +
1 MiB), contexts created by libssl for TLS (counted per call site, and named TLS 1.2 or TLS 1.3
records from how the record layer drives them), and the crypto share of the process's time; the
fetched file is identical. s_server runs with -naccept 1, so it exits by itself (a clean END)."""
import os

import ctlib
from ctlib import check, daemons

CASES = [
    ("TLS 1.2", ["--tlsv1.2", "--tls-max", "1.2", "--ciphers", "ECDHE-RSA-AES128-GCM-SHA256"],
     "aes-128-gcm"),
    ("TLS 1.3", ["--tlsv1.3", "--tls13-ciphers", "TLS_AES_256_GCM_SHA384"], "aes-256-gcm"),
]


def test():
    daemons.need_openssl_curl()
    ctlib.need_program("cmp")
    tmp = ctlib.tmpdir("e2e-tls")
    key, cert = ctlib.throwaway_cert(tmp)
    src = os.path.join(tmp, "big.bin")
    daemons.random_file(src, daemons.COPY_BYTES)
    for name, curl_opts, cipher in CASES:
        print(f"--- {name}")
        srv, client = daemons.s_server_curl(tmp, cert, key, name, curl_opts, src)
        libssl = {m for doc in (client, srv) for pr in doc["processes"]
                  for pa in pr.get("paths", [])
                  for m in [(pa.get("created_by") or {}).get("module", "")]
                  if m.startswith("libssl")}
        check(libssl, f"{name}: some contexts were created by libssl ({sorted(libssl)})")
        sproc = daemons.check_side(srv, "server", cipher, "encrypt", libssl, "TLS")
        cproc = daemons.check_side(client, "client", cipher, "decrypt", libssl, "TLS")
        check(sproc.get("role") == "openssl s_server", f"server role {sproc.get('role')!r}")
        check(cproc.get("role", "").startswith("curl"), f"client role {cproc.get('role')!r}")
        # the record layer's usage patterns name the protocol version: a GCM ctrl per record
        # (EVP_CTRL_AEAD_TLS1_AAD) in TLS 1.2, a new IV per record on the same key in TLS 1.3
        for doc, side, direction in ((srv, "server", "encrypt"), (client, "client", "decrypt")):
            daemons.check_creators(doc, side, cipher, direction, libssl, f"{name} records")


ctlib.main(test)
