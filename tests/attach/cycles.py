#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""20 attach/detach cycles of `cryptrace attach` on `openssl s_server -WWW` (started without
cryptrace) under continuous load from 4 curl loops (issue 23): no transfer fails or arrives
damaged, the server never crashes, every cycle's trace reads complete and ends with a detach,
and the server's memory stays flat after the first attach (the library is loaded once and
reused; nothing of a cycle stays behind)."""
import os
import threading
import time

import ctlib
from ctlib import attach, check, daemons
from ctlib.programs import free_port, throwaway_cert

FILE_BYTES = 256 * 1024
CLIENTS = 4
CYCLES = 20
ATTACHED_S = 0.3
# VmRSS moves by what s_server holds per connection (~250 KiB seen with 4 clients queued); a
# cycle that left behind what it touched of its write buffer, a thread's stack or its trace
# buffers (tens of KiB each) would pass this within 20 cycles.
RSS_SLACK_KB = 1024


def test():
    attach.need_attach()
    openssl, curl = daemons.need_openssl_curl()
    tmp = ctlib.tmpdir("attach-cycles")
    src = os.path.join(tmp, "file.bin")
    daemons.random_file(src, FILE_BYTES)
    want = attach.sha256(src)
    key, cert = throwaway_cert(tmp)
    port = free_port()
    server = attach.Plain([openssl, "s_server", "-WWW", "-accept", f"127.0.0.1:{port}", "-cert",
                           cert, "-key", key], "ACCEPT", cwd=tmp)
    stop = threading.Event()
    done, failed = [0] * CLIENTS, [[] for _ in range(CLIENTS)]

    def client(i):
        dst = os.path.join(tmp, f"got{i}.bin")
        while not stop.is_set():
            p = ctlib.run([curl, "-sS", "-k", "--tlsv1.3", "-o", dst,
                           f"https://127.0.0.1:{port}/file.bin"])
            if p.returncode == 0 and attach.sha256(dst) == want:
                done[i] += 1
            else:
                failed[i].append(p.stderr.decode(errors="replace").strip()[-200:])

    loops = [threading.Thread(target=client, args=(i,)) for i in range(CLIENTS)]
    out = ctlib.tmpdir("attach-cycles-out")
    rss, bad = [], []
    try:
        for t in loops:
            t.start()
        for cycle in range(CYCLES):
            a = attach.Attach([server.pid], out)
            time.sleep(ATTACHED_S)
            rc, err = a.end()
            if rc != 0 or f"detached from {server.pid}" not in err:
                bad.append(f"cycle {cycle}: exit {rc}: {err.strip()[-300:]}")
            rss.append(attach.vmrss_kb(server.pid))
    finally:
        stop.set()
        for t in loops:
            t.join()
        alive = server.p.poll() is None
        server.stop()
    check(not bad, f"{CYCLES} attach/detach cycles each ended 0 and detached ({bad[:3]})")
    check(alive, "the server ran through every cycle")
    errors = [e for f in failed for e in f]
    check(sum(done) >= CYCLES and not errors,
          f"{sum(done)} transfers by {CLIENTS} clients, none failed or damaged ({errors[:3]})")
    check(max(rss[1:]) - rss[0] <= RSS_SLACK_KB,
          f"the server's VmRSS stays flat after the first cycle: {rss[0]} KiB, then at most "
          f"{max(rss[1:])} KiB (slack {RSS_SLACK_KB} KiB): {rss}")
    doc = ctlib.report_ok([out])
    procs = [p for p in doc["processes"] if p["pid"] == server.pid]
    ended = [p for p in procs if p["status"] == "complete" and p["end_reason"] == "detach"]
    check(len(procs) == CYCLES and len(ended) == CYCLES,
          f"{len(ended)} of {len(procs)} traces ({CYCLES} cycles) complete, ended by the detach")
    calls = sum(v[0] for v in attach.evp_gcm_paths(doc, server.pid).values())
    check(calls > 0, f"the cycles saw the server's AES-GCM work ({calls} calls)")


ctlib.main(test)
