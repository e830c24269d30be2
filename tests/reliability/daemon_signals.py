#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Daemons ended by a signal's default action lose nothing (issue 15, item 3). `openssl s_server
-rev` and a forking Python TLS echo server (tls_echo_server.py: a child per connection) serve
burst clients (TLS 1.3 or 1.2), then sit idle and are sent SIGTERM, SIGINT, SIGHUP, SIGQUIT or
SIGPIPE. CRYPTRACE_FLUSH_MS is one hour, so no periodic snapshot is written during the test:
whatever a server's trace holds, the preload's last write before the default action put there.

For each server and signal, against the same run without cryptrace: the same signals ignored
(/proc SigIgn: s_server ignores SIGPIPE, and is then stopped with SIGTERM, in both runs) and the
same termination signal. Under the preload: every server process's trace (the forking server's
children too) is complete, with END reason signal and that signal; and the servers encrypted
exactly what their clients decrypted and decrypted what they encrypted, calls and bytes, per
cipher (the clients exit normally, so their own traces are exact; ctlib.tlsecho)."""
import signal

import ctlib
from ctlib import check, tlsecho
from ctlib.tlsecho import Client, Server

NO_PERIODIC_MS = str(3600 * 1000)
COUNT, SIZE = 200, 1000
CLIENTS = {"s_server": 1, "forking": 2}  # s_server serves one connection at a time
CASES = [(signal.SIGTERM, "1.3"), (signal.SIGINT, "1.2"), (signal.SIGHUP, "1.3"),
         (signal.SIGQUIT, "1.2"), (signal.SIGPIPE, "1.3")]


def ignored(pid):
    """The signals the process ignores (SigIgn in /proc/PID/status)."""
    for line in open(f"/proc/{pid}/status"):
        if line.startswith("SigIgn:"):
            bits = int(line.split()[1], 16)
            return {s for s in range(1, 65) if bits & (1 << (s - 1))}
    return set()


def run(kind, sig, version, cert, key, traced):
    """One scenario; returns (signals the server ignored, its wait status, server dir, client
    dir); dirs None when bare."""
    sdir = ctlib.tmpdir(f"{kind}-srv") if traced else None
    cdir = ctlib.tmpdir(f"{kind}-cli") if traced else None
    srv = Server(kind, cert, key, sdir, NO_PERIODIC_MS)
    try:
        clients = [Client(srv.port, cdir, COUNT, SIZE, version) for _ in range(CLIENTS[kind])]
        for c in clients:
            c.burst_done()
        ign = ignored(srv.p.pid) & {int(s) for s, _ in CASES}
        srv.signal(sig)
        if sig in ign:
            srv.signal(signal.SIGTERM)  # it ignored the first: end it, the same way both times
        rc = srv.wait()
        for c in clients:
            c.end()
    finally:
        if srv.p.poll() is None:
            srv.kill()
    return ign, rc, sdir, cdir


def check_traced(kind, sig, sdir, cdir):
    sdoc, cdoc = ctlib.report_ok(ctlib.traces(sdir)), ctlib.report_ok(ctlib.traces(cdir))
    procs = [q for q in ctlib.processes(sdoc) if not q.get("superseded")]
    check(len(procs) == 1 + (CLIENTS[kind] if kind == "forking" else 0),
          f"{kind}: one trace per server process ({len(procs)})")
    for q in procs:
        check((q.get("status"), q.get("end_reason"), q.get("exit_status")) ==
              ("complete", "signal", int(sig)),
              f"{kind} pid {q.get('pid')}: complete, ended by {sig.name} "
              f"({q.get('status')}, {q.get('end_reason')} {q.get('exit_status')})")
    for q in ctlib.processes(cdoc):
        check(q.get("status") == "complete" and q.get("end_reason") == "exit",
              f"client pid {q.get('pid')}: complete ({q.get('status')})")
    tlsecho.check_mirror(sdoc, cdoc, f"{kind} {sig.name}", COUNT)


def test():
    ctlib.need_program("openssl")
    key, cert = ctlib.throwaway_cert(ctlib.tmpdir("daemon-signals"))
    for kind in tlsecho.SERVERS:
        for sig, version in CASES:
            b_ign, b_rc, _, _ = run(kind, sig, version, cert, key, traced=False)
            t_ign, t_rc, sdir, cdir = run(kind, sig, version, cert, key, traced=True)
            ends = signal.SIGTERM if sig in b_ign else sig
            check(b_ign == t_ign, f"{kind}: the same signals ignored with and without "
                  f"cryptrace ({sorted(t_ign)}, {sorted(b_ign)})")
            check(b_rc == t_rc == -ends, f"{kind} {sig.name}: ended by {ends.name} with and "
                  f"without cryptrace (status {t_rc}, {b_rc})")
            check_traced(kind, ends, sdir, cdir)
            print(f"{kind:8} {sig.name:7} TLS {version}: ended by {ends.name} with and without; "
                  f"the servers' traces equal their clients'")


if __name__ == "__main__":
    ctlib.main(test)
