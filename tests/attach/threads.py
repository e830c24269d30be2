#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`cryptrace attach` on the examples' evp_threads (8 threads, started without cryptrace)
mid-run (issue 23): `evp_threads --pause-at 1000` stops every thread after its first 1000
updates with its context initialised and in use, the test attaches, lets it go on, and the
trace counts exactly the calls and bytes the program says it made from the pause on, per cipher
and direction, although no context's init was seen (each is classified at its first use after
the attach). The program's output and exit status are those of a run without cryptrace; it
exits while attached, and its trace ends with that exit."""
import subprocess

import ctlib
from ctlib import attach, check, reports

PAUSE_AT = "1000"


def test():
    attach.need_attach()
    prog = ctlib.example("evp_threads")
    plain = ctlib.run([prog, "--pause-at", PAUSE_AT], input_bytes=b"\n", text=True)
    check(plain.returncode == 0 and "expect-after-pause" in plain.stdout,
          f"evp_threads --pause-at {PAUSE_AT} runs by itself ({plain.stderr.strip()[-200:]})")
    out = ctlib.tmpdir("attach-threads")
    p = attach.Plain([prog, "--pause-at", PAUSE_AT], "paused", stdin=subprocess.PIPE)
    try:
        a = attach.Attach([p.pid], out)
        p.p.stdin.write(b"\n")
        p.p.stdin.close()
        rc = p.p.wait(timeout=attach.STOP_TIMEOUT)
        arc, err = a.end()
    finally:
        p.stop()
    check(rc == 0, f"evp_threads exited 0 while attached ({p.out[-300:]})")
    check(arc == 0 and "ended while attached" in err,
          f"cryptrace attach saw it end ({arc}: {err.strip()[-300:]})")
    check(p.out == plain.stdout, "the same output as without cryptrace")
    doc = ctlib.report_ok([out])
    expect_lines = [ln[len("expect-after-pause "):] for ln in p.out.splitlines()
                    if ln.startswith("expect-after-pause ")]
    check(len(expect_lines) == 4, f"4 expectations printed ({len(expect_lines)})")
    reports.check_expect(doc, "\n".join("expect " + ln for ln in expect_lines), "attached mid-run: ")
    proc = doc["processes"][0]
    check(proc["attach_threads"] == 9 and proc["end_reason"] == "exit",
          f"9 threads stopped ({proc['attach_threads']}), the trace ends with the exit "
          f"({proc['end_reason']})")


ctlib.main(test)
