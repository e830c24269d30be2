#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Secrets. Programs with known keys, IVs and plaintexts run under the preload (EVP through
rel_prog, rel_threads with a stand-in /dev/crypto, rel_early, the RTLD_LOCAL plugin, openssl enc
with -K/-iv): no trace file holds any key, IV or plaintext, nor any 8-byte window of them at any
offset; every trace file is 0600. The scan every other test runs over its own traces
(tests/integration/secretscan.py, from ctlib.main and the suites' helpers) is checked here to bite:
it knows these programs' literals, finds a key or IV planted raw or as hex text anywhere in a real
trace (also one not named .ctrace), argv included, where the key typed on the command line is
recorded as <redacted>.
A symlink planted at the trace path is refused, not followed (the target is not created). The
preload reads its configuration only with secure_getenv, and a setgid copy of a program linked
with the preload (AT_SECURE) traces nothing while the same program does."""
import glob
import os
import re
import shutil
import stat
import subprocess

import ctlib
from ctlib import check, secretscan

HERE = os.path.dirname(os.path.abspath(__file__))
FAKE_CDEV = os.environ.get("CT_FAKE_CDEV", "")
SRC_PRELOAD = os.path.join(HERE, "..", "..", "preload")

# The literals the scenario programs use (see their sources) and openssl enc's below.
ENC_KEY = bytes.fromhex("8f3a5b7c9d1e2f40a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f60718")
ENC_IV = bytes.fromhex("0f1e2d3c4b5a69788796a5b4c3d2e1f0")
ENC_PLAIN = b"attack at dawn, the secret plaintext of the secrets test " * 8
SECRETS = {
    "rel_prog key": b"Qz7#kP2!xW9@mR4$vL6%nT8^bY3&hJ5*",
    "rel_prog iv": b"Fq1~Gw3`Hx5|Jy7;",
    "rel_prog plaintext": b"\x3c" * 64,
    "rel_threads key": b"Ud8:Ve0<Wf2>Xg4)Yh6[Zi8]Aj0{Bk2}",
    "rel_threads iv": b"Cl4'Dm6,En8.Fo0/",
    "rel_threads plaintext": b"\x5a" * 64,
    "rel_early key": b"Kp3=Lq5+Mr7-Ns9_Ot1)Pu3(",
    "rel_early main key": b"Qv5*Rw7&Sx9^Ty1%",
    "rel_plugin key": b"Uz3$Va5#Wb7@Xc9!",
    "rel_plugin iv": b"Rd1%Se3^Tf5&Ug7*",
    "rel_early iv": b"Mz4!Na6@Ob8#Pc0$",
    "rel_early main iv": b"Gt6*Hu8&Iv0^Jw2%",
    "rel_late key": b"Ls2!Mt4@Nu6#Ov8$Pw0%Qx2^Ry4&Sz6*",
    "rel_late iv": b"Ta8(Ub0)Vc2-Wd4+",
    "enc key": ENC_KEY,
    "enc iv": ENC_IV,
    "enc plaintext": ENC_PLAIN[:64],
}


def windows(secret):
    return {secret[i:i + 8] for i in range(0, len(secret) - 7)}


def scan(files):
    leaks = []
    for f in files:
        try:
            data = open(f, "rb").read()
        except OSError:  # another suite's run removed it meanwhile
            continue
        for name, secret in SECRETS.items():
            if any(w in data for w in windows(secret)):
                leaks.append(f"{f}: {name}")
    return leaks


def produce(out):
    env = ctlib.preload_env(out, preload=[FAKE_CDEV] if FAKE_CDEV else [],
                          CRYPTRACE_MODE="calls")
    runs = [
        [ctlib.built("CT_REL_BIN", "rel_prog"), "work", "200", "aes-256-cbc"],
        [ctlib.built("CT_REL_BIN", "rel_threads"), "0.3", "4"],
        [ctlib.built("CT_REL_BIN", "rel_early")],
        [ctlib.built("CT_REL_BIN", "rel_late"), os.environ.get("CT_REL_PLUGIN", "")],
    ]
    for argv in runs:
        p = ctlib.run(argv, env=env)
        check(p.returncode == 0, f"{os.path.basename(argv[0])} ran ({p.returncode})")
    openssl = shutil.which("openssl")
    if openssl:
        p = ctlib.run([openssl, "enc", "-aes-256-cbc", "-K", ENC_KEY.hex(), "-iv", ENC_IV.hex()],
                      env=env, input_bytes=ENC_PLAIN)
        check(p.returncode == 0, "openssl enc ran")


def no_leaks():
    out = ctlib.tmpdir("secrets")
    produce(out)
    files = ctlib.traces(out)
    check(len(files) >= 4, f"{len(files)} trace files produced")
    leaks = scan(files)
    check(not leaks, f"no key, IV or plaintext (8-byte windows) in our traces: {leaks[:5]}")
    modes = {f: stat.S_IMODE(os.stat(f).st_mode) for f in files}
    check(all(m == 0o600 for m in modes.values()), f"every trace file is 0600 {set(modes.values())}")
    others = {k: v for k, v in secretscan.known().items() if any(v)}
    leaks = [f"{f}: {name}" for f in files for name, v in others.items()
             if len(v) >= 8 and any(w in open(f, "rb").read() for w in windows(v))]
    check(not leaks, f"nor the other examples' and suites' keys, IVs and data: {leaks[:5]}")
    return files


def shared_scan_bites(files):
    """The scan every test runs (ctlib.secretscan) over these real traces: clean, and it finds what is
    planted in them."""
    known = set(secretscan.known().values())
    for name in ("rel_prog key", "rel_prog iv", "rel_threads key", "rel_threads iv", "rel_early key",
                 "rel_late key", "rel_plugin key", "rel_plugin iv", "enc key", "enc iv"):
        check(SECRETS[name] in known, f"the shared scan knows the {name} from the sources")
    secretscan.register("enc plaintext", ENC_PLAIN)
    check(secretscan.scan(files) == [], "the shared scan finds nothing in these traces")
    enc = [f for f in files if os.path.basename(f).startswith("openssl.")]
    check(len(enc) == 1, f"one openssl enc trace ({enc})")
    data = open(enc[0], "rb").read()
    check(ENC_KEY.hex().encode() not in data and ENC_IV.hex().encode() not in data and
          b"-K\0<redacted>\0-iv\0<redacted>" in data,
          "the openssl enc trace's argv holds -K <redacted> -iv <redacted>, not the hex typed")
    work = ctlib.tmpdir("planted")
    mid = len(data) // 2
    planted = {
        "raw key appended": data + ENC_KEY,
        "hex IV in the middle": data[:mid] + ENC_IV.hex().encode() + data[mid:],
        "upper-case hex key": data[:mid] + ENC_KEY.hex().upper().encode() + data[mid:],
        "rel_threads key window": data[:mid] + SECRETS["rel_threads key"][9:26] + data[mid:],
        "plaintext window": data[:mid] + ENC_PLAIN[3:24] + data[mid:],
    }
    for i, (what, blob) in enumerate(planted.items()):
        f = os.path.join(work, f"planted{i}.bin")  # not named .ctrace: found by its magic
        with open(f, "wb") as fh:
            fh.write(blob)
        found = secretscan.trace_files([work])
        check(f in found, f"{what}: the planted file is taken for a trace by its magic")
        hits = secretscan.scan([f])
        check(hits, f"{what}: the shared scan finds it ({hits[:1]})")
        os.unlink(f)


def symlink_refused():
    out = ctlib.tmpdir("symlink")
    target = os.path.join(ctlib.tmpdir("symlink-target"), "victim")
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:  # wait until the parent planted the link at our future trace path
        os.close(w)
        os.read(r, 1)
        os.execve(ctlib.built("CT_REL_BIN", "rel_prog"), ["rel_prog", "work", "10", "aes-128-cbc"],
                  ctlib.preload_env(out))
    os.close(r)
    planted = os.path.join(out, f"rel_prog.{pid}.ctrace")
    os.symlink(target, planted)
    os.write(w, b"x")
    os.close(w)
    _, st = os.waitpid(pid, 0)
    check(os.WIFEXITED(st) and os.WEXITSTATUS(st) == 0, "the program ran normally")
    check(not os.path.exists(target), "the symlink's target was not created (not followed)")
    check(os.path.islink(planted) and os.readlink(planted) == target, "the planted link is intact")
    files = [f for f in ctlib.traces(out) if not os.path.islink(f)]
    check(len(files) == 1, f"the trace went to a regular file instead: {files}")


def secure_getenv_only():
    bad = []
    for f in glob.glob(os.path.join(SRC_PRELOAD, "**", "*.c"), recursive=True):
        for n, line in enumerate(open(f), 1):
            if re.search(r"(?<![_a-z])getenv\s*\(", line):
                bad.append(f"{os.path.relpath(f, SRC_PRELOAD)}:{n}")
    check(not bad, f"the preload calls only secure_getenv, never getenv: {bad}")


def setgid_left_alone():
    cc = shutil.which("cc")
    if os.geteuid() != 0 or not cc:
        print("SKIP part: setgid: needs root and cc")
        return
    work = ctlib.tmpdir("setgid")
    os.chmod(work, 0o755)
    if os.statvfs(work).f_flag & os.ST_NOSUID:
        print("SKIP part: setgid: /tmp is mounted nosuid")
        return
    libdir = os.path.dirname(ctlib.CT_LIB)
    exe = os.path.join(work, "linked")
    # close_range.h (tests/kernel) and the build's ct_config.h, as meson compiles rel_prog.c
    incs = ["-I" + os.path.join(HERE, "..", "kernel"), "-I" + os.environ["CT_BUILD_ROOT"]]
    p = subprocess.run([cc, "-O1", "-o", exe, os.path.join(HERE, "rel_prog.c"), ctlib.CT_LIB,
                        f"-Wl,-rpath,{libdir}", "-lcrypto", "-pthread"] + incs,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    check(p.returncode == 0, f"built a program linked with the preload {p.stderr[:200]!r}")
    out = ctlib.tmpdir("setgid-out")
    os.chmod(out, 0o777)
    env = dict(os.environ, CRYPTRACE_OUT=out)
    env.pop("LD_PRELOAD", None)
    p = ctlib.run([exe, "work", "10", "aes-128-cbc"], env=env)
    check(p.returncode == 0 and len(ctlib.traces(out)) == 1, "not setgid: it traces itself")
    for f in ctlib.traces(out):
        os.unlink(f)
    os.chown(exe, 0, 65534)  # nogroup: a group root's process is not in
    os.chmod(exe, 0o2755)
    p = ctlib.run([exe, "work", "10", "aes-128-cbc"], env=env)
    check(p.returncode == 0, f"setgid copy ran normally ({p.returncode})")
    check(ctlib.traces(out) == [], "setgid copy (AT_SECURE): no trace, CRYPTRACE_OUT not read")


def test():
    shared_scan_bites(no_leaks())
    symlink_refused()
    secure_getenv_only()
    setgid_left_alone()


if __name__ == "__main__":
    ctlib.main(test)
