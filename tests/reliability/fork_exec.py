#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""fork and exec: (1) 20 forks while 4 threads are inside EVP hooks: every child's trace holds
exactly its own 100 aes-192-cbc calls, and the parent's calls are counted once in total; (2)
vfork+execve, posix_spawn and execve with an empty environment: each child program's trace is
present, complete and exact (cryptrace re-injects itself into the scrubbed one); (3) a daemon
that double-forks, setsid()s and closes every fd with close_range and closefrom: its trace is
present, complete and exact. Every process finishes (a hang is a deadlock: watchdog)."""
import os
import time

import ctlib
from ctlib import check


def by_cipher(doc, cipher):
    """[(pid, calls, bytes)] for each process that has paths of cipher."""
    return ctlib.per_process(doc, cipher=cipher, dir="encrypt")


def fork_threads():
    out = ctlib.tmpdir("forks")
    p = ctlib.run_traced([ctlib.built("CT_REL_BIN", "rel_prog"), "fork-threads", "20"], out)
    text = p.stdout.decode()
    check(p.returncode == 0, f"fork-threads exit 0 ({p.returncode}) {text[-200:]}")
    doc = ctlib.report_ok(ctlib.traces(out))
    procs = ctlib.processes(doc)
    check(len(procs) == 21, f"21 processes traced (parent + 20 children): {len(procs)}")
    check(all(q.get("status") == "complete" for q in procs),
          f"all complete: {[q.get('status') for q in procs]}")
    kids = by_cipher(doc, "aes-192-cbc")
    check(len(kids) == 20 and all(v == (100, 6400) for v in kids.values()),
          f"each child: exactly 100 calls 6400 bytes of aes-192-cbc ({sorted(kids.values())})")
    ctlib.check_expect(doc, text, "all processes together: ")


def spawns():
    out = ctlib.tmpdir("spawn")
    self = ctlib.built("CT_REL_BIN", "rel_prog")
    p = ctlib.run_traced([self, "spawn", self], out)
    cases = [("vfork+execve", "aes-128-ofb", 300), ("posix_spawn", "aes-256-ofb", 400),
             ("execve, empty environment", "aes-192-ofb", 500)]
    pids = 4
    check(p.returncode == 0, f"spawn exit 0 ({p.returncode}) {p.stdout.decode()[-200:]}")
    doc = ctlib.report_ok(ctlib.traces(out))
    for how, cipher, n in cases:
        rows = by_cipher(doc, cipher)
        check(list(rows.values()) == [(n, n * 64)],
              f"{how}: one process with {n} calls of {cipher} ({rows})")
    procs = ctlib.processes(doc)
    check(len({q.get("pid") for q in procs}) == pids and all(q.get("status") == "complete" for q in procs),
          f"4 processes, every trace complete "
          f"({[(q.get('pid'), q.get('end_reason'), q.get('status')) for q in procs]})")


def daemon():
    out = ctlib.tmpdir("daemon")
    done = os.path.join(ctlib.tmpdir("daemon-done"), "done")
    p = ctlib.run_traced([ctlib.built("CT_REL_BIN", "rel_prog"), "daemon", done], out)
    check(p.returncode == 0, f"daemon launcher exit 0 ({p.returncode})")
    doc = None
    for _ in range(3000):  # a condition, not a duration: the daemon's END record
        if os.path.exists(done):
            # the daemon may still be exiting: its newest file can exist before its first
            # write (read as an empty, truncated trace), so only a clean read ends the wait
            rc, doc, _ = ctlib.report(ctlib.traces(out))
            if rc != 0 or doc is None:
                doc = None
                time.sleep(0.02)
                continue
            rows = by_cipher(doc, "aes-256-cbc")
            gpid = list(rows)[0] if rows else None
            st = [q.get("status") for q in ctlib.processes(doc) if q.get("pid") == gpid
                  and not q.get("superseded")]
            if st == ["complete"]:
                break
        time.sleep(0.02)
    check(doc is not None, "the daemon finished its work and its traces read cleanly")
    rows = by_cipher(doc, "aes-256-cbc")
    check(list(rows.values()) == [(500, 32000)],
          f"the daemon's 500 calls after close_range+closefrom are in its trace ({rows})")
    gpid = list(rows)[0]
    st = [q.get("status") for q in ctlib.processes(doc) if q.get("pid") == gpid
          and not q.get("superseded")]
    check(st == ["complete"], f"the daemon's newest trace is complete ({st})")
    check(len({q.get("pid") for q in ctlib.processes(doc)}) == 3,
          f"three processes: launcher child, middle child, daemon "
          f"({[q.get('pid') for q in ctlib.processes(doc)]})")


def test():
    fork_threads()
    spawns()
    daemon()


ctlib.main(test)
