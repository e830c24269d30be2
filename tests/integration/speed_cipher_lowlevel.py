#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`openssl speed -seconds 1 -bytes 16 aes-256-cbc` (no -evp): OpenSSL 3.0 runs it through
EVP_Cipher, so the path has entry EVP_Cipher and exactly openssl's count of calls. Then the
low-level AES_* example: api "aes" paths with the exact calls and bytes it prints."""
import ctlib
from ctlib import check


def speed_no_evp():
    openssl = ctlib.need_program("openssl")
    out = ctlib.tmpdir("speed-cipher")
    p = ctlib.run_traced([openssl, "speed", "-seconds", "1", "-bytes", "16", "aes-256-cbc"], out)
    check(p.returncode == 0, "openssl speed aes-256-cbc exited 0 under cryptrace")
    n = ctlib.speed_count(p.stderr.decode(errors="replace"), "aes-256-cbc")
    doc = ctlib.report_ok([out])
    print(ctlib.describe_paths(doc))
    calls, nbytes = ctlib.totals(doc, api="evp", cipher="aes-256-cbc", dir="encrypt",
                                 entry="EVP_Cipher")
    check(calls == n, f"EVP_Cipher path calls {calls} == openssl's count {n}")
    check(nbytes == 16 * n, f"EVP_Cipher path bytes {nbytes} == 16 * {n}")


def lowlevel_example():
    out = ctlib.tmpdir("lowlevel")
    p = ctlib.run_traced([ctlib.example("lowlevel_aes")], out)
    check(p.returncode == 0, "lowlevel_aes exited 0 under cryptrace")
    expected = ctlib.parse_expect(p.stdout.decode())
    doc = ctlib.report_ok([out])
    print(ctlib.describe_paths(doc))
    for api, cipher, direction, calls, nbytes in expected:
        got = ctlib.totals(doc, api=api, cipher=cipher, dir=direction)
        check(got == (calls, nbytes),
              f"{api} {cipher} {direction}: (calls, bytes) {got} == {(calls, nbytes)}")
    want_keys = {(c, d) for _, c, d, _, _ in expected}
    extra = [p for p in ctlib.paths(doc, api="aes") if (p["cipher"], p["dir"]) not in want_keys]
    check(not extra, f"no unexpected low-level paths ({len(extra)} found)")
    check(all(p.get("impl") == "lowlevel" for p in ctlib.paths(doc, api="aes")),
          "every api aes path has impl lowlevel")


def test():
    speed_no_evp()
    lowlevel_example()


ctlib.main(test)
