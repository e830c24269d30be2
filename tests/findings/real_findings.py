#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The [findings] must-show on this host, on real programs under cryptrace, asserted on
`cryptrace report --json` findings[].kind:
  openssl speed -engine afalg -evp aes-128-cbc          -> engine-failed + silent-fallback
  OPENSSL_ia32cap=~0x200000200000000 openssl speed -evp -> software-aes naming the mask
  openssl speed aes-128-cbc (no -evp)                   -> lowlevel-api
  clean openssl speed -evp aes-128-cbc, openssl enc     -> nothing of warning severity or above
  examples/kernel/cryptodev_bench --fallback (no /dev/crypto here) -> silent-fallback
Each case is skipped (whole test exit 77 if all are) when its premise does not hold here: AF_ALG
that works, /dev/crypto present, a CPU without AES-NI."""
import os

import ctlib
from ctlib import check

SEVERE = ("warning", "error")


def traced(tag, argv, env=None):
    out = ctlib.tmpdir(f"find-{tag}")
    p = ctlib.run_traced(argv, out, env=env)
    doc = ctlib.report_ok([out])
    kinds = [(f["kind"], f["severity"]) for f in doc["findings"]]
    print(f"{tag}: exit {p.returncode}, findings {kinds}")
    return p, doc


def kinds(doc):
    return {f["kind"] for f in doc["findings"]}


def test():
    openssl = ctlib.need_program("openssl")
    ran = 0
    speed = [openssl, "speed", "-seconds", "1"]

    refused = ctlib.afalg_refused()
    if refused:
        _, doc = traced("afalg", speed + ["-engine", "afalg", "-evp", "aes-128-cbc"])
        k = kinds(doc)
        check("engine-failed" in k, "afalg engine refused: engine-failed")
        check("silent-fallback" in k, "afalg engine refused: silent-fallback")
        ef = next(f for f in doc["findings"] if f["kind"] == "engine-failed")
        # the reason is the refused socket(AF_ALG) itself, with the errno this kernel gives
        # (EAFNOSUPPORT here), not just "could not be loaded", which every engine-failed says
        check(f"socket -> {refused}" in ef["evidence"],
              f"engine-failed evidence has socket -> {refused}: {ef['evidence'][:200]}")
        check("family=AF_ALG" in ef["message"] and f"failed with {refused}" in ef["message"],
              f"engine-failed says socket(AF_ALG) failed with {refused}: {ef['message'][:300]}")
        ran += 1
    else:
        print("skip afalg case: this kernel accepts AF_ALG sockets")

    if ctlib.cpu_has_aes():
        env = ctlib.masked_env()
        _, doc = traced("masked", speed + ["-evp", "aes-128-cbc"], env=env)
        sw = [f for f in doc["findings"] if f["kind"] == "software-aes"]
        check(sw, "OPENSSL_ia32cap mask: software-aes")
        check(ctlib.MASK in sw[0]["message"],
              f"software-aes names the mask: {sw[0]['message'][:300]}")
        ran += 1

        _, doc = traced("clean-speed", speed + ["-evp", "aes-128-cbc"])
        bad = [f["kind"] for f in doc["findings"] if f["severity"] in SEVERE]
        check(not bad, f"clean openssl speed -evp: no warning or error ({bad})")
        ran += 1
    else:
        print("skip software-aes and clean-speed cases: this CPU has no AES-NI")

    _, doc = traced("lowlevel", speed + ["aes-128-cbc"])
    check("lowlevel-api" in kinds(doc), "openssl speed without -evp: lowlevel-api")
    ran += 1

    tmp = ctlib.tmpdir("find-enc")
    plain = os.path.join(tmp, "plain")
    with open(plain, "wb") as f:
        f.write(ctlib.plaintext(1 << 20))
    p, doc = traced("clean-enc", [openssl, "enc", "-aes-256-cbc", "-pbkdf2", "-pass", "pass:x",
                                  "-in", plain, "-out", os.path.join(tmp, "cipher")])
    check(p.returncode == 0, "openssl enc exited 0")
    _, paths_bytes = ctlib.totals(doc, cipher="aes-256-cbc", dir="encrypt")
    check(paths_bytes >= 1 << 20, f"openssl enc: aes-256-cbc encrypt path has the MiB ({paths_bytes})")
    bad = [f["kind"] for f in doc["findings"] if f["severity"] in SEVERE]
    check(not bad, f"clean openssl enc: no warning or error ({bad})")
    ran += 1

    bench = os.path.join(ctlib.CT_EXAMPLES, "kernel", "cryptodev_bench")
    if os.path.exists("/dev/crypto"):
        print("skip cryptodev --fallback case: /dev/crypto exists here")
    else:
        check(os.access(bench, os.X_OK), f"{bench} is built (examples/kernel, always)")
        p, doc = traced("cryptodev-fallback", [bench, "--fallback", "--count", "1000"])
        check(p.returncode == 0, "cryptodev_bench --fallback exited 0 (ran in software)")
        check("silent-fallback" in kinds(doc),
              f"no /dev/crypto + --fallback: silent-fallback ({sorted(kinds(doc))})")
        sf = next(f for f in doc["findings"] if f["kind"] == "silent-fallback")
        check("/dev/crypto" in sf["message"] + sf["evidence"] or "ENOENT" in sf["evidence"],
              f"silent-fallback names the failed open: {sf['evidence'][:200]}")
        ran += 1
    if not ran:
        ctlib.skip("no case could run here")


ctlib.main(test)
