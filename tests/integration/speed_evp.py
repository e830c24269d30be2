#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`openssl speed -seconds 1 -bytes B -evp aes-128-cbc` under cryptrace, B = 16 and 8192, each
with and without -decrypt: the path (evp, provider:default, aes-128-cbc, encrypt|decrypt) has exactly the
calls openssl prints ("N AES-128-CBC's in") and exactly N*B bytes."""
import ctlib
from ctlib import check


def one(size, decrypt):
    openssl = ctlib.need_program("openssl")
    out = ctlib.tmpdir("speed")
    argv = [openssl, "speed", "-seconds", "1", "-bytes", str(size)]
    argv += ["-decrypt"] if decrypt else []
    argv += ["-evp", "aes-128-cbc"]
    p = ctlib.run_traced(argv, out)
    err = p.stderr.decode(errors="replace")
    check(p.returncode == 0, f"openssl speed {size} B decrypt={decrypt} exited 0 under cryptrace")
    n = ctlib.speed_count(err, "AES-128-CBC")
    doc = ctlib.report_ok([out])
    direction = "decrypt" if decrypt else "encrypt"
    calls, nbytes = ctlib.totals(doc, api="evp", impl="provider:default",
                                 cipher="aes-128-cbc", dir=direction)
    print(ctlib.describe_paths(doc))
    check(n > 0, f"openssl did some work ({n} calls)")
    check(calls == n, f"{size} B {direction}: report calls {calls} == openssl's count {n}")
    check(nbytes == n * size, f"{size} B {direction}: report bytes {nbytes} == {n} * {size}")


def test():
    for decrypt in (False, True):
        for size in (16, 8192):
            one(size, decrypt)


ctlib.main(test)
