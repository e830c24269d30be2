#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The reader's memory follows paths, processes and call sites, not the trace's size ([scale]).

  - a 5 GB per-call trace (gentrace: two threads, 1 MB OPS batches, STATS and PROC every 5 ms of
    its time, 50 M operations per GB): `cryptrace report` and `--json` in
    < 200 MB of RSS (the bound docs/reports.md states), its calls, bytes and per-call ops exactly
    the generator's; its time beside `cat FILE > /dev/null` (the disk's read speed here), printed;
  - `--since/--until` over 10 ms of it: two flushes' worth of calls exactly, in the same bound,
    without reading the batches outside the window;
  - a spool of 2,000 small traces (a fleet's) merged in the same bound, every call counted.
CT_SCALE_BYTES sets the size (default 5e9). Skips (77) when the disk has no room for it, saying so.
In the sanitizer CI pass (CT_ASAN=1) the memory bound is not judged (the runtime's shadow memory
and quarantine are not the reporter's) and .ci/run sets a 1 GB trace: what that pass checks is the
reading code, not its speed.
"""
import json
import os
import shutil
import subprocess
import tempfile
import time

import ctlib
from ctlib import check

RSS_BOUND_KB = 200 * 1024  # the bound the report states (docs/reports.md "Large traces")
if os.environ.get("CT_ASAN") == "1":
    RSS_BOUND_KB = float("inf")
SIZE = int(float(os.environ.get("CT_SCALE_BYTES", "5e9")))
SPOOL_FILES = 2000


def measured(argv):
    """Runs argv to completion; returns (exit status, stdout, seconds, its peak RSS in KB)."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        t0 = time.monotonic()
        p = subprocess.Popen(argv, stdout=out, stderr=err)
        _, status, usage = os.wait4(p.pid, 0)  # this child's own rusage
        secs = time.monotonic() - t0
        p.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        if p.returncode:
            print(err.read().decode(errors="replace")[-400:])
        return p.returncode, out.read(), secs, usage.ru_maxrss


def big_trace(gentrace, work):
    free = shutil.disk_usage(work).free
    if free < SIZE + (1 << 30):
        ctlib.skip(f"{work}: {free >> 20} MiB free, the {SIZE >> 20} MiB trace needs {(SIZE >> 20) + 1024}")
    trace = os.path.join(work, "busy.4000.ctrace")
    t0 = time.monotonic()
    p = ctlib.run([gentrace, trace, str(SIZE)], timeout=1200)
    check(p.returncode == 0, f"gentrace wrote {SIZE} bytes ({p.stderr[-300:]!r})")
    made = json.loads(p.stdout)
    print(f"gentrace: {made['bytes_written'] / 1e9:.2f} GB, {made['ops']:,} ops in "
          f"{time.monotonic() - t0:.1f} s")
    return trace, made


def exact(doc, made, where):
    paths = {p["cipher"]: p for p in doc["paths"]}
    for want in made["paths"]:
        got = paths.get(want["cipher"], {})
        check(got.get("calls") == want["calls"] and got.get("bytes") == want["bytes"],
              f"{where}: {want['cipher']} calls {got.get('calls')} == {want['calls']}, "
              f"bytes {got.get('bytes')} == {want['bytes']}")


def test():
    gentrace = ctlib.built("CT_SCALE_BIN", "gentrace")
    work = ctlib.tmpdir("scale")
    trace, made = big_trace(gentrace, work)

    t0 = time.monotonic()
    subprocess.run(["cat", trace], stdout=subprocess.DEVNULL, check=True)
    cat_s = time.monotonic() - t0
    rc, out, secs, rss = measured([ctlib.CRYPTRACE, "report", "--json", trace])
    check(rc == 0, f"report --json of {made['bytes_written'] / 1e9:.1f} GB exits 0 (exit {rc})")
    doc = json.loads(out)
    exact(doc, made, "5 GB")
    proc = doc["processes"][0]
    check(proc.get("per_call_ops") == made["ops"],
          f"per-call ops counted unread: {proc.get('per_call_ops')} == {made['ops']}")
    check(proc.get("status") == "complete", f"the trace reads as complete ({proc.get('status')})")
    check(rss < RSS_BOUND_KB, f"report of {made['bytes_written'] / 1e9:.1f} GB in {rss / 1024:.0f} MB RSS "
          f"< {RSS_BOUND_KB / 1024:.0f} MB")
    gb = made["bytes_written"] / 1e9
    print(f"report --json: {secs:.2f} s ({gb / secs:.1f} GB/s), {rss / 1024:.0f} MB RSS; "
          f"cat: {cat_s:.2f} s ({gb / cat_s:.1f} GB/s)")

    rc, out, secs, rss = measured([ctlib.CRYPTRACE, "report", trace])
    check(rc == 0 and b"aes-128-ctr" in out, f"the text report of it exits 0 (exit {rc})")
    check(rss < RSS_BOUND_KB, f"text report in {rss / 1024:.0f} MB RSS < {RSS_BOUND_KB / 1024:.0f} MB")

    # 10 ms from 5 s on: flushes every 5 ms of the trace's time, so the window's totals are the
    # difference of the snapshots at 4.996 s and 5.006 s: two flushes of 50,000 calls per path
    span_s = (made["last_ns"] - made["first_ns"]) / 1e9
    since = min(5.0, span_s / 2)
    rc, out, secs, rss = measured([ctlib.CRYPTRACE, "report", "--json", "--since", f"{since}",
                                   "--until", f"{since + 0.01}", trace])
    check(rc == 0, f"--since/--until exits 0 (exit {rc})")
    win = json.loads(out)
    calls = sorted(p["calls"] for p in win["paths"])
    check(calls == [100000, 100000], f"a 10 ms window holds two 5 ms flushes per path ({calls})")
    check(rss < RSS_BOUND_KB, f"window in {rss / 1024:.0f} MB RSS")
    print(f"report --since {since} --until {since + 0.01}: {secs:.2f} s, {rss / 1024:.0f} MB RSS")
    os.unlink(trace)

    spool = os.path.join(work, "spool")
    os.mkdir(spool)
    p = ctlib.run([gentrace, "--spool", spool, str(SPOOL_FILES)])
    check(p.returncode == 0, "gentrace wrote the spool")
    want = json.loads(p.stdout)
    rc, out, secs, rss = measured([ctlib.CRYPTRACE, "report", "--json", spool])
    check(rc == 0, f"report of {SPOOL_FILES} traces exits 0 (exit {rc})")
    doc = json.loads(out)
    total = sum(p["calls"] for p in doc["paths"])
    check(len(doc["processes"]) == SPOOL_FILES and total == want["calls"],
          f"{len(doc['processes'])} processes, {total} calls == {want['calls']}")
    check(rss < RSS_BOUND_KB, f"{SPOOL_FILES} traces merged in {rss / 1024:.0f} MB RSS")
    print(f"report --json of {SPOOL_FILES} traces: {secs:.2f} s, {rss / 1024:.0f} MB RSS")


ctlib.main(test)
