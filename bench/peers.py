#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""peers.py - the route against its peers, side by side in one run: AES-128, per mode (ECB, CTR,
CBC-decrypt, XTS, XTS-decrypt, GCM) and request size (16 B .. 16 KiB), GB/s, with the ratios to the best peer
and to the instruction limit of this CPU.

  openssl-3.0  this host's `openssl speed -elapsed -seconds S -bytes N [-decrypt] -evp CIPHER`
  openssl-3.5  Debian 13's openssl, libcrypto and glibc, fetched and unpacked by
               tests/libcrypto/fetch.sh (tests/libcrypto/osslver.py: the cache the libcrypto
               suite uses, BUILD/tests/libcrypto/cache/openssl-3.5), the same command through
               that tree's own loader
  ipsec-mb     Intel ipsec-mb through its job API (BUILD/bench/ipsecmb_bench, built by meson
               where libipsec-mb-dev is installed; each figure follows a check of its output
               against OpenSSL EVP); one job per request, GCM a whole message (IV, data, tag);
               it has no XTS
  route        `cryptrace run -q --route 'aes-*=aesni' -- openssl speed ...` (the 3.0 command),
               with BUILD's libcryptrace.so, or each --route-lib NAME=PATH given (e.g. a build
               of main beside this one: CRYPTRACE_LIB selects the library)
  route-3.5    the first route library under OpenSSL 3.5's own `openssl speed` (its loader, its
               libcrypto): our code behind 3.5's EVP, as openssl-3.5's own code is; the route's
               figures under 3.0 carry 3.0's costlier EVP per call (--no-route-35 leaves it out)
  backend      our AES code with nothing in front: BUILD/aesni/aesni_bench's figure for the same
               request (GCM a whole message, as ipsec-mb's job): what the route would give with
               no EVP cost per call (--no-backend leaves it out); each other route's "in front"
               column is its time a request less the backend's: the EVP calls, hooks, lane and
               provider in front of our code, and the buffer's place (a 3.0 openssl speed GCM
               message is four EVP calls: ~40 ns at any size on an Intel Xeon, 2026-12-05);
               XTS's tweak the backend makes in the unit and the route at init
               (provider_xts.c), so there the column can be negative

Rounds alternate: each round runs every peer once on each (mode, size) before the next round,
so drift and other jobs on the machine hit all peers alike; the table shows the median and the
range (min-max) over the rounds. Before timing, each route library's report is checked to have
served every mode on a route:aesni path (a figure of native OpenSSL under another name would
otherwise pass unseen). Each round also moves the programs' stacks against their buffers: an
environment variable of a length drawn per round (use_stack_pad; the same for every peer within
the round), since where the stack sits modulo 4 KiB moved one program's figure by up to 8 % on
the Intel Xeon (2026-12-06: a 4 KiB XTS unit in place; likely its last stores aliasing the
stack's loads after it), and a single place would favour whichever program it happens to suit.
The header names the CPU, our code level, ipsec-mb's and the limit (BUILD/aesni/aesni_bench
--limits: the widest AES instruction's measured throughput, read
before the rounds and after each, the highest reading used: it follows the core's clock).

The buffer's place against a cache line is each program's own: OpenSSL 3.0.22's openssl speed
runs in place 48 bytes past a line's start, 3.5.9's on one (2026-12-05), ipsec-mb's and
aesni_bench's (out of place) on one, and our code pays for a buffer off a line where 3.5's does
not (bench/README.md). With --places every figure is taken at the four places, in place:
openssl speed at -misalign 0, 16, 32 and 48 (each moves the buffer on from where malloc put it,
on a 16-byte boundary, so the four meet every place once), ipsec-mb and aesni_bench at those
offsets; the round's figure is the best of the four (a table) and the worst (another). Four
times as long.

usage: bench/peers.py [-b BUILD] [-r ROUNDS] [-s SECONDS] [-m MODES] [-z SIZES]
                      [--route-lib NAME=PATH]... [--no-35] [--no-route-35] [--no-ipsecmb]
                      [--no-backend] [--places]
                      [-o FILE]
Exit 77 when this is not an x86-64 machine with AES-NI or nothing is built."""
import argparse
import json
import os
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(HERE)
MODES = ["ecb", "ctr", "cbc-dec", "xts", "xts-dec", "gcm"]
SIZES = [16, 256, 1024, 8192, 16384]
CIPHER = {"ecb": "aes-128-ecb", "ctr": "aes-128-ctr", "cbc-dec": "aes-128-cbc",
          "xts": "aes-128-xts", "xts-dec": "aes-128-xts", "gcm": "aes-128-gcm"}
DECRYPT = {"cbc-dec", "xts-dec"}


# The round's stack place (main sets it): merged into every program's environment.
STACK_PAD = {}


def use_stack_pad(rnd):
    """Sets STACK_PAD for round rnd: an environment entry whose length (0-4080, a multiple of 16,
    drawn from the round's number) moves the stack of every program started with it, the same
    for every peer within the round. Returns that length."""
    n = random.Random(rnd).randrange(0, 4096, 16)
    STACK_PAD.clear()
    STACK_PAD["CT_BENCH_STACK_PAD"] = "x" * n
    return n


def die(code, msg):
    print(f"peers.py: {msg}", file=sys.stderr)
    sys.exit(code)


def speed_args(mode, size, seconds, place=None):
    """openssl speed's arguments; place (--places): -misalign, the buffer moved that far on from
    where the program's heap put it (0 left out: openssl speed refuses "-misalign 0")."""
    return (["speed", "-elapsed", "-seconds", str(seconds), "-bytes", str(size)] +
            (["-misalign", str(place)] if place else []) +
            (["-decrypt"] if mode in DECRYPT else []) + ["-evp", CIPHER[mode]])


def speed_figure(p, what):
    """openssl speed's figure (1000s of bytes/s, the last field of its last line) in bytes/s."""
    out = p.stdout.decode(errors="replace").strip().splitlines()
    m = re.search(r"([0-9.]+)k\s*$", out[-1]) if out else None
    if p.returncode != 0 or not m:
        err = p.stderr.decode(errors="replace").strip()[-300:]
        die(1, f"{what}: exit {p.returncode}, no figure ({err!r})")
    return float(m.group(1)) * 1000.0


class Peer:
    def __init__(self, name, run, modes):
        self.name, self.run, self.modes = name, run, modes


def openssl_peer(name, argv_of, env):
    def run(mode, size, seconds, place=None):
        p = subprocess.run(argv_of(speed_args(mode, size, seconds, place)), env={**env, **STACK_PAD},
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        return speed_figure(p, f"{name} {mode} {size}")
    return Peer(name, run, MODES)


def route_peer(name, cryptrace, lib, work, tree=None):
    """The route under this host's openssl speed, or (tree: an osslver.Tree) under that
    release's own openssl speed, through its loader: the same EVP in front of our code as in
    front of that release's own."""
    env = dict(os.environ, CRYPTRACE_LIB=lib)
    if tree:
        env = tree.env(env)
    env.pop("OPENSSL_ia32cap", None)

    def cmd(args, out):
        prog = tree.argv(args) if tree else ["openssl"] + args
        return [cryptrace, "run", "-q", "-o", out, "--route", "aes-*=aesni", "--"] + prog

    def run(mode, size, seconds, place=None):
        out = tempfile.mkdtemp(dir=work)
        p = subprocess.run(cmd(speed_args(mode, size, seconds, place), out), env={**env, **STACK_PAD},
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        shutil.rmtree(out, ignore_errors=True)
        return speed_figure(p, f"{name} {mode} {size}")

    def check():
        """Every mode's work on a route:aesni path in the report (cryptrace report --json)."""
        for mode in MODES:
            out = tempfile.mkdtemp(dir=work)
            p = subprocess.run(cmd(speed_args(mode, 1024, 1), out), env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            speed_figure(p, f"{name} {mode} check")
            r = subprocess.run([cryptrace, "report", "--json", out], stdout=subprocess.PIPE,
                               stderr=subprocess.PIPE, env=env)
            doc = json.loads(r.stdout or b"{}")
            impls = {x.get("impl") for x in doc.get("paths", []) if x.get("cipher") == CIPHER[mode]}
            shutil.rmtree(out, ignore_errors=True)
            if impls != {"route:aesni"}:
                die(1, f"{name}: {CIPHER[mode]} ran on {sorted(map(str, impls))}, not only "
                       "route:aesni: the figures would not be the route's")
        print(f"# {name}: every mode checked on a route:aesni path ({lib})")

    peer = Peer(name, run, MODES)
    peer.check = check
    return peer


def backend_peer(exe):
    """Our AES code without OpenSSL in front of it: BUILD/aesni/aesni_bench's "ours" figure for
    the same request (GCM a whole message, IV, data and tag, as ipsec-mb's job; XTS one data
    unit). What the route could give a program whose EVP calls cost nothing: the route's own
    figures carry openssl speed's EVP cost per call (per GCM message: a key set-up, a message
    set-up and a final, ~450 ns in OpenSSL 3.0, `cryptrace report` of the run shows them)."""
    names = {"ecb": "ecb", "ctr": "ctr", "cbc-dec": "cbc-dec", "xts": "xts-enc", "xts-dec": "xts-dec",
             "gcm": "gcm-enc"}

    def run(mode, size, seconds, place=None):
        where = [] if place is None else ["--in-place", "--misalign", str(place)]
        p = subprocess.run([exe, "--no-masked", "--modes", names[mode], "--sizes", str(size),
                            "--ms", str(1000 * seconds)] + where, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, env={**os.environ, **STACK_PAD})
        row = [ln.split() for ln in p.stdout.splitlines()
               if ln.split()[:2] == [names[mode], str(size)]] if p.returncode == 0 else []
        if not row:
            die(1, f"aesni_bench {mode} {size}: exit {p.returncode}, no figure ({p.stderr[-300:]!r})")
        return float(row[0][4]) * 1e9  # mode bytes native masked ours ...
    return Peer("backend", run, list(names))


def ipsecmb_peer(exe):
    names = {"ecb": "ecb", "ctr": "ctr", "cbc-dec": "cbc-dec", "gcm": "gcm"}

    def run(mode, size, seconds, place=None):
        where = [] if place is None else [str(place)]  # in place, that far past a cache line
        p = subprocess.run([exe, names[mode], str(size), str(seconds)] + where, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, env={**os.environ, **STACK_PAD})
        if p.returncode != 0:
            die(1, f"ipsec-mb {mode} {size}: {p.stderr.decode(errors='replace').strip()}")
        return float(p.stdout.split()[0])
    return Peer("ipsec-mb", run, list(names))


def openssl35(build):
    """Debian 13's OpenSSL 3.5 tree through tests/libcrypto/osslver.py (fetch.sh): a Peer, or
    None with the reason printed."""
    os.environ["CT_BUILD_ROOT"] = build
    sys.path[:0] = [os.path.join(SRC, "tests", "lib"), os.path.join(SRC, "tests", "libcrypto")]
    saved = dict(os.environ)
    try:
        import osslver
        t = osslver.tree("3.5")
    except SystemExit:  # ctlib.skip: the archive cannot be reached (it printed why)
        return None, "not available (see SKIP above)", None
    finally:
        os.environ.clear()  # ctlib drops CRYPTRACE_* from the environment on import
        os.environ.update(saved)
    env = t.env(dict(os.environ))
    env.pop("OPENSSL_ia32cap", None)
    return openssl_peer("openssl-3.5", t.argv, env), t.version_line(), t


def limits(build):
    exe = os.path.join(build, "aesni", "aesni_bench")
    p = subprocess.run(["taskset", "-c", str(os.cpu_count() - 1), exe, "--limits"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        die(1, f"{exe} --limits: exit {p.returncode}: {p.stderr.strip()}")
    text = p.stdout
    m = re.search(r"parallel-mode limit: (.*?), the widest.*our code level: (\S+)", text)
    if not m:
        die(1, f"cannot read the limit from aesni_bench --limits:\n{text}")
    widest, level = m.group(1), m.group(2)
    g = re.search(re.escape(widest) + r": .*?, ([0-9.]+) GB/s of AES-128", text)
    return text, widest, level, float(g.group(1)) * 1e9


def table_of(res, names, rnames, modes, sizes, limit_bps):
    """The markdown table: each peer's median (min-max) over the rounds, each route's ratio to
    the best non-route peer and its share of the limit, and with the backend in the run, each
    other route's time a request beyond the backend's (what stands in front of our code: the
    EVP calls, the hooks, the lane, the provider, the buffer's place)."""
    fronted = [r for r in rnames if r != "backend"] if "backend" in rnames else []
    cols = (["mode", "bytes"] + names + [f"{r}/best" for r in rnames] + [f"{r} %lim" for r in rnames] +
            [f"{r} in front, ns" for r in fronted])
    lines = ["| " + " | ".join(cols) + " |", "|" + "---|" * len(cols)]
    for mode in modes:
        for size in sizes:
            cells, med = [], {}
            for n in names:
                v = res.get((n, mode, size))
                if not v:
                    cells.append("n/a")
                    continue
                med[n] = statistics.median(v)
                cells.append(f"{med[n] / 1e9:.2f} ({min(v) / 1e9:.2f}-{max(v) / 1e9:.2f})")
            best = max((med[n] for n in names if n in med and n not in rnames), default=0)
            ratios = [f"{med[r] / best:.2f}x" if best else "-" for r in rnames]
            lims = [f"{100 * med[r] / limit_bps:.0f} %" for r in rnames]
            front = [f"{size * 1e9 / med[r] - size * 1e9 / med['backend']:.1f}"
                     if r in med and "backend" in med else "-" for r in fronted]
            lines.append("| " + " | ".join([mode, str(size)] + cells + ratios + lims + front) + " |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("-b", "--build", default=os.path.join(SRC, "build"))
    ap.add_argument("-r", "--rounds", type=int, default=3)
    ap.add_argument("-s", "--seconds", type=int, default=1)
    ap.add_argument("-m", "--modes", default=",".join(MODES))
    ap.add_argument("-z", "--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--route-lib", action="append", default=[], metavar="NAME=PATH",
                    help="a route column per library (default: route=BUILD's libcryptrace.so)")
    ap.add_argument("--no-35", action="store_true", help="leave OpenSSL 3.5 out")
    ap.add_argument("--no-route-35", action="store_true",
                    help="leave out the route under OpenSSL 3.5's openssl speed")
    ap.add_argument("--no-ipsecmb", action="store_true", help="leave ipsec-mb out")
    ap.add_argument("--no-backend", action="store_true", help="leave out our code without OpenSSL")
    ap.add_argument("--places", action="store_true",
                    help="every figure at the buffer's four places against a cache line (in place; "
                         "openssl speed at -misalign 0, 16, 32 and 48 from its own): a best-place "
                         "and a worst-place table")
    ap.add_argument("-o", "--output", help="also write the table to this file")
    a = ap.parse_args()
    build = os.path.abspath(a.build)
    modes = [m for m in re.split(r"[,\s]+", a.modes) if m]
    words = [z for z in re.split(r"[,\s]+", a.sizes) if z]
    if not all(z.isdigit() for z in words):
        die(2, f"-z {a.sizes!r}: sizes are byte counts, separated by commas (16,1024)")
    sizes = [int(z) for z in words]
    places = [0, 16, 32, 48] if a.places else [None]
    if any(m not in MODES for m in modes) or any(z < 16 for z in sizes):
        die(2, f"modes are {','.join(MODES)}; sizes at least 16 bytes")
    if any(z % 16 for z in sizes) and {"ecb", "cbc-dec"} & set(modes):
        die(2, "ecb and cbc-dec take whole blocks of 16 bytes (xts, xts-dec, ctr and gcm take any size: "
               "520 is a 512-byte XTS unit with ciphertext stealing)")
    if os.uname().machine != "x86_64" or " aes " not in open("/proc/cpuinfo").read():
        die(77, "needs an x86-64 CPU with AES-NI (the peers' figures are x86's)")
    cryptrace = os.path.join(build, "tracer", "cryptrace")
    if not os.access(cryptrace, os.X_OK) or shutil.which("openssl") is None:
        die(77, f"{cryptrace} not built or no openssl command")

    work = tempfile.mkdtemp(prefix="peers-")
    try:
        limit_text, widest, level, limit_bps = limits(build)
        peers = [openssl_peer("openssl-3.0", lambda args: ["openssl"] + args,
                              {k: v for k, v in os.environ.items() if k != "OPENSSL_ia32cap"})]
        v30 = subprocess.run(["openssl", "version"], stdout=subprocess.PIPE, text=True).stdout.strip()
        v35, tree35 = "left out (--no-35)", None
        if not a.no_35:
            p35, v35, tree35 = openssl35(build)
            if p35:
                peers.append(p35)
        exe = os.path.join(build, "bench", "ipsecmb_bench")
        vmb = "left out (--no-ipsecmb)"
        if not a.no_ipsecmb:
            if os.access(exe, os.X_OK):
                peers.append(ipsecmb_peer(exe))
                p = subprocess.run([exe, "ecb", "16", "0.01"], stdout=subprocess.PIPE, text=True)
                f = p.stdout.split()  # bytes/s, code level, version
                vmb = f"{f[2]}, code level {f[1]}" if p.returncode == 0 and len(f) == 3 else "?"
            else:
                vmb = f"not built ({exe}: libipsec-mb-dev missing at meson setup)"
        libs = a.route_lib or [f"route={os.path.join(build, 'preload', 'libcryptrace.so')}"]
        routes = []
        for spec in libs:
            name, _, path = spec.partition("=")
            if not os.path.isfile(path):
                die(2, f"--route-lib {spec}: no such file")
            r = route_peer(name, cryptrace, os.path.abspath(path), work)
            r.check()
            routes.append(r)
        if tree35 and not a.no_route_35:  # the first library under 3.5's own openssl speed
            name, _, path = libs[0].partition("=")
            r = route_peer(f"{name}-3.5", cryptrace, os.path.abspath(path), work, tree35)
            r.check()
            routes.append(r)
        if not a.no_backend:
            routes.append(backend_peer(os.path.join(build, "aesni", "aesni_bench")))
        peers += routes

        with open("/proc/cpuinfo") as f:
            cpu = re.search(r"model name\s*:\s*(.*)", f.read()).group(1)
        head = [f"# peers.py {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, AES-128, "
                f"{a.rounds} alternating rounds of {a.seconds} s per figure; load before: "
                f"{os.getloadavg()[0]:.2f} (1 min) on {os.cpu_count()} CPUs",
                f"# CPU: {cpu}; limit: {widest}, {limit_bps / 1e9:.2f} GB/s of AES-128 at the first "
                f"reading (aesni_bench --limits); our code level: {level}",
                f"# openssl-3.0: {v30}; openssl-3.5: {v35}; ipsec-mb: {vmb}",
                f"# route: cryptrace run --route 'aes-*=aesni' -- openssl speed (the 3.0 "
                f"command; NAME-3.5: 3.5's own openssl speed, through its loader); " + ", ".join(f"{r.name}" for r in routes) +
                ("" if a.no_backend else "; backend: aesni_bench's ours (no EVP in front)"),
                "# GB/s median (min-max over rounds); best peer = best of the openssl and "
                "ipsec-mb columns; ratio = route / best peer; %lim = route median / limit" +
                ("" if a.no_backend else "; in front = a route's ns a request minus the backend's"),
                "# buffers: " + ("in place at 0, 16, 32 and 48 bytes past a cache line (--places)"
                                 if a.places else "where each program puts them (3.0's openssl speed "
                                 "48 bytes past a cache line, 3.5's on one; --places to even them)")]
        print("\n".join(head) + "\n" + limit_text.rstrip().replace("\n", "\n# ").join(["# ", ""]))
        sys.stdout.flush()

        res = {}  # (peer, mode, size) -> [bytes/s per round]; with --places the best place's
        worst = {}  # and the worst place's
        # The limit follows the core's clock, which a shared host moves (3.8-4.1 GHz within
        # minutes on the Intel Xeon of 2026-12-05: a route at 106 % of the limit read once at
        # the start). So it is read again after every round and the %lim columns divide by the
        # highest reading: a figure above 100 % then outran every reading, not a slow first one.
        limit_reads = [limit_bps]
        for rnd in range(a.rounds):
            pad = use_stack_pad(rnd)
            for mode in modes:
                for size in sizes:
                    for p in peers:
                        if mode not in p.modes:
                            continue
                        figs = [p.run(mode, size, a.seconds, place) for place in places]
                        res.setdefault((p.name, mode, size), []).append(max(figs))
                        worst.setdefault((p.name, mode, size), []).append(min(figs))
            limit_reads.append(limits(build)[3])
            print(f"# round {rnd + 1}/{a.rounds} done, load {os.getloadavg()[0]:.2f}, "
                  f"limit {limit_reads[-1] / 1e9:.2f} GB/s, stack pad {pad} B", flush=True)
        limit_bps = max(limit_reads)
        limit_line = (f"# limit for %lim: {limit_bps / 1e9:.2f} GB/s, the highest of {len(limit_reads)} "
                      f"readings (one before the rounds, one after each: "
                      f"{min(limit_reads) / 1e9:.2f}-{limit_bps / 1e9:.2f})")
        head.append(limit_line)

        names = [p.name for p in peers]
        rnames = [r.name for r in routes]
        tables = [table_of(res, names, rnames, modes, sizes, limit_bps)]
        if a.places:
            tables = [f"# best place (the fastest of the {len(places)} per round)\n" + tables[0],
                      f"# worst place (the slowest of the {len(places)} per round)\n" +
                      table_of(worst, names, rnames, modes, sizes, limit_bps)]
        table = "\n\n".join(tables)
        print(limit_line)
        print(table)
        print(f"# load after: {os.getloadavg()[0]:.2f}")
        if a.output:
            with open(a.output, "w") as f:
                f.write("\n".join(head) + "\n\n" + table + "\n")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
