#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`openvpn --test-crypto` with a static key, AES-128-CBC (+HMAC-SHA256) and AES-256-GCM, under
cryptrace. OpenVPN prints every packet length it encrypts and decrypts ("TESTING
ENCRYPT/DECRYPT of packet length=L"), which gives the exact counts:

  CBC: one EVP update per packet each way; encrypt bytes = sum(L + 8) (the 4-byte packet id and
       4-byte time of the long form go into the plaintext), decrypt bytes = sum of the padded
       ciphertexts, ((L + 8) // 16 + 1) * 16;
  GCM: the 4-byte packet id is additional authenticated data, the payload is data: per packet
       each way one data call of L bytes and one AAD update of 4 bytes, counted apart (the AAD
       phase, `aad_bytes`), never as data.

No warning, no error. Under OPENSSL_ia32cap masking AES-NI: software-aes naming the mask."""
import os
import re

import ctlib
from ctlib import check


def lengths(text):
    return [int(x) for x in re.findall(r"TESTING ENCRYPT/DECRYPT of packet length=(\d+)", text)]


def run(tmp, key, cipher, env, tag):
    argv = ["openvpn", "--test-crypto", "--secret", key, "--cipher", cipher, "--verb", "3"]
    if cipher.endswith("CBC"):
        argv += ["--auth", "SHA256"]
    p, doc, _ = ctlib.traced(f"openvpn-{tag}", argv, env=env)
    out = p.stdout.decode(errors="replace") + p.stderr.decode(errors="replace")
    check(p.returncode == 0 and "self-test mode SUCCEEDED" in out,
          f"{tag}: openvpn --test-crypto succeeded under cryptrace ({out[-200:]})")
    ls = lengths(out)
    check(len(ls) > 100, f"{tag}: openvpn printed its packet lengths ({len(ls)})")
    return doc, ls


def one_path(doc, cipher, direction):
    rows = ctlib.paths(doc, cipher=cipher, dir=direction)
    check(len(rows) == 1, f"one {cipher} {direction} path\n{ctlib.describe_paths(doc)}")
    return rows[0]


def test():
    openvpn = ctlib.need_program("openvpn")
    tmp = ctlib.tmpdir("real-openvpn")
    key = os.path.join(tmp, "static.key")
    p = ctlib.run([openvpn, "--genkey", "secret", key])
    check(p.returncode == 0, "openvpn --genkey secret")

    def cbc():
        doc, ls = run(tmp, key, "AES-128-CBC", dict(os.environ), "cbc")
        n = len(ls)
        enc, dec = one_path(doc, "aes-128-cbc", "encrypt"), one_path(doc, "aes-128-cbc", "decrypt")
        want_enc = sum(L + 8 for L in ls)
        want_dec = sum(((L + 8) // 16 + 1) * 16 for L in ls)
        check(enc["calls"] == n and enc["bytes"] == want_enc,
              f"CBC encrypt: {n} calls, {want_enc} bytes from openvpn's lengths "
              f"({enc['calls']}, {enc['bytes']})")
        check(dec["calls"] == n and dec["bytes"] == want_dec,
              f"CBC decrypt: {n} calls, {want_dec} padded bytes ({dec['calls']}, {dec['bytes']})")
        ctlib.check_complete(doc, "openvpn cbc")
        ctlib.check_clean(doc, "openvpn cbc")

    def gcm():
        doc, ls = run(tmp, key, "AES-256-GCM", dict(os.environ), "gcm")
        n = len(ls)
        data, aad = sum(ls), 4 * n
        for direction in ("encrypt", "decrypt"):
            p = one_path(doc, "aes-256-gcm", direction)
            # per packet one data update; its 4-byte packet id is AAD, counted apart
            aad_calls = sum(ph["calls"] for ph in p["phases"] if ph["phase"] == "aad")
            check(p["calls"] == n and p["bytes"] == data,
                  f"GCM {direction}: {n} data calls, {data} data bytes from openvpn's lengths "
                  f"({p['calls']}, {p['bytes']})")
            check(aad_calls == n and p["aad_bytes"] == aad,
                  f"GCM {direction}: {n} AAD updates, {aad} AAD bytes ({aad_calls}, {p['aad_bytes']})")
        ctlib.check_complete(doc, "openvpn gcm")
        ctlib.check_clean(doc, "openvpn gcm")

    def masked():
        if not ctlib.cpu_has_aes():
            print("skip masked case: this CPU has no AES-NI")
            return False
        for cipher, tag in (("AES-128-CBC", "cbc-masked"), ("AES-256-GCM", "gcm-masked")):
            doc, _ = run(tmp, key, cipher, ctlib.masked_env(), tag)
            ctlib.check_masked(doc, f"openvpn {tag}")

    ctlib.run_cases([("CBC", cbc), ("GCM", gcm), ("masked", masked)])


ctlib.main(test)
