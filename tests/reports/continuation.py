#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A program that closes every fd (close_range) mid-run leaves X.<pid>.ctrace and
X.<pid>.ctrace.1: `cryptrace report DIR` (and `cryptrace report X.ctrace`) reads both as one
process with the newest snapshot (all calls counted once) and the per-call operations of both
files; a `.ctrace.N` whose header names another process (another pid or start) stays a process
of its own."""
import os
import re
import shutil

import ctlib
from ctlib import check


def test():
    prog = os.environ.get("CT_CLOSERANGE_EVP")
    check(bool(prog) and os.path.exists(prog), f"closerange_evp is built ({prog!r})")
    out = ctlib.tmpdir("cont")
    env = dict(os.environ, CRYPTRACE_FLUSH_MS="10")
    p = ctlib.run_traced([prog, "1000", "2000"], out, extra=["--mode", "calls"], env=env)
    if p.returncode == 2:
        ctlib.skip(f"close_range is not available here: {p.stderr.decode().strip()}")
    check(p.returncode == 0, f"closerange_evp ran under cryptrace ({p.stderr.decode()[:200]})")
    names = sorted(os.listdir(out))
    print("files:", names)
    base = [n for n in names if re.fullmatch(r"closerange_evp\.\d+\.ctrace", n)]
    cont = [n for n in names if re.fullmatch(r"closerange_evp\.\d+\.ctrace\.1", n)]
    check(len(base) == 1 and len(cont) == 1, "the writer continued in a .ctrace.1 file")
    def cbc(doc):
        return ctlib.totals(doc, api="evp", cipher="aes-128-cbc", dir="encrypt")

    both = [os.path.join(out, base[0]), os.path.join(out, cont[0])]
    for how, args in (("DIR", [out]), ("the first file", both[:1]), ("both files by name", both)):
        doc = ctlib.report_ok(args)
        procs = doc["processes"]
        check(len(procs) == 1, f"report {how}: one process, not one per file ({len(procs)})")
        check(cbc(doc) == (3000, 3000 * 64), f"report {how}: all 3000 updates counted once "
              f"({cbc(doc)})")
        check(procs[0].get("per_call_ops") == 3000,
              f"report {how}: the per-call operations of both files add up "
              f"({procs[0].get('per_call_ops')})")
        check(procs[0].get("status") == "complete", f"report {how}: the process is complete")

    # Without the continuation the first file holds only what was flushed before close_range:
    # the 999 updates before the pause (the flusher thread writes them during it), or 1000 when
    # the call after the pause found a snapshot due. Read a copy alone.
    alone = ctlib.tmpdir("cont-alone")
    shutil.copy(os.path.join(out, base[0]), alone)
    doc = ctlib.report_ok([alone])
    check(cbc(doc)[0] in (999, 1000), f"the first file alone has the updates before "
          f"close_range ({cbc(doc)}): the continuation is what holds the rest")

    # A .ctrace.N of another process (here: another run's trace under that name) is not merged.
    other = ctlib.tmpdir("cont-other")
    p = ctlib.run_traced([prog, "10", "20"], other)
    check(p.returncode == 0, "a second run")
    mixed = ctlib.tmpdir("cont-mixed")
    shutil.copy(os.path.join(out, base[0]), mixed)
    shutil.copy(os.path.join(out, cont[0]), mixed)
    second = sorted(f for f in os.listdir(other) if f.endswith(".ctrace.1"))[-1]
    shutil.copy(os.path.join(other, second), os.path.join(mixed, base[0] + ".2"))
    doc = ctlib.report_ok([mixed])
    check(len(doc["processes"]) == 2, "a .ctrace.2 with another pid in its header is its own process")
    check(cbc(doc) == (3030, 3030 * 64), f"both processes counted ({cbc(doc)})")


ctlib.main(test)
