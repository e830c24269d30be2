#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`openssl enc` over a 64 MiB random file, with and without cryptrace: byte-identical output
and identical exit status, for aes-256-cbc and aes-128-ctr, both directions; the trace counts
every byte. aes-256-gcm: OpenSSL 3.0's enc refuses AEAD modes; the refusal must be identical
with and without cryptrace (and if a future enc accepts it, the output must be identical)."""
import os

import ctlib
from ctlib import check

SIZE = 64 << 20
KEY = "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
IV = "0f0e0d0c0b0a09080706050403020100"


def enc_argv(openssl, cipher, direction, src, dst):
    keylen = 32 if "256" in cipher else 16
    return [openssl, "enc", "-" + cipher, direction, "-K", KEY[: 2 * keylen], "-iv", IV,
            "-in", src, "-out", dst]


def compare(openssl, cipher, direction, src, work):
    native = os.path.join(work, f"{cipher}{direction}.native")
    traced = os.path.join(work, f"{cipher}{direction}.traced")
    out = ctlib.tmpdir("enc-trace")
    a = ctlib.run(enc_argv(openssl, cipher, direction, src, native))
    b = ctlib.run_traced(enc_argv(openssl, cipher, direction, src, traced), out)
    check(a.returncode == b.returncode,
          f"{cipher} {direction}: exit status {b.returncode} == native {a.returncode}")
    check(a.stdout == b.stdout and a.stderr == b.stderr,
          f"{cipher} {direction}: stdout/stderr identical")
    with open(native, "rb") as f1, open(traced, "rb") as f2:
        check(f1.read() == f2.read(), f"{cipher} {direction}: output byte-identical")
    return native, out


def test():
    openssl = ctlib.need_program("openssl")
    work = ctlib.tmpdir("enc")
    plain = os.path.join(work, "plain")
    with open(plain, "wb") as f:
        f.write(ctlib.plaintext(SIZE))

    for cipher in ("aes-256-cbc", "aes-128-ctr"):
        ct, out = compare(openssl, cipher, "-e", plain, work)
        doc = ctlib.report_ok([out])
        calls, nbytes = ctlib.totals(doc, api="evp", cipher=cipher, dir="encrypt")
        print(ctlib.describe_paths(doc))
        check(calls > 0 and nbytes == SIZE, f"{cipher} encrypt: trace counts {nbytes} == {SIZE} B")
        back, out = compare(openssl, cipher, "-d", ct, work)
        with open(back, "rb") as f1, open(plain, "rb") as f2:
            check(f1.read() == f2.read(), f"{cipher}: decrypting gives the plaintext back")
        doc = ctlib.report_ok([out])
        calls, nbytes = ctlib.totals(doc, api="evp", cipher=cipher, dir="decrypt")
        # CBC decryption input includes the final padding block.
        check(nbytes == os.path.getsize(ct), f"{cipher} decrypt: trace counts {nbytes} B")

    # AEAD through enc.
    gcm_native = os.path.join(work, "gcm.native")
    gcm_traced = os.path.join(work, "gcm.traced")
    a = ctlib.run(enc_argv(openssl, "aes-256-gcm", "-e", plain, gcm_native))
    b = ctlib.run_traced(enc_argv(openssl, "aes-256-gcm", "-e", plain, gcm_traced),
                         ctlib.tmpdir("gcm"))
    check(a.returncode == b.returncode, f"aes-256-gcm: exit status {b.returncode} == {a.returncode}")
    check(a.stdout == b.stdout and a.stderr == b.stderr, "aes-256-gcm: identical messages")
    if a.returncode != 0:
        print(f"note: this openssl enc refuses aes-256-gcm: {a.stderr.decode().strip()[:120]}")
    else:
        with open(gcm_native, "rb") as f1, open(gcm_traced, "rb") as f2:
            check(f1.read() == f2.read(), "aes-256-gcm: output byte-identical")


ctlib.main(test)
