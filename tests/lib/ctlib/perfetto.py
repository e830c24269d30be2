# SPDX-License-Identifier: MIT
"""ctlib.perfetto - `cryptrace report --perfetto` files read back as the viewers read them: the
trace-event schema every event must follow (load), and the rule of the viewers' model that
complete events on one thread nest or follow each other (misnested), in exact nanoseconds."""
from decimal import Decimal
import json

from .harness import Failure

__all__ = ["PHASES", "load", "names", "ns", "misnested"]

PHASES = {"M", "X", "C", "i"}


def load(path, tag):
    """The file's document (its traceEvents checked against the trace-event schema)."""
    with open(path, encoding="utf-8") as f:
        try:
            doc = json.load(f)
        except ValueError as e:
            raise Failure(f"{tag}: the Perfetto file is not JSON: {e}")
    if not (isinstance(doc, dict) and isinstance(doc.get("traceEvents"), list)):
        raise Failure(f"{tag}: not an object with a traceEvents array")
    if doc.get("displayTimeUnit") not in ("ns", "ms"):
        raise Failure(f"{tag}: displayTimeUnit is not set")
    for i, e in enumerate(doc["traceEvents"]):
        bad = [k for k in ("ph", "pid", "tid", "ts") if k not in e]
        if bad or e["ph"] not in PHASES or not isinstance(e["ts"], (int, float)) or \
                not isinstance(e["pid"], int) or not isinstance(e["tid"], int):
            raise Failure(f"{tag}: event {i} lacks {bad} or has a bad type: {e}")
        if e["ph"] == "X" and not (isinstance(e.get("dur"), (int, float)) and e["dur"] >= 0):
            raise Failure(f"{tag}: complete event {i} has no non-negative dur: {e}")
        if e["ph"] in ("X", "C", "i") and not e.get("name"):
            raise Failure(f"{tag}: event {i} has no name: {e}")
        if e["ph"] == "i" and e.get("s") != "p":
            raise Failure(f"{tag}: instant {i} is not process-scoped: {e}")
        if e["ph"] == "C" and not all(isinstance(v, (int, float)) for v in e.get("args", {}).values()):
            raise Failure(f"{tag}: counter {i} has non-numeric values: {e}")
    print(f"ok: {tag}: {len(doc['traceEvents'])} events, each with ph/pid/tid/ts, durations >= 0")
    return doc


def names(events, what):
    """{pid: name} for process_name, {tid: name} for thread_name metadata."""
    return {e["pid"] if what == "process_name" else e["tid"]: e["args"]["name"]
            for e in events if e["ph"] == "M" and e.get("name") == what}


def ns(us):
    """A trace-event time (microseconds, as parsed by load) in whole nanoseconds: the file has
    three decimals, which the shortest repr of the parsed float gives back exactly."""
    return int(Decimal(repr(us)) * 1000)


def misnested(events):
    """The complete events that overlap an earlier one of their (pid, tid) without nesting in
    it, as (earlier, later) pairs: the viewers cut or drop those."""
    by_track = {}
    for e in events:
        if e["ph"] == "X":
            by_track.setdefault((e["pid"], e["tid"]), []).append((ns(e["ts"]), ns(e["dur"]), e))
    bad = []
    for evs in by_track.values():
        evs.sort(key=lambda t: (t[0], -t[1]))
        stack = []  # the ends of the open enclosing events
        for ts, dur, e in evs:
            while stack and stack[-1][0] <= ts:
                stack.pop()
            if stack and ts + dur > stack[-1][0]:
                bad.append((stack[-1][1], e))
            stack.append((ts + dur, e))
    return bad
