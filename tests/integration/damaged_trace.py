#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A real trace cut inside records at several offsets reports everything before the cut
(exit 1, a one-line warning naming the file); a corrupted byte likewise; a foreign, empty or
random file gives a one-line error and exit 2. Never a crash (a negative exit = a signal)."""
import os
import random

import ctlib
from ctlib import check

PREAMBLE = ctlib.TRACE_PREAMBLE


def record_bounds(data):
    """(start, end) of each whole record."""
    return [(start, end) for start, end, _, _ in ctlib.trace_records(data)]


def one_line(err):
    lines = [line for line in err.splitlines() if line.strip()]
    return len(lines) == 1


def test():
    prog = ctlib.example("evp_threads")
    out = ctlib.tmpdir("damage")
    p = ctlib.run_traced([prog], out)
    check(p.returncode == 0, "evp_threads ran under cryptrace")
    files = ctlib.traces(out)
    check(len(files) == 1, "one trace file")
    data = open(files[0], "rb").read()
    full = ctlib.report_ok(files)
    full_calls = sum(pp["calls"] for pp in full["paths"])
    bounds = record_bounds(data)
    check(len(bounds) >= 4 and bounds[-1][1] == len(data),
          f"the trace is whole records ({len(bounds)} records, {len(data)} bytes)")

    work = ctlib.tmpdir("cuts")
    cuts = sorted({PREAMBLE + 3, bounds[0][1] + 5, bounds[len(bounds) // 2][0] + 9,
                   bounds[-2][0] + 1, bounds[-1][1] - 1})
    last_calls = -1
    for cut in cuts:
        path = os.path.join(work, f"cut-{cut}.ctrace")
        with open(path, "wb") as f:
            f.write(data[:cut])
        rc, doc, err = ctlib.report([path])
        check(rc == 1, f"cut at {cut}: exit 1 (damaged input), got {rc}")
        check(path in err and one_line(err), f"cut at {cut}: one warning line naming the file")
        calls = sum(pp["calls"] for pp in (doc or {}).get("paths", []))
        check(calls <= full_calls, f"cut at {cut}: {calls} calls reported, at most {full_calls}")
        check(calls >= last_calls, f"cut at {cut}: a later cut never reports less")
        last_calls = calls
    check(last_calls == full_calls, "a cut inside the last record keeps every count")

    # A flipped byte inside a record's payload: reported up to that record, exit 1.
    mid = bounds[len(bounds) // 2]
    bad = bytearray(data)
    bad[mid[0] + 8] ^= 0x55
    path = os.path.join(work, "corrupt.ctrace")
    open(path, "wb").write(bytes(bad))
    rc, doc, err = ctlib.report([path])
    check(rc == 1 and one_line(err), f"corrupted record: exit 1 and one warning line ({rc})")

    rng = random.Random(2)
    foreign = {
        "empty": b"",
        "text": b"hello, this is not a trace\n",
        "elf": open("/bin/ls", "rb").read(4096),
        "random": bytes(rng.getrandbits(8) for _ in range(4096)),
        "magic-only": b"CRYTRACE",
    }
    for name, content in foreign.items():
        path = os.path.join(work, f"{name}.bin")
        open(path, "wb").write(content)
        p = ctlib.run([ctlib.CRYPTRACE, "report", path])
        err = p.stderr.decode(errors="replace")
        check(p.returncode >= 0, f"{name}: no crash")
        check(p.returncode in (1, 2) and one_line(err),
              f"{name}: exit {p.returncode} with a one-line error: {err.strip()[:100]}")
        if name in ("text", "elf", "random"):
            check(p.returncode == 2, f"{name}: a foreign file is exit 2")


ctlib.main(test)
