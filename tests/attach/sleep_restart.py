#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A thread attached in a relative sleep is back in it after the detach (docs/attach.md "What it
does to the process"): a program with libcrypto loaded sleeps in sleep() (a relative
clock_nanosleep) in the thread that makes the remote calls; six attach-detach cycles later it
still sleeps, in restart_syscall (the kernel resuming the call for the time left, through the
thread's restart block), not gone. The detach once paused with nanosleep while it waited for the
library's flusher thread to leave, which resets the restart block: the program's sleep then
returned early with EINTR and the program went on (exited, here) after a clean detach.
tests/style/check-no-sleep.sh keeps those calls out of the preload; this checks the result."""
import platform
import sys
import time

import ctlib
from ctlib import attach, check

RESTART_SYSCALL = {"x86_64": 219, "aarch64": 128}  # __NR_restart_syscall
CYCLES = 6  # a detach that paused wrongly did so when the flusher was slow to go: not every time
PROGRAM = ("import _hashlib, ctypes, sys\n"  # libcrypto mapped: something to attach to
           "print('sleeping', flush=True)\n"
           "left = ctypes.CDLL(None).sleep(600)\n"
           "print(f'woke with {left} s left', flush=True)\n")


def syscall_of(pid):
    with open(f"/proc/{pid}/syscall") as f:
        return f.read().split()[0]


def test():
    attach.need_attach()
    nr = RESTART_SYSCALL.get(platform.machine())
    if nr is None:
        ctlib.skip(f"no restart_syscall number listed for {platform.machine()}")
    prog = attach.Plain([sys.executable, "-c", PROGRAM], "sleeping")
    try:
        for cycle in range(1, CYCLES + 1):
            a = attach.Attach([prog.pid], ctlib.tmpdir(f"attach-sleep{cycle}"))
            status, err = a.end()
            check(status == 0 and "detached from" in err,
                  f"cycle {cycle}: attached and detached (exit {status}: {err.strip()[-300:]!r})")
            time.sleep(0.5)
            if prog.p.poll() is not None:
                status = prog.stop()
                check(False, f"cycle {cycle}: the program still sleeps after the detach (it "
                      f"ended with {status}: {prog.out.strip()[-200:]!r})")
            got = syscall_of(prog.pid)
            check(got == str(nr), f"cycle {cycle}: its thread is in restart_syscall ({nr}), "
                  f"resuming the sleep for the time left (/proc/PID/syscall: {got})")
    finally:
        prog.stop()


ctlib.main(test)
