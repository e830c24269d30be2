# SPDX-License-Identifier: MIT
"""cmplib - helpers for the compare suite: run `cryptrace compare` / `cryptrace doctor`, parse
their JSON, check the text fits 80 columns. Meson sets CRYPTRACE (the launcher) and CT_LIB (the
preload in the build tree). Exit 0 pass, 1 fail, 77 skip (with the reason printed)."""
import atexit
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile

from ctlib import secretscan as ctsecrets

SKIP = 77
os.environ.pop("CRYPTRACE_LIB", None)
os.environ.pop("CRYPTRACE_ROUTE", None)
os.environ.pop("OPENSSL_ia32cap", None)
CRYPTRACE = os.environ.get("CRYPTRACE", "")
CT_LIB = os.environ.get("CT_LIB", "")
MASK = "~0x200000200000000"


class Failure(Exception):
    pass


def skip(reason):
    print(f"SKIP: {reason}")
    sys.exit(SKIP)


def check(cond, what):
    if not cond:
        raise Failure(what)
    print(f"ok: {what}")


def main(fn):
    if not CRYPTRACE or not os.access(CRYPTRACE, os.X_OK):
        print("FAIL: CRYPTRACE is not set or not built (run this through meson test)")
        sys.exit(1)
    try:
        fn()
    except Failure as e:
        print(f"FAIL: {e}")
        sys.exit(1)
    # no key, IV or plaintext in the traces it wrote (tests/integration/ctsecrets.py)
    sys.exit(1 if ctsecrets.check_dirs(_tmp) else 0)


_tmp = []
atexit.register(lambda: [shutil.rmtree(d, ignore_errors=True) for d in _tmp]
                if not os.environ.get("CT_KEEP_TMP") else print("kept:", *_tmp))


def tmpdir(tag):
    d = tempfile.mkdtemp(prefix=f"ct-{tag}-")
    _tmp.append(d)
    return d


def run(argv, env=None, timeout=900):
    p = subprocess.run(argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       timeout=timeout)
    return p.returncode, p.stdout.decode(errors="replace"), p.stderr.decode(errors="replace")


def secret(name, data):
    """Registers a key, IV or plaintext this test uses: no trace file may hold it."""
    ctsecrets.register(name, data)


def with_env(**kv):
    env = dict(os.environ)
    env.update(kv)
    return env


def parse_json(text, what):
    try:
        return json.loads(text)
    except ValueError as e:
        raise Failure(f"{what} printed invalid JSON ({e}): {text[:300]!r}")


def fits_80(text, what):
    wide = [l for l in text.splitlines() if len(l) > 80]
    check(not wide, f"{what}: every line fits 80 columns" +
          (f" (too wide: {wide[0]!r})" if wide else ""))


def afalg_errno():
    """None when socket(AF_ALG) works, else its errno."""
    try:
        s = socket.socket(38, socket.SOCK_SEQPACKET, 0)
        s.close()
        return None
    except OSError as e:
        return e.errno


def cell(doc, cipher, direction, route):
    for p in doc.get("paths", []):
        if p["cipher"] == cipher and p["dir"] == direction:
            for c in p["routes"]:
                if c["route"] == route:
                    return c
    return None
