#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Cipher handles made before the attach are classified at their first call after it
(docs/attach.md), for libgcrypt and GnuTLS as for an EVP context: examples/gcrypt_bench and
examples/gnutls_cipher_bench, started without cryptrace, open and key their handles (`late`),
print "ready" and wait; they are attached, then make their calls, then wait again while the attach
ends. The report counts every call and byte made after the attach on the right path (api, cipher,
direction, the code that ran), the outputs' checksums are the bare run's, and the programs exit 0.
Without the reading of the handle (preload/hooks/gcrypt_late.c, gnutls_late.c) no call of
theirs is counted."""
import re
import subprocess

import ctlib
from ctlib import attach, check

CASES = [
    # (tag, argv after the program, {(api, cipher, dir): (calls, bytes)})
    ("gcrypt-cbc", ["gcrypt_bench", "late", "aes-256-cbc", "4096", "100"],
     {("gcrypt", "aes-256-cbc", "encrypt"): (100, 100 * 4096)}),
    ("gcrypt-xts-decrypt", ["gcrypt_bench", "-d", "late", "aes-256-xts", "65536", "20"],
     {("gcrypt", "aes-256-xts", "decrypt"): (20, 20 * 65536)}),
    ("gcrypt-gcm", ["gcrypt_bench", "late", "aes-256-gcm", "1024", "64"],
     {("gcrypt", "aes-256-gcm", "encrypt"): (64, 64 * 1024)}),
    ("gnutls", ["gnutls_cipher_bench", "-n", "50", "late", "4096"],
     {("gnutls", "aes-128-cbc", "encrypt"): (50, 50 * 4096),
      ("gnutls", "aes-256-gcm", "encrypt"): (50, 50 * 4096)}),
]


def argv_of(words):
    return [ctlib.example(words[0])] + words[1:]


def bare(words):
    p = subprocess.run(argv_of(words), input=b"\n\n", stdout=subprocess.PIPE,
                       env=ctlib.bare_env(), timeout=120)
    check(p.returncode == 0, f"{words[0]} {' '.join(words[1:])}: the bare run ended 0")
    return p.stdout.decode()


def checksum(out):
    m = re.search(r"checksum=([0-9a-f]{8})", out)
    return m.group(1) if m else None


def data_paths(doc, pid):
    got = {}
    for proc in doc["processes"]:
        if proc["pid"] != pid:
            continue
        for p in proc.get("paths", []):
            if p["dir"] in ("encrypt", "decrypt") and p["calls"]:
                k = (p["api"], p["cipher"], p["dir"])
                c, b = got.get(k, (0, 0))
                got[k] = (c + p["calls"], b + p["bytes"])
                got[k + ("impl",)] = p.get("impl", "")
    return got


def one(tag, words, want):
    want_sum = checksum(bare(words))
    out = ctlib.tmpdir(f"attach-late-{tag}")
    prog = attach.Plain(argv_of(words), "ready", stdin=subprocess.PIPE, env=ctlib.bare_env())
    try:
        a = attach.Attach([prog.pid], out)
        prog.p.stdin.write(b"\n")
        prog.p.stdin.flush()
        said = attach.read_until(prog.p.stdout, "done", words[0], prog.p)
        rc, err = a.end()
        check(rc == 0 and f"detached from {prog.pid}" in err,
              f"{tag}: cryptrace attach ended 0 and detached ({rc}: {err.strip()[-300:]})")
        rest, _ = prog.p.communicate(input=b"\n", timeout=60)
        said += rest.decode(errors="replace")
        check(prog.p.returncode == 0, f"{tag}: the program ended 0 ({prog.p.returncode})")
    finally:
        prog.stop()
    check(checksum(said) == want_sum, f"{tag}: the outputs are the bare run's ({checksum(said)})")
    got = data_paths(ctlib.report_ok([out]), prog.pid)
    print(f"{tag}: {got}")
    for key, (calls, nbytes) in want.items():
        check(got.get(key) == (calls, nbytes),
              f"{tag}: a handle made before the attach, every call after it counted: {key} "
              f"{got.get(key)} == {(calls, nbytes)}")
        impl = got.get(key + ("impl",), "")
        check(impl.split(":")[0] == key[0] and impl != f"{key[0]}:unknown",
              f"{tag}: the code that ran is named ({impl})")
    extra = {k: v for k, v in got.items() if len(k) == 3 and k not in want}
    check(not extra, f"{tag}: no other data path ({extra})")


def test():
    attach.need_attach()
    for tag, words, want in CASES:
        one(tag, words, want)


ctlib.main(test)
