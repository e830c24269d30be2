#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""16 threads of EVP work (three ciphers, context copies, frees and resets) plus kernel-interface
calls (a stand-in /dev/crypto and refused AF_ALG sockets) for --seconds (2 in CI, 10 for the
stress variant): the program finishes (its watchdog kills it on a deadlock), and the report's
calls and bytes equal the program's own counts exactly, per cipher and for /dev/crypto."""
import argparse
import os
import re
import signal

import ctlib
from ctlib import check

FAKE_CDEV = os.environ.get("CT_FAKE_CDEV", "")


def test():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=2)
    ap.add_argument("--threads", type=int, default=16)
    args = ap.parse_args()
    out = ctlib.tmpdir("threads")
    env = ctlib.preload_env(out, preload=[FAKE_CDEV] if FAKE_CDEV else [])
    p = ctlib.run([ctlib.built("CT_REL_BIN", "rel_threads"), str(args.seconds), str(args.threads)], env=env)
    text = p.stdout.decode()
    check(p.returncode != -signal.SIGALRM, "no deadlock (the watchdog did not fire)")
    check(p.returncode == 0, f"rel_threads exit 0 ({p.returncode}) {p.stderr.decode()[:300]}")
    print(text.strip())
    doc = ctlib.report_ok(ctlib.traces(out))
    ctlib.check_expect(doc, text)
    m = re.search(r"cryptodev_crypts=(\d+) cryptodev_bytes=(\d+) cryptodev_failed=(\d+)", text)
    crypts, nbytes, failed = int(m.group(1)), int(m.group(2)), int(m.group(3))
    if FAKE_CDEV:
        check(crypts > 0, f"the stand-in /dev/crypto answered ({crypts} CIOCCRYPT)")
        check(failed * 4 == crypts, f"one refused CIOCCRYPT in four ({failed} of {crypts})")
    got = ctlib.totals(doc, api="cryptodev")
    check(got == (crypts, nbytes), f"cryptodev: report {got}, program ({crypts}, {nbytes})")
    errors = sum(p.get("errors", 0) for p in ctlib.paths(doc, api="cryptodev"))
    check(errors == failed, f"cryptodev errors: report {errors}, program {failed}")
    st = [q.get("status") for q in ctlib.processes(doc)]
    check(st == ["complete"], f"one complete process ({st})")


ctlib.main(test)
