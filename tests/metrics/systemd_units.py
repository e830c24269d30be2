#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""contrib/systemd/: the export service and its timer pass `systemd-analyze verify` (with
ExecStart pointed at this build's cryptrace, since the installed one may not be there), the
service runs `cryptrace export --textfile-dir`, and the timer fires every minute."""
import os
import shutil

import ctlib
from ctlib import check

UNITS = os.path.join(ctlib.SRC_ROOT, "contrib", "systemd")


def test():
    analyze = shutil.which("systemd-analyze")
    if not analyze:
        ctlib.skip("systemd-analyze is not installed")
    tmp = ctlib.tmpdir("units")
    service = open(os.path.join(UNITS, "cryptrace-export.service")).read()
    execs = [ln for ln in service.splitlines() if ln.startswith("ExecStart=")]
    check(len(execs) == 1 and " export --textfile-dir " in execs[0], f"the service runs cryptrace export: {execs}")
    cmd = execs[0].split("=", 1)[1].split()
    local = service.replace(cmd[0], ctlib.CRYPTRACE)
    with open(os.path.join(tmp, "cryptrace-export.service"), "w") as f:
        f.write(local)
    shutil.copy(os.path.join(UNITS, "cryptrace-export.timer"), tmp)
    timer = open(os.path.join(tmp, "cryptrace-export.timer")).read()
    check("OnUnitActiveSec=1min" in timer, "the timer fires every minute")
    for unit in ("cryptrace-export.service", "cryptrace-export.timer"):
        p = ctlib.run([analyze, "verify", "--man=no", os.path.join(tmp, unit)], text=True)
        out = (p.stdout + p.stderr).strip()
        check(p.returncode == 0 and not out, f"systemd-analyze verify {unit}: clean" if not out else
              f"systemd-analyze verify {unit}: {out[:400]}")
    p = ctlib.cryptrace("export", "--help", text=True)
    check(p.returncode == 0 and "--textfile-dir" in p.stdout, "cryptrace export --help names --textfile-dir")


ctlib.main(test)
