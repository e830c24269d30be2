#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""SIGKILL after a burst and a quiet spell loses at most one flush interval (issue 15, item 3).
Nothing runs in a killed process, so its trace holds what its snapshots held, and a process that
went quiet used to write none after its last crypto call. With CRYPTRACE_FLUSH_MS=200, these
do a burst, then idle together for 5 s (25 intervals) and are killed with SIGKILL:

  - `openssl s_server -rev` and the forking Python TLS echo server (a child per connection),
    serving burst clients: the servers' traces hold exactly what their clients decrypted and
    encrypted (ctlib.tlsecho);
  - rel_signals fork-idle: a fork child that goes on with its parent's cipher context (no new
    path: only the flusher the fork handler restarts can write its snapshot): its trace holds
    exactly its own calls.

Every killed process that did crypto says its snapshots were periodic, and the report says what
may be missing (unfinished-trace: at most the last 200 ms), never guessing at a cause
(nothing-intercepted)."""
import os
import signal
import subprocess
import time

import ctlib
from ctlib import check, tlsecho
from ctlib.tlsecho import Client, Server

FLUSH_MS = 200
IDLE_S = 5
COUNT, SIZE = 300, 700
CLIENTS = {"s_server": 1, "forking": 2}


def check_killed(doc, what, nprocs):
    """Every process of doc: not complete, one unfinished-trace finding bounding the loss."""
    procs = [q for q in ctlib.processes(doc) if not q.get("superseded")]
    check(len(procs) == nprocs, f"{what}: one trace per process ({len(procs)})")
    kinds = [f.get("kind") for f in doc.get("findings", [])]
    check("nothing-intercepted" not in kinds, f"{what}: no nothing-intercepted ({kinds})")
    for q in procs:
        pid = q.get("pid")
        check(q.get("status") != "complete", f"{what} pid {pid}: not complete ({q.get('status')})")
        # the forking server's parent does no TLS (its children do): no cipher path, so no
        # flusher thread, and no snapshot after start
        crypto = q.get("crypto_calls", 0) > 0
        check(not crypto or q.get("periodic_snapshots"),
              f"{what} pid {pid}: its last snapshot says snapshots were periodic")
        mine = [f for f in doc.get("findings", []) if f.get("pid") == pid and
                f.get("kind") == "unfinished-trace"]
        check(len(mine) == 1, f"{what} pid {pid}: one unfinished-trace finding ({kinds})")
        if crypto:
            check(f"at most its last {FLUSH_MS} ms of work are missing" in mine[0]["message"],
                  f"{what} pid {pid}: the finding bounds the loss: {mine[0]['message']}")


def start_server(kind, cert, key):
    sdir, cdir = ctlib.tmpdir(f"idle-{kind}-srv"), ctlib.tmpdir(f"idle-{kind}-cli")
    srv = Server(kind, cert, key, sdir, str(FLUSH_MS))
    clients = [Client(srv.port, cdir, COUNT, SIZE, "1.3") for _ in range(CLIENTS[kind])]
    for c in clients:
        c.burst_done()
    return kind, srv, clients, sdir, cdir


def check_server(kind, srv, clients, sdir, cdir):
    rc = srv.wait()
    for c in clients:
        c.end()
    check(rc == -signal.SIGKILL, f"{kind}: killed by SIGKILL ({rc})")
    rc, sdoc, err = ctlib.report(ctlib.traces(sdir))
    check(rc in (0, 1) and sdoc is not None, f"{kind}: the killed traces read ({rc}) {err[:200]}")
    tlsecho.check_mirror(sdoc, ctlib.report_ok(ctlib.traces(cdir)),
                            f"{kind} after {IDLE_S} s idle and SIGKILL", COUNT)
    check_killed(sdoc, kind, 1 + (CLIENTS[kind] if kind == "forking" else 0))
    print(f"{kind}: killed after {IDLE_S} s idle, the traces equal the clients', "
          f"unfinished-trace bounds the loss to {FLUSH_MS} ms")


def test():
    key, cert = ctlib.throwaway_cert(ctlib.tmpdir("idle-kill"))
    out = ctlib.tmpdir("idle-fork")
    prog = subprocess.Popen([ctlib.built("CT_REL_BIN", "rel_signals"), "fork-idle"],
                            env=ctlib.preload_env(out, CRYPTRACE_FLUSH_MS=FLUSH_MS),
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)
    lines = tlsecho.Lines(prog.stdout)
    servers = []
    try:
        child = int(lines.wait_for("child ready", "fork-idle").split()[-1])
        for kind in tlsecho.SERVERS:
            servers.append(start_server(kind, cert, key))
        time.sleep(IDLE_S)  # the scenario: everything has gone quiet (nothing is timed)
        for _, srv, _, _, _ in servers:
            srv.signal(signal.SIGKILL)
        os.kill(child, signal.SIGKILL)
        prog.wait(timeout=ctlib.RUN_TIMEOUT)
    finally:
        for _, srv, _, _, _ in servers:
            if srv.p.poll() is None:
                srv.kill()
        if prog.poll() is None:
            prog.kill()
            prog.wait()
    for s in servers:
        check_server(*s)
    check("fork-idle child: signal Killed" in lines.lines,
          f"fork-idle: the child was killed ({lines.lines[-2:]})")
    rc, doc, err = ctlib.report(ctlib.traces(out), "--pid", str(child))
    check(rc in (0, 1) and doc is not None, f"fork-idle: the child's trace reads ({rc}) {err[:200]}")
    ctlib.check_expect(doc, "\n".join(lines.lines), "fork-idle child: ")
    check_killed(doc, "fork-idle child", 1)
    print(f"fork-idle: the child killed after {IDLE_S} s idle holds its own calls exactly")


if __name__ == "__main__":
    ctlib.main(test)
