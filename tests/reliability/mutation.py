#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Mutation of real traces (a multi-threaded run, per-call mode so OPS records are in it too):
cuts at record boundaries and at random offsets, and bit flips at random offsets plus targeted
ones in every record type (header, payload, CRC). The reporter never crashes (no negative exit =
no signal), never hangs (timeout), always answers with exit 0, 1 or 2, and reports every record
before the damage: for damage first at byte X, its per-path calls and bytes (summed per api,
cipher and direction) equal exactly those of the newest STATS snapshots among the records that
end at or before X, read here from the intact file (docs/trace-format.md: the reader stops at the
damaged record; snapshots are cumulative), and the process is never reported complete. At record
boundaries the reporter's figures are checked against this reading of the intact file first, so
the reference is the reporter's own view of a clean prefix."""
import json
import os
import random
import struct
import subprocess

import ctlib
from ctlib import check

PREAMBLE = ctlib.TRACE_PREAMBLE
records = ctlib.trace_records
REPORT_TIMEOUT = 60
REC_PATH, REC_STATS = 2, 3
TYPES = {1: "HEADER", 2: "PATH", 3: "STATS", 4: "EVENT", 5: "OPS", 6: "THREAD", 7: "PROC", 8: "END",
         9: "MODULE"}
APIS = {1: "evp", 2: "aes", 3: "cryptodev", 4: "afalg"}
DIRS = {1: "encrypt", 2: "decrypt"}


def _str(payload, at):
    (n,) = struct.unpack_from("<I", payload, at)
    return payload[at + 4:at + 4 + n].decode(errors="replace"), at + 4 + n


def expected_after(recs, counts):
    """{k: {(api, cipher, dir): [calls, bytes]}} for each k in counts: what the first k records
    say (the newest STATS of every path defined by a PATH record), in one sweep."""
    defs, stats, out = {}, {}, {}
    want = sorted(set(counts))
    i = 0
    for k in want:
        while i < k:
            _, _, rtype, p = recs[i]
            if rtype == REC_PATH:
                path_id, api, direction = struct.unpack_from("<IBB", p, 0)
                _, at = _str(p, 14)  # impl, after path_id api dir key_bits entry route flags
                cipher, _ = _str(p, at)
                defs[path_id] = (APIS.get(api, str(api)), cipher, DIRS.get(direction, str(direction)))
            elif rtype == REC_STATS:
                path_id, calls, nbytes = struct.unpack_from("<IQQ", p, 0)
                stats[path_id] = (calls, nbytes)
            i += 1
        tot = {}
        for path_id, (calls, nbytes) in stats.items():
            if path_id in defs and calls:
                t = tot.setdefault(defs[path_id], [0, 0])
                t[0] += calls
                t[1] += nbytes
        out[k] = tot
    return out


def report(path):
    p = subprocess.run([ctlib.CRYPTRACE, "report", "--json", path], stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, timeout=REPORT_TIMEOUT)
    doc = json.loads(p.stdout) if p.stdout.strip() else None
    return p.returncode, doc


def totals(doc):
    tot = {}
    for p in (doc or {}).get("paths", []):
        if p.get("calls"):
            t = tot.setdefault((p.get("api"), p.get("cipher"), p.get("dir")), [0, 0])
            t[0] += p.get("calls", 0)
            t[1] += p.get("bytes", 0)
    return tot


def complete(doc):
    return any(q.get("status") == "complete" for q in (doc or {}).get("processes", []))


def kept(work, what, blob):
    """Writes a failing input beside the scratch file, named, for the failure message."""
    f = os.path.join(work, what.replace(" ", "_").replace(",", "-") + ".ctrace")
    with open(f, "wb") as fh:
        fh.write(blob)
    return f"input {f} (kept with CT_KEEP_TMP=1; CT_REL_SEED={os.environ.get('CT_REL_SEED', '11')})"


def test():
    out = ctlib.tmpdir("mut-src")
    env = ctlib.preload_env(out, CRYPTRACE_FLUSH_MS=20, CRYPTRACE_MODE="calls")
    p = ctlib.run([ctlib.built("CT_REL_BIN", "rel_threads"), "0.15", "4"], env=env)
    check(p.returncode == 0, "source run")
    files = ctlib.traces(out)
    data = open(files[0], "rb").read()
    recs = records(data)
    check(recs and recs[-1][1] == len(data), f"{len(recs)} whole records, {len(data)} bytes")
    kinds = sorted({TYPES.get(r[2], f"type {r[2]}") for r in recs})
    print(f"record types: {kinds}")
    check({"HEADER", "PATH", "STATS", "OPS", "END"} <= set(kinds), "the trace has every main type")
    ends = [r[1] for r in recs]

    def whole_before(x):
        """How many records end at or before byte x (all intact when the damage starts at x)."""
        lo, hi = 0, len(ends)
        while lo < hi:
            mid = (lo + hi) // 2
            if ends[mid] <= x:
                lo = mid + 1
            else:
                hi = mid
        return lo

    rng = random.Random(int(os.environ.get("CT_REL_SEED", "11")))
    step = max(1, len(recs) // 60)
    boundaries = sorted(set(range(1, len(recs) + 1, step)) | {len(recs)})
    cuts = sorted(set(rng.randrange(1, len(data)) for _ in range(100)))
    flips = []
    for _ in range(150):
        flips.append(sorted({rng.randrange(len(data)) for _ in range(rng.choice((1, 1, 2, 8)))}))
    # targeted: in two records of every type, a flip in the framing, the payload and the CRC
    for rtype in sorted({r[2] for r in recs}):
        of_type = [r for r in recs if r[2] == rtype]
        for start, end, _, _ in rng.sample(of_type, min(2, len(of_type))):
            for lo, hi in ((start, start + 8), (start + 8, end - 4), (end - 4, end)):
                if hi > lo:
                    flips.append([rng.randrange(lo, hi)])
    exp = expected_after(recs, boundaries + [whole_before(c) for c in cuts] +
                         [whole_before(f[0]) for f in flips] + [len(recs), 0])

    work = ctlib.tmpdir("mut")
    path = os.path.join(work, "m.ctrace")
    rc, doc = report(files[0])
    check(rc == 0 and totals(doc) == exp[len(recs)] and complete(doc),
          f"the intact file: exit {rc}, complete, per-path totals as its records say "
          f"({totals(doc)})")
    # the reference: the reporter reads a clean prefix exactly as the records say
    for k in boundaries:
        with open(path, "wb") as fh:
            fh.write(data[:ends[k - 1]])
        rc, doc = report(path)
        if rc not in (0, 1) or totals(doc) != exp[k]:
            check(False, f"prefix of {k} records ({ends[k - 1]} bytes): exit {rc}, totals "
                  f"{totals(doc)}, its records say {exp[k]}")
    print(f"ok: {len(boundaries)} record-boundary prefixes report exactly what their records say")

    for cut in cuts:
        with open(path, "wb") as fh:
            fh.write(data[:cut])
        rc, doc = report(path)
        k = whole_before(cut)
        if rc not in (0, 1, 2):
            check(False, f"cut at {cut}: exit {rc} (never a signal) - {kept(work, f'cut {cut}', data[:cut])}")
        if totals(doc) != exp[k] or complete(doc):
            check(False, f"cut at {cut} (in record {k + 1}): totals {totals(doc)}, complete "
                  f"{complete(doc)}; the {k} records before it say {exp[k]}")
    print(f"ok: {len(cuts)} cuts: never a crash, exactly the records before the cut, never complete")

    by_type = {}
    for offs in flips:
        bad = bytearray(data)
        for o in offs:
            bad[o] ^= 1 << rng.randrange(8)
        with open(path, "wb") as fh:
            fh.write(bytes(bad))
        rc, doc = report(path)
        x = offs[0]
        what = f"flip at {','.join(map(str, offs))}"
        if rc not in (0, 1, 2):
            check(False, f"{what}: exit {rc} (signal?) - {kept(work, what, bytes(bad))}")
        got = totals(doc)
        if x < PREAMBLE:
            # a damaged magic/version/preamble size leaves nothing readable, or (the reserved
            # flags, a preamble size that still lands on a record) the records after it
            whole = exp[len(recs)]
            if any(key not in whole or v[0] > whole[key][0] or v[1] > whole[key][1]
                   for key, v in got.items()):
                check(False, f"{what} (preamble): totals {got} beyond the file's {whole}")
            continue
        k = whole_before(x)
        rtype = TYPES.get(recs[k][2], f"type {recs[k][2]}")
        by_type[rtype] = by_type.get(rtype, 0) + 1
        if got != exp[k] or complete(doc):
            check(False, f"{what} (in a {rtype} record, the {k + 1}th): exit {rc}, totals {got}, "
                  f"complete {complete(doc)}; the {k} records before it say {exp[k]} - "
                  f"{kept(work, what, bytes(bad))}")
    print(f"ok: {len(flips)} flipped variants (damage in {by_type}): exit 0/1/2, no hang, exactly "
          "the records before the first flipped byte, never complete")


ctlib.main(test)
