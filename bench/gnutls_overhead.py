#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""gnutls_overhead.py - what tracing GnuTLS costs the program, side by side (untraced and
traced alternating, round by round, medians and min..max of the ratios):
  - gnutls_cipher_encrypt2 (AES-128-CBC) at 16 B and 16 KiB: examples/gnutls_cipher_bench's own
    clock (~1 ms batches, their robust mean per call), untraced against `cryptrace run`;
  - a 16 MiB download by wget and by gnutls-cli from openssl s_server on loopback (TLS 1.3,
    AES-256-GCM): the client's wall time from start to exit, untraced against
    `cryptrace run --no-profile`. gnutls-cli writes what it receives one byte per write(2)
    (16.7 million of them), each through the preload's write hook (the AF_ALG fd check): that,
    not the record hooks, is its cost; wget writes in large blocks.
Ratio = traced / untraced (1.00: no cost). Run by hand on a quiet machine:
  python3 bench/gnutls_overhead.py [-r ROUNDS] [-b BUILD_DIR]"""
import argparse
import os
import select
import shutil
import socket
import statistics
import subprocess
import tempfile
import time


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def bench_call(prog, cryptrace, tmp, size, n, traced):
    tf = os.path.join(tmp, "t.json")
    argv = [prog, "-n", str(n), "-t", tf, "cbc", str(size)]
    if traced:
        argv = [cryptrace, "run", "-q", "--no-profile", "-o", tempfile.mkdtemp(dir=tmp), "--"] + argv
    subprocess.run(argv, check=True, stdout=subprocess.DEVNULL)
    import json
    with open(tf) as f:
        return json.load(f)["robust_ns_per_message"]


def transfer(cryptrace, tmp, key, cert, traced, client="gnutls-cli"):
    port = free_port()
    srv = subprocess.Popen(["openssl", "s_server", "-WWW", "-naccept", "1", "-accept",
                            f"127.0.0.1:{port}", "-cert", cert, "-key", key, "-tls1_3",
                            "-ciphersuites", "TLS_AES_256_GCM_SHA384"], cwd=tmp,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    buf = b""
    while b"ACCEPT" not in buf:
        if select.select([srv.stdout], [], [], 5)[0]:
            buf += os.read(srv.stdout.fileno(), 4096)
    argv = ["gnutls-cli", "--insecure", "--logfile=/dev/null", "-p", str(port), "127.0.0.1"]
    if client == "wget":
        argv = ["wget", "-q", "--no-check-certificate", "-O", "/dev/null", f"https://127.0.0.1:{port}/f.bin"]
    if traced:
        argv = [cryptrace, "run", "-q", "--no-profile", "-o", tempfile.mkdtemp(dir=tmp), "--"] + argv
    t0 = time.monotonic()
    subprocess.run(argv, input=b"GET /f.bin HTTP/1.0\r\n\r\n", stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=True)
    t = time.monotonic() - t0
    srv.kill()
    srv.wait()
    return t * 1e9


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("-r", "--rounds", type=int, default=7)
    ap.add_argument("-b", "--build", default=os.path.join(os.path.dirname(__file__), "..", "build"))
    a = ap.parse_args()
    prog = os.path.join(a.build, "examples", "gnutls_cipher_bench")
    cryptrace = os.path.join(a.build, "tracer", "cryptrace")
    tmp = tempfile.mkdtemp(prefix="ct-gnutls-bench-")
    try:
        key, cert = os.path.join(tmp, "k.pem"), os.path.join(tmp, "c.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key,
                        "-out", cert, "-days", "1", "-subj", "/CN=localhost"], check=True,
                       capture_output=True)
        with open(os.path.join(tmp, "f.bin"), "wb") as f:
            f.write(os.urandom(16 << 20))
        cases = [("encrypt2 16 B (ns/call)", lambda t: bench_call(prog, cryptrace, tmp, 16, 2_000_000, t)),
                 ("encrypt2 16 KiB (ns/call)", lambda t: bench_call(prog, cryptrace, tmp, 16384, 20_000, t)),
                 ("wget 16 MiB (ms)", lambda t: transfer(cryptrace, tmp, key, cert, t, "wget") / 1e6),
                 ("gnutls-cli 16 MiB (ms)", lambda t: transfer(cryptrace, tmp, key, cert, t) / 1e6)]
        print(f"{'case':28} {'untraced':>10} {'traced':>10}  ratio median (min..max), {a.rounds} rounds")
        for name, fn in cases:
            u, t, r = [], [], []
            for _ in range(a.rounds):
                x, y = fn(False), fn(True)
                u.append(x)
                t.append(y)
                r.append(y / x)
            print(f"{name:28} {statistics.median(u):10.1f} {statistics.median(t):10.1f}  "
                  f"{statistics.median(r):.3f} ({min(r):.3f}..{max(r):.3f})")
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


main()
