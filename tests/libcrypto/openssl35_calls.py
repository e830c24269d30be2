#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""OpenSSL 3.5 (Debian 13's own openssl, libcrypto and glibc, fetched by fetch.sh, run through that
glibc's loader: `ld-linux-x86-64.so.2 --library-path DIR openssl`) under cryptrace: exact calls
and bytes for `openssl speed -evp` aes-128-cbc (both directions) and aes-256-gcm and `openssl
enc` of a 1 MiB file (byte-identical to the native run), all on paths named `provider:default`,
one process (not a second "static" one for the loader) whose libcrypto is named OpenSSL 3.5,
contexts made by openssl (not by the loader /proc/self/exe names), no warning on these clean
runs."""
import ctlib
import osslver


ctlib.main(lambda: osslver.calls("3.5", "provider:default"))
