#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""This host's OpenSSL 3.0 run through its dynamic loader started as a command
(`ld-linux-x86-64.so.2 --library-path DIR openssl speed ...`), the way the 3.5 tests run Debian
13's, without needing the archive: `cryptrace run` traces it as one process (the launcher does
not take the loader for a static program), the process is openssl (its file and argv, not the
loader's), the contexts are openssl's, and the calls and bytes are exact."""
import ctlib
import osslver

ctlib.main(lambda: osslver.speed_exact(osslver.host_tree(), "provider:default"))
