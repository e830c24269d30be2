#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""examples/gnutls_cipher_bench under cryptrace: GnuTLS's cipher API (CBC, GCM through
gnutls_cipher_*) and AEAD API (gnutls_aead_cipher_encrypt/decrypt, encryptv2/decryptv2), with the
program's own counts and clock.
  - exact: one gnutls path per cipher and direction, its calls and bytes the program's, the
    message, AAD and tag phases of gnutls_cipher GCM one per message, key bits and impl right;
    the damaged tag's refusal an event with its call site and GNUTLS_E_DECRYPTION_FAILED;
  - the same stdout and exit status with and without cryptrace;
  - time: the encrypt path's WALL plus its pauses per message against the program's batches
    (clock_gettime around ~1 ms batches, their mean without those a preemption stretched), within the report's stated 10 % (ctlib.truth's rule, shared with tests/truth:
    a case out of bound is run again, up to 5 times, judged by the median; this test runs alone);
  - no key, IV or plaintext bytes in the traces (the secrets scan at the end)."""
import json
import os

import ctlib
from ctlib import check
from ctlib.truth import judge_truth

KEY = bytes(range(0x40, 0x60))  # the example's fixed key
# (mode, size, iterations): ~0.1-0.3 s of encryptions each
CASES = [("cbc", 16, 1_000_000), ("cbc", 16384, 20_000), ("gcm", 1024, 100_000),
         ("aead", 16384, 10_000), ("aeadv", 4096, 40_000)]


def bench():
    try:
        return ctlib.built("CT_BUILD_ROOT", "examples/gnutls_cipher_bench")
    except ctlib.Failure as e:
        ctlib.skip(f"examples/gnutls_cipher_bench was not built (GnuTLS headers missing?): {e}")


def exact(doc, mode, size, n):
    enc = ctlib.paths(doc, api="gnutls", dir="encrypt")
    dec = ctlib.paths(doc, api="gnutls", dir="decrypt")
    cipher, bits = ("aes-128-cbc", 128) if mode == "cbc" else ("aes-256-gcm", 256)
    entry = "gnutls_cipher_*" if mode in ("cbc", "gcm") else "gnutls_aead_cipher_*"
    where = f"{mode} {size}: {ctlib.describe_paths(doc)}"
    check(len(enc) == 1 and len(dec) == 1, f"one path each way ({where})")
    dec_bytes = size + 16 if mode == "aead" else size
    dec_calls = n + 1 if mode == "aead" else n  # aead: the damaged tag's call too
    enc_calls = n
    for p, calls, nbytes in ((enc[0], enc_calls, enc_calls * size), (dec[0], dec_calls, dec_calls * dec_bytes)):
        check(p["cipher"] == cipher and p["key_bits"] == bits and p["entry"] == entry,
              f"{p['dir']}: {cipher} {bits} {entry} ({p['cipher']} {p['key_bits']} {p['entry']})")
        check(p["calls"] == calls and p["bytes"] == nbytes,
              f"{mode} {size} {p['dir']}: calls {p['calls']} == {calls}, bytes {p['bytes']} == {nbytes}")
        check(not p["io_wait"], f"{p['dir']}: a cipher path does not wait for a peer")
        if mode == "gcm":
            ph = {x["phase"]: x for x in p.get("phases", [])}
            check(ph.get("message", {}).get("calls") and ph["message"]["calls"] + 0 >= 1 and
                  ph.get("aad", {}).get("bytes") is not None and ph.get("tag", {}).get("calls"),
                  f"gcm {p['dir']}: IV, AAD and tag phases counted ({sorted(ph)})")
    if mode == "gcm":  # set_iv, add_auth and tag of all 2n messages, on the path of their direction
        tot = {k: sum(x["calls"] for p in enc + dec for x in p.get("phases", []) if x["phase"] == k)
               for k in ("message", "aad", "tag")}
        aad = sum(x["bytes"] for p in enc + dec for x in p.get("phases", []) if x["phase"] == "aad")
        check(tot == {"message": 2 * n, "aad": 2 * n, "tag": 2 * n} and aad == 2 * n * 13,
              f"gcm: 2n IVs, AADs (13 B each) and tags ({tot}, {aad} AAD bytes)")
    if mode == "aead":
        ev = [e for e in doc.get("events", []) if e["kind"] == "call-failed" and
              e.get("call") == "gnutls_aead_cipher_decrypt"]
        check(ev and "GNUTLS_E_DECRYPTION_FAILED" in ev[0]["detail"] and ev[0].get("callsite"),
              f"the damaged tag is a call-failed event with its call site ({ev})")
        check(dec[0]["errors"] == 1, f"aead decrypt: one error ({dec[0]['errors']})")


def test():
    prog = bench()
    ctlib.secret("gnutls_cipher_bench key", KEY)
    ctlib.secret("gnutls_cipher_bench plaintext", bytes((i * 7) & 0xff for i in range(64)))
    for mode, size, n in CASES:
        argv = [prog, "-n", str(n), mode, str(size)]
        plain = ctlib.run(argv)
        check(plain.returncode == 0, f"{mode} {size}: runs untraced ({plain.stderr[-200:]!r})")
        first = [True]

        def measure():
            tmp = ctlib.tmpdir("gnutls-bench")
            tf = os.path.join(tmp, "time.json")
            p, doc, _ = ctlib.traced(f"{mode} {size}", [prog, "-n", str(n), "-t", tf, mode, str(size)])
            if first[0]:
                first[0] = False
                check(p.returncode == plain.returncode and p.stdout == plain.stdout,
                      f"{mode} {size}: same stdout and exit status traced ({p.stdout!r} vs {plain.stdout!r})")
                exact(doc, mode, size, n)
                ctlib.check_clean(doc, f"{mode} {size}")
            with open(tf) as f:
                truth = json.load(f)
            enc = ctlib.paths(doc, api="gnutls", dir="encrypt")[0]
            mine = (enc["wall_ns"] + (enc.get("pause_ns") or 0)) / n
            detail = (f"report {mine:.1f} ns/message, program {truth['robust_ns_per_message']:.1f} "
                      "ns/message")
            print(f"{mode} {size}: {detail}")
            return mine / truth["robust_ns_per_message"], detail

        judge_truth(f"{mode} {size}", measure)

ctlib.main(test)
