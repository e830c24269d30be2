#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A module is patched only once the loader has relocated it (docs/attach.md, gotpatch.c): while
attached, `reloaded` (reloaded.c) loads and unloads a module that takes milliseconds to relocate
(reloc_module.c) for SECONDS, sealing 16 bytes through it each time, so that the flusher's polls
find it in the loader's list mid-relocation; then it loads it once more and seals SEALS x SIZE
bytes with AES-128-GCM through it after the flusher's next poll. Both ways of binding (dlopen
RTLD_NOW, RTLD_LAZY): the program ends normally, its ciphertexts are the bare run's, and every
GCM byte is counted. A slot patched mid-relocation was undone by the loader (RTLD_NOW: those
calls were lost) or shifted by the module's load address (RTLD_LAZY: the program crashed).

Then the attach and the detach land in the middle of the loop, MIDLOOP_RUNS times each way and
binding: the launcher stops the program wherever it is, often inside its own dlopen (the
loader's code, or malloc called from it), and must let it go on until it is outside
(tracer/attach_loader.c). An attach there patched the module being relocated (the program
crashed in 2-4 of 10 runs); a detach there waited for the flusher thread, itself waiting for the
loader's lock (the detach gave up after 60 s). Last, an attach into a loop longer than the
launcher's 3 s of tries, for 1 s: it refuses (exit 2, one line saying why) with nothing changed,
or, where a stop found the program outside the loader (the loop is outside it only while it
seals 16 bytes; on an idle machine none of 3,400 stops did, under load about 2 attaches in 5),
attaches and detaches cleanly, the detach waiting until the program is outside the loader (it
hung there before, under load: the flusher waited for the loader's lock the stopped thread
held)."""
import os
import subprocess
import time

import ctlib
from ctlib import attach, check

SEALS, SIZE = 16, 65536  # as reloaded.c
SECONDS = "2.5"
MIDLOOP_RUNS = int(os.environ.get("CT_MIDLOOP_RUNS", "2"))
INTO_LOOP_S = 0.8  # the attach or detach lands this far into the 2.5 s loop


def run_bare(mode):
    p = subprocess.run([os.environ["CT_RELOADED"], os.environ["CT_RELOC_MODULE"], "0.2", mode],
                       input=b"\n\n", stdout=subprocess.PIPE, env=ctlib.bare_env(), timeout=120)
    check(p.returncode == 0, f"the bare run ({mode}) ended 0 ({p.returncode})")
    return p.stdout.decode().split()[-1]


def case(mode):
    want = run_bare(mode)
    out = ctlib.tmpdir(f"attach-reloaded-{mode}")
    sealed, pid = attach.attached_between_lines(
        [os.environ["CT_RELOADED"], os.environ["CT_RELOC_MODULE"], SECONDS, mode], out,
        r"sealed (\d+) ([0-9a-f]{16})", f"reloaded ({mode})")
    loads, got = sealed.groups()
    check(got == want, f"{mode}: the ciphertexts are the bare run's ({got}), after {loads} loads")
    paths = attach.evp_gcm_paths(ctlib.report_ok([out]), pid)
    enc = paths.get(("aes-128-gcm", "encrypt"), (0, 0))
    check(enc[1] == SEALS * SIZE,
          f"{mode}: every seal through the module loaded last is counted: {enc[1]} == "
          f"{SEALS * SIZE} bytes")


def midloop(mode, want, attach_first, run, seconds=SECONDS):
    """The attach (attach_first False) or the detach (True) INTO_LOOP_S into the loop."""
    what = f"reloaded ({mode}, {'detach' if attach_first else 'attach'} mid-loop, run {run})"
    out = ctlib.tmpdir(f"attach-midloop-{mode}-{int(attach_first)}-{run}")
    prog = attach.Plain([os.environ["CT_RELOADED"], os.environ["CT_RELOC_MODULE"], seconds, mode],
                        "ready", stdin=subprocess.PIPE, env=ctlib.bare_env())
    refused = False
    try:
        a = attach.Attach([prog.pid], out) if attach_first else None
        prog.p.stdin.write(b"\n")
        prog.p.stdin.flush()
        time.sleep(INTO_LOOP_S)
        if attach_first:
            rc, err = a.end()
            check(rc == 0 and f"detached from {prog.pid}" in err,
                  f"{what}: the detach ended 0 ({rc}: {err.strip()[-300:]})")
        elif seconds != SECONDS:
            r = subprocess.run([attach.CRYPTRACE, "attach", "-o", out, "--duration", "1", str(prog.pid)],
                               stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, timeout=60)
            err = r.stderr.decode(errors="replace").strip()
            refused = r.returncode == 2
            if refused:
                check("inside its dynamic loader" in err and len(err.splitlines()) == 1,
                      f"{what}: refused in one line, nothing changed ({err[-300:]})")
            else:
                check(r.returncode == 0 and f"detached from {prog.pid}" in err,
                      f"{what}: refused, or attached and detached ({r.returncode}: {err[-300:]})")
                refused = True  # what it counted depends on where the stops landed
        else:
            a = attach.Attach([prog.pid], out)
        line = attach.read_until(prog.p.stdout, "\n", what, prog.p)
        if not attach_first and not refused:
            rc, err = a.end()
            check(rc == 0 and f"detached from {prog.pid}" in err,
                  f"{what}: the attach ended 0 and detached ({rc}: {err.strip()[-300:]})")
        prog.p.stdin.write(b"\n")
        prog.p.stdin.flush()
        rc = prog.p.wait(timeout=60)
        check(rc == 0, f"{what} ended normally ({rc})")
    finally:
        prog.stop()
    got = line.split()[-1]
    check(got == want, f"{what}: the ciphertexts are the bare run's ({got})")
    if refused:
        return
    enc = attach.evp_gcm_paths(ctlib.report_ok([out]), prog.pid).get(("aes-128-gcm", "encrypt"), (0, 0))
    # detached mid-loop: nothing after it is ours; attached mid-loop: every seal after the loop
    expect = 0 if attach_first else SEALS * SIZE
    check(enc[1] == expect, f"{what}: {enc[1]} GCM bytes counted == {expect}")


def test():
    attach.need_attach()
    for mode in ("now", "lazy"):
        case(mode)
    for mode in ("now", "lazy"):
        want = run_bare(mode)
        for run in range(MIDLOOP_RUNS):
            midloop(mode, want, False, run)
            midloop(mode, want, True, run)
    midloop("lazy", run_bare("lazy"), False, "long", seconds="6")


ctlib.main(test)
