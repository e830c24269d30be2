#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`cryptrace report --perfetto`: the Chrome trace-event JSON parses, every event has ph, pid, tid
and a numeric ts, durations are non-negative, processes and threads are named (ph M). A trace of
`openssl speed -seconds 1 -multi 2 -evp aes-128-cbc` names the parent and both workers and has
throughput counters (ph C) for the workers' aes-128-cbc path; a per-call trace of evp_threads
has one complete event (ph X) per operation with its bytes; the failed afalg engine of
`openssl speed -engine afalg` shows as process-scoped instants (ph i, s p), and so does the
silent-fallback finding (cat finding) at the first failure it rests on; each profiled worker
has a "CPU profile: crypto %" counter with a value per time bin of its profile."""
import os
import re
import socket

import ctlib
from ctlib import check, perfetto


def load(path, tag):
    return perfetto.load(path, tag)["traceEvents"]


def afalg_works():
    try:
        socket.socket(38, socket.SOCK_SEQPACKET, 0).close()  # AF_ALG
        return True
    except OSError:
        return False


def test():
    openssl = ctlib.need_program("openssl")
    work = ctlib.tmpdir("pf-out")

    multi = ctlib.tmpdir("pf-multi")
    p = ctlib.run_traced([openssl, "speed", "-seconds", "1", "-multi", "2", "-evp", "aes-128-cbc"],
                         multi)
    check(p.returncode == 0, "openssl speed -multi 2 ran under cryptrace")
    out = os.path.join(work, "multi.json")
    ctlib.cryptrace_ok("report", "--perfetto", out, multi)
    ev = load(out, "speed -multi 2")
    procs = perfetto.names(ev, "process_name")
    print("processes:", procs)
    doc = ctlib.report_ok([multi])
    check(len(procs) == len(doc["processes"]) >= 3,
          f"every process is named ({len(procs)} names, {len(doc['processes'])} processes)")
    openssls = [n for n in procs.values() if re.search(r"openssl speed \(pid \d+\)", n)]
    check(len(openssls) >= 3, f"the parent and two workers are named 'openssl speed (pid N)' ({openssls})")
    parent = [q["pid"] for q in doc["processes"] if q["ppid"] not in procs]
    workers = [q["pid"] for q in doc["processes"] if q["ppid"] in parent]
    check(len(workers) == 2, f"two workers under the parent ({workers})")
    for w in workers:
        c = [e for e in ev if e["ph"] == "C" and e["pid"] == w and "aes-128-cbc" in e["name"]]
        check(any(v > 0 for e in c for v in e["args"].values()),
              f"worker {w} has aes-128-cbc throughput counters ({len(c)} samples)")

    # the CPU profile over time: a "CPU profile: crypto %" counter per profiled worker, mostly
    # AES (openssl speed's loop), when the launcher could take a profile
    profiled = {q["pid"]: q["profile"] for q in doc["processes"]
                if q.get("profile") and q["profile"].get("timeline")}
    why = ctlib.profile_refused(doc)
    if why:
        print(f"skip the profile tracks: this machine takes no CPU profile: {why}")
    for w in workers if not why else []:
        check(w in profiled, f"worker {w} has a CPU profile with a timeline")
        c = [e["args"]["%"] for e in ev if e["ph"] == "C" and e["pid"] == w and
             e["name"] == "CPU profile: crypto %"]
        check(len(c) >= profiled[w]["timeline"]["bins"] and max(c) > 50 and all(0 <= v <= 100 for v in c),
              f"worker {w} has its CPU-profile crypto % counter ({len(c)} values, "
              f"{profiled[w]['timeline']['bins']} bins)")

    calls = ctlib.tmpdir("pf-calls")
    p = ctlib.run_traced([ctlib.example("evp_threads")], calls,
                         extra=["--mode", "calls", "--max-ops-rate", "0"])  # every op kept
    check(p.returncode == 0, "evp_threads ran under --mode calls")
    out = os.path.join(work, "calls.json")
    ctlib.cryptrace_ok("report", "--perfetto", out, calls)
    ev = load(out, "evp_threads per-call")
    doc = ctlib.report_ok([calls])
    ops = sum(q.get("per_call_ops", 0) for q in doc["processes"])
    xs = [e for e in ev if e["ph"] == "X"]
    check(len(xs) == ops > 0, f"one complete event per operation ({len(xs)} == {ops})")
    bad = perfetto.misnested(ev)
    check(not bad, f"no two operations of a track overlap ({len(bad)} do: {bad[:1]})")
    check(sum(e["args"]["bytes"] for e in xs) == sum(p["bytes"] for p in doc["paths"]),
          "the operations' bytes add up to the report's bytes")
    tids = {e["tid"] for e in xs}
    check(len(tids) >= 2, f"operations on several threads ({len(tids)})")
    named = perfetto.names(ev, "thread_name")
    check(tids <= set(named), f"every thread with operations is named ({sorted(tids - set(named))} unnamed)")
    # --since/--until select operations by time
    ts = sorted(e["ts"] for e in xs)
    mid = ts[len(ts) // 2] / 1e6
    out2 = os.path.join(work, "late.json")
    ctlib.cryptrace_ok("report", "--perfetto", out2, "--since", f"{mid:.9f}", calls)
    late = [e for e in load(out2, "--since") if e["ph"] == "X"]
    check(0 < len(late) < len(xs) and all(e["ts"] + e["dur"] >= mid * 1e6 - 1 for e in late),
          f"--since {mid:.6f} keeps only the later operations ({len(late)} of {len(xs)})")

    afalg = ctlib.tmpdir("pf-afalg")
    p = ctlib.run_traced([openssl, "speed", "-seconds", "1", "-bytes", "16", "-engine", "afalg",
                          "-evp", "aes-128-cbc"], afalg)
    out = os.path.join(work, "afalg.json")
    ctlib.cryptrace_ok("report", "--perfetto", out, afalg)
    ev = load(out, "speed -engine afalg")
    inst = [e for e in ev if e["ph"] == "i"]
    print("instants:", [e["name"] for e in inst])
    doc = ctlib.report_ok([afalg])
    kinds = {f["kind"] for f in doc["findings"]}
    if "engine-failed" not in kinds and afalg_works():
        ctlib.skip("AF_ALG works here, so the afalg engine did not fail "
                  f"(findings {sorted(kinds)}): nothing to mark")
    # on a kernel that refuses AF_ALG the engine fails: a missing finding is a regression
    check("engine-failed" in kinds, f"speed -engine afalg without AF_ALG: engine-failed ({sorted(kinds)})")
    check(any("ENGINE_by_id" in e["name"] or "socket" in e["name"] for e in inst),
          "the failed engine request / AF_ALG socket shows as an instant event")
    # the fallback as the user meets it: the silent-fallback finding, with its message
    sf = [f for f in doc["findings"] if f["kind"] == "silent-fallback"]
    check(sf, f"speed -engine afalg without AF_ALG: silent-fallback ({sorted(kinds)})")
    fi = [e for e in inst if e.get("cat") == "finding" and e["args"].get("kind") == "silent-fallback"]
    first_failure = min(e["ts"] for e in inst if e.get("cat") != "finding")
    check(len(fi) == len(sf) and all(e["pid"] == f["pid"] and e["args"]["message"] == f["message"]
                                     for e, f in zip(fi, sf)) and fi[0]["ts"] == first_failure,
          "the silent-fallback finding is an instant too, at the first failure it rests on, with "
          "the report's message")


ctlib.main(test)
