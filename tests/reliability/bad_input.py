#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Bad input to the launcher and the preload. The launcher: unknown options, unknown commands, a
bad route spec, a missing command, a non-existent or non-executable command, and a missing trace
to report each give exactly one line on stderr and the exit status docs/reliability.md lists.
The preload: bad CRYPTRACE_* values never change the program's output or exit status, print
nothing on its stderr unless CRYPTRACE_LOG is set, and then exactly one line each (a bad
CRYPTRACE_ROUTE always gets its one line)."""
import os

import ctlib
from ctlib import check

# (arguments, exit status) - the table in docs/reliability.md
LAUNCHER = [
    (["--bogus"], 2),
    (["frobnicate"], 2),
    ([], 2),
    (["run", "--bogus", "--", "true"], 2),
    (["run", "-o", "{out}", "--route", "aes-*:sideways=aesni", "--", "true"], 2),
    (["run", "-o", "{out}", "--route", "aes-*=warp", "--", "true"], 2),
    (["run", "-o", "{out}"], 2),
    (["run", "-o", "{out}", "--", "/nonexistent/command"], 127),
    (["run", "-o", "{out}", "--", "{noexec}"], 126),
    (["report", "--bogus"], 2),
    (["report", "/nonexistent/trace.ctrace"], 2),
]

PRELOAD = [
    ("CRYPTRACE_SAMPLE", "abc"), ("CRYPTRACE_SAMPLE", "0"), ("CRYPTRACE_SAMPLE", "99999999999"),
    ("CRYPTRACE_SAMPLE_ALL_BYTES", "-1"), ("CRYPTRACE_FLUSH_MS", "5"),
    ("CRYPTRACE_FLUSH_MS", "1e3"), ("CRYPTRACE_MODE", "weird"), ("CRYPTRACE_ROUTE", "garbage::"),
    ("CRYPTRACE_ROUTE", "aes-*=warp"), ("CRYPTRACE_AESNI_CPB", "x"),
    ("CRYPTRACE_OUT", "/nonexistent/dir"),
]


def lines(b):
    return [ln for ln in b.decode(errors="replace").splitlines() if ln.strip()]


def test():
    out = ctlib.tmpdir("badin")
    noexec = os.path.join(out, "not-executable")
    open(noexec, "w").write("#!/bin/sh\n")
    os.chmod(noexec, 0o644)
    for args, want in LAUNCHER:
        argv = [a.format(out=out, noexec=noexec) for a in args]
        p = ctlib.run([ctlib.CRYPTRACE] + argv)
        err = lines(p.stderr)
        check(p.returncode == want and len(err) == 1,
              f"cryptrace {' '.join(args)}: exit {p.returncode} (want {want}), "
              f"{len(err)} stderr line(s): {err[:2]}")
    prog = [ctlib.built("CT_REL_BIN", "rel_prog"), "work", "10", "aes-128-cbc"]
    bare = ctlib.run(prog)
    for name, value in PRELOAD:
        for log in (None, "1"):
            extra = {name: value}
            if log:
                extra["CRYPTRACE_LOG"] = log
            env = ctlib.preload_env(out, **extra)
            p = ctlib.run(prog, env=env)
            err = lines(p.stderr)
            # a bad route spec is the one warning the preload always gives on stderr (the
            # [routes] contract: the user asked for routing); the others only with CRYPTRACE_LOG
            want_lines = 1 if (log or name == "CRYPTRACE_ROUTE") else 0
            check((p.returncode, p.stdout) == (bare.returncode, bare.stdout)
                  and len(err) == want_lines,
                  f"{name}={value} CRYPTRACE_LOG={log}: exit {p.returncode}, same output, "
                  f"{len(err)} stderr line(s) (want {want_lines}) {err[:2]}")


ctlib.main(test)
