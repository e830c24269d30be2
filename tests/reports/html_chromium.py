#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`cryptrace report --html` of real traces (openssl speed at 16 B and at 8 KiB, and examples/
evp_threads in per-call mode), rendered by headless Chromium: the page's SVG points carry the
same figures as `cryptrace report --json` (read back from the DOM Chromium dumps), every
non-empty size bucket has its point, the points are drawn where their values put them (log
axes), the latency and share bars are in proportion, the timeline counts every per-call
operation, the page loads nothing from outside, the console stays clean, a 1280x800 screenshot is
taken and the print layout prints to a PDF.
CT_SCREENSHOT=FILE keeps the screenshot (how docs/report-screenshot.png was made)."""
import json
import math
import os
import re
import struct

import ctlib
from ctlib import check, browser


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
    dom, err = browser.browse("file://" + html_file, "--dump-dom", "--enable-logging=stderr", "--v=0")
    check("<svg" in dom and 'id="throughput-chart"' in dom,
          f"{tag}: Chromium rendered the page with its throughput chart")
    console = [ln for ln in err.splitlines()
               if re.search(r"CONSOLE|Uncaught|SyntaxError|Failed to load resource", ln)]
    check(not console, f"{tag}: no console errors ({console[:3]})")
    els = browser.elements(dom)
    points = [a for t, a in els if t == "g" and a.get("class") == "pt"]
    want = expected_points(doc)
    check(len(points) == len(want) and len(want) > 0,
          f"{tag}: one chart point per timed size bucket ({len(points)} points, {len(want)} in JSON)")
    for a in points:
        key = (int(a["data-path"]), int(a["data-size"]))
        check(key in want, f"{tag}: point path #{key[0]} size {key[1]} exists in the JSON report")
        w, c = want[key]
        jp = doc["paths"][key[0] - 1]
        ok = (ctlib.json_equal(float(a["data-wall-bps"]), w) and
              (c is None and a["data-cpu-bps"] == "" or
               c is not None and ctlib.json_equal(float(a["data-cpu-bps"]), c)) and
              a["data-label"] == label(jp))
        if not ok:
            raise ctlib.Failure(f"{tag}: point {key} wall {a['data-wall-bps']} cpu "
                               f"{a['data-cpu-bps']} label {a['data-label']} != JSON {w} {c} "
                               f"{label(jp)}")
    print(f"ok: {tag}: all {len(points)} points match the JSON report's wall and CPU throughput")
    check_drawing(els, tag)
    return els


def fit(xs, ys):
    """Least-squares y = a + b x; returns (a, b, largest residual)."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    b = sum((x - mx) * (y - my) for x, y in zip(xs, ys)) / sxx
    a = my - b * mx
    return a, b, max(abs(a + b * x - y) for x, y in zip(xs, ys))


def check_drawing(els, tag):
    """The plotted positions follow the values: in the throughput chart a larger request size is
    further right and a larger throughput higher up, both on log axes (cx affine in log2 of the
    mean request size, cy affine in log10 of the throughput, wall dots and CPU squares on the
    same axis); latency bars stand in proportion to their counts, left to right by latency; share
    bars are as long as their shares."""
    pts, cur = [], None
    for t, a in els:
        if t == "g" and a.get("class") == "pt":
            cur = {"size": int(a["data-size"]), "mean": int(a["data-bytes"]) / int(a["data-calls"]),
                   "path": int(a["data-path"]), "w": float(a["data-wall-bps"]),
                   "c": float(a["data-cpu-bps"]) if a["data-cpu-bps"] else None}
            pts.append(cur)
        elif cur is not None and t == "circle":
            cur["cx"], cur["cy"] = float(a["cx"]), float(a["cy"])
        elif cur is not None and t == "rect" and a.get("class") == "cpu-mark":
            cur["cpu_y"] = float(a["y"]) + 4
            cur["cpu_x"] = float(a["x"]) + 4
            cur = None
    check(pts and all("cx" in p for p in pts), f"{tag}: every chart point has its dot")
    for a in pts:
        for b in pts:
            if a["mean"] < b["mean"] * (1 - 1e-9) and not a["cx"] < b["cx"]:
                raise ctlib.Failure(f"{tag}: size {a['size']} (mean {a['mean']:.1f}) is drawn at "
                                   f"cx {a['cx']}, not left of size {b['size']} at {b['cx']}")
            # positions are written to 0.1 px: on a log axis of a few decades over ~200 px that
            # is ~0.3 % of throughput, so two rates closer than 1 % may share a row of pixels
            if a["w"] < b["w"] * (1 - 1e-2) and not a["cy"] > b["cy"]:
                raise ctlib.Failure(f"{tag}: {a['w']:.4g} B/s is drawn at cy {a['cy']}, not below "
                                   f"{b['w']:.4g} B/s at {b['cy']}")
        if a["c"] is not None and (abs(a.get("cpu_x", -1) - a["cx"]) > 0.11):
            raise ctlib.Failure(f"{tag}: the CPU mark of size {a['size']} is not above its dot")
    print(f"ok: {tag}: larger sizes are further right and larger throughputs higher up "
          f"({len(pts)} points)")
    xs = {round(math.log2(p["mean"]), 9): p["cx"] for p in pts}
    if len(xs) >= 3:
        _, b, res = fit(list(xs), list(xs.values()))
        check(b > 0 and res <= 0.15, f"{tag}: cx is affine in log2(request size) (residual "
              f"{res:.3f} px)")
    ys = [(math.log10(p["w"]), p["cy"]) for p in pts]
    ys += [(math.log10(p["c"]), p["cpu_y"]) for p in pts if p["c"] is not None]
    if len({round(v, 6) for v, _ in ys}) >= 3:
        _, b, res = fit([v for v, _ in ys], [y for _, y in ys])
        check(b < 0 and res <= 0.15, f"{tag}: wall dots and CPU squares are affine in "
              f"log10(throughput) on one axis (residual {res:.3f} px)")
    # latency histograms: one figure per path
    charts, bars = [], None
    for t, a in els:
        if t == "figure" and a.get("data-path"):
            bars = []
            charts.append(bars)
        elif bars is not None and t == "rect" and a.get("class") == "bar":
            bars.append((int(a["data-lat-low"]), int(a["data-count"]), float(a["x"]),
                         float(a["height"])))
    check(charts and all(charts), f"{tag}: every latency figure has bars")
    for bars in charts:
        scale = max(h for *_, h in bars) / max(c for _, c, _, _ in bars)
        if any(abs(h - c * scale) > 0.11 for _, c, _, h in bars):
            raise ctlib.Failure(f"{tag}: latency bar heights are not in proportion to counts: {bars}")
        order = sorted(bars)
        if any(not a[2] < b[2] for a, b in zip(order, order[1:])):
            raise ctlib.Failure(f"{tag}: latency bars are not left to right by latency: {order}")
    print(f"ok: {tag}: latency bars in proportion to their counts, ordered by latency "
          f"({len(charts)} charts)")
    # share bars: one chart by path, one by process
    groups, bars, share = [], None, None
    for t, a in els:
        if t == "svg" and "bars" in a.get("class", "").split():
            bars = []
            groups.append(bars)
        elif t == "svg":  # another chart (the CPU profile's shares are checked by check_profile)
            bars = None
        elif bars is not None and t == "g" and a.get("class") == "share":
            share = float(a["data-share"])
        elif bars is not None and share is not None and t == "rect":
            bars.append((share, float(a["width"])))
            share = None
    check(len(groups) == 2 and all(groups), f"{tag}: two share charts (by path, by process)")
    for bars in groups:
        full = max(w for _, w in bars) / max(s for s, _ in bars)
        if abs(sum(s for s, _ in bars) - 1) > 1e-4 or \
           any(abs(w - max(1, full * s)) > 0.11 + full * 1e-6 for s, w in bars):
            raise ctlib.Failure(f"{tag}: share bars do not add up to 1 or are not as long as their "
                               f"shares: {bars}")
    print(f"ok: {tag}: share bars add up to 100% and are as long as their shares")


def check_profile(els, doc, tag):
    """The CPU profile section: one cpu-shares chart per process with a profile, its bars the
    JSON report's crypto items added up by (category, implementation, module) plus "other code",
    as shares of the process's samples, as long as their shares; the hooks/profile sentence
    carries the JSON's verdict."""
    profs = {q["pid"]: q["profile"] for q in doc["processes"]
             if q.get("profile") and q["profile"]["samples"] and not q.get("superseded")}
    if not profs:
        ctlib.skip(f"{tag}: no process has a CPU profile (perf events refused here?)")
    charts, cur, bars, share = {}, None, None, None
    for t, a in els:
        if t == "div" and a.get("class") == "cpu-profile":
            cur = int(a["data-pid"])
        elif cur is not None and t == "svg" and "cpu-shares" in a.get("class", ""):
            bars = charts.setdefault(cur, [])
        elif bars is not None and t == "g" and a.get("class") == "share":
            share = float(a["data-share"])
        elif bars is not None and share is not None and t == "rect":
            bars.append((share, float(a["width"])))
            share = None
    check(set(charts) == set(profs), f"{tag}: a CPU-share chart per profiled process "
          f"({sorted(charts)} against {sorted(profs)})")
    for pid, prof in profs.items():
        want = {}
        for i in prof["items"]:
            if i["category"]:
                k = (i["category"], i["impl"], i["module"])
                want[k] = want.get(k, 0) + i["samples"]
        shares = sorted([v / prof["samples"] for v in want.values()] +
                        ([1 - prof["crypto_samples"] / prof["samples"]]
                         if prof["crypto_samples"] < prof["samples"] else []))
        got = sorted(s for s, _ in charts[pid])
        check(len(got) == len(shares) and all(abs(a - b) <= 1e-5 for a, b in zip(got, shares)),
              f"{tag}: pid {pid}'s CPU-share bars are its profile's ({got} against {shares})")
        full = max(w for _, w in charts[pid]) / max(s for s, _ in charts[pid])
        check(all(abs(w - max(1, full * s)) <= 0.11 + full * 1e-6 for s, w in charts[pid]),
              f"{tag}: pid {pid}'s CPU-share bars are as long as their shares")
    verdicts = [a["data-verdict"] for t, a in els if t == "p" and "hooks-check" in a.get("class", "")]
    want_v = [p["hooks_check"]["verdict"] for p in profs.values() if p.get("hooks_check")]
    check(sorted(verdicts) == sorted(want_v), f"{tag}: the hooks/profile sentences carry the JSON's "
          f"verdicts ({verdicts} against {want_v})")
    print(f"ok: {tag}: CPU-share charts of {len(charts)} process(es) match the JSON profile")


def check_print(page, work):
    """The print layout: Chromium prints the page to PDF (A4/Letter pages from @media print)."""
    pdf = os.path.join(work, "print.pdf")
    browser.browse("file://" + page, f"--print-to-pdf={pdf}", "--no-pdf-header-footer")
    check(os.path.exists(pdf), "Chromium printed the page to PDF")
    data = open(pdf, "rb").read()
    pages = len(re.findall(rb"/Type\s*/Page(?![s\w])", data))
    check(data.startswith(b"%PDF-") and len(data) > 20000 and pages >= 2,
          f"the PDF is a real print of the report ({len(data)} bytes, {pages} pages)")


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
    browser.chromium()
    d16, d8k = ctlib.tmpdir("html16"), ctlib.tmpdir("html8k")
    for d, size in ((d16, "16"), (d8k, "8192")):
        p = ctlib.run_traced([openssl, "speed", "-seconds", "1", "-bytes", size, "-evp",
                              "aes-128-cbc"], d)
        check(p.returncode == 0, f"openssl speed -bytes {size} ran under cryptrace")
    work = ctlib.tmpdir("html-out")
    page = os.path.join(work, "speed.html")
    ctlib.cryptrace_ok("report", "--html", page, d16, d8k)
    text = open(page, encoding="utf-8").read()
    check(not re.search(r"<script|<link|@import|url\(|src=", text, re.I),
          "the page is self-contained: no script, stylesheet link, import, url() or src")
    doc = json.loads(ctlib.cryptrace_ok("report", "--json", d16, d8k).stdout)
    cbc = [i for i, p in enumerate(doc["paths"], 1) if p["cipher"] == "aes-128-cbc"]
    sizes = {s["bucket_low"] for s in doc["paths"][cbc[0] - 1]["sizes"]}
    check({16, 8192} <= sizes, f"the aes-128-cbc path has the 16 and 8192 buckets ({sorted(sizes)})")
    els = check_page(page, doc, "speed 16 B + 8 KiB")
    pts = {(int(a["data-path"]), int(a["data-size"])) for t, a in els if a.get("class") == "pt"}
    check((cbc[0], 16) in pts and (cbc[0], 8192) in pts,
          "the chart has the aes-128-cbc points at 16 B and 8 KiB")
    check_profile(els, doc, "speed 16 B + 8 KiB")
    shot = os.environ.get("CT_SCREENSHOT") or os.path.join(work, "shot.png")
    browser.browse("file://" + page, f"--screenshot={shot}", "--window-size=1280,800",
                "--hide-scrollbars")
    check(os.path.exists(shot) and png_size(shot) == (1280, 800), "a 1280x800 screenshot was taken")
    check_print(page, work)

    # per-call mode, every operation kept (no rate cap): the timeline draws each of them
    calls_dir = ctlib.tmpdir("html-calls")
    p = ctlib.run_traced([ctlib.example("evp_threads")], calls_dir,
                         extra=["--mode", "calls", "--max-ops-rate", "0"])
    check(p.returncode == 0, "evp_threads ran under cryptrace --mode calls")
    page2 = os.path.join(work, "threads.html")
    ctlib.cryptrace_ok("report", "--html", page2, calls_dir)
    doc2 = json.loads(ctlib.cryptrace_ok("report", "--json", calls_dir).stdout)
    els2 = check_page(page2, doc2, "evp_threads per-call")
    tl = [a for t, a in els2 if t == "svg" and "timeline" in a.get("class", "")]
    ops = sum(q.get("per_call_ops", 0) for q in doc2["processes"])
    check(len(tl) == 1 and int(tl[0]["data-ops"]) == ops and ops > 0,
          f"the timeline draws all {ops} per-call operations ({[a.get('data-ops') for a in tl]})")
    # a filter changes the page: only the gcm path and its operations remain
    page3 = os.path.join(work, "gcm.html")
    ctlib.cryptrace_ok("report", "--html", page3, "--path", "aes-256-gcm", calls_dir)
    els3 = browser.elements(open(page3, encoding="utf-8").read())
    labels = {a["data-label"] for t, a in els3 if a.get("class") == "pt"}
    check(labels == {"evp/provider:default/aes-256-gcm/encrypt"},
          f"--path aes-256-gcm keeps only that path's points ({labels})")
    tl3 = [a for t, a in els3 if t == "svg" and "timeline" in a.get("class", "")]
    gcm_calls = sum(p["calls"] for p in doc2["paths"] if p["cipher"] == "aes-256-gcm")
    check(len(tl3) == 1 and int(tl3[0]["data-ops"]) == gcm_calls,
          f"--path keeps only the gcm operations in the timeline ({gcm_calls})")


ctlib.main(test)
