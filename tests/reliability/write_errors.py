#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Full disk and write errors: the traced program's output and exit status never change, and the
trace and report say the trace is incomplete. (1) RLIMIT_FSIZE of 1 KiB set before exec (no
SIGXFSZ for the program; the file stays under the limit; status not complete); (2) a 64 KiB tmpfs filled
up to its last byte (skipped with the reason when mount is not permitted); (3) the output
directory removed while the program runs."""
import os
import resource
import shutil
import subprocess
import time

import ctlib
from ctlib import check

N = "200000"


def bare_output(argv):
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=300)
    return p.returncode, p.stdout


def run_limited(argv, env, fsize):
    def limit():
        resource.setrlimit(resource.RLIMIT_FSIZE, (fsize, fsize))
    p = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       preexec_fn=limit, timeout=300)
    return p.returncode, p.stdout, p.stderr


def says_incomplete(outdir, what):
    files = ctlib.traces(outdir)
    check(files, f"{what}: a trace file exists")
    rc, doc, err = ctlib.report(files)
    check(rc in (0, 1) and doc is not None, f"{what}: the report reads it (exit {rc}) {err[:100]}")
    st = [(q.get("status"), q.get("write_errors")) for q in ctlib.processes(doc)]
    check(st and all(s != "complete" for s, _ in st), f"{what}: the report says not complete {st}")
    text = ctlib.run([ctlib.CRYPTRACE, "report"] + files).stdout.decode()
    check("incomplete" in text or "truncated" in text,
          f"{what}: the text report says incomplete/truncated")
    return doc


def fsize_limit(argv, want):
    out = ctlib.tmpdir("fsize")
    rc, stdout, err = run_limited(argv, ctlib.preload_env(out, CRYPTRACE_FLUSH_MS=10), 1024)
    check((rc, stdout) == want, f"RLIMIT_FSIZE 1 KiB: same exit status ({rc}) and output")
    # write_errors cannot reach a file that takes no more bytes: the missing END says it
    says_incomplete(out, "RLIMIT_FSIZE")
    sizes = [os.path.getsize(f) for f in ctlib.traces(out)]
    check(all(s <= 1024 for s in sizes), f"RLIMIT_FSIZE: never written past the limit {sizes}")


def tiny_tmpfs(argv, want):
    mnt = ctlib.tmpdir("tmpfs")
    p = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64k,mode=0700", "tmpfs", mnt],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if p.returncode != 0:
        print(f"SKIP part: tiny tmpfs: mount not permitted ({p.stderr.decode().strip()})")
        return False
    try:
        out = os.path.join(mnt, "out")
        os.mkdir(out, 0o700)
        # fill it to the last byte: whatever the trace's size, its writes meet ENOSPC
        with open(os.path.join(mnt, "filler"), "wb", buffering=0) as f:
            try:
                while True:
                    f.write(b"\0" * 512)
            except OSError:
                pass
        rc, stdout, _ = run_limited(argv, ctlib.preload_env(out, CRYPTRACE_FLUSH_MS=10),
                                    resource.RLIM_INFINITY)
        check((rc, stdout) == want, f"tmpfs full: same exit status ({rc}) and output")
        says_incomplete(out, "tmpfs full")
    finally:
        subprocess.run(["umount", mnt])
    return True


def dir_removed(want_rc):
    out = ctlib.tmpdir("rmdir")
    argv = [ctlib.built("CT_REL_BIN", "rel_threads"), "1.5", "4"]
    proc = subprocess.Popen(argv, env=ctlib.preload_env(os.path.join(out, "t"),
                                                      CRYPTRACE_FLUSH_MS=10),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    os.mkdir(os.path.join(out, "t"), 0o700)  # created after exec: the preload may start late
    time.sleep(0.5)
    shutil.rmtree(os.path.join(out, "t"))
    stdout, stderr = proc.communicate(timeout=300)
    check(proc.returncode == want_rc, f"output dir removed mid-run: exit {proc.returncode}")
    check(b"expect api=evp" in stdout and not stderr, "output dir removed: normal output, "
          f"nothing on stderr ({stderr[:100]!r})")


def test():
    argv = [ctlib.built("CT_REL_BIN", "rel_prog"), "write-lots", N]
    want = bare_output(argv)
    check(want[0] == 0, "write-lots runs bare")
    fsize_limit(argv, want)
    tiny_tmpfs(argv, want)
    dir_removed(0)


ctlib.main(test)
