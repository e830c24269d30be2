#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`cryptrace export --textfile-dir`: node_exporter's textfile, accepted by promtool, written
atomically (nothing else left in the directory), with counters that never go backwards on real
processes: a live `openssl speed` exported mid-run, then after its exit (the finished trace's
bytes, once), a second live one whose trace is rotated out of the spool mid-run (kept as last
seen), the first's trace rotated away too (kept), a short `openssl enc` added (exactly its
bytes more), a repeated export (no double count); a corrupt state is refused and the file left
as it was."""
import json
import os
import subprocess
import time

import ctlib
from ctlib import check
from ctlib import metrics

SPEED = ["speed", "-bytes", "16384", "-seconds", "4", "-evp", "aes-128-cbc"]


def exported(promtool, tf, state, spool, tag):
    p = ctlib.cryptrace("export", "--textfile-dir", tf, "--state", state, spool)
    check(p.returncode == 0, f"{tag}: export exits 0" if p.returncode == 0 else
          f"{tag}: export exits {p.returncode}: {p.stderr.decode()[-300:]}")
    check(os.listdir(tf) == ["cryptrace.prom"], f"{tag}: only cryptrace.prom in the textfile directory")
    text = open(os.path.join(tf, "cryptrace.prom"), "rb").read()
    metrics.promtool_check(promtool, text, tag)
    return text, sum(metrics.sums(metrics.parse(text, "text"), "cryptrace_cipher_bytes_total", "impl").values())


def trace_bytes(path):
    doc = json.loads(ctlib.cryptrace_ok("report", "--json", path).stdout)
    return sum(p["bytes"] for p in doc["paths"]), doc


def live_trace(spool, before):
    """The new trace in spool once its process has flushed bytes (a live trace: no END yet)."""
    for _ in range(600):  # the flusher writes every second; generous for a loaded machine
        new = [t for t in ctlib.traces(spool) if t not in before]
        if new:
            n, doc = trace_bytes(new[0])
            if n > 0 and doc["processes"][0]["end_reason"] is None:
                return new[0]
        time.sleep(0.05)
    raise ctlib.Failure("no live trace with bytes appeared")


def test():
    promtool = metrics.need_tools()
    openssl = ctlib.need_program("openssl")
    tmp = ctlib.tmpdir("export")
    spool, tf, away = (os.path.join(tmp, x) for x in ("spool", "textfile", "rotated"))
    for d in (spool, tf, away):
        os.mkdir(d)
    state = os.path.join(tmp, "export.state")
    cmd = [ctlib.CRYPTRACE, "run", "-q", "-o", spool, "--", openssl] + SPEED

    _, a0 = exported(promtool, tf, state, spool, "an empty spool")
    check(a0 == 0, "an empty spool: no bytes")
    p1 = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    t1 = live_trace(spool, [])
    _, a1 = exported(promtool, tf, state, spool, "a live openssl speed")
    check(a1 > 0, f"a live process's bytes are exported ({a1})")
    check(p1.wait() == 0, "openssl speed exited 0")
    final1, _ = trace_bytes(t1)
    _, a2 = exported(promtool, tf, state, spool, "after its exit")
    check(a2 == final1 and a2 >= a1, f"after the exit: the finished trace's bytes ({a2} == {final1} >= {a1})")

    p2 = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    t2 = live_trace(spool, [t1])
    _, a3 = exported(promtool, tf, state, spool, "a second live process")
    check(a3 > a2, f"a second live process adds its bytes ({a3} > {a2})")
    os.rename(t2, os.path.join(away, os.path.basename(t2)))  # rotated out while it runs
    _, a4 = exported(promtool, tf, state, spool, "its trace rotated away")
    check(a4 == a3, f"a live trace rotated away: kept as last seen ({a4} == {a3})")
    os.rename(t1, os.path.join(away, os.path.basename(t1)))
    _, a5 = exported(promtool, tf, state, spool, "the finished trace rotated away")
    check(a5 == a4, f"a finished trace rotated away: kept ({a5} == {a4})")
    check(p2.wait() == 0, "the second openssl speed exited 0")

    before = ctlib.traces(spool)
    p = ctlib.run_traced([openssl, "enc", "-aes-256-ctr", "-K", "11" * 32, "-iv", "22" * 16,
                          "-in", "/bin/ls", "-out", "/dev/null"], spool)
    check(p.returncode == 0, "openssl enc ran under cryptrace")
    t3 = [t for t in ctlib.traces(spool) if t not in before]
    b3, _ = trace_bytes(t3[0])
    _, a6 = exported(promtool, tf, state, spool, "a short process")
    check(a6 == a5 + b3, f"a short process adds exactly its bytes ({a6} == {a5} + {b3})")
    text7, a7 = exported(promtool, tf, state, spool, "exported again")
    check(a7 == a6, f"exported again: nothing counted twice ({a7} == {a6})")

    with open(state, "ab") as f:
        f.write(b"X garbage\n")
    p = ctlib.cryptrace("export", "--textfile-dir", tf, "--state", state, spool)
    err = p.stderr.decode()
    check(p.returncode == 2 and err.count("\n") == 1 and "not a cryptrace export state" in err,
          f"a corrupt state: exit 2, one line ({p.returncode}: {err.strip()})")
    check(open(os.path.join(tf, "cryptrace.prom"), "rb").read() == text7, "the exported file is left as it was")


ctlib.main(test)
