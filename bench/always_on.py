#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""always_on.py - what the always-on mode (docs/fleet.md) costs.

1. Programs that do no crypto: the start-up and exit of `sh -c true`, `ls /` and
   `python3 -c pass`, run side by side and alternating so that machine noise hits all alike:
   bare; bare again (its ratio to bare is the noise: what "within noise" is measured against);
   an empty library preloaded (what loading any second library costs); ours preloaded with no
   configuration; always-on into a spool; and CRYPTRACE_OUT as `cryptrace run` traces. Prints
   the median wall time per run of each, the ratios to bare (median of the per-round ratios,
   min..max), and the trace files the spool got per run.
2. A program that does: `openssl speed -elapsed -evp aes-128-gcm` at 16 B, 1 KiB and 16 KiB,
   bare, always-on, CRYPTRACE_OUT and excluded by the configuration (the library loaded, its
   hooks passing through), alternating round by round; the throughput openssl prints itself
   (-mr), and the ratio to bare.

usage: bench/always_on.py [-r ROUNDS] [-s SPEED_ROUNDS] [-l path/to/libcryptrace.so]
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


def empty_library(top):
    """An empty shared library, built here with cc: the cost of any LD_PRELOAD at all; None
    without a compiler."""
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        return None
    src, lib = os.path.join(top, "empty.c"), os.path.join(top, "empty.so")
    with open(src, "w") as f:
        f.write("int cryptrace_bench_empty;\n")
    ok = subprocess.run([cc, "-shared", "-fPIC", "-o", lib, src], stdout=subprocess.DEVNULL,
                        stderr=subprocess.DEVNULL).returncode == 0
    return lib if ok else None


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown CPU"


SPEED_SIZES = [16, 1024, 16384]


def speed_once(env, size):
    """openssl's own bytes per second for aes-128-gcm at size (its -mr '+F:' line)."""
    out = subprocess.run(["openssl", "speed", "-elapsed", "-mr", "-seconds", "1", "-bytes", str(size),
                          "-evp", "aes-128-gcm"], env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.DEVNULL, text=True, check=True).stdout
    for line in out.splitlines():
        if line.startswith("+F:"):
            return float(line.split(":")[3])
    raise RuntimeError("openssl speed printed no +F line")


def speed(rounds, variants, spool, outdir):
    print(f"\nopenssl speed -elapsed -seconds 1 -evp aes-128-gcm, {rounds} rounds alternating")
    print(f"{'size':>6} {'variant':<16} {'median MB/s':>12} {'ratio':>7} {'min..max':>13}")
    for size in SPEED_SIZES:
        rates = {v: [] for v in variants}
        for _ in range(rounds):
            for v, env in variants.items():
                rates[v].append(speed_once(env, size))
        for v in variants:
            ratios = [r / b for r, b in zip(rates[v], rates["bare"])]
            print(f"{size:>6} {v:<16} {statistics.median(rates[v]) / 1e6:>12.1f} "
                  f"{statistics.median(ratios):>7.3f} {min(ratios):>6.2f}..{max(ratios):<6.2f}")
    shutil.rmtree(os.path.join(spool, str(os.geteuid())), ignore_errors=True)
    for f in os.listdir(outdir):
        os.unlink(os.path.join(outdir, f))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-r", "--rounds", type=int, default=15)
    ap.add_argument("-s", "--speed-rounds", type=int, default=3, help="openssl speed rounds (0: none)")
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
        empty = empty_library(top)
        variants = {
            "bare": base,
            "bare again": base,
            **({"empty library": dict(base, LD_PRELOAD=empty)} if empty else {}),
            "preloaded, off": dict(base, LD_PRELOAD=lib, CRYPTRACE_CONFIG=os.path.join(top, "none")),
            "always-on": dict(base, LD_PRELOAD=lib, CRYPTRACE_CONFIG=conf),
            # every process traced into a directory, as `cryptrace run` does: a file each
            "CRYPTRACE_OUT": dict(base, LD_PRELOAD=lib, CRYPTRACE_OUT=outdir),
        }
        print(f"{cpu_model()} ({os.cpu_count()} CPUs); {a.rounds} rounds x {BATCH} runs per variant, "
              f"alternating; {lib}")
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
        if a.speed_rounds > 0 and shutil.which("openssl"):
            excluded = os.path.join(top, "excluded.conf")
            with open(excluded, "w") as f:
                f.write(f"spool = {spool}\nexclude = */openssl\n")
            runs = {v: variants[v] for v in ("bare", "always-on", "CRYPTRACE_OUT")}
            # a program the configuration excludes: the library loaded, every hook passing through
            runs["excluded"] = dict(base, LD_PRELOAD=lib, CRYPTRACE_CONFIG=excluded)
            speed(a.speed_rounds, runs, spool, outdir)
    finally:
        shutil.rmtree(top, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
