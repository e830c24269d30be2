#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`cryptrace attach` refuses, with one line on stderr and exit status 2, and changes nothing in
the process (it runs on, with no library of ours mapped and no tracer), in each case of issue 23.
One case per test: `refusals.py CASE`.

  no-process   a pid that does not exist
  usage        no pid, a pid that is no number, an unknown option, --route
  static       a statically linked program (busybox sleep): no loader to load the tracer with
  no-crypto    a program that maps no crypto library and has no /dev/crypto open (sleep)
  debugger     a process another tracer holds (PTRACE_SEIZE from this test): TracerPid
  preloaded    a process started under `cryptrace run`: read its traces in its directory
  other-user   a process of root, attached by nobody (no CAP_SYS_PTRACE)
  seccomp      a process under a seccomp filter like OpenSSH's pre-auth sandbox (rel_signals
               sandbox: open and clone forbidden), which the tracer's start would get killed
  yama         kernel.yama.ptrace_scope 1 and 2 for an unprivileged user (written and put back;
               3 is never written: it cannot be lowered again until a reboot); skipped where
               Yama is not in the kernel or the sysctl cannot be written"""
import ctypes
import os
import shutil
import subprocess
import sys
import time

import ctlib
from ctlib import attach, check, skip
from ctlib.programs import need_program

PTRACE_SEIZE, PTRACE_INTERRUPT, PTRACE_DETACH = 0x4206, 0x4207, 17
WALL = 0x40000000
YAMA = "/proc/sys/kernel/yama/ptrace_scope"
PY_WITH_SSL = [sys.executable, "-c",
               "import ssl, sys, time; print('ready', flush=True); time.sleep(120)"]


def untouched(proc, what):
    """The refused process still runs, with no libcryptrace mapped and nobody tracing it."""
    pid = proc.pid
    with open(f"/proc/{pid}/maps") as f:
        mapped = "libcryptrace" in f.read()
    with open(f"/proc/{pid}/status") as f:
        tracer = [ln.split()[1] for ln in f if ln.startswith("TracerPid:")][0]
    check(proc.p.poll() is None and not mapped and tracer == "0",
          f"{what}: process {pid} runs on untouched (libcryptrace mapped: {mapped}, "
          f"TracerPid {tracer})")


def case_no_process():
    pid = 4194304 + 7  # above any pid_max Linux allows
    line = attach.refused([str(pid)])
    check(f"no process {pid}" in line, f"no-process: says so: {line!r}")


def case_usage():
    for argv, words in (([], "missing PID"), (["12x"], "not a process id"),
                        (["--bogus", "1"], "unknown option"),
                        (["--route", "aes-*=bogus", "1"], "bad route spec at 7"),
                        (["--route", "aes-*=aesni," * 100 + "native", "1"], "longer than")):
        line = attach.refused(argv)
        check(words in line, f"usage {argv}: {line!r}")


def case_static():
    busybox = shutil.which("busybox")
    if not busybox or "statically linked" not in ctlib.run(["file", busybox], text=True).stdout:
        skip("no statically linked busybox here to attach to")
    p = attach.Plain([busybox, "sh", "-c", "echo ready; exec sleep 120"], "ready")
    try:
        line = attach.refused([str(p.pid)])
        check("statically linked" in line, f"static: says so: {line!r}")
        untouched(p, "static")
    finally:
        p.stop()


def exec_done(p, name):
    """Waits until p's `exec name` is through (the ready line comes before it): mid-exec the
    process maps no libc yet and would be refused as a static one."""
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        try:
            with open(f"/proc/{p.pid}/maps") as f:
                maps = f.read()
            if os.path.basename(os.readlink(f"/proc/{p.pid}/exe")) == name and "libc.so" in maps:
                return
        except OSError:
            pass
        time.sleep(0.01)
    raise ctlib.Failure(f"{name} did not start")


def case_no_crypto():
    p = attach.Plain(["sh", "-c", "echo ready; exec sleep 120"], "ready")
    try:
        exec_done(p, "sleep")
        line = attach.refused([str(p.pid)])
        check("nothing to trace" in line and "cryptrace run" in line, f"no-crypto: {line!r}")
        untouched(p, "no-crypto")
    finally:
        p.stop()


def case_debugger():
    libc = ctypes.CDLL(None, use_errno=True)
    libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p]
    p = attach.Plain(PY_WITH_SSL, "ready")
    try:
        if libc.ptrace(PTRACE_SEIZE, p.pid, None, None) != 0:
            skip(f"this test cannot seize its own child: {os.strerror(ctypes.get_errno())}")
        try:
            line = attach.refused([str(p.pid)])
            check(f"already traced by process {os.getpid()}" in line, f"debugger: {line!r}")
            with open(f"/proc/{p.pid}/maps") as f:
                check("libcryptrace" not in f.read(), "debugger: nothing loaded")
        finally:
            # a seized tracee is detached stopped
            libc.ptrace(PTRACE_INTERRUPT, p.pid, None, None)
            os.waitpid(p.pid, WALL)
            libc.ptrace(PTRACE_DETACH, p.pid, None, None)
        untouched(p, "debugger")
    finally:
        p.stop()


def case_preloaded():
    out = ctlib.tmpdir("attach-preloaded")
    p = attach.Plain([ctlib.CRYPTRACE, "run", "-q", "-o", out, "--"] + PY_WITH_SSL, "ready")
    try:
        kids = open(f"/proc/{p.pid}/task/{p.pid}/children").read().split()
        check(len(kids) == 1, f"preloaded: cryptrace run's child ({kids})")
        line = attach.refused([kids[0]])
        check(f"already traced by cryptrace, read its traces in {os.path.realpath(out)}" in line,
              f"preloaded: {line!r}")
    finally:
        p.stop()


def unprivileged(argv):
    setpriv = shutil.which("setpriv")
    if not setpriv or os.geteuid() != 0:
        return None
    return [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", "--inh-caps=-all",
            "--bounding-set=-all", "--"] + argv


def case_other_user():
    if not unprivileged([]):
        skip("needs root and setpriv to run the attach as nobody")
    p = attach.Plain(PY_WITH_SSL, "ready")
    try:
        line = attach.refused_as(unprivileged, [str(p.pid)])
        check("another user" in line and "as root" in line, f"other-user: {line!r}")
        untouched(p, "other-user")
    finally:
        p.stop()


def case_yama():
    if not os.path.exists(YAMA):
        skip("Yama is not in this kernel (no /proc/sys/kernel/yama/ptrace_scope)")
    if not os.access(YAMA, os.W_OK) or not unprivileged([]):
        skip("kernel.yama.ptrace_scope is not writable here, or no root and setpriv")
    with open(YAMA) as f:
        before = f.read().strip()
    # the target is nobody's too, so that only Yama stands in the way
    target = unprivileged(PY_WITH_SSL)
    try:
        for scope, words in (("1", "only a parent"), ("2", "CAP_SYS_PTRACE")):
            with open(YAMA, "w") as f:
                f.write(scope)
            p = attach.Plain(target, "ready")
            try:
                line = attach.refused_as(unprivileged, [str(p.pid)])
                check(f"ptrace_scope is {scope}" in line and words in line, f"yama {scope}: {line!r}")
                untouched(p, f"yama {scope}")
            finally:
                p.stop()
    finally:
        with open(YAMA, "w") as f:
            f.write(before)


def case_seccomp():
    prog = ctlib.built("CT_REL_BIN", "rel_signals")
    p = attach.Plain([prog, "sandbox", "prctl"], "ready")
    try:
        with open(f"/proc/{p.pid}/status") as f:
            mode = [ln.split()[1] for ln in f if ln.startswith("Seccomp:")]
        check(mode == ["2"], f"seccomp: the program runs filtered (Seccomp: {mode})")
        line = attach.refused([str(p.pid)])
        check("seccomp filter" in line and "--allow-seccomp" in line, f"seccomp: {line!r}")
        untouched(p, "seccomp")
    finally:
        p.stop()


CASES = {"no-process": case_no_process, "usage": case_usage, "static": case_static,
         "no-crypto": case_no_crypto, "debugger": case_debugger, "preloaded": case_preloaded,
         "other-user": case_other_user, "yama": case_yama, "seccomp": case_seccomp}


def test():
    attach.need_attach()
    if len(sys.argv) != 2 or sys.argv[1] not in CASES:
        raise ctlib.Failure(f"usage: refusals.py {'|'.join(CASES)}")
    CASES[sys.argv[1]]()


ctlib.main(test)
