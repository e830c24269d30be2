# SPDX-License-Identifier: MIT
"""ctlib.reports - reading what cryptrace wrote: the trace files of a directory, `cryptrace
report --json` parsed, its paths, events and processes selected by field values and summed,
the findings a real program's run must (or must not) raise, and the JSON and 80-column text of
`cryptrace compare` and `cryptrace doctor`."""
import json
import os
import re
import struct

from .harness import CRYPTRACE, Failure, check, tmpdir
from .programs import MASK, run, run_traced

__all__ = ["check_clean", "check_complete", "check_expect", "check_masked", "check_tls13_bulk",
           "compare_cell", "describe_paths", "doctor_checks", "events", "finding", "fits_80", "json_equal",
           "kinds", "parse_expect", "parse_json", "paths", "per_process", "processes", "profile_refused",
           "program_samples", "report", "report_ok", "totals", "trace_records", "traced", "traces",
           "TRACE_PREAMBLE"]

SEVERE = ("warning", "error")


def traces(outdir):
    """The trace files in outdir (X.ctrace and its continuations X.ctrace.N), sorted."""
    return sorted(os.path.join(outdir, f) for f in os.listdir(outdir)
                  if re.search(r"\.ctrace(\.\d+)?$", f))


TRACE_PREAMBLE = 16  # docs/trace-format.md: magic, version, flags before the first record


def trace_records(data):
    """[(start, end, type, payload)] of the whole records at the start of a trace file's bytes
    (docs/trace-format.md: u16 type, u16 reserved, u32 length, payload, u32 CRC), up to the first
    one the bytes do not hold whole."""
    out, off = [], TRACE_PREAMBLE
    while off + 8 <= len(data):
        rtype, _, length = struct.unpack_from("<HHI", data, off)
        end = off + 8 + length + 4
        if end > len(data):
            break
        out.append((off, end, rtype, data[off + 8:off + 8 + length]))
        off = end
    return out


def report(paths, *opts):
    """Runs `cryptrace report --json`; returns (exit code, parsed JSON or None, stderr text)."""
    p = run([CRYPTRACE, "report", "--json"] + list(opts) + list(paths), text=True)
    doc = parse_json(p.stdout, "report --json") if p.stdout.strip() else None
    return p.returncode, doc, p.stderr


def report_ok(paths):
    """The JSON report of the trace files or directories in paths, which must read cleanly."""
    rc, doc, err = report(paths)
    if rc != 0 or doc is None:
        raise Failure(f"cryptrace report exited {rc}: {err.strip()}")
    return doc


def traced(tag, argv, env=None, extra=(), cwd=None, input_bytes=None):
    """Runs argv under `cryptrace run -q -o DIR`; returns (CompletedProcess, report JSON, DIR)
    and prints the findings."""
    out = tmpdir(f"real-{tag}")
    p = run_traced(argv, out, env=env, extra=extra, cwd=cwd, input_bytes=input_bytes)
    doc = report_ok([out])
    print(f"{tag}: exit {p.returncode}, findings "
          f"{[(f['kind'], f['severity']) for f in doc['findings']]}")
    return p, doc, out


def _matching(rows, want):
    return [r for r in rows if all(r.get(k) == v for k, v in want.items())]


def paths(doc, **want):
    """The report's merged paths whose fields equal every given value."""
    return _matching(doc.get("paths", []), want)


def events(doc, **want):
    """The report's events (doc, or a list of events) whose fields equal every given value."""
    return _matching(doc["events"] if isinstance(doc, dict) else doc, want)


def processes(doc):
    return doc.get("processes", [])


def totals(doc, **want):
    """(calls, bytes) summed over the matching paths."""
    sel = paths(doc, **want)
    return sum(p.get("calls", 0) for p in sel), sum(p.get("bytes", 0) for p in sel)


def per_process(doc, **want):
    """{pid: (calls, bytes)} of the matching paths, per process (superseded files left out)."""
    rows = {}
    for q in processes(doc):
        if q.get("superseded"):
            continue
        for p in _matching(q.get("paths", []), want):
            c, b = rows.get(q.get("pid"), (0, 0))
            rows[q.get("pid")] = (c + p.get("calls", 0), b + p.get("bytes", 0))
    return rows


def describe_paths(doc):
    rows = []
    for p in doc.get("paths", []):
        rows.append("  {api} {impl} {cipher} {dir} entry={entry} calls={calls} bytes={bytes}"
                    .format(**{k: p.get(k) for k in
                               ("api", "impl", "cipher", "dir", "entry", "calls", "bytes")}))
    return "\n".join(rows) or "  (no paths)"


def parse_expect(text):
    """Lines `expect api=.. cipher=.. dir=.. calls=N bytes=N` printed by the examples."""
    out = []
    for line in text.splitlines():
        if not line.startswith("expect "):
            continue
        f = dict(kv.split("=", 1) for kv in line.split()[1:])
        out.append((f["api"], f["cipher"], f["dir"], int(f["calls"]), int(f["bytes"])))
    if not out:
        raise Failure(f"no expect lines in the example's output: {text[:200]!r}")
    return out


def check_expect(doc, text, where=""):
    """Every `expect` line's calls and bytes equal the report's sum for that cipher and dir."""
    for api, cipher, direction, calls, nbytes in parse_expect(text):
        got = totals(doc, api=api, cipher=cipher, dir=direction)
        check(got == (calls, nbytes),
              f"{where}{cipher} {direction}: report {got[0]} calls {got[1]} bytes, "
              f"program did {calls} calls {nbytes} bytes")


def check_tls13_bulk(doc, tag, direction, nbytes, cipher="aes-256-gcm"):
    """A TLS 1.3 transfer of nbytes in one side's report: the cipher's paths in that direction
    carry them (and at most 1 % and 64 KiB more: the records' overhead), and the busiest context
    creator is libssl, for TLS 1.3 records."""
    rows = paths(doc, cipher=cipher, dir=direction)
    total = sum(p["bytes"] for p in rows)
    check(nbytes <= total <= nbytes * 1.01 + 65536,
          f"{tag}: {cipher} {direction} carries the {nbytes} bytes ({total})\n"
          f"{describe_paths(doc)}")
    sites = (max(rows, key=lambda p: p["bytes"]).get("creators") or {}).get("sites") or []
    check(sites and sites[0]["module"].startswith("libssl") and
          sites[0]["purpose"] == "TLS 1.3 records",
          f"{tag}: contexts created by libssl for TLS 1.3 records ({sites[:1]})")


def kinds(doc):
    return [f["kind"] for f in doc["findings"]]


def finding(doc, kind):
    """The one finding of kind (fails when there is none or more than one)."""
    fs = [f for f in doc["findings"] if f["kind"] == kind]
    check(len(fs) == 1, f"one {kind} finding ({kinds(doc)})")
    return fs[0]


# Findings judged on speed (cycles/byte, time per call, wall against CPU time). Under the
# sanitizer CI pass (CT_ASAN=1) the traced program runs with the ASan runtime's allocator, whose
# fresh, shadowed pages fault inside the cipher calls (python3-cryptography's 1 MiB GCM calls
# run 2-3x slower there): its timing is not the program's own, as for the speed and truth suites
# that pass leaves out. The main pass judges them.
TIMING_KINDS = ("software-aes", "small-requests-offload", "user-time-misleads",
                "kernel-software-driver")


def check_clean(doc, tag):
    """A clean run of a real program raises no warning and no error (under the sanitizer
    runtime, none but the speed judgements: TIMING_KINDS)."""
    asan = os.environ.get("CT_ASAN") == "1"
    bad = [(f["kind"], f["message"][:160]) for f in doc["findings"] if f["severity"] in SEVERE
           and not (asan and f["kind"] in TIMING_KINDS and "OPENSSL_ia32cap" not in f["message"])]
    what = "no warning or error" if not asan else \
        f"no warning or error but speed judgements ({', '.join(TIMING_KINDS)}: ASan timing)"
    check(not bad, f"{tag}: {what} on a clean run ({bad})")


def check_complete(doc, tag):
    """Every process's trace is complete, except sshd's sandboxed pre-auth child: it sets
    RLIMIT_FSIZE to 0 before its end, so the preload cannot write its END (and says so by
    leaving the trace incomplete rather than writing past the limit)."""
    bad = [(p["pid"], p.get("role"), p["status"]) for p in doc["processes"]
           if p["status"] != "complete" and not p.get("superseded") and
           "pre-auth" not in (p.get("role") or "")]
    check(not bad, f"{tag}: every trace complete ({bad})")


def check_masked(doc, tag, procs_min=1):
    """Under the mask: software-aes naming it, one finding for the cause however many processes
    are affected, listing them when there are several."""
    sw = [f for f in doc["findings"] if f["kind"] == "software-aes"]
    check(len(sw) == 1, f"{tag} masked: one software-aes finding for the one cause "
                        f"({len(sw)}: {[f.get('pid') for f in sw]})")
    f = sw[0]
    check(MASK in f["message"], f"{tag} masked: software-aes names the mask: {f['message'][:200]}")
    if procs_min > 1:
        check("processes (" in f["message"],
              f"{tag} masked: software-aes lists the processes: {f['message'][-300:]}")
    return f


def json_equal(a, b, rel=2e-5):
    """Equal within the JSON report's precision (numbers that are not whole print with 6
    significant digits there)."""
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)


def doctor_checks(doc):
    """`cryptrace doctor --json`: {check id: the first check of that id}."""
    out = {}
    for c in doc["checks"]:
        out.setdefault(c["id"], c)
    return out


def parse_json(text, what):
    """text parsed as JSON (the output of `what`), or a Failure saying it is not JSON."""
    try:
        return json.loads(text)
    except ValueError as e:
        raise Failure(f"{what} printed invalid JSON ({e}): {text[:300]!r}")


def fits_80(text, what):
    wide = [line for line in text.splitlines() if len(line) > 80]
    check(not wide, f"{what}: every line fits 80 columns" +
          (f" (too wide: {wide[0]!r})" if wide else ""))


def compare_cell(doc, cipher, direction, route):
    """`cryptrace compare --json`: the figures of one route for one cipher and direction."""
    for p in doc.get("paths", []):
        if p["cipher"] == cipher and p["dir"] == direction:
            for c in p["routes"]:
                if c["route"] == route:
                    return c
    return None


def profile_refused(doc):
    """Why the launcher could not take a CPU profile on this machine (its "profile" trace-warning
    event: perf events refused or missing), or None when it could."""
    for e in doc.get("events", []):
        if e.get("call") == "profile":
            return e.get("detail") or "no CPU profile"
    return None


SANITIZER_RUNTIME = re.compile(r"lib(asan|ubsan|tsan)\.so")
LOADER = re.compile(r"ld-linux|ld64\.so|ld-musl")


def program_samples(prof):
    """The profile's samples that are the traced program's own CPU: in the sanitizer CI pass
    (CT_ASAN=1) the preloaded ASan runtime's allocator and the loader's relocation of that
    runtime are left out. They are a cost the test harness adds, up to half of a public-key
    loop's samples (the allocator) and 13 % of a short Go run's (the relocations). Elsewhere:
    all the samples."""
    if os.environ.get("CT_ASAN") != "1":
        return prof["samples"]
    harness = sum(i["samples"] for i in prof["items"]
                  if SANITIZER_RUNTIME.match(i["module"]) or LOADER.match(i["module"]))
    return prof["samples"] - harness
