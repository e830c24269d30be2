#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The always-on spool as a trust boundary (docs/fleet.md): the preload loaded with no
CRYPTRACE_OUT, a configuration file naming a 1733 spool, and two throwaway accounts made by the
test (a victim and an attacker, removed at the end). First the victim's trace lands in its own
0700 directory (so the attacks below can be seen to fail); then each thing the attacker can leave
in the spool in the victim's (or root's) directory's place: a pre-created directory of its own, a
symlink to another user's or root's directory, a hard link of a file, a spool root without the
sticky bit (where the victim's directory could be swapped), a directory open to others. Each is
refused and logged exactly once, in CRYPTRACE_LOG's file and as one warning on the host's syslog
socket (CRYPTRACE_SYSLOG points it at the test's receiver); openssl's output and exit status are those of a run without
the preload; nothing is written anywhere outside the victim's own directory."""
import os
import pwd
import shutil
import socket
import subprocess

import ctlib
from ctlib import check

KEY = "000102030405060708090a0b0c0d0e0f"
IV = "0f0e0d0c0b0a09080706050403020100"


def make_user(tag):
    name = f"ct{tag}{os.getpid() % 100000}"
    p = subprocess.run(["useradd", "--no-create-home", "--shell", "/usr/sbin/nologin", name],
                       stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if p.returncode != 0:
        ctlib.skip(f"useradd {name} failed: {p.stdout.strip()}")
    made.append(name)
    return pwd.getpwnam(name)


made = []


def remove_users():
    for name in made:
        subprocess.run(["userdel", name], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def as_user(user, argv, env, cwd):
    kw = {}
    if user is not None:
        kw = dict(user=user.pw_uid, group=user.pw_gid, extra_groups=[])
    return subprocess.run(argv, env=env, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=120, **kw)


def snapshot(*tops):
    """Every path under tops, with its size and mtime: what a run changed."""
    seen = {}
    for top in tops:
        for d, dirs, files in os.walk(top):
            for n in dirs + files:
                p = os.path.join(d, n)
                st = os.lstat(p)
                seen[p] = (st.st_size, st.st_mtime_ns, st.st_uid)
    return seen


def test():
    if os.geteuid() != 0:
        ctlib.skip("needs root: the attacks are made by throwaway accounts this test creates")
    for prog in ("useradd", "userdel", "openssl"):
        ctlib.need_program(prog)
    ctlib.secret("key", bytes.fromhex(KEY))
    ctlib.secret("iv", bytes.fromhex(IV))
    try:
        run_attacks()
    finally:
        remove_users()


def run_attacks():
    victim, attacker = make_user("v"), make_user("a")
    top = ctlib.tmpdir("fleet")
    os.chmod(top, 0o755)
    spool = os.path.join(top, "spool")
    os.mkdir(spool)
    os.chmod(spool, 0o1733)
    conf = os.path.join(top, "cryptrace.conf")
    with open(conf, "w") as f:
        f.write(f"# the test's always-on configuration\nspool = {spool}\n")
    os.chmod(conf, 0o644)
    data = os.path.join(top, "input")
    with open(data, "wb") as f:
        f.write(b"not a secret, just bytes to encrypt\n" * 1000)
    os.chmod(data, 0o644)
    # where the attacker points its links: its own open directory and one of root's
    elsewhere = os.path.join(top, "attacker-dir")
    os.mkdir(elsewhere)
    os.chown(elsewhere, attacker.pw_uid, attacker.pw_gid)
    os.chmod(elsewhere, 0o777)
    root_dir = os.path.join(top, "root-dir")
    os.mkdir(root_dir, 0o755)
    logs = os.path.join(top, "logs")
    os.mkdir(logs)
    os.chmod(logs, 0o1777)

    argv = ["openssl", "enc", "-aes-128-cbc", "-K", KEY, "-iv", IV, "-in", data]
    want = as_user(victim, argv, ctlib.bare_env(), top)
    check(want.returncode == 0 and want.stdout, "openssl runs as the victim without the preload")
    vdir = os.path.join(spool, str(victim.pw_uid))
    rdir = os.path.join(spool, "0")

    def traced(user, tag):
        """Runs openssl as user; the refusals in CRYPTRACE_LOG's file, after checking that the
        host's log (the syslog socket, here the test's receiver through CRYPTRACE_SYSLOG) got
        the same ones, as one warning each."""
        log = os.path.join(logs, f"{tag}.log")
        sock_path = os.path.join(logs, f"{tag}.syslog")
        with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as rx:
            rx.bind(sock_path)
            os.chmod(sock_path, 0o666)
            env = ctlib.preload_env(None, CRYPTRACE_CONFIG=conf, CRYPTRACE_LOG="1",
                                    CRYPTRACE_LOG_FILE=log, CRYPTRACE_SYSLOG=sock_path)
            got = as_user(user, argv, env, top)
            rx.setblocking(False)
            syslog = []
            while True:
                try:
                    syslog.append(rx.recv(2048).decode(errors="replace"))
                except BlockingIOError:
                    break
        check((got.returncode, got.stdout, got.stderr) == (want.returncode, want.stdout, want.stderr),
              f"{tag}: openssl's output, stderr and exit status are those without the preload")
        lines = open(log).read().splitlines() if os.path.exists(log) else []
        refusals = [ln for ln in lines if " spool " in ln]
        check(len(syslog) == len(refusals) and all(
            m.startswith("<36>cryptrace[") and " spool " in m and "openssl is not traced" in m for m in syslog),
            f"{tag}: the host's log has the refusal as one auth warning {syslog}")
        return refusals

    # 0. the control: a clean spool, the victim's trace in its own 0700 directory
    refusals = traced(victim, "clean")
    check(not refusals, f"clean spool: nothing refused {refusals}")
    st = os.lstat(vdir)
    check(st.st_uid == victim.pw_uid and (st.st_mode & 0o7777) == 0o700,
          f"the victim's directory is its own, 0700 ({oct(st.st_mode)})")
    files = ctlib.traces(vdir)
    check(len(files) == 1, f"one trace in the victim's directory {files}")
    fst = os.lstat(files[0])
    check(fst.st_uid == victim.pw_uid and (fst.st_mode & 0o777) == 0o600 and fst.st_nlink == 1,
          "the trace file is the victim's, 0600, one link")
    doc = ctlib.report_ok(files)
    check(ctlib.totals(doc)[1] >= 36000, "the report reads the victim's AES calls from the spool")
    shutil.rmtree(vdir)

    def attack(tag, make, says, user=None, target_dirs=(elsewhere, root_dir)):
        """make() leaves something in the spool; the victim (or user) runs openssl; the log
        line says what was refused (says)."""
        user = user or victim
        make()
        before = snapshot(spool, *target_dirs)
        refusals = traced(user, tag)
        check(len(refusals) == 1, f"{tag}: refused and logged exactly once {refusals}")
        check(says in refusals[0], f"{tag}: the log says '{says}'")
        after = snapshot(spool, *target_dirs)
        check(after == before, f"{tag}: nothing written in the spool or where it points "
              f"{sorted(set(after.items()) ^ set(before.items()))[:4]}")

    def as_attacker(*cmd):
        p = as_user(attacker, list(cmd), ctlib.bare_env(), top)
        check(p.returncode == 0, f"the attacker ran {' '.join(cmd)} {p.stderr.decode()[:200]}")

    def clean(path):
        if os.path.islink(path) or os.path.isfile(path):
            os.unlink(path)
        elif os.path.isdir(path):
            shutil.rmtree(path)

    attack("pre-created directory", lambda: as_attacker("mkdir", "-m", "0777", vdir),
           "not a directory of this user's")
    clean(vdir)
    attack("pre-created 0700 directory", lambda: as_attacker("mkdir", "-m", "0700", vdir),
           "Permission denied")
    clean(vdir)
    attack("symlink to another user's directory", lambda: as_attacker("ln", "-s", elsewhere, vdir),
           "is a symlink")
    clean(vdir)
    attack("symlink to root's directory", lambda: as_attacker("ln", "-s", root_dir, vdir),
           "is a symlink")
    clean(vdir)
    # root's own processes: the attacker's symlink in root's place
    attack("root: symlink in root's place", lambda: as_attacker("ln", "-s", elsewhere, rdir),
           "is a symlink", user=pwd.getpwuid(0))
    clean(rdir)
    bait = os.path.join(elsewhere, "bait")

    def hard_link():
        as_attacker("touch", bait)
        as_attacker("ln", bait, vdir)
    attack("hard link in the directory's place", hard_link, "is not a directory")
    clean(vdir)
    os.unlink(bait)
    # the victim's directory swapped: with the sticky bit the attacker cannot rename it away...
    os.mkdir(vdir, 0o700)
    os.chown(vdir, victim.pw_uid, victim.pw_gid)
    p = as_user(attacker, ["mv", vdir, os.path.join(spool, "moved")], ctlib.bare_env(), top)
    check(p.returncode != 0 and os.path.isdir(vdir), "the sticky bit: the attacker cannot move "
          "the victim's directory away")
    clean(vdir)
    # ...and a spool root without it, where the attacker could, is refused as a whole
    os.chmod(spool, 0o777)
    attack("spool root writable without the sticky bit",
           lambda: as_attacker("mkdir", "-m", "0777", os.path.join(spool, "x")),
           "without the sticky bit")
    os.chmod(spool, 0o1733)
    clean(os.path.join(spool, "x"))
    clean(vdir)

    def open_dir():
        os.mkdir(vdir, 0o755)
        os.chown(vdir, victim.pw_uid, victim.pw_gid)
    attack("the victim's directory open to others", open_dir, "mode must be 0700")
    clean(vdir)

    # after all that the spool works again for the victim
    refusals = traced(victim, "clean again")
    check(not refusals and len(ctlib.traces(vdir)) == 1, "the clean spool traces the victim again")


if __name__ == "__main__":
    ctlib.main(test)
