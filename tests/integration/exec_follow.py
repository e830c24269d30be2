#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Children and exec'd programs are followed, even through a scrubbed environment: a shell
running openssl twice, `env -i openssl ...` (execve with an empty environment), and python's
subprocess with env={} each leave an openssl trace whose byte count is exact. stdin and stdout
pass through the launcher untouched."""
import os

import ctlib
from ctlib import check

KEY = "000102030405060708090a0b0c0d0e0f"
IV = "00000000000000000000000000000000"
SIZE = 100000


def enc(openssl, src):
    return [openssl, "enc", "-aes-128-ctr", "-K", KEY, "-iv", IV, "-in", src, "-out", "/dev/null"]


def openssl_bytes(out):
    doc = ctlib.report_ok([out])
    procs = [q for q in doc.get("processes", []) if q.get("exe", "").endswith("/openssl")]
    _, nbytes = ctlib.totals(doc, api="evp", cipher="aes-128-ctr", dir="encrypt")
    return len(procs), nbytes


def test():
    openssl = ctlib.need_program("openssl")
    envprog = ctlib.need_program("env")
    python3 = ctlib.need_program("python3")
    work = ctlib.tmpdir("exec")
    src = os.path.join(work, "data")
    open(src, "wb").write(ctlib.plaintext(SIZE, "file"))

    out = ctlib.tmpdir("exec-sh")
    cmd = " ".join(enc(openssl, src))
    p = ctlib.run_traced(["sh", "-c", f"{cmd} && {cmd}"], out)
    check(p.returncode == 0, "a shell ran openssl twice under cryptrace")
    check(openssl_bytes(out) == (2, 2 * SIZE), f"two openssl traces, {2 * SIZE} bytes in all")

    out = ctlib.tmpdir("exec-envi")
    p = ctlib.run_traced([envprog, "-i"] + enc(openssl, src), out)
    check(p.returncode == 0, "env -i openssl ran")
    check(openssl_bytes(out) == (1, SIZE), "env -i (empty environment): openssl still traced")

    out = ctlib.tmpdir("exec-py")
    code = ("import subprocess, sys; "
            "sys.exit(subprocess.run(sys.argv[1:], env={}).returncode)")
    p = ctlib.run_traced([python3, "-c", code] + enc(openssl, src), out)
    check(p.returncode == 0, "python subprocess with env={} ran openssl")
    check(openssl_bytes(out) == (1, SIZE), "python subprocess env={}: openssl still traced")

    # stdin and stdout go straight through the launcher.
    data = ctlib.plaintext(SIZE, "stdin")
    argv = [openssl, "enc", "-aes-128-ctr", "-K", KEY, "-iv", IV]
    native = ctlib.run(argv, input_bytes=data)
    traced = ctlib.run_traced(argv, ctlib.tmpdir("exec-stdin"), input_bytes=data)
    check(native.returncode == traced.returncode == 0, "openssl enc on stdin ran both ways")
    check(native.stdout == traced.stdout and len(traced.stdout) == SIZE,
          "stdin -> stdout output identical through the launcher")


ctlib.main(test)
