#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The report's times for libgcrypt paths against examples/gcrypt_bench's own clock, within the
bound the report states for every path (docs/report.md: 10 %), as tests/truth does for EVP:
gcrypt_bench tight runs gcry_cipher_encrypt (or decrypt) of one size on one handle in batches of
about a millisecond between clock_gettime reads; the report's time per call (the path's WALL
and the pauses inside its runs of calls, over the calls) against the batches' robust mean per
call. Sizes from 16 B (where the hook's own cost shows) to 64 KiB, XTS (cryptsetup's), CBC both
ways, CTR, and CFB with a new IV before every call (gpg's mode; the IV set-up is then part of the
iteration and of the path). A case out of bound runs again, up to TRUTH_ROUNDS times, and is judged by
the median of its ratios (a loaded 2-core machine slows single runs by tens of %); the suite
runs alone (is_parallel: false)."""
import json
import os

import ctlib
from ctlib import check
from ctlib.truth import TRUTH_BOUND, judge_truth

SECONDS = os.environ.get("CT_TRUTH_SECONDS", "0.3")
BENCH = os.path.join(ctlib.CT_EXAMPLES, "gcrypt_bench")
results = []


def tight(cipher, size, decrypt=False, reiv=False):
    args = ["-s", SECONDS] + (["-d"] if decrypt else []) + (["-r"] if reiv else []) + ["tight", cipher, str(size)]

    def measure():
        out = ctlib.tmpdir("gcrypt-truth")
        p = ctlib.run_traced([BENCH] + args, out)
        check(p.returncode == 0, f"gcrypt_bench {' '.join(args)} exits 0 ({p.stderr[-200:]!r})")
        truth = json.loads(p.stdout.decode())
        doc = ctlib.report_ok([out])
        paths = [x for x in doc["paths"] if x["api"] == "gcrypt"]
        exact = len(paths) == 1 and paths[0]["calls"] == truth["iterations"] and paths[0]["bytes"] == truth["bytes"]
        check(exact, f"{cipher} {size}: one path with the program's calls and bytes\n"
              f"{ctlib.describe_paths(doc)}") if not exact else None
        each = (paths[0]["wall_ns"] + paths[0]["pause_ns"]) / truth["iterations"]
        want = truth["robust_batch_ns"] / truth["batch_iterations"]
        return each / want, f"{each:.1f} vs {want:.1f} ns per call"

    name = f"{cipher}{' decrypt' if decrypt else ''}{' with an IV each' if reiv else ''} {size} B"
    med, _ = judge_truth(name, measure)
    results.append((name, med))


def test():
    if os.environ.get("CT_ASAN"):
        ctlib.skip("timing under the sanitizer runtime is not the program's: the ASan pass "
                   "leaves the ground-truth suites out")
    if not os.path.exists(BENCH):
        ctlib.skip("examples/gcrypt_bench was not built (libgcrypt20-dev: tests/setup-deps.sh)")
    for size in (16, 512, 4096, 65536):
        tight("aes-256-xts", size)
    for size in (16, 4096):
        tight("aes-128-cbc", size)
        tight("aes-256-cbc", size, decrypt=True)
        tight("aes-256-ctr", size)
    tight("aes-256-cfb", 16384, reiv=True)
    print("\nreport/truth (median over rounds; the bound is +-%d %%)" % (100 * TRUTH_BOUND))
    for name, med in results:
        print(f"  {med:6.3f}  {name}")


ctlib.main(test)
