#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The preload's fatal-signal handler (preload/signals.c) changes nothing a program can see, and
a process ended by a default action keeps its counts. rel_signals.c runs each scenario; every
one runs without and with the preload (CRYPTRACE_FLUSH_MS of one hour: no periodic snapshot, so
the counts come from the last write before the end):

  - query: every disposition the program reads back (sigaction flags, masks and restorer, the
    signal() family's return values, act aliasing old, sigset/SIG_HOLD, what an exec'd child
    inherits: SIG_IGN stays, a handler reverts to SIG_DFL) prints the same;
  - die SIG (TERM, INT, HUP, QUIT, PIPE): four threads encrypt, one of them takes the signal;
    the same wait status (termination signal, and a core for SIGQUIT where one can be dumped),
    and a complete trace ending with that signal that holds every call;
  - epipe (the kernel's own SIGPIPE), reraise (the program's handler, then SIG_DFL and raise):
    the same, ended by that signal;
  - handled, signalfd, sigwait: the program's handler runs, a blocked signal is read by the
    program: exit 0, same output, complete trace ending with exit 0, exact;
  - vfork: the vfork child is killed before its exec, the parent goes on: same output, the
    parent's trace complete and exact; fork: the fork child's trace ends with the signal, exact;
  - main-exit: main calls pthread_exit while the flusher thread runs: the process still ends,
    with status 0, when its last thread returns;
  - namespaces: setns() into its own mount namespace and unshare(CLONE_NEWUSER), which the
    kernel refuses to a process with threads, succeed under the preload as without it, in the
    process (whose flusher thread runs) and in a fork child (whose flusher the fork handler
    started);
  - storm: 60 runs of a thread setting up contexts in a loop (an event, under the preload's
    events lock, each time) while the flusher writes every 10 ms, sent SIGTERM after 1-20 ms:
    some land inside the preload's writer (a handler that flushed there anyway waited for
    itself and lost the END in 6 of 60 runs); every run must end by SIGTERM with END;
  - sandbox prctl|tsync: a filter like OpenSSH's pre-auth sandbox (no rt_sigaction, tgkill or
    rt_sigreturn) installed through prctl and through seccomp(2) with TSYNC; SIGTERM must end it
    as SIGTERM (the preload stepped aside), not as SIGSYS (skipped under ASan: its runtime makes
    system calls of its own)."""
import os
import resource
import signal
import subprocess

import ctlib
from ctlib import check, tlsecho

NO_PERIODIC_MS = str(3600 * 1000)
CAUGHT = (signal.SIGTERM, signal.SIGINT, signal.SIGHUP, signal.SIGQUIT, signal.SIGPIPE)


def cores_on():
    soft, hard = resource.getrlimit(resource.RLIMIT_CORE)
    resource.setrlimit(resource.RLIMIT_CORE, (hard, hard))
    # the default action of every signal under test, whatever the test was started from: a shell
    # starts a background job with SIGINT and SIGQUIT ignored, and an ignored signal stays ignored
    # across exec (Python resets SIGINT for its children; SIGQUIT it leaves as it found it)
    for sig in CAUGHT:
        signal.signal(sig, signal.SIG_DFL)


def start(args, out, cwd=None):
    env = ctlib.preload_env(out, CRYPTRACE_FLUSH_MS=NO_PERIODIC_MS) if out else ctlib.bare_env()
    return subprocess.Popen([ctlib.built("CT_REL_BIN", "rel_signals")] + args, env=env, cwd=cwd,
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, preexec_fn=cores_on)


def finish(p):
    """(raw wait status, output) of a process started by start()."""
    text = p.stdout.read().decode(errors="replace")  # until the process (and its children) end
    _, status = os.waitpid(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    return status, text


def both(args, tag):
    """Runs args without and with the preload (in a fresh directory, which core files may land
    in); returns ((status, output) bare, (status, output) traced, trace directory)."""
    bare = finish(start(args, None, cwd=ctlib.tmpdir(f"{tag}-bare")))
    out = ctlib.tmpdir(tag)
    traced = finish(start(args, out, cwd=ctlib.tmpdir(f"{tag}-cwd")))
    return bare, traced, out


def describe(status):
    if os.WIFSIGNALED(status):
        sig = signal.Signals(os.WTERMSIG(status)).name
        return f"{sig}{' (core dumped)' if os.WCOREDUMP(status) else ''}"
    return f"exit {os.WEXITSTATUS(status)}"


def same_end(bare, traced, what):
    check(bare[0] == traced[0], f"{what}: ends the same with and without cryptrace "
          f"({describe(traced[0])}; without: {describe(bare[0])})")


def the_trace(out, ending, what, pid=None):
    """The report of out; the process (pid, else the only one) ends as `ending` ("exit 0",
    "signal 15"), complete."""
    doc = ctlib.report_ok(ctlib.traces(out))
    procs = [q for q in ctlib.processes(doc) if pid is None or q.get("pid") == pid]
    check(len(procs) == 1, f"{what}: one trace ({[q.get('pid') for q in ctlib.processes(doc)]})")
    q = procs[0]
    got = f"{q.get('end_reason')} {q.get('exit_status')}"
    check(q.get("status") == "complete" and got == ending,
          f"{what}: trace complete, ended by {ending} ({q.get('status')}, {got})")
    return doc


def query():
    self = ctlib.built("CT_REL_BIN", "rel_signals")
    bare, traced, out = both(["query", self], "query")
    check(bare[0] == traced[0] == 0, f"query: exit 0 ({describe(traced[0])}, {describe(bare[0])})")
    check(bare[1] == traced[1], "query: what the program sees of its signals is the same with and "
          "without cryptrace:\n" + "\n".join(
              f"  {a!r} | {b!r}" for a, b in zip(bare[1].splitlines(), traced[1].splitlines())
              if a != b))
    doc = ctlib.report_ok(ctlib.traces(out))
    check(sorted((q.get("status"), q.get("end_reason")) for q in ctlib.processes(doc)) ==
          [("complete", "exec"), ("complete", "exit")],
          f"query: the program (END exec) and its exec'd child (END exit) "
          f"{[(q.get('status'), q.get('end_reason')) for q in ctlib.processes(doc)]}")


def dies(args, sig, what):
    bare, traced, out = both(args, what.replace(" ", "-"))
    same_end(bare, traced, what)
    check(os.WIFSIGNALED(traced[0]) and os.WTERMSIG(traced[0]) == sig,
          f"{what}: ended by {sig.name} ({describe(traced[0])})")
    doc = the_trace(out, f"signal {int(sig)}", what)
    ctlib.check_expect(doc, traced[1], f"{what}: ")
    return bare, traced


def default_actions():
    cored = False
    for sig in CAUGHT:
        bare, _ = dies(["die", str(int(sig))], sig, f"die {sig.name}")
        cored |= os.WCOREDUMP(bare[0])
    print("die: TERM INT HUP QUIT PIPE end the same with and without, traces complete and exact; "
          f"{'a core was dumped for SIGQUIT both times' if cored else 'no core dumps here (RLIMIT_CORE hard limit or core_pattern): compared without'}")
    dies(["epipe"], signal.SIGPIPE, "epipe")
    _, traced = dies(["reraise", "15"], signal.SIGTERM, "reraise")
    check("handler: cleaning up" in traced[1], f"reraise: the program's handler ran: {traced[1]!r}")


def goes_on():
    for args, what in ((["handled", "15"], "handled"), (["signalfd"], "signalfd"),
                       (["sigwait"], "sigwait"), (["main-exit"], "main-exit")):
        bare, traced, out = both(args, what)
        same_end(bare, traced, what)
        check(traced[0] == 0 and bare[1] == traced[1],
              f"{what}: exit 0 and the same output ({traced[1]!r}, {bare[1]!r})")
        doc = the_trace(out, "exit 0", what)
        ctlib.check_expect(doc, traced[1], f"{what}: ")
    print("handled, signalfd, sigwait, main-exit: the program's own handling, unchanged")


def children():
    bare, traced, out = both(["vfork", "15"], "vfork")
    check(traced[0] == bare[0] == 0 and bare[1] == traced[1] and
          "vfork child: signal Terminated" in traced[1], f"vfork: same output {traced[1]!r}")
    ctlib.check_expect(the_trace(out, "exit 0", "vfork parent"), traced[1], "vfork parent: ")
    bare, traced, out = both(["fork", "1"], "fork")
    check(traced[0] == bare[0] == 0 and bare[1] == traced[1] and
          "fork child: signal Hangup" in traced[1], f"fork: same output {traced[1]!r}")
    doc = ctlib.report_ok(ctlib.traces(out))
    kids = [q for q in ctlib.processes(doc) if q.get("end_reason") == "signal"]
    check(len(kids) == 1, f"fork: the child's trace ends with the signal ({len(kids)})")
    the_trace(out, "signal 1", "fork child", kids[0]["pid"])
    ctlib.check_expect(doc, traced[1], "fork child: ")
    print("vfork, fork: children killed, parents go on, traces exact")


def namespaces():
    bare, traced, out = both(["namespaces"], "namespaces")
    if bare[1].count(" ok") != 4:
        print(f"SKIP part: namespaces: refused without cryptrace too: {bare[1]!r}")
        return
    check(traced[0] == 0 and bare[1] == traced[1],
          f"namespaces: the same with and without cryptrace ({traced[1]!r}, {bare[1]!r})")
    doc = ctlib.report_ok(ctlib.traces(out))
    check([q.get("status") for q in ctlib.processes(doc)] == ["complete"] * 2,
          f"namespaces: both traces complete ({[q.get('status') for q in ctlib.processes(doc)]})")
    ctlib.check_expect(doc, traced[1], "namespaces: ")
    print("namespaces: setns and unshare(CLONE_NEWUSER) succeed as without cryptrace")


STORM_RUNS = 60


def storm():
    out = ctlib.tmpdir("storm")
    for seed in range(1, STORM_RUNS + 1):
        for f in os.listdir(out):
            os.unlink(os.path.join(out, f))
        p = subprocess.Popen([ctlib.built("CT_REL_BIN", "rel_signals"), "storm", str(seed)],
                             env=ctlib.preload_env(out, CRYPTRACE_FLUSH_MS=10),
                             stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        try:
            rc = p.wait(timeout=60)  # a watchdog: a deadlocked handler never ends
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
            rc = "hung"
        check(rc == -signal.SIGTERM, f"storm {seed}: ended by SIGTERM ({rc})")
        doc = the_trace(out, "signal 15", f"storm {seed}")
        calls, _ = ctlib.totals(doc, cipher="aes-128-cbc")
        check(calls > 0, f"storm {seed}: its calls are in the trace ({calls})")
    print(f"storm: {STORM_RUNS} runs, SIGTERM at random moments of set-up loops: every one "
          "ended by SIGTERM with its END")


def sandbox(how):
    if ctlib.asan_runtime():
        print(f"SKIP part: sandbox {how}: the ASan runtime's own system calls break the filter")
        return
    ends = []
    out = ctlib.tmpdir(f"sandbox-{how}")
    for traced in (False, True):
        p = start(["sandbox", how], out if traced else None, cwd=ctlib.tmpdir("sandbox-cwd"))
        lines = tlsecho.Lines(p.stdout)
        try:
            lines.wait_for("ready", f"sandbox {how}")
        except ctlib.Failure:
            p.kill()
            p.wait()
            if any("no filter for this" in ln or "refused" in ln for ln in lines.lines):
                print(f"SKIP part: sandbox {how}: {lines.lines[-1]}")
                return
            raise
        p.send_signal(signal.SIGTERM)
        ends.append(p.wait(timeout=ctlib.RUN_TIMEOUT))
    check(ends == [-signal.SIGTERM] * 2,
          f"sandbox {how}: SIGTERM ends it as SIGTERM with and without cryptrace, never as "
          f"SIGSYS (a forbidden system call): {ends}")
    rc, doc, err = ctlib.report(ctlib.traces(out))
    check(rc in (0, 1) and doc, f"sandbox {how}: the trace reads ({rc}) {err[:200]}")
    print(f"sandbox {how}: ended by SIGTERM with and without cryptrace")


def test():
    query()
    default_actions()
    goes_on()
    children()
    namespaces()
    storm()
    sandbox("prctl")
    sandbox("tsync")


if __name__ == "__main__":
    ctlib.main(test)
