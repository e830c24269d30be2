#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""contrib/systemd/: the export and prune services and their timers pass `systemd-analyze verify`
(with ExecStart pointed at this build's cryptrace, since the installed one may not be there);
the export service runs `cryptrace export --textfile-dir` every minute, the prune service
`cryptrace prune` every 10 minutes; each service's command line is one cryptrace accepts."""
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
    for name, words, every in (("export", " export --textfile-dir ", "1min"), ("prune", " prune", "10min")):
        service = open(os.path.join(UNITS, f"cryptrace-{name}.service")).read()
        execs = [ln for ln in service.splitlines() if ln.startswith("ExecStart=")]
        check(len(execs) == 1 and words in execs[0], f"the {name} service runs cryptrace{words}: {execs}")
        cmd = execs[0].split("=", 1)[1].split()
        with open(os.path.join(tmp, f"cryptrace-{name}.service"), "w") as f:
            f.write(service.replace(cmd[0], ctlib.CRYPTRACE))
        shutil.copy(os.path.join(UNITS, f"cryptrace-{name}.timer"), tmp)
        timer = open(os.path.join(tmp, f"cryptrace-{name}.timer")).read()
        check(f"OnUnitActiveSec={every}" in timer, f"the {name} timer fires every {every}")
        for unit in (f"cryptrace-{name}.service", f"cryptrace-{name}.timer"):
            p = ctlib.run([analyze, "verify", "--man=no", os.path.join(tmp, unit)], text=True)
            out = (p.stdout + p.stderr).strip()
            check(p.returncode == 0 and not out, f"systemd-analyze verify {unit}: clean" if not out else
                  f"systemd-analyze verify {unit}: {out[:400]}")
        # the command line parses: --help after the unit's own options
        p = ctlib.cryptrace(*(cmd[1:2] + ["--help"]), text=True)
        check(p.returncode == 0 and "usage: cryptrace " + name in p.stdout, f"cryptrace {name} --help")


ctlib.main(test)
