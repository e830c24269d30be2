#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/integration/evp_api: every hooked EVP init entry point (Encrypt/Decrypt/Cipher x Init,
_ex, _ex2) classifies its context on the right cipher and direction, with exact calls and
bytes; a copied context counts on its original's path; a reset context re-initialised on another
cipher gets that path; a failed DecryptFinal is an error event with its call."""
import os
import re

import ctlib
from ctlib import check


def test():
    prog = os.environ["CT_EVP_API"]
    out = ctlib.tmpdir("evp-api")
    p = ctlib.run_traced([prog], out)
    text = p.stdout.decode()
    check(p.returncode == 0, f"evp_api exited 0 under cryptrace ({p.stderr.decode()[:200]})")
    doc = ctlib.report_ok([out])
    print(ctlib.describe_paths(doc))
    expected = ctlib.parse_expect(text)
    for api, cipher, direction, calls, nbytes in expected:
        got = ctlib.totals(doc, api=api, impl="provider:default", cipher=cipher, dir=direction)
        check(got == (calls, nbytes), f"{cipher} {direction}: {got} == {(calls, nbytes)}")
    known = {(c, d) for _, c, d, _, _ in expected}
    aes = [(q["cipher"], q["dir"]) for q in ctlib.paths(doc, api="evp")
           if q["cipher"].startswith("aes") and q["calls"]]
    # libcrypto's own DRBG (aes-256-ctr/ecb encrypt) may show up: nothing else may
    extra = [k for k in aes if k not in known and k not in (("aes-256-ecb", "encrypt"),
                                                            ("aes-256-ctr", "encrypt"))]
    check(not extra, f"no unexpected EVP paths: {extra}")
    failed = int(re.search(r"final_failures=(\d+)", text).group(1))
    check(failed == 1, f"the program's bad-padding DecryptFinal failed ({failed})")
    finals = [e for e in doc["events"] if e["kind"] == "call-failed" and
              e["call"] == "EVP_DecryptFinal_ex"]
    check(finals and sum(e["count"] for e in finals) == failed,
          f"the failed EVP_DecryptFinal_ex is an event ({finals})")


ctlib.main(test)
