#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`openssl speed -seconds 1 -multi 2 -evp aes-128-cbc`: the parent and each forked worker
write their own trace, and the merged report's calls are the sum of the counts the workers
print ("+R:N:AES-128-CBC:..." lines on stderr)."""
import re

import ctlib
from ctlib import check


def test():
    openssl = ctlib.need_program("openssl")
    out = ctlib.tmpdir("multi")
    p = ctlib.run_traced([openssl, "speed", "-seconds", "1", "-bytes", "16", "-multi", "2",
                          "-evp", "aes-128-cbc"], out)
    check(p.returncode == 0, "openssl speed -multi 2 exited 0 under cryptrace")
    counts = [int(n) for n in re.findall(r"^\+R:(\d+):AES-128-CBC:", p.stderr.decode(), re.M)]
    check(len(counts) == 2, f"two workers reported counts ({counts})")
    files = ctlib.traces(out)
    check(len(files) >= 3, f"one trace per process: {len(files)} files for parent + 2 workers")
    doc = ctlib.report_ok([out])
    print(ctlib.describe_paths(doc))
    procs = doc.get("processes", [])
    parent = [q for q in procs if "-multi" in q.get("argv", []) and
              q.get("ppid") not in [r.get("pid") for r in procs]]
    check(len(parent) == 1, "exactly one parent openssl process in the report")
    workers = [q for q in procs if q.get("ppid") == parent[0].get("pid")]
    check(len(workers) == 2, f"two worker processes are children of the parent ({len(workers)})")
    calls, nbytes = ctlib.totals(doc, api="evp", cipher="aes-128-cbc", dir="encrypt")
    check(calls == sum(counts), f"merged calls {calls} == sum of workers' counts {sum(counts)}")
    check(nbytes == 16 * sum(counts), f"merged bytes {nbytes} == 16 * {sum(counts)}")
    # The merge must also keep each worker's own figures (a worker's total also holds its
    # DRBG's work, so it is at least that worker's printed count).
    per_worker = sorted(sum(pp.get("calls", 0) for pp in w.get("paths", [])) for w in workers)
    check(all(w >= c for w, c in zip(per_worker, sorted(counts))),
          f"per-process calls {per_worker} cover the workers' counts {sorted(counts)}")


ctlib.main(test)
