#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The report's selection on every output, on real traces: `openssl speed -seconds 1 -evp
aes-128-cbc` (six 1-second blocks of 16 B .. 16 KiB, flushed every 200 ms) and `openssl speed
-bytes 8192 -evp aes-256-gcm`, two processes.
 - --since/--until cut path totals to the difference of two cumulative snapshots: the whole trace
   equals openssl's per-size counts, consecutive windows add up to it exactly, a window inside the
   k-th block holds that block's size only, and each process's covered span is reported;
 - --pid, --cipher, --max-size and --until each give the same selection in the JSON, text, CSV
   and HTML outputs (and --diff), and the selection is the one asked for;
 - --pid with --diff is refused (exit 2) with the per-side alternative."""
import csv
import io
import json
import os
import re

import ctlib
from ctlib import check, browser

FLUSH_MS = 200


def speed_blocks(stderr):
    """[(size, count)] from openssl speed's "Doing ... on N size blocks: C ...'s in" lines."""
    blocks = [(int(n), int(c)) for n, c in
              re.findall(r"Doing \S+ (?:ops )?for \d+s on (\d+) size blocks: (\d+) ", stderr)]
    if not blocks:
        raise ctlib.Failure(f"no per-size counts in openssl speed's output: {stderr[:300]!r}")
    return blocks


def jdoc(*args):
    return json.loads(ctlib.cryptrace_ok("report", "--json", *args).stdout)


def json_buckets(doc):
    """{(api, impl, cipher, dir, bucket_low): calls} of the JSON report."""
    return {(p["api"], p["impl"], p["cipher"], p["dir"], s["bucket_low"]): s["calls"]
            for p in doc["paths"] for s in p["sizes"]}


def text_paths(text):
    """{(api, impl, cipher, dir-prefix): calls} from the text report's Paths table."""
    out = {}
    lines = text.split("Paths (all processes added up)\n", 1)[1].split("\n\n", 1)[0].splitlines()
    for line in lines[1:]:
        c = line.split()  # # API IMPL CIPHER DIR ENTRY CALLS BYTES(2) ERR PROC
        out[(c[1], c[2], c[3], c[4])] = int(c[6])
    return out


def csv_buckets(raw):
    rows = list(csv.DictReader(io.StringIO(raw.decode(), newline="")))
    return {(r["api"], r["impl"], r["cipher"], r["dir"], int(r["bucket_low"])): int(r["calls"])
            for r in rows}, rows


def html_points(page):
    return [a for t, a in browser.elements(open(page, encoding="utf-8").read())
            if t == "g" and a.get("class") == "pt"]


def outputs_agree(tag, work, *args):
    """Runs the JSON, text, CSV and HTML outputs with the same selection; they must select the
    same paths and buckets with the same call counts. Returns (JSON doc, HTML elements)."""
    doc = jdoc(*args)
    want = json_buckets(doc)
    text = ctlib.cryptrace_ok("report", *args).stdout.decode()
    nproc = sum(1 for p in doc["processes"] if not p["superseded"])
    check(text.startswith(f"cryptrace report: {nproc} process(es), {len(doc['paths'])} path(s)"),
          f"{tag}: text header counts the JSON's {nproc} process(es) and {len(doc['paths'])} path(s)")
    tp = text_paths(text)
    jp = {(p["api"], p["impl"], p["cipher"], p["dir"][:3]): p["calls"] for p in doc["paths"]}
    check(tp == jp, f"{tag}: the text Paths table has the JSON's paths and calls ({tp})")
    got, rows = csv_buckets(ctlib.cryptrace_ok("report", "--csv", *args).stdout)
    check(got == want, f"{tag}: the CSV rows are the JSON's path buckets ({len(got)} rows)")
    page = os.path.join(work, re.sub(r"\W+", "_", tag) + ".html")
    ctlib.cryptrace_ok("report", "--html", page, *args)
    pts = html_points(page)
    timed = {(f"{p['api']}/{p['impl']}/{p['cipher']}/{p['dir']}", s["bucket_low"]): s["calls"]
             for p in doc["paths"] for s in p["sizes"] if s.get("wall_ns") and s["bytes"]}
    drawn = {(a["data-label"], int(a["data-size"])): int(a["data-calls"]) for a in pts}
    check(drawn == timed, f"{tag}: the HTML chart has one point per timed JSON bucket, same calls "
          f"({len(drawn)} points)")
    return doc, browser.elements(open(page, encoding="utf-8").read()), rows, text


def cbc_sizes(doc):
    cbc = [p for p in doc["paths"] if p["cipher"] == "aes-128-cbc" and p["api"] == "evp"]
    return {s["bucket_low"]: s["calls"] for p in cbc for s in p["sizes"]}


def test_window(d1, blocks, work):
    full = jdoc(d1)
    check(cbc_sizes(full) == dict(blocks),
          f"the whole trace holds openssl's per-size counts exactly ({dict(blocks)})")
    proc = full["processes"][0]
    life_s = proc["wall_ns"] / 1e9
    # consecutive windows add up to the whole, bucket by bucket
    cuts = [0, 1.5, 2.9, 4.3, 1000]
    total = {}
    for a, b in zip(cuts, cuts[1:]):
        doc = jdoc("--since", str(a), "--until", str(b), d1)
        w = doc["window"]
        check(w and w["method"] == "snapshot-difference" and w["flush_interval_ms"] == FLUSH_MS and
              w["since_s"] == a and w["until_s"] == b,
              f"[{a}, {b}]: the JSON names the window, its method and the {FLUSH_MS} ms flush")
        q = doc["processes"][0]
        eps = 1e-5 * max(a, 1)  # the JSON prints these times with 6 significant digits
        check(q["window_from_s"] <= a + eps and q["window_to_s"] <= min(b, life_s) + 1e-5 * life_s and
              q["window_from_s"] <= q["window_to_s"],
              f"[{a}, {b}]: the covered span {q['window_from_s']}-{q['window_to_s']} s ends at or "
              f"before each asked-for end")
        for size, calls in cbc_sizes(doc).items():
            total[size] = total.get(size, 0) + calls
    check(total == dict(blocks), f"the four windows add up to the whole trace ({total})")
    # a window inside block k: openssl runs the blocks one after another, each for at least 1 s,
    # so block k starts at or after k s and at the latest at lifetime - (6 - k) s. When the
    # snapshots bounding the window fall inside those limits, only block k's size is in it.
    judged = 0
    for k in range(1, len(blocks) - 1):
        since, until = k + 0.4, k + 0.7
        doc = jdoc("--since", str(since), "--until", str(until), d1)
        q = doc["processes"][0]
        latest_start = life_s - (len(blocks) - k)
        if q["window_from_s"] < latest_start:
            print(f"note: block {k}: the snapshot before {since} s was taken at "
                  f"{q['window_from_s']} s, before the block's latest start {latest_start:.3f} s "
                  f"(a late flush on a busy machine): not judged")
            continue
        got = cbc_sizes(doc)
        size = blocks[k][0]
        check(set(got) == {size} and 0 < got[size] < blocks[k][1],
              f"window [{since}, {until}] s (snapshots {q['window_from_s']}-{q['window_to_s']} s) "
              f"holds only block {k}'s {size}-byte requests, part of them ({got})")
        judged += 1
    check(judged >= 2, f"at least two blocks were judged ({judged})")
    # every output honours the window and says how precise it is
    args = ("--since", "1.4", "--until", "3.6", d1)
    doc, els, rows, text = outputs_agree("window", work, *args)
    check("Time window --since 1.400 s --until 3.600 s" in text and
          f"every {FLUSH_MS} ms" in text, "the text report states the window and the flush interval")
    check(any(t == "section" and a.get("id") == "window" for t, a in els),
          "the HTML page has its time-window note")
    d = json.loads(ctlib.cryptrace_ok("report", "--diff", "--json", *args[:-1], d1, d1).stdout)
    cbc = [p for p in d["paths"] if p["cipher"] == "aes-128-cbc"][0]
    want = sum(cbc_sizes(doc).values())
    check(cbc["a"]["calls"] == want and cbc["b"]["calls"] == want and d["a"]["window"] and
          d["b"]["window"], f"--diff cuts both sides to the window ({want} calls) and says so")


def test_filters(d1, d2, pid1, pid2, blocks, work):
    both = (d1, d2)
    # --pid
    doc, els, rows, text = outputs_agree("pid", work, "--pid", str(pid2), *both)
    check({p["pid"] for p in doc["processes"]} == {pid2} and
          all(p["pids"] == [pid2] for p in doc["paths"]) and doc["paths"],
          f"--pid {pid2}: only that process and its paths")
    check(all(r["pids"] == str(pid2) for r in rows), "--pid: every CSV row is that process's")
    procs = {int(a["data-pid"]) for t, a in els if t == "tr" and a.get("class") == "proc"}
    check(procs == {pid2}, f"--pid: the HTML lists only pid {pid2} ({procs})")
    check(f"\n  {pid1} " not in text.split("Paths")[0] and f"\n  {pid2} " in text.split("Paths")[0],
          "--pid: the text Processes table lists only that process")
    # --cipher
    doc, els, rows, text = outputs_agree("cipher", work, "--cipher", "aes-256-*", *both)
    check(doc["paths"] and all(p["cipher"].startswith("aes-256-") for p in doc["paths"]) and
          any(p["cipher"] == "aes-256-gcm" for p in doc["paths"]),
          f"--cipher aes-256-*: only those paths ({sorted({p['cipher'] for p in doc['paths']})})")
    # --max-size
    doc, els, rows, text = outputs_agree("max-size", work, "--max-size", "1024", *both)
    sizes = cbc_sizes(doc)
    check(sizes == {s: c for s, c in blocks if s <= 1024},
          f"--max-size 1024: aes-128-cbc keeps the 16..1024 B blocks, counts exact ({sizes})")
    check(all(s["bucket_low"] <= 1024 for p in doc["paths"] for s in p["sizes"]) and
          all(p["calls"] == sum(s["calls"] for s in p["sizes"]) for p in doc["paths"]),
          "--max-size: no bucket above 1 KiB, path totals are their buckets'")
    check(not any(p["cipher"] == "aes-256-gcm" and p["calls"] for p in doc["paths"]),
          "--max-size: the 8 KiB gcm process has nothing left")
    check("8192 bytes" not in text and "1024 bytes" in text,
          "--max-size: the text size table stops at 1024 bytes")
    # --until
    doc, els, rows, text = outputs_agree("until", work, "--until", "2.5", *both)
    q = {p["pid"]: p for p in doc["processes"]}
    check(q[pid1]["window_to_s"] <= 2.5 and 0 < sum(cbc_sizes(doc).values()) and
          set(cbc_sizes(doc)) <= {16, 64, 256},
          f"--until 2.5: only the first blocks' sizes ({cbc_sizes(doc)})")
    p = ctlib.cryptrace("report", "--diff", "--pid", str(pid1), d1, d2)
    check(p.returncode == 2 and b"--pid does not apply to --diff" in p.stderr and not p.stdout,
          "--diff --pid: exit 2 with the reason, no output")


def test():
    openssl = ctlib.need_program("openssl")
    env = dict(os.environ, CRYPTRACE_FLUSH_MS=str(FLUSH_MS))
    d1, d2 = ctlib.tmpdir("filters-cbc"), ctlib.tmpdir("filters-gcm")
    p = ctlib.run_traced([openssl, "speed", "-seconds", "1", "-evp", "aes-128-cbc"], d1, env=env)
    check(p.returncode == 0, "openssl speed -evp aes-128-cbc ran under cryptrace")
    blocks = speed_blocks(p.stderr.decode() + p.stdout.decode())
    check([s for s, _ in blocks] == [16, 64, 256, 1024, 8192, 16384],
          f"openssl speed ran its six blocks ({blocks})")
    p = ctlib.run_traced([openssl, "speed", "-seconds", "1", "-bytes", "8192", "-evp",
                          "aes-256-gcm"], d2, env=env)
    check(p.returncode == 0, "openssl speed -bytes 8192 -evp aes-256-gcm ran under cryptrace")
    pid1 = jdoc(d1)["processes"][0]["pid"]
    pid2 = jdoc(d2)["processes"][0]["pid"]
    work = ctlib.tmpdir("filters-out")
    test_window(d1, blocks, work)
    test_filters(d1, d2, pid1, pid2, blocks, work)


ctlib.main(test)
