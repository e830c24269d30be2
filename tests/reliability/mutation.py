#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Mutation of real traces (a multi-threaded run, per-call mode so OPS records are in it too):
cut at every record boundary and at many offsets inside records, and flip bytes at many offsets.
The reporter never crashes (no negative exit = no signal), never hangs (timeout), always answers
with exit 0, 1 or 2, and a cut file reports every record before the damage: its call count is at
least that of the last whole snapshot before the cut, and never more than the whole file's."""
import os
import random
import struct
import subprocess

import rellib
from rellib import ctlib, check

PREAMBLE = 16
REPORT_TIMEOUT = 60


def record_bounds(data):
    bounds, off = [], PREAMBLE
    while off + 8 <= len(data):
        (length,) = struct.unpack_from("<I", data, off + 4)
        end = off + 8 + length + 4
        if end > len(data):
            break
        bounds.append((off, end))
        off = end
    return bounds


def report(path):
    p = subprocess.run([ctlib.CRYPTRACE, "report", "--json", path], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=REPORT_TIMEOUT)
    doc = None
    if p.stdout.strip():
        import json
        doc = json.loads(p.stdout)
    return p.returncode, doc


def calls(doc):
    return sum(p.get("calls", 0) for p in (doc or {}).get("paths", []))


def test():
    out = ctlib.tmpdir("mut-src")
    env = rellib.env_with(out, CRYPTRACE_FLUSH_MS=20, CRYPTRACE_MODE="calls")
    p = ctlib.run([rellib.prog("rel_threads"), "0.3", "4"], env=env)
    check(p.returncode == 0, "source run")
    files = ctlib.traces(out)
    data = open(files[0], "rb").read()
    whole = calls(report(files[0])[1])
    bounds = record_bounds(data)
    check(bounds and bounds[-1][1] == len(data), f"{len(bounds)} whole records, {len(data)} bytes")

    work = ctlib.tmpdir("mut")
    path = os.path.join(work, "m.ctrace")
    rng = random.Random(int(os.environ.get("CT_REL_SEED", "11")))
    # the call count a prefix ending at each record boundary reports
    at_boundary = {}
    step = max(1, len(bounds) // 60)
    for _, end in bounds[::step] + bounds[-1:]:
        open(path, "wb").write(data[:end])
        rc, doc = report(path)
        check(rc in (0, 1), f"prefix up to {end}: exit {rc}")
        at_boundary[end] = calls(doc)
    cuts = sorted(set(rng.randrange(1, len(data)) for _ in range(100)))
    for cut in cuts:
        open(path, "wb").write(data[:cut])
        rc, doc = report(path)
        if rc not in (0, 1, 2):
            check(False, f"cut {cut}: exit {rc} (never a signal)")
        before = max([c for e, c in at_boundary.items() if e <= cut], default=0)  # sampled
        got = calls(doc)
        if not (before <= got <= whole):
            check(False, f"cut {cut}: {got} calls, want {before}..{whole}")
    print(f"ok: {len(cuts)} cuts, {len(bounds)} boundaries: never a crash, every record before "
          "the cut reported")
    flips = 0
    for _ in range(150):
        bad = bytearray(data)
        for _ in range(rng.choice((1, 1, 2, 8))):
            bad[rng.randrange(len(bad))] ^= 1 << rng.randrange(8)
        open(path, "wb").write(bytes(bad))
        rc, doc = report(path)
        if rc not in (0, 1, 2):
            check(False, f"flipped bytes: exit {rc} (signal?) - input kept at {path}")
        flips += 1
    print(f"ok: {flips} flipped variants: exit 0/1/2 every time, no hang")


ctlib.main(test)
