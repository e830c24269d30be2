#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`cryptrace report --perfetto` of a dense per-call trace stays loadable: a per-call trace of
`openssl speed -bytes 16 -evp aes-128-ctr` with at least a million operations (the run made long
enough) gives a Perfetto file <= 100 MB that follows the trace-event schema, says in otherData
how operations became slices, and whose slices' operation counts add up exactly to the trace's;
no two slices of a track overlap (the viewers' model would cut them) and consecutive slices of a
track start at least the resolution apart (the rule). A 10 ms window (--since/--until) shows each
operation as its own slice; --resolution 1ms is honoured; a bad --resolution is refused with one
line and exit status 2."""
import math
import os
import shutil
from collections import defaultdict

import ctlib
from ctlib import check, perfetto

BUDGET = 100 * 1000 * 1000  # bytes: what the viewers open
MIN_OPS = 1000 * 1000  # a trace this dense would be hundreds of MB as one event per operation
MAX_SECONDS = 30


def dense_trace(openssl):
    """A per-call trace of at least MIN_OPS kept operations: 2 s of openssl speed, longer when
    per-call mode keeps fewer per second (its rate cap)."""
    seconds = 2
    while True:
        d = ctlib.tmpdir("pfs-dense")
        p = ctlib.run_traced([openssl, "speed", "-seconds", str(seconds), "-bytes", "16", "-evp",
                              "aes-128-ctr"], d, extra=["--mode", "calls"])
        check(p.returncode == 0, f"openssl speed -seconds {seconds} ran under --mode calls")
        doc = ctlib.report_ok([d])
        kept = sum(q.get("per_call_ops", 0) for q in doc["processes"])
        size = sum(os.path.getsize(f) for f in ctlib.traces(d))
        print(f"trace: {kept} operations kept in {seconds} s, {size / 1e6:.1f} MB")
        if kept >= MIN_OPS or seconds >= MAX_SECONDS:
            break
        seconds = min(MAX_SECONDS, math.ceil(seconds * 1.5 * MIN_OPS / max(kept, 1)))
        shutil.rmtree(d)
    check(kept >= MIN_OPS, f"the trace has at least {MIN_OPS} operations ({kept})")
    return d, doc, kept


def slices(doc):
    return [e for e in doc["traceEvents"] if e["ph"] == "X"]


def check_tracks(doc, tag):
    """No overlapping slices per track, each track named and sorted, slices at least the
    resolution apart."""
    xs = slices(doc)
    bad = perfetto.misnested(doc["traceEvents"])
    check(not bad, f"{tag}: no two slices of a track overlap ({len(bad)} do, first {bad[:1]})")
    named = perfetto.names(doc["traceEvents"], "thread_name")
    sorted_ = {e["tid"] for e in doc["traceEvents"] if e["ph"] == "M" and e["name"] == "thread_sort_index"}
    tids = {e["tid"] for e in xs}
    check(tids <= set(named) and tids <= sorted_,
          f"{tag}: every track is named and sorted ({len(tids)} tracks)")
    res = doc["otherData"]["resolution_ns"]
    starts = defaultdict(list)
    for e in xs:
        starts[(e["pid"], e["tid"])].append(perfetto.ns(e["ts"]))
    close = [(k, a, b) for k, v in starts.items() for a, b in zip(v, v[1:]) if b - a < res]
    check(not close, f"{tag}: consecutive slices of a track start >= {res} ns apart "
          f"({len(close)} do not, first {close[:1]})")


def other_data(doc, tag):
    od = doc.get("otherData", {})
    xs = slices(doc)
    check(isinstance(od.get("resolution_ns"), int) and od.get("resolution") and
          "slice" in od.get("aggregation", ""),
          f"{tag}: otherData states the resolution ({od.get('resolution')}) and the rule")
    check(od.get("slices") == len(xs) and od.get("operations") == sum(e["args"]["ops"] for e in xs)
          and od.get("kept_operations") == sum(e["args"]["kept_ops"] for e in xs),
          f"{tag}: otherData counts the slices written ({od.get('slices')}) and the operations "
          f"they stand for ({od.get('operations')})")
    return od


def perfetto_of(trace, work, name, *opts):
    out = os.path.join(work, name)
    ctlib.cryptrace_ok("report", "--perfetto", out, *opts, trace)
    return out


def test():
    openssl = ctlib.need_program("openssl")
    trace, rep, kept = dense_trace(openssl)
    work = ctlib.tmpdir("pfs-out")

    # the whole trace, resolution auto
    out = perfetto_of(trace, work, "all.json")
    size = os.path.getsize(out)
    check(size <= BUDGET, f"the Perfetto file of {kept} operations is <= 100 MB ({size / 1e6:.1f} MB)")
    doc = perfetto.load(out, "dense, auto")
    od = other_data(doc, "dense, auto")
    xs = slices(doc)
    # per-call mode's rate cap keeps 1 in K above its rate, each kept operation weighing K: the
    # report's per_call_weights is what the kept ones stand for (their weights' sum)
    weights = sum(q["per_call_weights"] for q in rep["processes"])
    check(weights > kept, f"the rate cap sampled this trace: {kept} kept stand for {weights}")
    check(sum(e["args"]["kept_ops"] for e in xs) == kept,
          f"the slices hold every kept operation ({sum(e['args']['kept_ops'] for e in xs)} == {kept})")
    check(sum(e["args"]["ops"] for e in xs) == weights,
          f"the slices' operation counts add up to the trace's weights exactly "
          f"({sum(e['args']['ops'] for e in xs)} == {weights})")
    check(od["resolution_ns"] > 0 and len(xs) < kept,
          f"dense operations are aggregated: {len(xs)} slices for {kept} operations at "
          f"{od['resolution']}")
    check_tracks(doc, "dense, auto")

    # a 10 ms window where the operations are: each its own slice
    mid = sorted(perfetto.ns(e["ts"]) for e in xs)[len(xs) // 2] / 1e9
    since, until = f"{mid:.9f}", f"{mid + 0.01:.9f}"
    out = perfetto_of(trace, work, "window.json", "--since", since, "--until", until)
    win = perfetto.load(out, f"--since {since} --until {until}")
    other_data(win, "10 ms window")
    wx = slices(win)
    check(len(wx) >= 100 and all(e["args"]["kept_ops"] == 1 for e in wx),
          f"a 10 ms window shows each operation as a slice of its own ({len(wx)} slices, "
          f"resolution {win['otherData']['resolution']})")
    lo, hi = perfetto.ns(mid * 1e6), perfetto.ns((mid + 0.01) * 1e6)
    outside = [e for e in wx if not lo - 1000 <= perfetto.ns(e["ts"]) <= hi + 1000]
    check(not outside, f"the window's slices start within it ({len(outside)} do not)")
    check_tracks(win, "10 ms window")

    # an explicit resolution
    out = perfetto_of(trace, work, "1ms.json", "--resolution", "1ms")
    coarse = perfetto.load(out, "--resolution 1ms")
    od = other_data(coarse, "--resolution 1ms")
    check(od["resolution_ns"] == 1000000 and od["resolution"] == "1ms",
          f"--resolution 1ms is the one used ({od['resolution']})")
    check(sum(e["args"]["ops"] for e in slices(coarse)) == weights,
          "at 1 ms too the slices' operation counts add up to the trace's")
    check_tracks(coarse, "--resolution 1ms")

    # bad values: one line, exit 2, like the other options
    for bad in ("10", "fast", "-1ms", "5 us", "1.5ns", ""):
        p = ctlib.cryptrace("report", "--perfetto", os.path.join(work, "bad.json"), "--resolution", bad,
                            trace, text=True)
        lines = p.stderr.strip().splitlines()
        check(p.returncode == 2 and len(lines) == 1 and "--resolution" in lines[0],
              f"--resolution '{bad}' is refused: exit {p.returncode}, {lines}")


ctlib.main(test)
