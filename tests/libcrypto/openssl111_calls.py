#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""OpenSSL 1.1.1w (Debian 11's own openssl and libcrypto, fetched by fetch.sh) under cryptrace:
exact calls and bytes for `openssl speed -evp` aes-128-cbc (both directions) and aes-256-gcm and
`openssl enc` of a 1 MiB file (byte-identical to the native run), all on paths named `builtin`
(1.1 has no providers: libcrypto's own EVP_CIPHER method tables, no engine asked for), one
process whose libcrypto is named OpenSSL 1.1.1w, contexts made by openssl, no warning on these
clean runs."""
import ctlib
import osslver


ctlib.main(lambda: osslver.calls("1.1.1", "builtin"))
