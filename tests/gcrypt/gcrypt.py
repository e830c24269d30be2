#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""libgcrypt's cipher API traced (preload/hooks/gcrypt.c), on real programs:
  - examples/gcrypt_bench benchmark (cryptsetup benchmark's ciphers: AES-XTS 256 and 512,
    AES-CBC 128 and 256, AES-CTR 256 in place, AES-256-GCM with AAD and tags, each at 512 B,
    4 KiB and 64 KiB, encrypted then decrypted): one gcrypt path per cipher and direction with
    exactly the program's own calls and bytes (in place: the output's size), its key, IV, AAD
    and tag calls (a handle's set-ups before its first data call have no direction yet: they
    are checked per cipher), the libgcrypt code named from its hwflist per mode and direction
    (VAES where 1.10 gives the mode's bulk function to it); the same output (checksums of every
    ciphertext) and exit status with and without cryptrace; no warning. With --mode calls, one
    operation per data call.
  - gcrypt_bench failures: each refused call is a call-failed event with libgcrypt's words, the
    key's length (never its bytes) and the program's call site; the path counts the errors;
    nothing reads them as a failed offload.
  - gpg --symmetric --cipher-algo AES256 and gpg -d of a 3 MiB file: aes-256-cfb encrypt and
    decrypt paths of exactly the file's size plus OpenPGP's overhead (ctlib.gcrypt.gpg_overhead
    states it: 51 bytes plus the file name's length), no nothing-intercepted, no warning; the
    output decrypts to the file and gpg's exit status is the same as without cryptrace.
  - the same benchmark with intel-aesni in /etc/gcrypt/hwf.deny (a private overlay of /etc):
    every AES path named gcrypt:ssse3 (libgcrypt's software AES) and one software-aes warning
    naming the path, with hwf.deny's fix."""
import json
import os
import time

import ctlib
from ctlib import check
from ctlib.gcrypt import expected_impl, gpg_overhead, hwf_deny_wrap, hwflist

BENCH = os.path.join(ctlib.CT_EXAMPLES, "gcrypt_bench")
KEY = bytes((0xa7 ^ (i * 29)) & 0xff for i in range(64))
IV = bytes(0x3c ^ i for i in range(12))  # every test IV starts so (its last 4 bytes count)
PASSPHRASE = "Tz4-gcrypt-Pq8"


def bench_rows(stdout):
    """The benchmark's JSON lines, and the same without its own timings (to compare)."""
    rows = [json.loads(ln) for ln in stdout.decode().splitlines() if ln.startswith("{")]
    return rows, [{k: v for k, v in r.items() if k != "ns"} for r in rows]


def gcrypt_paths(doc, cipher=None):
    return [p for p in doc["paths"] if p["api"] == "gcrypt" and (cipher is None or p["cipher"] == cipher)]


def phases(paths):
    """A cipher's phase calls (and AAD bytes) over its paths: name -> [calls, bytes]."""
    out = {}
    for p in paths:
        for ph in p["phases"]:
            c = out.setdefault(ph["phase"], [0, 0])
            c[0] += ph["calls"]
            c[1] += ph["bytes"]
    return out


def check_bench(doc, rows, hwf, tag):
    print(ctlib.describe_paths(doc))
    undirected = [p["cipher"] for p in gcrypt_paths(doc) if p["dir"] not in ("encrypt", "decrypt")]
    check(not undirected, f"{tag}: a handle's set-ups before its first data call are folded into the "
          f"path that did the work, not a path of their own ({undirected})")
    for r in rows:
        name = f"{tag}: {r['cipher']} {r['dir']}"
        ps = [p for p in gcrypt_paths(doc, r["cipher"]) if p["dir"] == r["dir"]]
        check(len(ps) == 1, f"{name}: one path")
        p = ps[0]
        check(p["calls"] == r["calls"] and p["bytes"] == r["bytes"],
              f"{name}: {p['calls']} calls, {p['bytes']} bytes == the program's {r['calls']}, {r['bytes']}")
        check(p["key_bits"] == r["key_bits"], f"{name}: key bits {p['key_bits']} == {r['key_bits']}")
        want = expected_impl(hwf, r["cipher"], r["dir"] == "decrypt")
        if want:
            check(p["impl"] == want, f"{name}: libgcrypt's code named {p['impl']} (hwflist says {want})")
        tags = {ph["phase"]: ph["calls"] for ph in p["phases"]}.get("tag", 0)
        check(tags == r["tags"], f"{name}: {tags} tag calls == {r['tags']}")
        check(p["errors"] == 0, f"{name}: no errors")
    for cipher in sorted({r["cipher"] for r in rows}):
        mine = [r for r in rows if r["cipher"] == cipher]
        got = phases(gcrypt_paths(doc, cipher))
        want = {"init": [sum(r["opens"] for r in mine), 0], "key": [sum(r["key_setups"] for r in mine), 0],
                "message": [sum(r["iv_setups"] for r in mine), 0]}
        if any(r["aad_calls"] for r in mine):
            want["aad"] = [sum(r["aad_calls"] for r in mine), sum(r["aad_bytes"] for r in mine)]
        for ph, w in want.items():
            check(got.get(ph) == w, f"{tag}: {cipher} {ph} calls and bytes {got.get(ph)} == the program's {w}")


def test():
    if not os.path.exists(BENCH):
        ctlib.skip("examples/gcrypt_bench was not built (libgcrypt20-dev: tests/setup-deps.sh)")
    for n in (16, 32, 64):  # AES-128, AES-256 (and XTS-128), XTS-256 keys: the same bytes' prefixes
        ctlib.secret(f"gcrypt_bench {n}-byte key", KEY[:n])
    ctlib.secret("gcrypt_bench IV", IV)
    ctlib.secret("gpg passphrase", PASSPHRASE.encode())
    hwf = hwflist()
    print(f"libgcrypt {hwf}")

    def benchmark():
        bare = ctlib.run([BENCH, "benchmark"])
        p, doc, out = ctlib.traced("gcrypt-bench", [BENCH, "benchmark"])
        check(p.returncode == bare.returncode == 0, f"exit 0 with and without cryptrace "
              f"({p.returncode}, {bare.returncode}: {p.stderr[-200:]!r})")
        rows, same = bench_rows(p.stdout)
        check(same == bench_rows(bare.stdout)[1] and len(rows) == 12,
              "the same output (calls, bytes, checksums of every output) with and without cryptrace")
        check(p.stderr == bare.stderr, f"the same stderr ({p.stderr[-200:]!r})")
        check_bench(doc, rows, hwf, "benchmark")
        check("nothing-intercepted" not in ctlib.kinds(doc), "no nothing-intercepted")
        ctlib.check_complete(doc, "benchmark")
        ctlib.check_clean(doc, "benchmark")
        # per-call mode: every data call is an operation of its own
        out = ctlib.tmpdir("gcrypt-calls")
        pc = ctlib.run_traced([BENCH, "benchmark"], out, extra=["--mode", "calls"])
        check(pc.returncode == 0, "benchmark under --mode calls exits 0")
        doc = ctlib.report_ok([out])
        ops = sum(pr.get("per_call_ops") or 0 for pr in doc["processes"])
        want = sum(r["calls"] for r in rows)
        check(ops == want, f"--mode calls: {ops} operations recorded == the {want} data calls")

    def failures():
        bare = ctlib.run([BENCH, "failures"])
        p, doc, _ = ctlib.traced("gcrypt-failures", [BENCH, "failures"])
        check(p.returncode == bare.returncode == 0 and p.stdout == bare.stdout and p.stderr == bare.stderr,
              f"the same exit status and output with and without cryptrace ({p.stdout!r})")
        evs = {e["call"]: e for e in doc["events"] if e["kind"] == "call-failed"}
        for call, words, length in (("gcry_cipher_setkey", "Invalid key length", "len=15"),
                                    ("gcry_cipher_encrypt", "Invalid length", "len=100")):
            e = evs.get(call)
            check(e is not None, f"{call}: a call-failed event ({sorted(evs)})")
            check(words in e["detail"] and length in e["detail"] and "cipher=aes-256-cbc" in e["detail"],
                  f"{call}: the detail says the cipher, the length and libgcrypt's words: {e['detail']}")
            check(e["callsite"].startswith("gcrypt_bench!"),
                  f"{call}: the program's call site: {e['callsite'].splitlines()[0]}")
        ps = gcrypt_paths(doc, "aes-256-cbc")
        check(sum(x["errors"] for x in ps) == 2, f"the path counts both errors ({[x['errors'] for x in ps]})")
        check(not [f for f in doc["findings"] if f["severity"] in ("warning", "error")],
              f"a refused call is no failed offload ({ctlib.kinds(doc)})")

    def gpg():
        if ctlib.asan_runtime():
            print("skip gpg in the sanitizer pass: gpg hangs with the ASan runtime in LD_PRELOAD")
            return False
        if not (ctlib.need_program("gpg") and ctlib.need_program("gpgconf")):
            return False
        tmp = ctlib.tmpdir("gcrypt-gpg")
        src = os.path.join(tmp, "disk.img")
        with open(src, "wb") as f:
            f.write(ctlib.plaintext(3 * ctlib.MIB, "gpg plaintext"))
        home = os.path.join(tmp, "gnupg")
        os.mkdir(home, 0o700)
        env = dict(os.environ, GNUPGHOME=home)
        base = ["gpg", "--batch", "--pinentry-mode", "loopback", "--passphrase", PASSPHRASE,
                "--no-symkey-cache"]
        enc = os.path.join(tmp, "disk.img.gpg")
        want = os.path.getsize(src) + gpg_overhead("disk.img")
        steps = [("encrypt", ["--compress-algo", "none", "--symmetric", "--cipher-algo", "AES256",
                              "-o", enc, src]),
                 ("decrypt", ["-o", os.path.join(tmp, "disk.out"), "-d", enc])]
        for direction, args in steps:
            out = ctlib.tmpdir(f"gcrypt-gpg-{direction}")
            p = ctlib.run_traced(base + args, out, env=env)
            check(p.returncode == 0, f"gpg {direction} exited 0 ({p.stderr[-300:]!r})")
            ctlib.run(["gpgconf", "--kill", "gpg-agent"], env=env)
            deadline = time.monotonic() + 20
            while True:  # the agent gpg started ends after the kill: wait for its trace
                doc = ctlib.report_ok([out])
                if all(pr["status"] == "complete" for pr in doc["processes"]) or time.monotonic() > deadline:
                    break
                time.sleep(0.2)
            ctlib.check_complete(doc, f"gpg {direction}")
            ps = gcrypt_paths(doc)
            print(ctlib.describe_paths(doc))
            check(len(ps) == 1 and ps[0]["cipher"] == "aes-256-cfb" and ps[0]["dir"] == direction,
                  f"gpg {direction}: one aes-256-cfb {direction} path")
            check(ps[0]["bytes"] == want, f"gpg {direction}: {ps[0]['bytes']} bytes == the file's "
                  f"{os.path.getsize(src)} + OpenPGP's {want - os.path.getsize(src)}")
            check(ps[0]["key_bits"] == 256, "gpg: a 256-bit key")
            check("nothing-intercepted" not in ctlib.kinds(doc), f"gpg {direction}: no nothing-intercepted")
            ctlib.check_clean(doc, f"gpg {direction}")
        with open(src, "rb") as a, open(os.path.join(tmp, "disk.out"), "rb") as b:
            check(a.read() == b.read(), "gpg -d gives the file back")
        # gpg's own exit status and messages without cryptrace: the same
        bare = ctlib.run(base + ["-o", os.path.join(tmp, "bare.out"), "-d", enc], env=env)
        ctlib.run(["gpgconf", "--kill", "gpg-agent"], env=env)
        check(bare.returncode == 0, "gpg -d without cryptrace exits 0 too")

    def hwf_deny():
        if not ctlib.cpu_has_aes():
            print("skip the hwf.deny case: this CPU has no AES instructions")
            return False
        wrap = hwf_deny_wrap(ctlib.tmpdir("gcrypt-hwf"))
        if not wrap:
            return False
        denied = hwflist(wrap)
        check(denied and "intel-aesni" not in denied.split(":"), f"the overlay denies AES-NI ({denied})")
        out = ctlib.tmpdir("gcrypt-hwf-trace")
        p = ctlib.run(wrap + [ctlib.CRYPTRACE, "run", "-q", "-o", out, "--", BENCH, "benchmark"])
        check(p.returncode == 0, f"the benchmark runs under hwf.deny ({p.stderr[-200:]!r})")
        doc = ctlib.report_ok([out])
        rows, _ = bench_rows(p.stdout)
        check_bench(doc, rows, denied, "hwf.deny")
        impls = {x["impl"] for x in gcrypt_paths(doc)}
        check(impls == {"gcrypt:ssse3"} or "intel-ssse3" not in denied,
              f"every path runs libgcrypt's SSSE3 AES ({impls})")
        f = ctlib.finding(doc, "software-aes")
        check(f["severity"] == "warning" and "libgcrypt" in f["message"], f"software-aes: {f['message'][:300]}")
        check("api gcrypt impl gcrypt:" in f["evidence"], f"the evidence names the path: {f['evidence']}")
        check("/etc/gcrypt/hwf.deny" in f["fix"] and "intel-aesni" in f["fix"] and
              "GCRYCTL_DISABLE_HWF" in f["fix"], f"the fix is libgcrypt's: {f['fix']}")

    ctlib.run_cases([("benchmark", benchmark), ("failures", failures), ("gpg", gpg), ("hwf.deny", hwf_deny)])


ctlib.main(test)
