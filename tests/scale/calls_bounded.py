#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Per-call mode stays bounded: `cryptrace run --mode calls -- openssl speed -seconds 3 -bytes 64
-evp aes-128-ctr` (~7-10 M calls a second; 560 MB of trace before the cap) writes at most 20 MB,
its calls and bytes are still exactly what openssl printed, the report says what the timeline left
out (JSON and text), and the kept operations' weights add up to the calls within the bound below;
stdout and exit status are the program's. `--max-ops-rate 0` keeps every operation; the preload
reads CRYPTRACE_MAX_OPS_RATE on its own (a bare LD_PRELOAD); a bad value is refused in one line
with exit 2, before anything runs.

The weights' bound: the sampler keeps op i with chance 1/w_i and gives it weight w_i (w = 1 in a
window's first B/2 ops, K after them), so the weights' sum estimates the ops without bias
(Horvitz-Thompson), and sum(w (w - 1)) over the kept ops estimates its variance without bias. The
test allows 6 of its standard deviations (a false alarm about once in 10^9 runs, normal
approximation: thousands of independent draws per window); ops lost to a full ring (dropped_ops)
are outside the sample and added to the allowance."""
import glob
import os
import re
import struct

import ctlib
from ctlib import check

CAP_MB = 20  # the bound for this run's trace
DEFAULT_RATE = 250000
WINDOW_S = 0.1
REC_OPS, REC_PROC = 5, 7


def ops_of(trace_dir):
    """(weights of every kept op, first and last op start in ns) from the OPS records of the
    trace files: the weights are one u8 (log2) per op after the 20-byte ops, absent when all 1."""
    weights, first, last = [], None, None
    for f in glob.glob(os.path.join(trace_dir, "*.ctrace")):
        data = open(f, "rb").read()
        off = 16
        while off + 12 <= len(data):
            rtype, _, length = struct.unpack_from("<HHI", data, off)
            payload = data[off + 8:off + 8 + length]
            off += 12 + length
            if rtype != REC_OPS:
                continue
            _, count, _ = struct.unpack_from("<IIQ", payload, 0)
            logs = payload[16 + 20 * count:16 + 21 * count]
            weights += [1 << b for b in logs] if len(logs) == count else [1] * count
            for i in (0, count - 1):
                (start,) = struct.unpack_from("<Q", payload, 16 + 20 * i)
                first = start if first is None else min(first, start)
                last = start if last is None else max(last, start)
    return weights, first, last


def masked(out):
    """openssl speed's stdout with its measured figures masked, line by line and word by word:
    the figures (and the columns' padding around them) differ between any two runs."""
    return [[re.sub(rb"[0-9]+(\.[0-9]+)?", b"N", w) for w in line.split()] for line in out.splitlines()]


def data_calls(doc):
    return sum(p["calls"] for p in doc["paths"])


def capped_speed():
    openssl = ctlib.need_program("openssl")
    argv = [openssl, "speed", "-seconds", "3", "-bytes", "64", "-evp", "aes-128-ctr"]
    native = ctlib.run(argv)
    check(native.returncode == 0, "openssl speed ran untraced")
    out = ctlib.tmpdir("calls-capped")
    p = ctlib.run_traced(argv, out, extra=["--mode", "calls"])
    check(p.returncode == native.returncode, f"exit status {p.returncode} as untraced")
    check(masked(p.stdout) == masked(native.stdout),
          f"stdout as untraced, figures masked ({len(p.stdout.splitlines())} lines)")
    size = sum(os.path.getsize(f) for f in ctlib.traces(out))
    check(size <= CAP_MB << 20, f"the trace is {size / 1e6:.1f} MB <= {CAP_MB} MiB")

    # the counts are the program's own, exactly
    n = ctlib.speed_count(p.stderr.decode(errors="replace"), "aes-128-ctr")
    doc = ctlib.report_ok([out])
    print(ctlib.describe_paths(doc))
    calls, nbytes = ctlib.totals(doc, api="evp", impl="provider:default", cipher="aes-128-ctr",
                                 dir="encrypt")
    check(n > 0 and calls == n, f"EVP update calls {calls} == openssl's count {n}")
    check(nbytes == n * 64, f"bytes {nbytes} == {n} x 64")

    # the report says what the timeline left out; kept + left out + ring-dropped = every data call
    procs = doc["processes"]
    check(len(procs) == 1, f"one process ({len(procs)})")
    pr = procs[0]
    kept, out_n, dropped = pr["per_call_ops"], pr["per_call_sampled_out"], pr["dropped_ops"]
    check(pr["max_ops_rate"] == DEFAULT_RATE, f"max_ops_rate {pr['max_ops_rate']} == {DEFAULT_RATE}")
    check(out_n > 0 and kept + out_n + dropped == data_calls(doc),
          f"kept {kept} + sampled out {out_n} + dropped {dropped} == the {data_calls(doc)} data calls")
    check(pr["per_call_max_weight"] > 1, f"the largest weight is {pr['per_call_max_weight']}")
    text = ctlib.cryptrace_ok("report", out).stdout.decode()
    want = (f"per-call timeline: {kept:,} of {kept + out_n + dropped:,} operations kept "
            f"(above {DEFAULT_RATE:,}/s sampled 1 in up to {pr['per_call_max_weight']}")
    check(want in " ".join(text.split()), f"the text report says: {want}...")

    # the kept ops: at most B per window, and their weights add up to the calls
    weights, first, last = ops_of(out)
    check(len(weights) == kept, f"the trace holds the {kept} kept operations ({len(weights)})")
    windows = int((last - first) / 1e9 / WINDOW_S) + 2  # the windows the ops' span can touch
    budget = int(DEFAULT_RATE * WINDOW_S)
    check(kept <= windows * budget,
          f"{kept} kept <= {windows} windows x B = {budget} ({(last - first) / 1e9:.2f} s of ops)")
    total, sigma = sum(weights), sum(w * (w - 1) for w in weights) ** 0.5
    offered = data_calls(doc) - dropped
    check(abs(total - offered) <= 6 * sigma + dropped,
          f"the weights add up to {total}, the {offered} calls +- 6 sigma ({6 * sigma:.0f}) "
          f"+ dropped {dropped}: off by {abs(total - offered) / offered:.3%}")


def uncapped():
    """--max-ops-rate 0 on a short run above the default cap keeps every operation."""
    openssl = ctlib.need_program("openssl")
    out = ctlib.tmpdir("calls-all")
    argv = [openssl, "speed", "-seconds", "1", "-bytes", "1024", "-evp", "aes-128-ctr"]
    p = ctlib.run_traced(argv, out, extra=["--mode", "calls", "--max-ops-rate", "0"])
    check(p.returncode == 0, "openssl speed ran with --max-ops-rate 0")
    doc = ctlib.report_ok([out])
    pr = doc["processes"][0]
    rate = data_calls(doc) / 1.0
    check(rate > DEFAULT_RATE, f"{rate:.0f} calls/s: above the default cap, which would sample")
    check(pr["max_ops_rate"] == 0 and pr["per_call_sampled_out"] == 0,
          f"no cap, nothing sampled out ({pr['max_ops_rate']}, {pr['per_call_sampled_out']})")
    check(pr["per_call_ops"] + pr["dropped_ops"] == data_calls(doc),
          f"every call is an operation: {pr['per_call_ops']} + dropped {pr['dropped_ops']} == "
          f"{data_calls(doc)}")
    weights, _, _ = ops_of(out)
    check(set(weights) == {1}, f"every weight is 1 ({sorted(set(weights))[:5]})")


def bare_preload_env():
    """CRYPTRACE_MAX_OPS_RATE reaches the preload without the launcher."""
    openssl = ctlib.need_program("openssl")
    out = ctlib.tmpdir("calls-env")
    env = ctlib.preload_env(out, CRYPTRACE_MODE="calls", CRYPTRACE_MAX_OPS_RATE="50000")
    p = ctlib.run([openssl, "speed", "-seconds", "1", "-bytes", "1024", "-evp", "aes-128-ctr"], env=env)
    check(p.returncode == 0, "openssl speed ran under a bare LD_PRELOAD")
    pr = ctlib.report_ok([out])["processes"][0]
    check(pr["max_ops_rate"] == 50000 and pr["per_call_sampled_out"] > 0,
          f"CRYPTRACE_MAX_OPS_RATE=50000 is the cap ({pr['max_ops_rate']}), ops were sampled out "
          f"({pr['per_call_sampled_out']})")


def refused():
    """A bad value: one line, exit 2, nothing run."""
    work = ctlib.tmpdir("calls-bad")
    for bad in ("12x", "-1", "1.5M", "5000M", ""):
        mark = os.path.join(work, "ran")
        p = ctlib.cryptrace("run", "-q", "-o", os.path.join(work, "t"), "--mode", "calls",
                            "--max-ops-rate", bad, "--", "touch", mark, text=True)
        lines = p.stderr.splitlines()
        check(p.returncode == 2 and len(lines) == 1 and "--max-ops-rate" in lines[0] and
              not os.path.exists(mark),
              f"--max-ops-rate {bad!r}: exit {p.returncode}, {len(lines)} line(s): {p.stderr.strip()!r}")


def test():
    refused()
    uncapped()
    bare_preload_env()
    capped_speed()


ctlib.main(test)
