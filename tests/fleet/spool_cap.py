#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""max_spool_bytes in the preload (docs/fleet.md "Caps"): the spool never grows past it.

1. A spool on a shared file system: sixteen openssl runs in a row, always-on with
   max_spool_bytes = 48 KiB and max_file_bytes = 12 KiB. After each run the user's directory
   holds at most 48 KiB, the run's own trace is there (the oldest went first), and openssl's
   output and status are those of a bare run.
2. A spool that is a file system of its own (a 1 MiB tmpfs mounted here; skipped, saying so,
   where mounting is not allowed): the cap counts the whole file system, every user's traces.
   Another user's 900 KiB there leave no room under a 1 MiB cap: the trace is refused (logged
   once, the program untouched) and the other user's file is left alone."""
import os
import subprocess

import ctlib
from ctlib import check

KEY = "00112233445566778899aabbccddeeff"
CAP, FILE_CAP = 48 << 10, 12 << 10


def run_enc(env, data, log=None):
    argv = ["openssl", "enc", "-aes-128-cbc", "-K", KEY, "-iv", KEY, "-in", data]
    bare = ctlib.run(argv, env=ctlib.bare_env())
    if log:
        env = dict(env, CRYPTRACE_LOG="1", CRYPTRACE_LOG_FILE=log, CRYPTRACE_SYSLOG="none")
    got = ctlib.run(argv, env=env)
    check((got.returncode, got.stdout, got.stderr) == (bare.returncode, bare.stdout, bare.stderr),
          "openssl's output, stderr and exit status are those of a bare run")


def dir_bytes(d):
    return sum(os.lstat(os.path.join(d, f)).st_size for f in os.listdir(d))


def test():
    ctlib.need_program("openssl")
    top = ctlib.tmpdir("fleet-cap")
    data = os.path.join(top, "input")
    with open(data, "wb") as f:
        f.write(b"sixteen bytes...\n" * 2048)

    spool = os.path.join(top, "spool")
    os.mkdir(spool, 0o700)
    conf = os.path.join(top, "cryptrace.conf")
    with open(conf, "w") as f:
        f.write(f"spool = {spool}\nmax_spool_bytes = {CAP}\nmax_file_bytes = {FILE_CAP}\n")
    env = ctlib.preload_env(None, CRYPTRACE_CONFIG=conf)
    udir = os.path.join(spool, str(os.geteuid()))
    sizes, order = [], []
    for i in range(16):
        before = set(ctlib.traces(udir)) if os.path.isdir(udir) else set()
        run_enc(env, data)
        now = set(ctlib.traces(udir))
        new = now - before
        check(len(new) == 1, f"run {i}: its trace is in the spool {sorted(new)}")
        order += sorted(new)
        used = dir_bytes(udir)
        sizes.append(used)
        check(used <= CAP, f"run {i}: the spool holds {used} bytes, at most max_spool_bytes {CAP}")
    kept = set(ctlib.traces(udir))
    check(len(kept) < 16 and kept == set(order[16 - len(kept):]),
          f"the oldest traces went first: the newest {len(kept)} of 16 kept")
    doc = ctlib.report_ok([spool])
    check(ctlib.totals(doc)[1] >= 2048 * 17, "the kept traces read cleanly")
    print(f"ok: spool bytes after each run: {sizes}")

    # 2. a spool that is a file system of its own
    fs = os.path.join(top, "fs")
    os.mkdir(fs)
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m,mode=1733", "tmpfs", fs],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        print(f"skip: part 2 (a spool of its own file system): mount tmpfs failed: {p.stdout.strip()}")
        return
    try:
        other = os.path.join(fs, "4242")
        os.mkdir(other, 0o700)
        os.chown(other, 4242, 4242)
        big = os.path.join(other, "daemon.99.ctrace")
        with open(big, "wb") as f:
            f.write(b"\0" * (900 << 10))
        os.chown(big, 4242, 4242)
        with open(conf, "w") as f:
            f.write(f"spool = {fs}\nmax_spool_bytes = 1M\nmax_file_bytes = {FILE_CAP * 16}\n")
        log = os.path.join(top, "fs.log")
        run_enc(env, data, log)
        mine = os.path.join(fs, str(os.geteuid()))
        left = ctlib.traces(mine) if os.path.isdir(mine) else []
        check(not left, f"no room under the cap on the spool's file system: no trace {left}")
        refusals = [ln for ln in open(log).read().splitlines() if "max_spool_bytes" in ln]
        check(len(refusals) == 1 and "full" in refusals[0], f"refused, logged once: {refusals}")
        check(os.path.getsize(big) == 900 << 10, "the other user's trace is left alone")
        with open(conf, "w") as f:
            f.write(f"spool = {fs}\nmax_spool_bytes = 2M\n")
        run_enc(env, data)
        check(len(ctlib.traces(mine)) == 1, "with room under the cap, the trace is written")
    finally:
        subprocess.run(["umount", fs])


ctlib.main(test)
