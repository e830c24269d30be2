#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`cryptrace attach` and a process's life (issue 23): a Python program (started without
cryptrace, libcrypto mapped by its ssl module) forks after the attach, and the child execs a
shell that prints its LD_PRELOAD and exits 3. The fork child gets a trace of its own, ended by
its exec; the exec'd image runs untraced (no LD_PRELOAD handed to it: the environment passes
untouched); the program's output and the child's status are those of a run without cryptrace;
the parent's trace ends with the detach."""
import subprocess
import sys

import ctlib
from ctlib import attach, check

PROGRAM = """
import os, ssl, sys
print("ready", flush=True)
sys.stdin.readline()
pid = os.fork()
if pid == 0:
    os.execvp("sh", ["sh", "-c", 'echo "child preload=[$LD_PRELOAD]"; exit 3'])
_, st = os.waitpid(pid, 0)
print("child", pid, "status", os.waitstatus_to_exitcode(st), flush=True)
sys.stdin.readline()
"""


def test():
    attach.need_attach()
    argv = [sys.executable, "-c", PROGRAM]
    plain = ctlib.run(argv, input_bytes=b"\n\n", text=True)
    out = ctlib.tmpdir("attach-fork-exec")
    p = attach.Plain(argv, "ready", stdin=subprocess.PIPE)
    try:
        a = attach.Attach([p.pid], out)
        p.p.stdin.write(b"\n")
        p.p.stdin.flush()
        lines = []
        while len(lines) < 2:
            ln = p.p.stdout.readline().decode()
            if not ln:
                break
            if ln.strip():
                lines.append(ln.strip())
        rc, err = a.end()
        p.p.stdin.write(b"\n")
        p.p.stdin.close()
        p.p.wait(timeout=attach.STOP_TIMEOUT)
    finally:
        p.stop()
    check(rc == 0 and "detached" in err, f"attached and detached ({rc}: {err.strip()[-200:]})")
    want = [ln for ln in plain.stdout.splitlines() if ln.strip() and ln != "ready"]
    check(len(lines) == 2 and lines[0] == want[0] == "child preload=[]" and
          lines[1].endswith("status 3") and want[1].endswith("status 3"),
          f"the exec'd shell ran untraced and exited 3, as without cryptrace ({lines}, {want})")
    child = int(lines[1].split()[1])
    doc = ctlib.report_ok([out])
    procs = {pr["pid"]: pr for pr in doc["processes"]}
    check(set(procs) == {p.pid, child}, f"a trace for the program and its fork child {child} "
          f"({sorted(procs)})")
    check(procs[p.pid]["end_reason"] == "detach" and procs[child]["end_reason"] == "exec",
          f"the program's trace ends with the detach, the child's with its exec "
          f"({procs[p.pid]['end_reason']}, {procs[child]['end_reason']})")
    check(procs[child]["attach_pause_ns"] == 0 and procs[p.pid]["attach_pause_ns"] > 0,
          "only the attached process says it was stopped")


ctlib.main(test)
