#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/libcrypto/boringssl_speed: BoringSSL's own tool, `bssl-tool speed` (Debian's
android-boringssl), traced: a program nobody here wrote, sealing and opening with EVP_AEAD.

`bssl-tool speed -filter AES-128-GCM -chunks 16,8192 -json` prints each test's numCalls (AES-128-GCM
seals; AES-128-GCM-SIV seals and opens). Besides those it calls the function once before it
starts counting (its TimeFunction's warm-up), and an open test seals once to make what it opens:
so the report's seals are sum(seal numCalls) + one per seal test + one per open test, and its
opens sum(open numCalls) + one per open test, each extra call of its test's size (an open's bytes
are the sealed message: the chunk and the 16-byte tag).

- clean: those exact calls and bytes, every path boringssl:aesni on a CPU with AES-NI, the
  process table's libcrypto BoringSSL, no warning or error.
- masked (OPENSSL_ia32cap hides AES-NI): the same exactness, boringssl:vpaes, and one
  software-aes finding naming the mask."""
import json
import os
import re

import ctlib
from ctlib import check

CHUNKS = (16, 8192)
TAG = 16  # AES-GCM and AES-GCM-SIV's tag: part of what an open is given
ARGS = ["speed", "-filter", "AES-128-GCM", "-timeout", "1", "-chunks", ",".join(map(str, CHUNKS)),
        "-json"]


def tool_results(stdout):
    """[(cipher, op, calls, chunk)] from the tool's JSON list."""
    start = stdout.find("[")
    rows = json.loads(stdout[start:]) if start >= 0 else []
    out = []
    for r in rows:
        m = re.fullmatch(r"(AES-128-GCM(?:-SIV)?) \((\d+) bytes\) (seal|open)", r["description"])
        if m:
            out.append((m.group(1).lower(), m.group(3), r["numCalls"], int(m.group(2))))
    check(out, f"bssl-tool speed printed its results ({stdout[:200]!r})")
    return out


def expected(results):
    """{(cipher, dir): (calls, bytes)} the report must show."""
    want = {}

    def add(cipher, direction, calls, nbytes):
        c, b = want.get((cipher, direction), (0, 0))
        want[(cipher, direction)] = (c + calls, b + nbytes)

    for cipher, op, calls, chunk in results:
        if op == "seal":
            add(cipher, "encrypt", calls + 1, (calls + 1) * chunk)  # + the warm-up
        else:
            add(cipher, "encrypt", 1, chunk)  # the seal that makes what it opens
            add(cipher, "decrypt", calls + 1, (calls + 1) * (chunk + TAG))
    return want


def run_case(tag, tool, env):
    out = ctlib.tmpdir(f"bssl-speed-{tag}")
    p = ctlib.run_traced([tool] + ARGS, out, env=dict(os.environ, **env), text=True)
    check(p.returncode == 0, f"{tag}: bssl-tool speed exits 0 under cryptrace ({p.stderr[:200]})")
    doc = ctlib.report_ok([out])
    print(ctlib.describe_paths(doc))
    for (cipher, direction), (calls, nbytes) in sorted(expected(tool_results(p.stdout)).items()):
        got = ctlib.totals(doc, api="evp", cipher=cipher, dir=direction, entry="EVP_AEAD seal/open")
        check(got == (calls, nbytes), f"{tag}: {cipher} {direction}: report {got}, bssl-tool "
                                      f"{(calls, nbytes)} (its counts, warm-ups included)")
    procs = ctlib.processes(doc)
    check(len(procs) == 1 and procs[0]["libcrypto"] == "BoringSSL",
          f"{tag}: the process's libcrypto is BoringSSL ({[q.get('libcrypto') for q in procs]})")
    return doc


def impls(doc):
    return sorted({p["impl"] for p in doc["paths"] if p["calls"]})


def test():
    tool = ctlib.need_program("bssl-tool")
    doc = run_case("clean", tool, {})
    if ctlib.cpu_has_aes():
        check(impls(doc) == ["boringssl:aesni"], f"clean: every path boringssl:aesni ({impls(doc)})")
    ctlib.check_clean(doc, "clean")
    if not ctlib.cpu_has_aes():
        print("masked: this CPU has no AES instructions, nothing to mask")
        return
    doc = run_case("masked", tool, {"OPENSSL_ia32cap": ctlib.MASK})
    check(impls(doc) == ["boringssl:vpaes"], f"masked: every path boringssl:vpaes ({impls(doc)})")
    ctlib.check_masked(doc, "masked")


ctlib.main(test)
