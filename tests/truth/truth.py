#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The report's times against ground truth (issue [truth]): every figure within BOUND of what the
programs measure themselves, in one run each, as ratios.

  - examples/selftimed (times its own calls in ~1 ms batches between clock_gettime reads): tight
    loops of EVP_CipherUpdate (CBC encrypt and decrypt, CTR, ECB, XTS, GCM) from 16 B to 1 MiB,
    including sizes that are not powers of two; the same interleaved with other work so that the
    calls are 20, 50 and 80 % of the run; AEAD messages (IV, AAD, data, final, tag) per message;
    a key set per iteration. Compared: the report's time per iteration (all the path's calls:
    data, set-ups, finals) with the program's batches per iteration (their mean, without the
    batches a preemption stretched); the process's cipher share with the program's; the path's
    user CPU with the program's thread CPU time.
  - openssl speed -elapsed: its rate per request size against the path's wall-clock throughput
    in that size bucket (one run of six sizes per mode); AES-GCM messages per size (the whole
    path: openssl's rate counts its IV set-up and final); the same through --route aes-*=aesni.
    openssl's clock also runs through the interrupts and hypervisor exits that land inside its
    loop (2-15 % of the time on a shared VM, varying by the minute), which the report's WALL
    leaves out and reports beside it as pauses (docs/report.md): the rate compared is over WALL
    plus those pauses, and the printed table shows both.

Where the program runs its calls back to back (tight loops, AEAD messages, key sets), its batches
count the interrupts that land in them, as openssl's clock does: those comparisons are over WALL
plus the pauses the report prints beside it. Interleaved with other work (-S), the pauses are
mostly that work, which the batches leave out: those compare WALL alone.

Those batches are what the program's own clock says a call costs when the thread is not
descheduled, which is what the report measures (docs/report.md); the comparisons against summed
batch times and openssl's elapsed time hold on a machine that is not loaded (this suite runs
alone: meson `is_parallel: false`). A case out of bound is run again, up to ROUNDS (5) times in all,
and judged by the median of its ratios: a loaded 2-core machine slows single runs by tens of %.
"""
import json
import os
import re
import statistics

import ctlib
from ctlib import check
from ctlib.truth import TRUTH_BOUND, TRUTH_ROUNDS, judge_truth

BOUND, ROUNDS = TRUTH_BOUND, TRUTH_ROUNDS  # ctlib.truth: the bound the report states
SECONDS = os.environ.get("CT_TRUTH_SECONDS", "0.3")
results = []


def judge(name, measure):
    """measure() -> (ratio, detail); the shared rule (ctlib.truth), its median kept for the table."""
    med, ratios = judge_truth(name, measure)
    results.append((name, med, ratios))


def selftimed(args):
    prog = os.path.join(ctlib.CT_EXAMPLES, "selftimed")
    out = ctlib.tmpdir("truth")
    if "-s" not in args:
        args = ["-s", SECONDS] + args
    # the preload's debug log (4 lines: its clock calibration) in a directory of its own, removed
    # with the test's others, for a failure's message: what one clock read, a probe and a span
    # cost on the host that failed
    log = os.path.join(ctlib.tmpdir("truth-log"), "preload.log")
    env = dict(os.environ, CRYPTRACE_LOG="2", CRYPTRACE_LOG_FILE=log)
    p = ctlib.run_traced([prog] + args, out, env=env)
    check(p.returncode == 0, f"selftimed {' '.join(args)} exited 0 under cryptrace "
          f"({p.stderr.decode(errors='replace')[-200:]})") if p.returncode else None
    truth = json.loads(p.stdout.decode())
    doc = ctlib.report_ok([out])
    paths = [x for x in doc["paths"] if x["api"] == "evp"]
    check(paths, f"selftimed {' '.join(args)}: an evp path") if not paths else None
    truth["calibration"] = calibration(log)
    return truth, doc, paths


def how_measured(paths):
    """The busiest cell's timing (docs/report.md "How time is measured"): its probes' mean, its
    accepted and rejected spans (mean per call, calls), its pauses per call. Printed with a case's
    ratios, beside the preload's calibration (calibration()), so that a failure on another host
    says which part of the method moved."""
    cells = [c for x in paths for c in x.get("sizes", [])]
    if not cells:
        return ""
    c = max(cells, key=lambda z: z["calls"])

    def ns(v):
        return "-" if v is None else f"{v:.0f}"
    return (f"[cell {c['bucket_low']}: probe {ns(c['probe_mean_ns'])} ns x{c['probes']}, span "
            f"{ns(c['span_mean_ns'])} x{c['span_calls']}, rejected {ns(c['span_rejected_mean_ns'])} "
            f"x{c['span_rejected_calls']}, pause {c['pause_ns'] / max(1, c['calls']):.1f} ns/call]")


def calibration(log):
    """The preload's clock calibration, from its debug log."""
    try:
        with open(log) as f:
            lines = [ln.split("timing: ", 1)[1].strip() for ln in f if "timing: " in ln]
    except OSError:
        return ""
    return f" [calibration: {lines[-1]}]" if lines else ""


def per_iteration(truth):
    return truth["robust_batch_ns"] / truth["batch_iterations"]


def path_wall(paths, pauses=True):
    """The paths' WALL, with the pauses inside their runs of calls (the program's clock over calls
    run back to back), or without (calls interleaved with the program's other work)."""
    return sum((x["wall_ns"] or 0) + (x["pause_ns"] or 0 if pauses else 0) for x in paths)


def tight(cipher, size, decrypt=False, share=100):
    args = (["-d"] if decrypt else []) + (["-S", str(share)] if share < 100 else [])
    args += ["tight", cipher, str(size)]

    def measure():
        truth, doc, paths = selftimed(args)
        report_each = path_wall(paths, pauses=share == 100) / truth["iterations"]
        return report_each / per_iteration(truth), \
            f"{report_each:.1f} vs {per_iteration(truth):.1f} ns per call (the median batch " \
            f"{truth['median_batch_ns'] / truth['batch_iterations']:.1f}, batches of " \
            f"{truth['batch_iterations']}) " \
            f"{how_measured(paths)}{truth['calibration']}"
    judge(f"tight {cipher}{' decrypt' if decrypt else ''} {size} B"
          f"{f' at {share} %' if share < 100 else ''}", measure)


def aead(cipher, size, decrypt=False):
    args = (["-d"] if decrypt else []) + ["aead", cipher, str(size)]

    def measure():
        truth, doc, paths = selftimed(args)
        p = max(paths, key=lambda x: x["bytes"])
        check(p["messages"] == truth["messages"], f"aead {cipher} {size}: {truth['messages']} messages "
              "counted exactly") if p["messages"] != truth["messages"] else None
        aad = p["aad_bytes"]
        check(aad == 13 * truth["messages"], f"aead {cipher} {size}: AAD bytes are AAD ({aad})") \
            if aad != 13 * truth["messages"] else None
        check(p["bytes"] == truth["bytes"], f"aead {cipher} {size}: data bytes exact ({p['bytes']})") \
            if p["bytes"] != truth["bytes"] else None
        each = (p["wall_ns"] + p["pause_ns"]) / p["messages"]
        return each / per_iteration(truth), f"{each:.1f} vs {per_iteration(truth):.1f} ns per message"
    judge(f"aead {cipher}{' decrypt' if decrypt else ''} {size} B per message", measure)


def rekey(cipher, size):
    def measure():
        truth, doc, paths = selftimed(["rekey", cipher, str(size)])
        p = max(paths, key=lambda x: x["bytes"])
        keys = {ph["phase"]: ph for ph in p["phases"]}.get("key", {})
        # the program's key sets, plus the context's first set-up (folded into the path)
        check(keys.get("calls") == truth["key_setups"] + 1,
              f"rekey {cipher}: key set-ups counted ({keys.get('calls')} for "
              f"{truth['key_setups']} + the first)") if keys.get("calls") != truth["key_setups"] + 1 else None
        report_each = path_wall(paths) / truth["iterations"]
        return report_each / per_iteration(truth), \
            f"{report_each:.1f} vs {per_iteration(truth):.1f} ns per key set + update"
    judge(f"rekey {cipher} {size} B", measure)


def share(cipher, size, pct):
    """The process's cipher-call shares: of its wall time (the calls' running time over the run:
    a batch a preemption stretched counts at the batches' robust mean, as the report leaves
    descheduled time out) and of its CPU time (the batches' thread CPU over the run's)."""
    def measure(kind):
        # a longer run: the process's lifetime (the share's whole) also holds its start and exit
        truth, doc, paths = selftimed(["-s", "1", "-S", str(pct), "tight", cipher, str(size)])
        proc = doc["processes"][0]
        if kind == "wall":
            got = proc.get("crypto_wall_share")
            want = truth["robust_batch_ns"] * truth["batches"] / truth["run_wall_ns"]
        else:
            got = proc.get("crypto_cpu_share")
            want = truth["crypto_cpu_ns"] / truth["run_cpu_ns"]
        check(got is not None, f"the process's cipher {kind} share is known") if got is None else None
        return got / want, f"share {100 * got:.1f} % vs {100 * want:.1f} %"
    judge(f"cipher-call share of wall time {cipher} {size} B at {pct} %", lambda: measure("wall"))
    judge(f"cipher-call share of CPU time {cipher} {size} B at {pct} %", lambda: measure("cpu"))


def cpu(cipher, size):
    def measure():
        truth, doc, paths = selftimed(["tight", cipher, str(size)])
        p = max(paths, key=lambda x: x["bytes"])
        check(p["user_ns"] is not None, "user CPU known") if p["user_ns"] is None else None
        got = (p["user_ns"] + (p["sys_ns"] or 0)) / truth["iterations"]
        want = truth["crypto_cpu_ns"] / truth["iterations"]
        return got / want, f"{got:.1f} vs {want:.1f} ns CPU per call"
    judge(f"user+sys CPU {cipher} {size} B", measure)


LOADED = 0.9  # a process that ran less than this share of its lifetime waited for a CPU


def openssl_speed(cipher, extra=(), size=None, route=None, elapsed=True):
    """openssl speed -elapsed: its rate per size against the report's (per size bucket, or the
    whole path for one size); with a route, the path the route made. Also returns the openssl
    process's CPU time over its lifetime (getrusage, from the trace): below LOADED, the machine
    made it wait, and -elapsed rates count the waiting."""
    openssl = ctlib.need_program("openssl")
    argv = [openssl, "speed"] + (["-elapsed"] if elapsed else []) + ["-seconds", "1"] + list(extra)
    if size:
        argv += ["-bytes", str(size)]
    argv += ["-evp", cipher]
    out = ctlib.tmpdir("truth-speed")
    p = ctlib.run_traced(argv, out, extra=["--route", route] if route else [])
    text = p.stdout.decode()
    hdr = [ln for ln in text.splitlines() if ln.startswith("type")]
    row = [ln for ln in text.splitlines() if ln.lower().startswith(cipher)]
    check(p.returncode == 0 and hdr and row, f"openssl speed {cipher} ran ({text[-200:]!r})") \
        if not (p.returncode == 0 and hdr and row) else None
    sizes = [int(x) for x in re.findall(r"(\d+) bytes", hdr[-1])]
    rates = [float(x.rstrip("k")) * 1000 for x in row[-1].split()[1:]]
    doc = ctlib.report_ok([out])
    path = max((x for x in doc["paths"] if x["api"] == "evp"), key=lambda x: x["bytes"])
    if route:
        check(path["impl"] == "route:aesni", f"the route served {cipher} ({path['impl']})") \
            if path["impl"] != "route:aesni" else None
    got, bare = {}, {}
    for s, rate in zip(sizes, rates):
        if size:
            cell = path
        else:
            b = [x for x in path["sizes"] if x["bucket_low"] <= s < 2 * max(1, x["bucket_low"])]
            cell = b[0] if b and b[0]["wall_ns"] else None
        got[s] = (cell["bytes"] * 1e9 / (cell["wall_ns"] + cell["pause_ns"])) / rate if cell else 0
        bare[s] = (cell["bytes"] * 1e9 / cell["wall_ns"]) / rate if cell else 0
    pr = doc["processes"][0]
    busy = ((pr.get("utime_ns") or 0) + (pr.get("stime_ns") or 0)) / (pr.get("wall_ns") or 1)
    return got, bare, busy


def speed(cipher, extra=(), size=None, route=None):
    """openssl's own rate is the truth: -elapsed (its wall clock), as the issue asks. A round in
    which the machine made openssl wait for a CPU (its CPU time under LOADED of its lifetime:
    another program on the other core, a shared host) is run again without -elapsed, where
    openssl divides by its own CPU time: the figure that waiting does not move, as the report's."""
    label = f"openssl speed -elapsed -evp {cipher}{' ' + ' '.join(extra) if extra else ''}" \
            f"{f' (--route {route})' if route else ''}"
    rounds, bares = [], []
    for _ in range(ROUNDS):
        got, bare, busy = openssl_speed(cipher, extra, size, route)
        if busy < LOADED:
            print(f"note: {label}: openssl ran {100 * busy:.0f} % of its lifetime (a loaded "
                  "machine): this round compares with openssl's CPU-time rates (no -elapsed)")
            got, bare, _ = openssl_speed(cipher, extra, size, route, elapsed=False)
        rounds.append(got)
        bares.append(bare)
        med = {s: statistics.median(r[s] for r in rounds) for s in rounds[0]}
        if all(abs(v - 1) <= BOUND for v in med.values()):
            break
    for s, v in med.items():
        results.append((f"{label} {s} B (WALL alone: {statistics.median(r[s] for r in bares):.3f})", v,
                        [r[s] for r in rounds]))
        # throughput ratio report/openssl: the inverse of the time ratio
        check(abs(v - 1) <= BOUND, f"{label} at {s} B: report/openssl rate {v:.3f} "
              f"(rounds {[round(r[s], 3) for r in rounds]})")


def test():
    if not os.path.exists(os.path.join(ctlib.CT_EXAMPLES, "selftimed")):
        check(False, "examples/selftimed was built")
    if os.environ.get("CT_ASAN"):
        ctlib.skip("timing under the sanitizer runtime is not the program's: the ASan pass "
                   "leaves the ground-truth suite out (as it does the speed suite)")
    for size in (16, 48, 64, 80, 128, 192, 1500, 4000, 8192, 65536, 1 << 20):
        tight("aes-128-cbc", size)
        tight("aes-128-ctr", size)
    for size in (16, 64, 1500, 65536):
        tight("aes-128-cbc", size, decrypt=True)
        tight("aes-128-ecb", size)
        tight("aes-256-xts", size)
        tight("aes-256-gcm", size)
    for pct in (20, 50, 80):
        tight("aes-128-cbc", 64, share=pct)
        tight("aes-128-ctr", 1500, share=pct)
        share("aes-128-cbc", 64, pct)
    for size in (16, 64, 1024):
        aead("aes-256-gcm", size)
        aead("aes-128-gcm", size, decrypt=True)
    aead("aes-128-ccm", 64)
    aead("aes-128-ccm", 64, decrypt=True)
    rekey("aes-128-cbc", 64)
    cpu("aes-128-cbc", 64)
    cpu("aes-128-ctr", 8192)
    for cipher, extra in (("aes-128-cbc", ()), ("aes-128-cbc", ("-decrypt",)), ("aes-128-ctr", ()),
                          ("aes-128-ecb", ()), ("aes-128-xts", ())):
        speed(cipher, extra)
    for size in (16, 1024):
        speed("aes-256-gcm", size=size)
    # routed paths: the in-process AES-NI provider (where this CPU has AES-NI)
    if "aes" in open("/proc/cpuinfo").read().split():
        speed("aes-128-ctr", route="aes-*=aesni")
        speed("aes-256-gcm", size=1024, route="aes-*=aesni")
    else:
        print("SKIP (part): routed paths: this CPU has no AES-NI, the aesni route falls back")
    print("\nreport/truth (median over rounds; the bound is +-%d %%)" % (100 * BOUND))
    for name, med, ratios in results:
        print(f"  {med:6.3f}  {name}")


ctlib.main(test)
