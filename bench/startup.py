#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""startup.py - what tracing adds to the start-up and exit of programs that map a crypto library
(`openssl version`, `curl --version`, `ssh -V`): the cost every process of a traced ssh session or
script pays before its first cipher call.

Side by side, alternating round by round so that machine noise hits all alike: bare; bare again
(its ratio to bare is the noise); `cryptrace run -q` (the launcher's own start-up is in it); the
preload alone (LD_PRELOAD with CRYPTRACE_OUT, as a bare preload measures the TSC's rate itself);
and with -o OLD_BUILD the same two with another build (its tracer/cryptrace and
preload/libcryptrace.so), e.g. the one before a change. Prints the median wall time per run of
each and the ratio to bare (median of the per-round ratios, min..max), and what each adds to
bare in ms.

usage: bench/startup.py [-r ROUNDS] [-b BUILD_DIR] [-o OLD_BUILD_DIR]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

PROGRAMS = [["openssl", "version"], ["curl", "--version"], ["ssh", "-V"]]
BATCH = 20  # runs per timing: one fork+exec is too short for the clock alone


def timed(argv, env):
    t = time.perf_counter()
    for _ in range(BATCH):
        subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return (time.perf_counter() - t) / BATCH


def cpu_model():
    with open("/proc/cpuinfo") as f:
        for line in f:
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    return "unknown CPU"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-r", "--rounds", type=int, default=7)
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("-b", "--build", default=os.path.join(here, "..", "build"))
    ap.add_argument("-o", "--old", help="another build directory, run in the same rounds")
    a = ap.parse_args()
    builds = [("", os.path.abspath(a.build))] + ([("old ", os.path.abspath(a.old))] if a.old else [])
    for _, b in builds:
        for f in ("tracer/cryptrace", "preload/libcryptrace.so"):
            if not os.path.exists(os.path.join(b, f)):
                print(f"startup.py: {b}/{f} is not built", file=sys.stderr)
                return 77
    progs = [p for p in PROGRAMS if shutil.which(p[0])]
    top = tempfile.mkdtemp(prefix="ct-startup-")
    bare = {k: v for k, v in os.environ.items() if not k.startswith("CRYPTRACE_") and k != "LD_PRELOAD"}
    modes = [("bare", None), ("bare again", None)]
    for tag, b in builds:
        out = os.path.join(top, tag.strip() or "new")
        os.makedirs(out, exist_ok=True)
        modes.append((f"{tag}cryptrace run", ("run", b, out)))
        modes.append((f"{tag}preload only", ("preload", b, out)))

    def run_mode(mode, argv):
        if mode is None:
            return timed(argv, bare)
        how, b, out = mode
        if how == "run":
            return timed([os.path.join(b, "tracer/cryptrace"), "run", "-q", "-o", out, "--"] + argv, bare)
        env = dict(bare, LD_PRELOAD=os.path.join(b, "preload/libcryptrace.so"), CRYPTRACE_OUT=out)
        return timed(argv, env)

    print(f"# {cpu_model()}, {os.cpu_count()} CPUs; {a.rounds} rounds of {BATCH} runs per figure")
    try:
        for argv in progs:
            times = {name: [] for name, _ in modes}
            for _ in range(a.rounds):
                for name, mode in modes:
                    times[name].append(run_mode(mode, argv))
                for _, b in builds:  # traces pile up otherwise
                    for d in os.listdir(top):
                        shutil.rmtree(os.path.join(top, d), ignore_errors=True)
                        os.makedirs(os.path.join(top, d), exist_ok=True)
            print(f"{' '.join(argv)}:")
            print(f"  {'mode':20s} {'ms/run':>8s} {'ratio':>6s} {'min..max':>13s} {'adds ms':>8s}")
            for name, _ in modes:
                ratios = [t / b for t, b in zip(times[name], times["bare"])]
                med = statistics.median(times[name]) * 1e3
                add = med - statistics.median(times["bare"]) * 1e3
                print(f"  {name:20s} {med:8.2f} {statistics.median(ratios):6.2f} "
                      f"{min(ratios):6.2f}..{max(ratios):<6.2f} {add:8.2f}")
    finally:
        shutil.rmtree(top, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
