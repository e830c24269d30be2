#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`cryptrace prune` (tracer/cmd_prune.c) on a spool made by the test: root's and nobody's
directories with trace files of known sizes and ages, plus what a hostile user could leave: a
symlink named after a uid pointing at a directory of old trace files, a directory of the
attacker's under another uid's name, and a non-trace file. With max_age = 1d the files older
than a day go; with max_spool_bytes the oldest go next until the spool fits; --dry-run removes
nothing; the symlink's target, the mis-owned directory and the other file are never touched."""
import os
import pwd

import ctlib
from ctlib import check

DAY = 86400
KB = 1024


def test():
    if os.geteuid() != 0:
        ctlib.skip("needs root: the spool's directories belong to other users")
    try:
        nobody = pwd.getpwnam("nobody")
    except KeyError:
        ctlib.skip("no user nobody here")
    top = ctlib.tmpdir("fleet-prune")
    spool = os.path.join(top, "spool")
    os.mkdir(spool)
    os.chmod(spool, 0o1733)
    now = int(os.path.getmtime(top))
    made = {}

    def put(uid, name, size, age_days, owner=None):
        d = os.path.join(spool, str(uid))
        if not os.path.isdir(d):
            os.mkdir(d, 0o700)
            os.chown(d, owner if owner is not None else uid, 0)
        p = os.path.join(d, name)
        with open(p, "wb") as f:
            f.write(b"\0" * size)
        t = now - int(age_days * DAY)
        os.utime(p, (t, t))
        made[p] = size
        return p

    old_root = put(0, "sshd.10.ctrace", 64 * KB, 3)
    old_nobody = put(nobody.pw_uid, "curl.11.ctrace.1", 64 * KB, 2)
    mid_root = put(0, "openssl.12.ctrace", 64 * KB, 0.5)
    mid_nobody = put(nobody.pw_uid, "wget.13.ctrace", 64 * KB, 0.4)
    new_root = put(0, "python3.14.ctrace", 64 * KB, 0.1)
    other = put(0, "notes.txt", 64 * KB, 9)  # not a trace: never ours to remove
    # a directory named after uid 4242 but owned by nobody: pre-created by an attacker
    forged = put(4242, "old.1.ctrace", 64 * KB, 9, owner=nobody.pw_uid)
    # a symlink named after a uid, to a directory of old trace files
    target = os.path.join(top, "elsewhere")
    os.mkdir(target)
    bait = os.path.join(target, "bait.1.ctrace")
    with open(bait, "wb") as f:
        f.write(b"\0" * KB)
    os.utime(bait, (now - 9 * DAY, now - 9 * DAY))
    os.symlink(target, os.path.join(spool, "4343"))

    conf = os.path.join(top, "cryptrace.conf")

    def prune(conf_text, *opts):
        with open(conf, "w") as f:
            f.write(f"spool = {spool}\n{conf_text}\n")
        p = ctlib.run([ctlib.CRYPTRACE, "prune", "--config", conf] + list(opts), text=True)
        check(p.returncode == 0, f"prune {conf_text!r} {opts} exits 0 ({p.returncode}) {p.stderr}")
        return p.stdout

    out = prune("max_age = 1d", "--dry-run")
    check(all(os.path.exists(p) for p in made) and "would remove 2 trace files" in out,
          f"--dry-run: would remove two, removed nothing: {out.strip()}")
    prune("max_age = 1d")
    check(not os.path.exists(old_root) and not os.path.exists(old_nobody),
          "max_age = 1d: the traces older than a day are gone")
    check(all(os.path.exists(p) for p in (mid_root, mid_nobody, new_root)),
          "max_age = 1d: the younger ones stay")
    # 3 x 64 KiB left in the real directories: a 130 KiB cap removes the oldest one only
    out = prune("max_spool_bytes = 130K")
    check(not os.path.exists(mid_root) and os.path.exists(mid_nobody) and os.path.exists(new_root),
          f"max_spool_bytes = 130K: the oldest trace went, the two newer stay: {out.strip()}")
    check(all(os.path.exists(p) for p in (other, forged, bait)),
          "the non-trace file, the mis-owned directory's file and the symlink's target are untouched")


if __name__ == "__main__":
    ctlib.main(test)
