#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`cryptrace report --html` of real traces (openssl speed at 16 B and at 8 KiB, and examples/
evp_threads in per-call mode), rendered by headless Chromium: the page's SVG points carry the
same figures as `cryptrace report --json` (read back from the DOM Chromium dumps), every
non-empty size bucket has its point, the timeline counts every per-call operation, the page
loads nothing from outside, the console stays clean, and a 1280x800 screenshot is taken.
CT_SCREENSHOT=FILE keeps the screenshot (how docs/report-screenshot.png was made)."""
import json
import os
import re
import struct

import rlib
from rlib import check, ctlib


def expected_points(doc):
    """{(path number, bucket_low): (wall B/s, cpu B/s or None)} from the JSON report."""
    want = {}
    for i, p in enumerate(doc["paths"], 1):
        wall, user, sys_ = p.get("wall_ns"), p.get("user_ns"), p.get("sys_ns")
        share = (user + sys_) / wall if wall and user is not None and sys_ is not None else 0
        for s in p.get("sizes", []):
            if not s.get("wall_ns") or not s.get("bytes"):
                continue
            w = s["bytes"] * 1e9 / s["wall_ns"]
            c = s["bytes"] * 1e9 / (s["wall_ns"] * share) if share > 0 else None
            want[(i, s["bucket_low"])] = (w, c)
    return want


def label(p):
    return f"{p['api']}/{p['impl']}/{p['cipher']}/{p['dir']}"


def check_page(html_file, doc, tag):
    dom, err = rlib.browse("file://" + html_file, "--dump-dom", "--enable-logging=stderr", "--v=0")
    check("<svg" in dom and 'id="throughput-chart"' in dom,
          f"{tag}: Chromium rendered the page with its throughput chart")
    console = [ln for ln in err.splitlines()
               if re.search(r"CONSOLE|Uncaught|SyntaxError|Failed to load resource", ln)]
    check(not console, f"{tag}: no console errors ({console[:3]})")
    els = rlib.elements(dom)
    points = [a for t, a in els if t == "g" and a.get("class") == "pt"]
    want = expected_points(doc)
    check(len(points) == len(want) and len(want) > 0,
          f"{tag}: one chart point per timed size bucket ({len(points)} points, {len(want)} in JSON)")
    for a in points:
        key = (int(a["data-path"]), int(a["data-size"]))
        check(key in want, f"{tag}: point path #{key[0]} size {key[1]} exists in the JSON report")
        w, c = want[key]
        jp = doc["paths"][key[0] - 1]
        ok = (rlib.close(float(a["data-wall-bps"]), w) and
              (c is None and a["data-cpu-bps"] == "" or
               c is not None and rlib.close(float(a["data-cpu-bps"]), c)) and
              a["data-label"] == label(jp))
        if not ok:
            raise rlib.Failure(f"{tag}: point {key} wall {a['data-wall-bps']} cpu "
                               f"{a['data-cpu-bps']} label {a['data-label']} != JSON {w} {c} "
                               f"{label(jp)}")
    print(f"ok: {tag}: all {len(points)} points match the JSON report's wall and CPU throughput")
    return els


def png_size(path):
    with open(path, "rb") as f:
        head = f.read(24)
    check(head[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is a PNG")
    return struct.unpack(">II", head[16:24])


def test():
    if ctlib.asan_runtime():
        ctlib.skip("sanitizer pass: Chromium does not run with an ASan runtime in LD_PRELOAD; "
                   "the normal pass renders the page")
    openssl = ctlib.need_program("openssl")
    rlib.chromium()
    d16, d8k = ctlib.tmpdir("html16"), ctlib.tmpdir("html8k")
    for d, size in ((d16, "16"), (d8k, "8192")):
        p = ctlib.run_traced([openssl, "speed", "-seconds", "1", "-bytes", size, "-evp",
                              "aes-128-cbc"], d)
        check(p.returncode == 0, f"openssl speed -bytes {size} ran under cryptrace")
    work = ctlib.tmpdir("html-out")
    page = os.path.join(work, "speed.html")
    rlib.report_ok("--html", page, d16, d8k)
    text = open(page, encoding="utf-8").read()
    check(not re.search(r"<script|<link|@import|url\(|src=", text, re.I),
          "the page is self-contained: no script, stylesheet link, import, url() or src")
    doc = json.loads(rlib.report_ok("--json", d16, d8k).stdout)
    cbc = [i for i, p in enumerate(doc["paths"], 1) if p["cipher"] == "aes-128-cbc"]
    sizes = {s["bucket_low"] for s in doc["paths"][cbc[0] - 1]["sizes"]}
    check({16, 8192} <= sizes, f"the aes-128-cbc path has the 16 and 8192 buckets ({sorted(sizes)})")
    els = check_page(page, doc, "speed 16 B + 8 KiB")
    pts = {(int(a["data-path"]), int(a["data-size"])) for t, a in els if a.get("class") == "pt"}
    check((cbc[0], 16) in pts and (cbc[0], 8192) in pts,
          "the chart has the aes-128-cbc points at 16 B and 8 KiB")
    shot = os.environ.get("CT_SCREENSHOT") or os.path.join(work, "shot.png")
    rlib.browse("file://" + page, f"--screenshot={shot}", "--window-size=1280,800",
                "--hide-scrollbars")
    check(os.path.exists(shot) and png_size(shot) == (1280, 800), "a 1280x800 screenshot was taken")

    # per-call mode: the timeline draws every operation of the trace
    calls_dir = ctlib.tmpdir("html-calls")
    p = ctlib.run_traced([ctlib.example("evp_threads")], calls_dir, extra=["--mode", "calls"])
    check(p.returncode == 0, "evp_threads ran under cryptrace --mode calls")
    page2 = os.path.join(work, "threads.html")
    rlib.report_ok("--html", page2, calls_dir)
    doc2 = json.loads(rlib.report_ok("--json", calls_dir).stdout)
    els2 = check_page(page2, doc2, "evp_threads per-call")
    tl = [a for t, a in els2 if t == "svg" and "timeline" in a.get("class", "")]
    ops = sum(q.get("per_call_ops", 0) for q in doc2["processes"])
    check(len(tl) == 1 and int(tl[0]["data-ops"]) == ops and ops > 0,
          f"the timeline draws all {ops} per-call operations ({[a.get('data-ops') for a in tl]})")
    # a filter changes the page: only the gcm path and its operations remain
    page3 = os.path.join(work, "gcm.html")
    rlib.report_ok("--html", page3, "--path", "aes-256-gcm", calls_dir)
    els3 = rlib.elements(open(page3, encoding="utf-8").read())
    labels = {a["data-label"] for t, a in els3 if a.get("class") == "pt"}
    check(labels == {"evp/provider:default/aes-256-gcm/encrypt"},
          f"--path aes-256-gcm keeps only that path's points ({labels})")
    tl3 = [a for t, a in els3 if t == "svg" and "timeline" in a.get("class", "")]
    gcm_calls = sum(p["calls"] for p in doc2["paths"] if p["cipher"] == "aes-256-gcm")
    check(len(tl3) == 1 and int(tl3[0]["data-ops"]) == gcm_calls,
          f"--path keeps only the gcm operations in the timeline ({gcm_calls})")


ctlib.main(test)
