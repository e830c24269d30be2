#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`cryptrace report --csv`: RFC 4180 (CRLF rows, a header, quoting), one row per path and
non-empty size bucket whose counts and times are the JSON report's; filters apply
(--min-size, --path)."""
import csv
import io
import json
import os

import ctlib
from ctlib import check

HEADER = ["pids", "api", "impl", "cipher", "dir", "key_bits", "bucket_low", "calls", "bytes",
          "wall_ns", "user_ns", "sys_ns", "wall_MBps", "cpu_MBps"]


def rows(raw, tag):
    check(raw.endswith(b"\r\n") and b"\n" not in raw.replace(b"\r\n", b""),
          f"{tag}: every row ends with CRLF")
    r = list(csv.reader(io.StringIO(raw.decode(), newline="")))
    check(r[0] == HEADER, f"{tag}: the header row is {HEADER}")
    return [dict(zip(HEADER, row)) for row in r[1:]]


def test():
    prog = ctlib.example("evp_threads")
    d = ctlib.tmpdir("csv")
    p = ctlib.run_traced([prog], d)
    check(p.returncode == 0, "evp_threads ran under cryptrace")
    doc = json.loads(ctlib.cryptrace_ok("report", "--json", d).stdout)
    raw = ctlib.cryptrace_ok("report", "--csv", d).stdout
    got = rows(raw, "--csv")
    want = {}
    for pth in doc["paths"]:
        for s in pth["sizes"]:
            want[(pth["api"], pth["impl"], pth["cipher"], pth["dir"], s["bucket_low"])] = (pth, s)
    check(len(got) == len(want), f"one row per path and non-empty bucket ({len(got)} == {len(want)})")
    for r in got:
        key = (r["api"], r["impl"], r["cipher"], r["dir"], int(r["bucket_low"]))
        check(key in want, f"row {key} is a path bucket of the JSON report")
        pth, s = want[key]
        same = (int(r["calls"]) == s["calls"] and int(r["bytes"]) == s["bytes"] and
                int(r["key_bits"]) == pth["key_bits"] and
                r["pids"] == " ".join(str(x) for x in pth["pids"]) and
                (s["wall_ns"] is None and r["wall_ns"] == "" or
                 (abs(int(r["wall_ns"]) - s["wall_ns"]) <= 0.5 or
                  ctlib.json_equal(int(r["wall_ns"]), s["wall_ns"]))))
        if not same:
            raise ctlib.Failure(f"row {r} differs from the JSON bucket {s}")
    print("ok: every CSV row matches the JSON report")
    out = os.path.join(ctlib.tmpdir("csv-out"), "big.csv")
    ctlib.cryptrace_ok("report", "--csv=" + out, "--min-size", "1024", d)
    big = rows(open(out, "rb").read(), "--csv=FILE --min-size 1024")
    check(big and all(int(r["bucket_low"]) >= 1024 for r in big),
          f"--min-size 1024 keeps only buckets of 1 KiB and up ({len(big)} rows)")
    gcm = rows(ctlib.cryptrace_ok("report", "--csv", "--path", "evp/*/aes-256-gcm/*", d).stdout, "--path")
    check(gcm and {r["cipher"] for r in gcm} == {"aes-256-gcm"}, "--path selects the gcm rows")
    for sel in ("99", "no-such-cipher"):
        p = ctlib.cryptrace("report", "--csv", "--path", sel, d)
        check(p.returncode == 2 and not p.stdout, f"--path {sel} selects nothing: exit 2, no output")


ctlib.main(test)
