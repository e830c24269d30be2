#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`cryptrace doctor` on the always-on set-up (tracer/doctor_fleet.c): with no configuration
file it adds no fleet check at all (a machine that does not use the mode is not told about it);
a good set-up (root's 0644 file, a root 1733 spool, an ld.so.preload naming the built library)
gives four ok checks; a bad one (a file others can write with an unknown key, a 0777 spool, a
user's directory pre-created by another, an ld.so.preload naming a missing library) fails each
and the doctor exits 1. The file in /etc/ld.so.preload's place is the test's own
(CRYPTRACE_LD_SO_PRELOAD): the host's is never touched."""
import json
import os

import ctlib
from ctlib import check


def doctor(conf, ldp):
    env = ctlib.bare_env(CRYPTRACE_CONFIG=conf, CRYPTRACE_LD_SO_PRELOAD=ldp)
    p = ctlib.run([ctlib.CRYPTRACE, "doctor", "--json"], env=env, text=True)
    doc = json.loads(p.stdout)
    return p.returncode, {c["id"]: c for c in doc["checks"] if c["id"].startswith("fleet:")}


def test():
    if os.geteuid() != 0:
        ctlib.skip("needs root: the doctor wants the configuration and the spool owned by root")
    top = ctlib.tmpdir("fleet-doctor")
    conf, spool, ldp = (os.path.join(top, n) for n in ("cryptrace.conf", "spool", "ld.so.preload"))

    _, fleet = doctor(conf, ldp)
    check(not fleet, f"no configuration file: no fleet check {list(fleet)}")

    os.mkdir(spool)
    os.chmod(spool, 0o1733)
    with open(conf, "w") as f:
        f.write(f"spool = {spool}\nexclude = */python3*\nmax_file_bytes = 16M\n")
    os.chmod(conf, 0o644)
    with open(ldp, "w") as f:
        f.write(f"{ctlib.CT_LIB}\n")
    _, fleet = doctor(conf, ldp)
    got = {k: c["status"] for k, c in fleet.items()}
    check(got == {"fleet:config": "ok", "fleet:spool": "ok", "fleet:spool-dirs": "ok",
                  "fleet:ld.so.preload": "ok"},
          f"a good set-up: config, spool and ld.so.preload ok {got}")
    check(fleet["fleet:config"]["values"].get("max_file_bytes") == 16 << 20,
          "the doctor shows the parsed cap")

    # a directory under uid 4242's name made by another user: 4242's processes go untraced
    os.mkdir(os.path.join(spool, "4242"), 0o700)
    os.chown(os.path.join(spool, "4242"), 65534, 65534)
    with open(conf, "a") as f:
        f.write("colour = blue\n")
    os.chmod(conf, 0o666)
    os.chmod(spool, 0o777)
    with open(ldp, "w") as f:
        f.write("/nonexistent/libcryptrace.so\n")
    rc, fleet = doctor(conf, ldp)
    got = {k: c["status"] for k, c in fleet.items()}
    check(got == {"fleet:config-owner": "fail", "fleet:config": "warn", "fleet:spool": "fail",
                  "fleet:spool-dirs": "fail", "fleet:ld.so.preload": "fail"},
          f"a bad set-up: each problem named {got}")
    check("4242: owned by another uid" in fleet["fleet:spool-dirs"]["evidence"],
          "the pre-created directory is named")
    check("line 4" in fleet["fleet:config"]["evidence"], "the ignored line is named")
    check(rc == 1, f"the doctor exits 1 on a failed check ({rc})")


if __name__ == "__main__":
    ctlib.main(test)
