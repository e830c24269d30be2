#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""python's `cryptography` package, AES-128-GCM over 16 x 1 MiB, under cryptrace:

  Debian's python3-cryptography (/usr/bin/python3), linked against the system libcrypto: the
  aes-128-gcm encrypt path carries exactly the 16 MiB the script encrypted (and the decrypt path
  the 1 MiB it decrypts back), no warning; under OPENSSL_ia32cap masking AES-NI, software-aes;

  pip's wheel (a pyenv python3, when this machine has one with cryptography installed): the
  wheel carries OpenSSL inside _rust.abi3.so, which python dlopens, and `python3` is a pyenv shim
  that runs bash, env, basename... first. The report must look inside the shared objects the
  process mapped, name _rust.abi3.so and the OpenSSL in it, lead with the python process that did
  the work, sum the shim's helpers up in one line, and say (info) how to make it traceable; its
  CPU profile names the AES code inside _rust.abi3.so (AES-NI or VAES where the CPU has it).
  Without such a python, that case prints why it is skipped."""
import os
import shutil

import ctlib
from ctlib import check

MIB = ctlib.MIB
N = 16
SCRIPT = r"""
import cryptography, sys
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
key = bytes(range(16)); nonce = bytes(12)
gcm = AESGCM(key)
data = bytes(1 << 20)
for i in range(%d):
    ct = gcm.encrypt(nonce, data, None)
assert gcm.decrypt(nonce, ct, None) == data
print("cryptography", cryptography.__version__, "encrypted", %d << 20)
""" % (N, N)
DEBIAN_PYTHON = "/usr/bin/python3"


def debian(env, tag):
    p, doc, _ = ctlib.traced(tag, [DEBIAN_PYTHON, "-c", SCRIPT], env=env)
    out = p.stdout.decode(errors="replace")
    check(p.returncode == 0 and f"encrypted {N << 20}" in out,
          f"{tag}: the script ran ({out.strip()} {p.stderr.decode(errors='replace')[-200:]})")
    return doc


def pyenv_wheel():
    """The shim's python3 and its cryptography wheel's _rust.abi3.so, or (None, why)."""
    root = os.environ.get("PYENV_ROOT") or os.path.expanduser("~/.pyenv")
    shim = os.path.join(root, "shims", "python3")
    if not os.access(shim, os.X_OK):
        found = shutil.which("python3")
        if not found or "/shims/" not in found:
            return None, f"no pyenv shim for python3 (looked in {root}/shims and PATH)"
        shim = found
    p = ctlib.run([shim, "-c", "import cryptography.hazmat.bindings._rust as r; print(r.__file__)"])
    if p.returncode != 0:
        return None, "the pyenv python3 has no cryptography package"
    so = p.stdout.decode().strip()
    scan = ctlib.run(["grep", "-c", "crypto/evp/evp_enc.c", so])
    if scan.returncode != 0:
        return None, f"{so} carries no OpenSSL of its own (a build against the system's?)"
    return (shim, so), ""


def test():
    def debian_clean():
        if not os.access(DEBIAN_PYTHON, os.X_OK) or \
           ctlib.run([DEBIAN_PYTHON, "-c", "import cryptography"]).returncode != 0:
            print("skip Debian case: no python3-cryptography for /usr/bin/python3")
            return False
        doc = debian(dict(os.environ), "pycrypto-debian")
        calls, nbytes = ctlib.totals(doc, cipher="aes-128-gcm", dir="encrypt")
        check(nbytes == N * MIB and calls >= N,
              f"aes-128-gcm encrypt: exactly the {N} MiB encrypted, in >= {N} calls "
              f"({calls}, {nbytes})\n{ctlib.describe_paths(doc)}")
        calls, nbytes = ctlib.totals(doc, cipher="aes-128-gcm", dir="decrypt")
        check(nbytes == MIB, f"aes-128-gcm decrypt: the 1 MiB decrypted back ({nbytes})")
        ctlib.check_complete(doc, "python3-cryptography")
        ctlib.check_clean(doc, "python3-cryptography")

    def debian_masked():
        if not ctlib.cpu_has_aes() or not os.access(DEBIAN_PYTHON, os.X_OK) or \
           ctlib.run([DEBIAN_PYTHON, "-c", "import cryptography"]).returncode != 0:
            print("skip masked case: no AES-NI or no python3-cryptography")
            return False
        f = ctlib.check_masked(debian(ctlib.masked_env(), "pycrypto-masked"), "pycrypto")
        check("aes-128-gcm" in f["message"], f"names aes-128-gcm: {f['message'][:200]}")

    def wheel():
        found, why = pyenv_wheel()
        if not found:
            print(f"skip pip wheel case: {why}")
            return False
        shim, so = found
        # 16 MiB of AES-GCM is ~5 ms of CPU: the profile samples at 4 kHz to name it
        env = dict(os.environ, CRYPTRACE_PROFILE_HZ="4000")
        p, doc, _ = ctlib.traced("pycrypto-wheel", [shim, "-c", SCRIPT], env=env)
        check(p.returncode == 0, f"the script ran through the shim ({p.stderr[-200:]!r})")
        check(not doc["paths"], "no cipher path: the wheel's OpenSSL is inside _rust.abi3.so")
        pys = [pr for pr in doc["processes"] if so in pr["mapped"]]
        check(len(pys) == 1, f"one process mapped {so} ({len(pys)})")
        f = ctlib.finding(doc, "nothing-intercepted")
        msg = f["message"]
        first = msg.find("For pid ")
        check(msg[first:].startswith(f"For pid {pys[0]['pid']} "),
              f"leads with the python that did the work (pid {pys[0]['pid']}): {msg[first:first + 80]}")
        check("a shared object it loaded" in msg and so in msg and "OpenSSL" in msg,
              f"names {os.path.basename(so)} and the OpenSSL in it: {msg[:600]}")
        check("Python package cryptography, installed with pip" in msg, "says it is pip's")
        if len(doc["processes"]) > 1:
            check("other" in msg and "loaded no crypto library" in msg,
                  f"the shim's helpers are one line: {msg[-250:]}")
        check(f["severity"] == "info" and "pip install --no-binary cryptography" in f["fix"] and
              "python3-cryptography" in f["fix"], f"info, and how to make it traceable: {f['fix']}")
        # the CPU profile names the AES code inside the wheel (docs/profile.md)
        why = ctlib.profile_refused(doc)
        if why:
            print(f"skip the profile check: this machine takes no CPU profile ({why})")
            ctlib.check_clean(doc, "pip wheel")
            return
        prof = pys[0].get("profile") or {"items": []}
        aes = [i for i in prof["items"] if i["category"] == "AES" and i["module"] == os.path.basename(so)]
        check(aes, f"the profile names AES code in {os.path.basename(so)} ({prof['items'][:3]})")
        if ctlib.cpu_has_aes():
            check(any(i["impl"].startswith(("AES-NI", "VAES")) for i in aes),
                  f"the wheel's OpenSSL runs AES-NI or VAES: {aes[:2]}")
        check("The CPU profile saw crypto code all the same" in msg, "nothing-intercepted says it")
        ctlib.check_clean(doc, "pip wheel")

    ctlib.run_cases([("Debian python3-cryptography", debian_clean),
                       ("Debian, masked", debian_masked), ("pip wheel (pyenv)", wheel)])


ctlib.main(test)
