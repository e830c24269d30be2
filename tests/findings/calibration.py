#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The AES-NI bound at trace time without the launcher (preload/calib.c):
  cryptrace run -- calib_evp plain     -> the header has the launcher's bound; the process
                                          measures none of its own
  LD_PRELOAD only: calib_evp plain     -> no header bound; the process measured one after its first
                                          AES path (PROC aesni_cpb_milli_in_process), and it is an
                                          AES-NI figure (under 1.5 cycles/byte, where the same CPU
                                          masked to software AES runs about 4)
  LD_PRELOAD only: calib_evp seccomp   -> in a seccomp filter mode: never measured
  LD_PRELOAD only: calib_evp none      -> no AES work: never measured (never paid for)
  LD_PRELOAD only, OPENSSL_ia32cap mask on openssl speed
                                       -> software-aes, its evidence naming the bound measured
                                          inside the traced process
Skips (77) on a CPU without AES-NI (nothing to measure) or without a TSC clock."""
import os

import ctlib
from ctlib import check

PROG = os.path.join(os.environ.get("CT_FINDINGS_BIN", ""), "calib_evp")


def bare(tag, argv, env_extra=None):
    out = ctlib.tmpdir(f"calib-{tag}")
    env = ctlib.preload_env(out)
    env.pop("CRYPTRACE_AESNI_CPB", None)
    env.update(env_extra or {})
    p = ctlib.run(argv, env=env)
    check(p.returncode == 0, f"{tag}: exits 0 under the bare preload ({p.returncode}: "
                             f"{p.stderr.decode()[-200:]})")
    doc = ctlib.report_ok([out])
    check(len(doc["processes"]) == 1, f"{tag}: one process")
    return doc, doc["processes"][0]


def test():
    if "aes" not in open("/proc/cpuinfo").read().split():
        ctlib.skip("this CPU has no AES-NI: there is no bound to measure")
    check(os.access(PROG, os.X_OK), f"{PROG} is built")

    out = ctlib.tmpdir("calib-run")
    p = ctlib.run_traced([PROG, "plain"], out)
    check(p.returncode == 0 and p.stdout == b"ok 2000\n", f"calib_evp runs ({p.stdout!r})")
    q = ctlib.report_ok([out])["processes"][0]
    if not q["tsc_hz"]:
        ctlib.skip("the trace's clock is not the TSC here: the bound is in TSC cycles")
    check(q["aesni_cpb_milli"] > 0 and q["aesni_cpb_milli_in_process"] == 0,
          f"cryptrace run: the launcher's bound ({q['aesni_cpb_milli']}), none measured inside "
          f"({q['aesni_cpb_milli_in_process']})")

    doc, q = bare("plain", [PROG, "plain"])
    m = q["aesni_cpb_milli_in_process"]
    check(q["aesni_cpb_milli"] == 0, "bare preload: no bound in the header")
    check(0 < m < 1500, f"bare preload: the process measured an AES-NI bound, {m / 1000:.3f} "
                        "cycles/byte")

    doc, q = bare("seccomp", [PROG, "seccomp"])
    status = open("/proc/self/status").read()
    check("Seccomp:" in status, "this kernel reports Seccomp in /proc/self/status")
    check(q["aesni_cpb_milli_in_process"] == 0 and ctlib.totals(doc)[0] == 2000,
          f"seccomp: the 2000 calls traced, no bound measured ({q['aesni_cpb_milli_in_process']})")

    doc, q = bare("none", [PROG, "none"])
    check(q["aesni_cpb_milli_in_process"] == 0, "no AES work: nothing measured")

    openssl = ctlib.need_program("openssl")
    doc, q = bare("masked", [openssl, "speed", "-seconds", "1", "-bytes", "16384", "-evp",
                             "aes-128-ctr"], {"OPENSSL_ia32cap": ctlib.MASK})
    sw = [f for f in doc["findings"] if f["kind"] == "software-aes"]
    check(sw and "measured inside the traced process" in sw[0]["evidence"] and
          q["aesni_cpb_milli_in_process"] > 0,
          f"masked, bare preload: software-aes against the in-process bound "
          f"({sw[0]['evidence'] if sw else [f['kind'] for f in doc['findings']]})")


ctlib.main(test)
