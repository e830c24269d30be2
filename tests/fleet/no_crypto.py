#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The always-on mode leaves programs that do no crypto alone (docs/fleet.md): with the preload
loaded and a spool configured, `sh -c true`, `ls /` and `python3 -c pass` (and a python that
only hashes) print what they print bare, exit as bare, and leave no trace file: the file is
created at the first flush after the first cipher path. `openssl version`, which maps libcrypto
from the start, gets its file at start (a sandboxed child could not open one later). A shell
running openssl enc leaves exactly one trace, openssl's, with its bytes; a forked child of a
process with no cipher path (the shell's subshell) none. And the include/exclude globs: an
excluded openssl, or one outside every include, runs as bare and leaves nothing; an included one
leaves its trace."""
import os
import shutil
import signal
import subprocess

import ctlib
from ctlib import check

KEY = "00112233445566778899aabbccddeeff"


def test():
    top = ctlib.tmpdir("fleet-nocrypto")
    spool = os.path.join(top, "spool")
    os.mkdir(spool, 0o700)
    conf = os.path.join(top, "cryptrace.conf")
    with open(conf, "w") as f:
        f.write(f"spool = {spool}\n")
    udir = os.path.join(spool, str(os.geteuid()))

    def traces():
        return ctlib.traces(udir) if os.path.isdir(udir) else []
    env = ctlib.preload_env(None, CRYPTRACE_CONFIG=conf)
    programs = [["sh", "-c", "true"], ["ls", "/"], ["python3", "-c", "pass"],
                ["python3", "-c", "import hashlib; print(hashlib.sha256(b'x').hexdigest())"],
                ["sh", "-c", "(echo sub; true) | cat"]]
    for argv in programs:
        bare = ctlib.run(argv, env=ctlib.bare_env())
        got = ctlib.run(argv, env=env)
        check((got.returncode, got.stdout, got.stderr) == (bare.returncode, bare.stdout, bare.stderr),
              f"{' '.join(argv)}: same output and exit status as bare")
        left = traces()
        check(not left, f"{' '.join(argv)}: no trace file {left}")
    # a program that maps libcrypto from the start gets its file at start, cipher or not: a
    # sandboxed child (sshd's) could not open one at its first cipher
    p = ctlib.run(["openssl", "version"], env=env)
    files = traces()
    check(p.returncode == 0 and len(files) == 1, f"openssl version (libcrypto mapped): a trace {files}")
    os.unlink(files[0])
    data = os.path.join(top, "input")
    with open(data, "wb") as f:
        f.write(b"bytes to encrypt\n" * 4096)
    p = ctlib.run(["sh", "-c", f"openssl enc -aes-128-cbc -K {KEY} -iv {KEY} -in {data} | wc -c"],
                  env=env, text=True)
    check(p.returncode == 0 and p.stdout.strip() == str(4096 * 17 + 16), f"openssl enc ran ({p.stdout.strip()})")
    files = traces()
    check(len(files) == 1 and os.path.basename(files[0]).startswith("openssl."),
          f"a shell running openssl: openssl's trace only {files}")
    doc = ctlib.report_ok(files)
    check(ctlib.totals(doc)[1] >= 4096 * 17, f"its bytes are all there ({ctlib.totals(doc)[1]})")
    # the spool root given to the reporter reads the per-user directories (report, export and
    # serve take the spool itself), not a directory that is not named by a uid, nor a symlink
    os.symlink(udir, os.path.join(spool, "4242"))
    os.mkdir(os.path.join(spool, "old"))
    shutil.copy(files[0], os.path.join(spool, "old"))
    whole = ctlib.report_ok([spool])
    check(ctlib.totals(whole) == ctlib.totals(doc) and len(whole["processes"]) == 1,
          f"report of the spool root: the user's trace once ({ctlib.totals(whole)} == {ctlib.totals(doc)})")
    os.unlink(os.path.join(spool, "4242"))
    shutil.rmtree(os.path.join(spool, "old"))
    os.unlink(files[0])

    # a process that maps no crypto library at start reads nothing of itself then (its name,
    # its call sites' program, its signal handlers: docs/fleet.md), and all of it at its first
    # cipher path: Debian's python3 importing `cryptography` (the system libcrypto) late, one
    # AES-GCM seal, then ended by SIGTERM's default action: the trace is named python3.*, counts
    # the bytes and ends by the signal, and the exit is the bare run's
    late = ("import sys, time\n"
            "from cryptography.hazmat.primitives.ciphers.aead import AESGCM\n"
            "AESGCM(bytes(16)).encrypt(bytes(12), bytes(100000), None)\n"
            "print('sealed', flush=True)\n"
            "time.sleep(60)\n")
    if os.path.exists("/usr/bin/python3") and ctlib.run(
            ["/usr/bin/python3", "-c", "import cryptography"], env=ctlib.bare_env()).returncode == 0:
        def sealed_then_killed(run_env):
            p = subprocess.Popen(["/usr/bin/python3", "-c", late], env=run_env,
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            line = p.stdout.readline()
            p.send_signal(signal.SIGTERM)  # from outside: no hook of ours sees it coming
            out, err = p.communicate(timeout=60)
            return p.returncode, line + out, err
        bare = sealed_then_killed(ctlib.bare_env())
        got = sealed_then_killed(env)
        check(got == bare and got[0] == -signal.SIGTERM,
              f"python3 sealing late, then SIGTERM: as bare ({got}, {bare})")
        files = traces()
        check(len(files) == 1 and os.path.basename(files[0]).startswith("python3."),
              f"its trace, named by the process read at the first cipher path {files}")
        doc = ctlib.report_ok(files)
        proc = doc["processes"][0]
        check(proc["end_reason"] == "signal" and ctlib.totals(doc)[1] >= 100000,
              f"the trace ends by the signal (the handler installed at the first cipher path) and "
              f"has the bytes ({proc['end_reason']}, {ctlib.totals(doc)})")
        os.unlink(files[0])
    else:
        print("skip: the late start part: Debian's python3-cryptography is not installed here")

    # the configuration's selection, on the executable's real path
    openssl = os.path.realpath(ctlib.need_program("openssl"))
    enc = ["openssl", "enc", "-aes-128-cbc", "-K", KEY, "-iv", KEY, "-in", data]
    bare = ctlib.run(enc, env=ctlib.bare_env())
    for lines, traced in ((f"exclude = {openssl}", False), ("include = /nonexistent/*", False),
                          (f"include = {os.path.dirname(openssl)}/*\nexclude = */python3*", True)):
        with open(conf, "w") as f:
            f.write(f"spool = {spool}\n{lines}\n")
        got = ctlib.run(enc, env=env)
        check((got.returncode, got.stdout) == (bare.returncode, bare.stdout),
              f"{lines!r}: openssl's output and status unchanged")
        files = traces()
        check(len(files) == (1 if traced else 0), f"{lines!r}: {'one trace' if traced else 'no trace'} {files}")
        for f in files:
            os.unlink(f)


if __name__ == "__main__":
    ctlib.main(test)
