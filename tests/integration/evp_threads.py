#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""examples/evp_threads (8 threads, fixed EVP work of known sizes, mixed ciphers and entry
points): the report's totals per cipher and direction are exact, both through the launcher
and with a bare LD_PRELOAD + CRYPTRACE_OUT."""
import ctlib
from ctlib import check


def verify(doc, expected, how):
    print(ctlib.describe_paths(doc))
    for api, cipher, direction, calls, nbytes in expected:
        got = ctlib.totals(doc, api=api, impl="provider:default", cipher=cipher, dir=direction)
        check(got == (calls, nbytes),
              f"{how}: {cipher} {direction} (calls, bytes) {got} == {(calls, nbytes)}")


def test():
    prog = ctlib.example("evp_threads")
    out = ctlib.tmpdir("threads")
    p = ctlib.run_traced([prog], out)
    check(p.returncode == 0, f"evp_threads exited 0 under cryptrace ({p.stderr.decode()[:200]})")
    expected = ctlib.parse_expect(p.stdout.decode())
    verify(ctlib.report_ok([out]), expected, "launcher")

    bare = ctlib.tmpdir("threads-bare")
    p = ctlib.run([prog], env=ctlib.preload_env(bare))
    check(p.returncode == 0, "evp_threads exited 0 under a bare LD_PRELOAD")
    check(len(ctlib.traces(bare)) == 1, "bare LD_PRELOAD wrote one trace file")
    verify(ctlib.report_ok([bare]), expected, "bare preload")


ctlib.main(test)
