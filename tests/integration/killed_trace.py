#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A process killed with SIGKILL (no exit handler runs) loses at most its last flush interval:
its trace, cut wherever the kill landed, still reads (exit 0 or 1), holds the counts of the
last periodic snapshot, and is not marked complete. The launcher reports 128+9."""
import os
import signal
import subprocess
import time

import ctlib
from ctlib import check


def test():
    openssl = ctlib.need_program("openssl")
    out = ctlib.tmpdir("killed")
    env = dict(os.environ, CRYPTRACE_FLUSH_MS="50")
    proc = subprocess.Popen([ctlib.CRYPTRACE, "run", "-q", "-o", out, "--", openssl, "speed",
                             "-seconds", "30", "-bytes", "1024", "-evp", "aes-128-cbc"],
                            env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    # Wait (on a condition, not a duration) until the trace has grown past its first snapshot.
    seen = 0
    for _ in range(6000):
        files = ctlib.traces(out)
        if files:
            rc, doc, _ = ctlib.report(files)
            seen = sum(p.get("calls", 0) for p in ctlib.paths(doc or {}, cipher="aes-128-cbc"))
            if seen > 0:
                break
        if proc.poll() is not None:
            break
        time.sleep(0.01)
    check(seen > 0, f"a periodic snapshot reached the file while running ({seen} calls)")
    # Kill the traced program itself, not the launcher.
    procs = doc.get("processes", [])
    pid = next(q["pid"] for q in procs if q.get("exe", "").endswith("openssl"))
    os.kill(pid, signal.SIGKILL)
    rc = proc.wait(timeout=120)
    check(rc == 128 + signal.SIGKILL, f"the launcher reports the kill ({rc})")
    rc, doc, err = ctlib.report(ctlib.traces(out))
    check(rc in (0, 1), f"the killed process's trace reads (exit {rc}) {err.strip()[:120]}")
    calls = sum(p.get("calls", 0) for p in ctlib.paths(doc, cipher="aes-128-cbc"))
    check(calls >= seen, f"it holds at least the snapshot seen while running ({calls} >= {seen})")
    status = [q.get("status") for q in doc.get("processes", []) if q.get("pid") == pid]
    check(status and status[0] != "complete", f"the trace is not marked complete ({status})")


ctlib.main(test)
