#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""truth.py - the report's times against programs' own clocks, as tables (issue [truth]): for
one build (-b, default build/), side by side in one run per row:

  1. openssl speed -elapsed -evp CIPHER -bytes N: openssl's rate, the path's wall-clock rate in
     that size bucket, report/openssl, and the process's CPU over its lifetime (1.00 on an idle
     machine; below that, openssl's elapsed rate counts time spent waiting for a CPU);
  2. examples/selftimed tight: the program's own time per call (its batches' mean without the
     preempted ones) and the report's, per size;
  3. AEAD messages (selftimed aead, openssl speed -evp aes-256-gcm -bytes N): the program's own
     per-message time / rate and the report's (the whole path: a build without phases reports
     the data updates only);
  4. the CPU share of a loop whose cipher calls are 50 % of its run (selftimed -S 50), five runs:
     the report's share of the process's CPU time over the program's own.

The report's WALL leaves out the pauses inside runs of calls (interrupts, hypervisor exits), which
a program's clock counts; it prints them beside WALL (a build from before that reads as none):
the "+pauses" columns are the report over WALL + pauses, what the `truth` suite compares for
programs that run their calls back to back.

A ratio above 1 in (1) and (3b) means the report says faster than openssl; in (2) and (3a) the
report's time over the program's. Prints the CPU model, as every bench table does.

usage: bench/truth.py [-b BUILD] [-c CIPHER] [-s SECONDS]
"""
import argparse
import json
import os
import subprocess
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
ap = argparse.ArgumentParser()
ap.add_argument("-b", "--build", default=os.path.join(here, "..", "build"))
ap.add_argument("-c", "--cipher", default="aes-128-cbc")
ap.add_argument("-s", "--seconds", default="1")
args = ap.parse_args()
build = os.path.abspath(args.build)
cryptrace = os.path.join(build, "tracer", "cryptrace")
# this tree's selftimed when the build measured is older than it (the "before" figures)
selftimed = os.path.join(build, "examples", "selftimed")
if not os.path.exists(selftimed):
    selftimed = os.path.join(here, "..", "build", "examples", "selftimed")


def traced(argv):
    out = tempfile.mkdtemp(prefix="ct-truth-bench.")
    p = subprocess.run([cryptrace, "run", "-q", "-o", out, "--"] + argv, capture_output=True)
    doc = json.loads(subprocess.run([cryptrace, "report", "--json", out],
                                    capture_output=True).stdout)
    subprocess.run(["rm", "-rf", out])
    return p.stdout.decode(), doc


def busiest(doc):
    return max((x for x in doc["paths"] if x["api"] == "evp"), key=lambda x: x["bytes"])


def speed(cipher, size, whole_path=False):
    """(size, openssl's rate, the report's rate, the process's CPU / lifetime): openssl's elapsed
    rate counts time the process waited for a CPU, the report's does not (a loaded machine
    shows as CPU/wall below 1, and the ratios then read high by about its inverse)."""
    argv = ["openssl", "speed", "-elapsed", "-seconds", args.seconds, "-bytes", str(size), "-evp", cipher]
    text, doc = traced(argv)
    row = [ln for ln in text.splitlines() if ln.lower().startswith(cipher)][-1]
    rate = float(row.split()[-1].rstrip("k")) * 1000
    p = busiest(doc)
    cell = p if whole_path else \
        [x for x in p["sizes"] if x["bucket_low"] <= size < 2 * max(1, x["bucket_low"])][0]
    got = cell["bytes"] * 1e9 / cell["wall_ns"]
    with_pauses = cell["bytes"] * 1e9 / (cell["wall_ns"] + (cell.get("pause_ns") or 0))
    pr = doc["processes"][0]
    life = (pr.get("wall_ns") or 0)
    cpu = ((pr.get("utime_ns") or 0) + (pr.get("stime_ns") or 0))
    return size, rate, got, with_pauses, cpu / life if life else float("nan")


def evp_time(doc, pauses):
    return sum((x["wall_ns"] or 0) + ((x.get("pause_ns") or 0) if pauses else 0)
               for x in doc["paths"] if x["api"] == "evp")


def model():
    for ln in open("/proc/cpuinfo"):
        if ln.startswith("model name"):
            return ln.split(":", 1)[1].strip()
    return "unknown CPU"


print(f"build: {build}\nCPU: {model()} ({os.cpu_count()} CPUs); "
      f"{subprocess.run(['openssl', 'version'], capture_output=True).stdout.decode().strip()}")

print(f"\n1. openssl speed -elapsed -seconds {args.seconds} -evp {args.cipher}: rate per size")
HEAD = f"   {'size':>6} {'openssl MB/s':>13} {'report MB/s':>12} {'report/openssl':>15} {'+pauses':>8} " \
       f"{'CPU/wall':>9}"
print(HEAD)
for size in (16, 48, 64, 80, 192, 256, 1024, 1500, 4000, 8192, 16384):
    s, rate, got, wp, busy = speed(args.cipher, size)
    print(f"   {s:6d} {rate / 1e6:13.1f} {got / 1e6:12.1f} {got / rate:15.3f} {wp / rate:8.3f} {busy:9.2f}")

if os.path.exists(selftimed):
    print(f"\n2. examples/selftimed tight {args.cipher}: time per call (program's own clock vs report)")
    SHEAD = f"   {'size':>6} {'program ns':>11} {'report ns':>10} {'report/program':>15} {'+pauses':>8}"
    print(SHEAD)
    for s in (16, 48, 64, 80, 128, 1500, 8192):
        text, doc = traced([selftimed, "-s", args.seconds, "tight", args.cipher, str(s)])
        t = json.loads(text)
        truth = t["robust_batch_ns"] / t["batch_iterations"]
        got, gp = evp_time(doc, False) / t["iterations"], evp_time(doc, True) / t["iterations"]
        print(f"   {s:6d} {truth:11.1f} {got:10.1f} {got / truth:15.3f} {gp / truth:8.3f}")
    print("\n3a. examples/selftimed aead aes-256-gcm: time per message (IV, AAD, data, final, tag)")
    print(SHEAD)
    for s in (16, 64, 1024):
        text, doc = traced([selftimed, "-s", args.seconds, "aead", "aes-256-gcm", str(s)])
        t = json.loads(text)
        truth = t["robust_batch_ns"] / t["batch_iterations"]
        got, gp = evp_time(doc, False) / t["iterations"], evp_time(doc, True) / t["iterations"]
        print(f"   {s:6d} {truth:11.1f} {got:10.1f} {got / truth:15.3f} {gp / truth:8.3f}")

print("\n3b. openssl speed -elapsed -evp aes-256-gcm -bytes N: the whole path's rate")
print(HEAD)
for size in (16, 1024):
    s, rate, got, wp, busy = speed("aes-256-gcm", size, whole_path=True)
    print(f"   {s:6d} {rate / 1e6:13.1f} {got / 1e6:12.1f} {got / rate:15.3f} {wp / rate:8.3f} {busy:9.2f}")

if os.path.exists(selftimed):
    print(f"\n4. examples/selftimed -S 50 tight {args.cipher} 64: the cipher calls' share of the "
          "process's CPU time, report/program, five runs")
    ratios = []
    for _ in range(5):
        text, doc = traced([selftimed, "-s", args.seconds, "-S", "50", "tight", args.cipher, "64"])
        t = json.loads(text)
        got = doc["processes"][0].get("crypto_cpu_share")
        ratios.append(got / (t["crypto_cpu_ns"] / t["run_cpu_ns"]) if got is not None else float("nan"))
    print("   " + " ".join(f"{r:.3f}" for r in ratios))
