#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Failures stay the program's own: `openssl enc -d` with a wrong password fails with the same
exit status, stdout and stderr with and without cryptrace (launcher and bare preload). OpenSSL
prefixes error lines with the thread id, which differs between any two runs: it is masked."""
import os
import re

import ctlib
from ctlib import check


def masked(err):
    return re.sub(rb"(?m)^[0-9A-F]+:error:", b"TID:error:", err)


def test():
    openssl = ctlib.need_program("openssl")
    work = ctlib.tmpdir("wrongpass")
    plain = os.path.join(work, "plain")
    ct = os.path.join(work, "ct")
    open(plain, "wb").write(ctlib.plaintext(100000))
    p = ctlib.run([openssl, "enc", "-aes-256-cbc", "-pbkdf2", "-pass", "pass:right", "-in",
                   plain, "-out", ct])
    check(p.returncode == 0, "encrypted a file with a password")

    # A wrong key still yields valid PKCS#7 padding about once in 256 tries (the salt and the
    # data are random), and then openssl exits 0: take the first wrong password that fails.
    # The outcome for a given file and password is deterministic, so the comparison holds.
    for attempt in range(16):
        argv = [openssl, "enc", "-d", "-aes-256-cbc", "-pbkdf2", "-pass", f"pass:wrong{attempt}",
                "-in", ct]
        native = ctlib.run(argv)
        if native.returncode != 0:
            break
    traced = ctlib.run_traced(argv, ctlib.tmpdir("wrongpass-trace"))
    bare = ctlib.run(argv, env=ctlib.preload_env(ctlib.tmpdir("wrongpass-bare")))
    check(native.returncode != 0,
          f"a wrong password fails natively (exit {native.returncode}, {attempt + 1} tried)")
    for name, p in (("launcher", traced), ("bare preload", bare)):
        check(p.returncode == native.returncode, f"{name}: exit status {p.returncode} unchanged")
        check(p.stdout == native.stdout, f"{name}: stdout identical ({len(p.stdout)} bytes)")
        check(masked(p.stderr) == masked(native.stderr),
              f"{name}: stderr identical: {p.stderr.decode(errors='replace').strip()[:160]}")


ctlib.main(test)
