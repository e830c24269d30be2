#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Trace files are private (mode 0600) and the writer never follows a symlink planted at the
name it would use: the victim file stays untouched and the trace goes to another name."""
import os
import stat

import ctlib
from ctlib import check


def test():
    openssl = ctlib.need_program("openssl")
    out = ctlib.tmpdir("files")
    victim = os.path.join(ctlib.tmpdir("victim"), "victim")
    open(victim, "wb").write(b"untouched\n")
    os.chmod(victim, 0o644)
    # The shell plants the link at the name the preload will use once openssl (same pid,
    # comm "openssl") starts, then execs openssl.
    script = ('ln -s "$0" "$CRYPTRACE_OUT/openssl.$$.ctrace" && exec "$1" enc -aes-128-cbc '
              '-K 000102030405060708090a0b0c0d0e0f -iv 00000000000000000000000000000000 '
              '-in /etc/hostname -out /dev/null')
    p = ctlib.run_traced(["sh", "-c", script, victim, openssl], out)
    check(p.returncode == 0, f"the traced command ran ({p.stderr.decode().strip()[:200]})")
    check(open(victim, "rb").read() == b"untouched\n", "the symlink target is untouched")
    check(stat.S_IMODE(os.stat(victim).st_mode) == 0o644, "the target's mode is unchanged")
    links = [f for f in os.listdir(out) if os.path.islink(os.path.join(out, f))]
    check(len(links) == 1, "the planted symlink is still a symlink")
    files = [f for f in ctlib.traces(out) if not os.path.islink(f)]
    check(any(os.path.basename(f).startswith("openssl.") for f in files),
          f"openssl still wrote its trace under another name: {[os.path.basename(f) for f in files]}")
    for f in files:
        st = os.lstat(f)
        check(stat.S_ISREG(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o600,
              f"{os.path.basename(f)} is a regular file with mode 0600 ({oct(st.st_mode)})")
    doc = ctlib.report_ok(files)
    calls, _ = ctlib.totals(doc, api="evp", cipher="aes-128-cbc", dir="encrypt")
    check(calls > 0, f"the renamed trace holds openssl's work ({calls} calls)")
    # `cryptrace report DIR` must read the renamed trace too, or it would wrongly say that no
    # crypto calls were seen.
    doc = ctlib.report_ok([out])
    calls, _ = ctlib.totals(doc, api="evp", cipher="aes-128-cbc", dir="encrypt")
    check(calls > 0, f"report DIR includes the renamed trace ({calls} calls)")


ctlib.main(test)
