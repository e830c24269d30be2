#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A module the program loads after the attach is traced too (docs/attach.md): Debian's python3,
started without cryptrace with only `hashlib` imported (libcrypto mapped, no cipher yet), is
attached; then it imports `cryptography` (a dlopen of its bindings, whose imports of EVP_* were
bound to libcrypto at their load, not to our hooks), waits a moment, and seals SEALS messages
with AES-128-GCM. The flusher thread patches the new module's slots within 200 ms of its load:
the report counts every seal's bytes exactly, and the ciphertexts (their digest) are the bare
run's."""
import os
import subprocess

import ctlib
from ctlib import attach, check

SEALS = 20
SIZE = 65536
PYTHON = "/usr/bin/python3"
SCRIPT = f"""
import hashlib, sys, time
print("ready", flush=True)
sys.stdin.readline()
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
time.sleep(0.6)  # the module's slots are patched within 200 ms of its load
aead, digest = AESGCM(bytes(range(16))), hashlib.sha256()
for i in range({SEALS}):
    digest.update(aead.encrypt(i.to_bytes(12, "big"), bytes({SIZE}), None))
print("sealed", digest.hexdigest(), flush=True)
sys.stdin.readline()
"""


def run_bare():
    p = subprocess.run([PYTHON, "-c", SCRIPT], input=b"\n\n", stdout=subprocess.PIPE,
                       env=ctlib.bare_env(), timeout=120)
    return p.stdout.decode().split("sealed ")[-1].strip()


def test():
    attach.need_attach()
    if not os.path.exists(PYTHON) or ctlib.run([PYTHON, "-c", "import cryptography"],
                                               env=ctlib.bare_env()).returncode != 0:
        ctlib.skip("Debian's python3-cryptography is not installed here")
    want_digest = run_bare()
    out = ctlib.tmpdir("attach-late-module")
    sealed, pid = attach.attached_between_lines([PYTHON, "-c", SCRIPT], out,
                                                r"sealed ([0-9a-f]{64})", "python3")
    check(sealed.group(1) == want_digest,
          f"the ciphertexts are the bare run's ({sealed.group(1)})")
    paths = attach.evp_gcm_paths(ctlib.report_ok([out]), pid)
    print(f"paths: {paths}")
    enc = paths.get(("aes-128-gcm", "encrypt"), (0, 0))
    check(enc[1] == SEALS * SIZE,
          f"every seal by the module loaded after the attach is counted: {enc[1]} == {SEALS * SIZE} bytes")


ctlib.main(test)
