#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""CRYPTRACE_FLUSHER=0 (docs/environment.md): no flusher thread, nothing else changed.

examples/selftimed runs 1.5 s of AES-128-CBC calls under `cryptrace run`, with the default and
with CRYPTRACE_FLUSHER=0. While it runs, its threads are read from /proc: one `cryptrace-flush`
thread by default, none with the switch (the program stays single-threaded). After it: the trace
counts exactly the calls the program made in both runs, and says which it was (the last PROC's
periodic_snapshots and flusher_off). Then `openssl enc` with the switch (and CRYPTRACE_FLUSH_MS=10,
so that its own calls write snapshots) encrypts 16 MiB from a pipe, waits for more and is killed
with SIGKILL: its unfinished-trace finding names CRYPTRACE_FLUSHER=0 as the reason its snapshots
were not periodic, and its fix says to leave the switch unset."""
import json
import os
import signal
import subprocess
import time

import ctlib
from ctlib import check


def threads_of(pid):
    names = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/comm") as f:
                names.append(f.read().strip())
    except OSError:
        pass
    return names


def program_pid(launcher):
    """The traced program's pid: the launcher's child (it runs the command as its child)."""
    for _ in range(200):
        try:
            with open(f"/proc/{launcher}/task/{launcher}/children") as f:
                kids = f.read().split()
            if kids:
                return int(kids[0])
        except OSError:
            pass
        time.sleep(0.01)
    return None


def run(flusher):
    out = ctlib.tmpdir(f"flusher-{flusher}")
    env = dict(os.environ)
    if flusher is not None:
        env["CRYPTRACE_FLUSHER"] = flusher
    p = subprocess.Popen([ctlib.CRYPTRACE, "run", "-q", "-o", out, "--",
                          os.path.join(ctlib.CT_EXAMPLES, "selftimed"), "-s", "1.5", "tight",
                          "aes-128-cbc", "64"], env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    pid = program_pid(p.pid)
    time.sleep(0.7)  # well into its calls: its first cipher path started any flusher
    names = threads_of(pid) if pid else []
    stdout, stderr = p.communicate(timeout=60)
    return out, names, p.returncode, stdout, stderr


def killed_enc():
    """openssl enc with CRYPTRACE_FLUSHER=0, killed while it waits for more input: (trace dir,
    its threads while it waited)."""
    out = ctlib.tmpdir("flusher-0-kill")
    env = dict(os.environ, CRYPTRACE_FLUSHER="0", CRYPTRACE_FLUSH_MS="10")
    p = subprocess.Popen([ctlib.CRYPTRACE, "run", "-q", "-o", out, "--", "openssl", "enc",
                          "-aes-128-cbc", "-pbkdf2", "-iter", "1", "-pass", "pass:flusher-off",
                          "-out", "/dev/null"], env=env, stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    pid = program_pid(p.pid)
    chunk = bytes(65536)
    for _ in range(256):  # 16 MiB, a few ms apart: calls past the 10 ms deadline write snapshots
        p.stdin.write(chunk)
        p.stdin.flush()
        time.sleep(0.002)
    time.sleep(0.5)
    names = threads_of(pid) if pid else []
    if pid:
        os.kill(pid, signal.SIGKILL)
    p.wait(timeout=60)
    p.stdin.close()
    return out, names


def test():
    for flusher in (None, "0"):
        label = "default" if flusher is None else "CRYPTRACE_FLUSHER=0"
        out, names, rc, stdout, stderr = run(flusher)
        check(rc == 0, f"{label}: selftimed exits 0 ({stderr.decode(errors='replace')[-200:]})")
        want = 0 if flusher == "0" else 1
        check(names.count("cryptrace-flush") == want,
              f"{label}: {want} cryptrace-flush thread(s) while it runs (threads: {names})")
        if flusher == "0":
            check(len(names) == 1, f"{label}: the program stays single-threaded ({names})")
        truth = json.loads(stdout.decode())
        doc = ctlib.report_ok([out])
        calls, nbytes = ctlib.totals(doc, api="evp", cipher="aes-128-cbc", dir="encrypt")
        check(calls == truth["iterations"] and nbytes == truth["bytes"],
              f"{label}: the trace counts the program's calls exactly ({calls} == {truth['iterations']}, "
              f"{nbytes} bytes == {truth['bytes']})")
        procs = ctlib.processes(doc)
        check(len(procs) == 1 and procs[0].get("periodic_snapshots") == (flusher != "0") and
              procs[0].get("flusher_off") == (flusher == "0"),
              f"{label}: the last PROC says so (periodic_snapshots, flusher_off: "
              f"{[(q.get('periodic_snapshots'), q.get('flusher_off')) for q in procs]})")

    out, names = killed_enc()
    check(names == ["openssl"], f"CRYPTRACE_FLUSHER=0: openssl enc stays single-threaded ({names})")
    doc = ctlib.report_ok([out])
    found = [f for f in doc.get("findings", []) if f.get("kind") == "unfinished-trace"]
    check(len(found) == 1 and "CRYPTRACE_FLUSHER=0 was set" in found[0]["message"] and
          "Leave CRYPTRACE_FLUSHER unset" in found[0]["fix"],
          f"CRYPTRACE_FLUSHER=0, SIGKILL: unfinished-trace names the switch and its fix ({found})")


ctlib.main(test)
