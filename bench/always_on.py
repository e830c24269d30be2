#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""always_on.py - what the always-on mode (docs/fleet.md) costs programs that do no crypto:
the start-up and exit of `sh -c true`, `ls /` and `python3 -c pass`, run side by side and
alternating (bare, preloaded with no configuration, preloaded always-on into a spool, and
preloaded with CRYPTRACE_OUT as `cryptrace run` traces) so that machine noise hits all alike. Prints the median wall time per run of each and the ratios
to bare (median of the per-round ratios, min..max), and the trace files the spool got per run.

usage: bench/always_on.py [-r ROUNDS] [-l path/to/libcryptrace.so]
"""
import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

PROGRAMS = [["sh", "-c", "true"], ["ls", "/"], ["python3", "-c", "pass"]]
BATCH = 20  # runs per timing: one fork+exec is too short for the clock alone


def timed(argv, env):
    t = time.perf_counter()
    for _ in range(BATCH):
        subprocess.run(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True)
    return (time.perf_counter() - t) / BATCH


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-r", "--rounds", type=int, default=15)
    here = os.path.dirname(os.path.abspath(__file__))
    ap.add_argument("-l", "--lib", default=os.path.join(here, "..", "build", "preload", "libcryptrace.so"))
    a = ap.parse_args()
    lib = os.path.abspath(a.lib)
    if not os.path.exists(lib):
        print(f"always_on.py: {lib} not built", file=sys.stderr)
        return 77
    top = tempfile.mkdtemp(prefix="ct-always-on-")
    try:
        spool = os.path.join(top, "spool")
        os.mkdir(spool)
        os.chmod(spool, 0o1733)
        outdir = os.path.join(top, "out")
        os.mkdir(outdir)
        conf = os.path.join(top, "cryptrace.conf")
        with open(conf, "w") as f:
            f.write(f"spool = {spool}\n")
        base = {k: v for k, v in os.environ.items() if not k.startswith("CRYPTRACE_") and k != "LD_PRELOAD"}
        variants = {
            "bare": base,
            "preloaded, off": dict(base, LD_PRELOAD=lib, CRYPTRACE_CONFIG=os.path.join(top, "none")),
            "always-on": dict(base, LD_PRELOAD=lib, CRYPTRACE_CONFIG=conf),
            # every process traced into a directory, as `cryptrace run` does: a file each
            "CRYPTRACE_OUT": dict(base, LD_PRELOAD=lib, CRYPTRACE_OUT=outdir),
        }
        print(f"{a.rounds} rounds x {BATCH} runs per variant, alternating; {lib}")
        print(f"{'program':<20} {'variant':<16} {'median ms':>10} {'ratio':>7} {'min..max':>13} {'files/run':>9}")
        for argv in PROGRAMS:
            if not shutil.which(argv[0]):
                continue
            times = {v: [] for v in variants}
            for _ in range(a.rounds):
                for v, env in variants.items():
                    times[v].append(timed(argv, env))
            udir = os.path.join(spool, str(os.geteuid()))
            nfiles = len(os.listdir(udir)) if os.path.isdir(udir) else 0
            shutil.rmtree(udir, ignore_errors=True)
            nout = len(os.listdir(outdir))
            for f in os.listdir(outdir):
                os.unlink(os.path.join(outdir, f))
            for v in variants:
                ratios = [t / b for t, b in zip(times[v], times["bare"])]
                n = {"always-on": nfiles, "CRYPTRACE_OUT": nout}.get(v, 0)
                files = f"{n / (a.rounds * BATCH):.1f}"
                print(f"{' '.join(argv):<20} {v:<16} {statistics.median(times[v]) * 1e3:>10.2f} "
                      f"{statistics.median(ratios):>7.3f} {min(ratios):>6.2f}..{max(ratios):<6.2f} {files:>9}")
    finally:
        shutil.rmtree(top, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
