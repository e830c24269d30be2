#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""xts_units.py - XTS data units through EVP, the two ways programs give the IV, side by side in
one run: OpenSSL 3.0 (installed), OpenSSL 3.5 (Debian 13's, its own loader) and the route
(cryptrace's preload, aes-*=aesni) under 3.0, alternating round by round.

  sameiv  a loop of EVP_CipherUpdate on one context, its IV set once: `openssl speed`'s loop
  newiv   each unit after EVP_CipherInit_ex with the next IV (the unit's number), as a disk
          encryptor sets each sector's: the shape of real XTS users

The tweak, E(K2, IV), depends on the key and the IV only. OpenSSL makes it in every data call;
the route makes it when the IV is set (preload/route/provider_xts.c), so `openssl speed`'s loop
pays it once and a per-sector loop pays it at each init: this bench shows both, so that no figure
of the route's XTS rests on the benchmark's reuse of one IV.

Each figure is bench/hook_cost's best of 9 batches (thread CPU time) in ns a unit, in place, the
buffer OFFSET bytes past a cache line; the table gives the median (min-max) over the rounds and the
route's speed against the faster OpenSSL (best ns / route ns: > 1 is faster). Each round moves
the programs' stacks as peers.py does (use_stack_pad: the same place for every program within
a round); take 7 rounds or more for a verdict.

usage: bench/xts_units.py [-b BUILD] [-r ROUNDS] [-z SIZES] [-p PLACES] [-d DIRS]
                          [--route-lib NAME=LIB ...] [-o FILE]
"""
import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import peers  # noqa: E402  (the OpenSSL 3.5 tree and the CPU's limit line, as peers.py finds them)

SHAPES = ("sameiv", "newiv")


def runner_native(exe):
    return lambda args: subprocess.run([exe] + args, env={**os.environ, **peers.STACK_PAD},
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def runner_35(exe, tree):
    env = tree.env(dict(os.environ))
    env.pop("OPENSSL_ia32cap", None)
    return lambda args: subprocess.run(tree.argv(args, program=exe), env={**env, **peers.STACK_PAD},
                                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def runner_route(exe, lib, work):
    env = dict(os.environ, LD_PRELOAD=lib, CRYPTRACE_ROUTE="aes-*=aesni",
               CRYPTRACE_OUT=os.path.join(work, "trace"))

    def run(args):
        p = subprocess.run([exe] + args, env={**env, **peers.STACK_PAD}, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True)
        subprocess.run(["rm", "-rf", env["CRYPTRACE_OUT"]])
        return p
    return run


def ns_a_unit(run, name, size, shape, direction, place):
    # ~4 ms a batch for the route, best of 9: with 1 ms batches and best of 5 the route's 16 KiB
    # figure moved by 7 % from run to run (a shared host's clock), with these by 0.2 %
    calls = max(2000, 100_000_000 // size)
    p = run([str(size), str(calls), "9", "aes-128-xts", direction, "inplace", shape, str(place)])
    if p.returncode != 0 or not p.stdout.startswith("ns_per_call "):
        peers.die(1, f"{name}: hook_cost {size} {shape} {direction} {place}: exit {p.returncode}: "
                     f"{p.stderr.strip()[:300]}")
    return float(p.stdout.split()[1])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-b", "--build", default=os.path.join(peers.SRC, "build"))
    ap.add_argument("-r", "--rounds", type=int, default=7)
    ap.add_argument("-z", "--sizes", default="512,1024,4096,16384")
    ap.add_argument("-p", "--places", default="0,48",
                    help="the buffer's offsets past a cache line (openssl speed 3.0: 48; 3.5: 0)")
    ap.add_argument("-d", "--dirs", default="enc,dec")
    ap.add_argument("--route-lib", action="append", default=[], metavar="NAME=LIB",
                    help="a route column per library (default: route=BUILD's libcryptrace.so)")
    ap.add_argument("-o", "--output", help="also write the table to this file")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    exe = os.path.join(build, "bench", "hook_cost")
    if not os.access(exe, os.X_OK):
        peers.die(2, f"{exe}: not built (ninja -C {build})")
    libs = [r.split("=", 1) for r in a.route_lib] or [["route", os.path.join(build, "preload",
                                                                            "libcryptrace.so")]]
    sizes = [int(s) for s in a.sizes.split(",")]
    places = [int(p) for p in a.places.split(",")]
    dirs = a.dirs.split(",")
    work = tempfile.mkdtemp(prefix="xts_units.")
    runners = [("openssl-3.0", runner_native(exe))]
    peer35, v35, tree = peers.openssl35(build)
    if tree:
        runners.append(("openssl-3.5", runner_35(exe, tree)))
    peer_names = [n for n, _ in runners]
    runners += [(n, runner_route(exe, os.path.abspath(lib), work)) for n, lib in libs]
    route_names = [n for n, _ in libs]
    _, widest, level, _ = peers.limits(build)
    cpu = next((ln.split(":", 1)[1].strip() for ln in open("/proc/cpuinfo") if ln.startswith("model name")),
               "unknown CPU")
    head = [f"# xts_units.py {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, AES-128-XTS in place, "
            f"{a.rounds} alternating rounds, bench/hook_cost best of 9 batches (thread CPU time)",
            f"# CPU: {cpu}; widest AES instruction: {widest}; our code level: {level}; "
            f"openssl-3.5: {v35}",
            "# ns a unit, median (min-max); route/best = the faster OpenSSL's ns / the route's "
            "(> 1: the route is faster)"]
    print("\n".join(head), flush=True)
    res = {}
    for r in range(a.rounds):
        pad = peers.use_stack_pad(r)
        for size in sizes:
            for shape in SHAPES:
                for d in dirs:
                    for place in places:
                        order = runners if r % 2 == 0 else runners[::-1]
                        for name, run in order:
                            res.setdefault((name, size, shape, d, place), []).append(
                                ns_a_unit(run, name, size, shape, d, place))
        print(f"# round {r + 1}/{a.rounds} done, stack pad {pad} B", flush=True)
    cols = (["bytes", "IV", "dir", "offset"] + [n for n, _ in runners] + [f"{n}/best" for n in route_names])
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for size in sizes:
        for shape in SHAPES:
            for d in dirs:
                for place in places:
                    cells, med = [], {}
                    for name, _ in runners:
                        v = res[(name, size, shape, d, place)]
                        med[name] = statistics.median(v)
                        cells.append(f"{med[name]:.1f} ({min(v):.1f}-{max(v):.1f})")
                    best = min(med[n] for n in peer_names)
                    ratios = [f"{best / med[n]:.2f}x" for n in route_names]
                    lines.append("| " + " | ".join([str(size), shape, d, str(place)] + cells + ratios) + " |")
    table = "\n".join(lines)
    print(table)
    if a.output:
        with open(a.output, "w") as f:
            f.write("\n".join(head) + "\n" + table + "\n")
    subprocess.run(["rm", "-rf", work])


if __name__ == "__main__":
    main()
