#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The always-on mode's per-file cap (max_file_bytes, docs/fleet.md) on a real per-call trace:
examples/selftimed makes about a million 64-byte AES-CTR calls in 0.3 s, in a spool whose
configuration says mode = calls. Without a cap its trace is far larger than 512 KiB (the
control: about 1.2 MB here); with max_file_bytes = 512K the file stays under the cap, reads as complete, counts
exactly the calls and bytes the program says it made, and says how many operations the cap kept
out of the timeline (dropped_ops, and a warning in the text report)."""
import json
import os

import ctlib
from ctlib import check

CAP = 512 * 1024


def run(tag, cap_line):
    top = ctlib.tmpdir(f"fleet-cap-{tag}")
    spool = os.path.join(top, "spool")
    os.mkdir(spool, 0o700)
    conf = os.path.join(top, "cryptrace.conf")
    with open(conf, "w") as f:
        f.write(f"spool = {spool}\nmode = calls\n{cap_line}\n")
    prog = ctlib.example("selftimed")
    argv = [prog, "-s", "0.3", "tight", "aes-128-ctr", "64"]
    p = ctlib.run(argv, env=ctlib.preload_env(None, CRYPTRACE_CONFIG=conf), text=True)
    check(p.returncode == 0, f"{tag}: selftimed ran (exit {p.returncode}) {p.stderr[:200]}")
    said = json.loads(p.stdout)
    files = ctlib.traces(os.path.join(spool, str(os.geteuid())))
    check(len(files) == 1, f"{tag}: one trace in the spool {files}")
    return said, files[0]


def test():
    said, path = run("uncapped", "")
    size = os.path.getsize(path)
    check(size > CAP * 3 // 2, f"without a cap the per-call trace is over {CAP * 3 // 2} bytes ({size})")
    said, path = run("capped", "max_file_bytes = 512K")
    size = os.path.getsize(path)
    check(size <= CAP, f"with max_file_bytes = 512K the file is {size} bytes")
    doc = ctlib.report_ok([path])
    procs = ctlib.processes(doc)
    check(len(procs) == 1 and procs[0].get("status") == "complete",
          f"the capped trace reads as complete {[q.get('status') for q in procs]}")
    calls, nbytes = ctlib.totals(doc)
    check((calls, nbytes) == (said["iterations"], said["bytes"]),
          f"calls and bytes exact under the cap: {calls}, {nbytes} (the program: "
          f"{said['iterations']}, {said['bytes']})")
    check(procs[0].get("dropped_ops", 0) > 0,
          f"the ops kept out of the timeline are counted ({procs[0].get('dropped_ops')})")
    text = ctlib.run([ctlib.CRYPTRACE, "report", path], text=True).stdout
    check("reached 3/4 of its cap" in text, "the text report says the cap stopped the timeline")


if __name__ == "__main__":
    ctlib.main(test)
