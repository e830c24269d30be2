#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Signals. (1) Crypto inside a signal handler: a 200 us SIGALRM timer whose handler encrypts
while main loops on another cipher for 2 s; the program's output and exit status are unchanged
and both ciphers' counts are exact. (2) SIGKILL at random moments (10 kills, CRYPTRACE_FLUSH_MS
=50): the program appends its running call count to a side file every 2 ms; after each kill the
reporter reads the trace (exit 0 or 1, never a crash), says it is not complete, and holds at
least the count the program had written one flush interval (plus 2 lines, see kills()) before its
last side-file line: the loss is at most one flush interval."""
import os
import random
import signal
import subprocess
import time

import ctlib
from ctlib import check

FLUSH_MS = 50
LINE_MS = 2


def in_handler():
    out = ctlib.tmpdir("sigalrm")
    prog = ctlib.built("CT_REL_BIN", "rel_prog")
    bare = subprocess.run([prog, "sigalrm", "2"], stdout=subprocess.PIPE, timeout=120)
    p = ctlib.run([prog, "sigalrm", "2"], env=ctlib.preload_env(out))
    check(p.returncode == bare.returncode == 0, f"exit 0 with and without the preload "
          f"({p.returncode}, {bare.returncode}) {p.stderr.decode()[:200]}")
    text = p.stdout.decode()
    print(text.strip())
    doc = ctlib.report_ok(ctlib.traces(out))
    exp = ctlib.parse_expect(text)
    # main's cipher: exact (the EVP fast path raises its guard before it reads the per-thread
    # context cache, so a handler's EVP call cannot re-point the interrupted call's counters)
    main_cbc = [e for e in exp if e[1] == "aes-128-cbc"][0]
    got = ctlib.totals(doc, cipher="aes-128-cbc", dir="encrypt")
    check(got == main_cbc[3:], f"main loop aes-128-cbc exact: report {got}, program {main_cbc[3:]}")
    # the handler's: a call that interrupts a hooked call is nested in it (recursion guard) and
    # passes through uncounted - documented; never more than the program made, all 16 bytes
    handler = [e for e in exp if e[1] == "aes-128-ctr"][0]
    got = ctlib.totals(doc, cipher="aes-128-ctr", dir="encrypt")
    check(got[0] <= handler[3] and got[1] == 16 * got[0],
          f"handler aes-128-ctr: {got[0]} of {handler[3]} calls counted, 16 bytes each ({got[1]})")
    check([q.get("status") for q in ctlib.processes(doc)] == ["complete"], "the trace is complete")


def kills(n):
    rng = random.Random(int(os.environ.get("CT_REL_SEED", "8")))
    prog = ctlib.built("CT_REL_BIN", "rel_prog")
    survived = 0
    for i in range(n):
        out = ctlib.tmpdir(f"kill{i}")
        side = os.path.join(out, "side.txt")
        env = ctlib.preload_env(out, CRYPTRACE_FLUSH_MS=FLUSH_MS)
        proc = subprocess.Popen([prog, "sidefile", side], env=env, stdout=subprocess.DEVNULL)
        # a random moment, after the program has run long enough for a few flush intervals
        time.sleep(0.25 + rng.random() * 0.5)
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait(timeout=60)
        check(proc.returncode == -signal.SIGKILL, f"kill {i}: the program died of SIGKILL")
        lines = [int(x) for x in open(side).read().split()]
        rc, doc, err = ctlib.report(ctlib.traces(out))
        check(rc in (0, 1) and doc is not None, f"kill {i}: the trace reads (exit {rc}) {err[:100]}")
        st = [q.get("status") for q in ctlib.processes(doc)]
        check(st and st[0] != "complete", f"kill {i}: not marked complete ({st})")
        calls, _ = ctlib.totals(doc, cipher="aes-128-cbc")
        # The same thread writes the side file (a line at least LINE_MS after the previous one)
        # and, from its hooked calls, the trace's snapshots, so time the process is not running
        # adds no lines and cannot widen the gap. lines[-1 - k] was written at least k * LINE_MS
        # before the last line: k = FLUSH_MS / LINE_MS is one interval (the snapshot the kill
        # left reads the counters at the start of a flush at most one interval before). The
        # 2-line margin (4 ms, 8 % of the interval) covers what the design adds to the interval:
        # the next deadline is set after the flush's write, and only a timed call (1 in 256
        # here) checks it. Measured: the loss reached 25 lines (one interval) in 190 kills, never
        # more. (This allowed 3 intervals before. Why it needed more than one: it compared with
        # lines[-25], 48 ms before the last line, not 50, so a kill just before a flush (a loss
        # of 25 lines, 2 kills in 190) failed a 1-interval check; nothing lost more.)
        back = FLUSH_MS // LINE_MS + 2
        floor = lines[-1 - back] if len(lines) > back else 0
        lost = sum(1 for n in lines if n > calls)
        check(floor <= calls, f"kill {i}: trace has {calls} calls; side file had {lines[-1]} "
              f"last, {floor} one flush interval (+2 lines) earlier; {lost} lines "
              f"({lost * LINE_MS} ms or more) ahead of the trace")
        survived += 1
    print(f"kills survived: {survived}, the loss at most one flush interval each")


def test():
    in_handler()
    kills(int(os.environ.get("CT_REL_KILLS", "10")))


if __name__ == "__main__":
    ctlib.main(test)
