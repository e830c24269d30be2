#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""`cryptrace report --diff A B`: A is `openssl speed -seconds 1 -bytes 8192 -evp aes-128-cbc`
with AES-NI masked (OPENSSL_ia32cap="~0x200000200000000"), B the same run native. The diff
shows the aes-128-cbc path in both with its wall and CPU throughput before and after and their
ratio (the same figures the two reports print), and the software-aes finding vanishing."""
import json

import ctlib
from ctlib import check

CMD = ["speed", "-seconds", "1", "-bytes", "8192", "-evp", "aes-128-cbc"]


def test():
    openssl = ctlib.need_program("openssl")
    if not any("aes" in line.split() for line in open("/proc/cpuinfo") if line.startswith("flags")):
        ctlib.skip("this CPU has no AES instructions: masking them changes nothing")
    masked, native = ctlib.tmpdir("diff-masked"), ctlib.tmpdir("diff-native")
    p = ctlib.run_traced([openssl] + CMD, masked, env=ctlib.masked_env())
    check(p.returncode == 0, "the masked run")
    p = ctlib.run_traced([openssl] + CMD, native)
    check(p.returncode == 0, "the native run")
    a = ctlib.report_ok([masked])
    b = ctlib.report_ok([native])
    check("software-aes" in {f["kind"] for f in a["findings"]}, "the masked run has software-aes")
    native_sw = [f for f in b["findings"] if f["kind"] == "software-aes"]
    check(not native_sw, "the native run has not" +
          (f" (it has: {native_sw[0]['message']} / {native_sw[0]['evidence']})" if native_sw else ""))

    d = json.loads(ctlib.cryptrace_ok("report", "--diff", "--json", masked, native).stdout)
    cbc = [x for x in d["paths"] if x["path"] == "evp/provider:default/aes-128-cbc/encrypt"]
    check(len(cbc) == 1 and cbc[0]["status"] == "both", "the aes-128-cbc path is in both runs")
    x = cbc[0]

    def path(doc):
        return [q for q in doc["paths"] if q["cipher"] == "aes-128-cbc" and q["api"] == "evp"][0]

    pa, pb = path(a), path(b)
    for side, q in (("a", pa), ("b", pb)):
        check(x[side]["calls"] == q["calls"] and x[side]["bytes"] == q["bytes"],
              f"diff side {side}: calls and bytes are the report's")
        check(ctlib.json_equal(x[side]["throughput_wall_bps"], q["throughput_wall_bps"]) and
              ctlib.json_equal(x[side]["throughput_cpu_bps"], q["throughput_cpu_bps"]),
              f"diff side {side}: wall and CPU throughput are the report's")
    check(ctlib.json_equal(x["ratio_wall"], pb["throughput_wall_bps"] / pa["throughput_wall_bps"]),
          f"ratio_wall = native / masked = {x['ratio_wall']:.2f}")
    check(ctlib.json_equal(x["ratio_cpu"], pb["throughput_cpu_bps"] / pa["throughput_cpu_bps"]),
          f"ratio_cpu = {x['ratio_cpu']:.2f}")
    # Software AES is several times slower than AES-NI; > 1 is all that is asserted.
    check(x["ratio_wall"] > 1, f"native is faster than masked (x{x['ratio_wall']:.2f})")
    check(any(s["bucket_low"] == 8192 and s["ratio_wall"] for s in x["sizes"]),
          "the 8 KiB bucket has its own before/after")
    vanished = {f["kind"] for f in d["findings"]["vanished"]}
    appeared = {f["kind"] for f in d["findings"]["appeared"]}
    check("software-aes" in vanished and "software-aes" not in appeared,
          f"software-aes vanished (vanished {sorted(vanished)}, appeared {sorted(appeared)})")

    text = ctlib.cryptrace_ok("report", "--diff", masked, native).stdout.decode()
    print(text)
    line = [ln for ln in text.splitlines() if "evp/provider:default/aes-128-cbc/encrypt" in ln]
    check(line and f"x{x['ratio_wall']:.2f}" in line[0], "the text diff prints the path's ratio")
    check(any(ln.strip().startswith("vanished") and "software-aes" in ln for ln in text.splitlines()),
          "the text diff says software-aes vanished")
    p = ctlib.cryptrace("report", "--diff", masked)
    check(p.returncode == 2, "--diff with one input is a usage error")

    # new and vanished paths; a comma-separated set as one side
    gcm = ctlib.tmpdir("diff-gcm")
    p = ctlib.run_traced([openssl, "speed", "-seconds", "1", "-bytes", "16", "-evp", "aes-256-gcm"], gcm)
    check(p.returncode == 0, "the aes-256-gcm run")
    d = json.loads(ctlib.cryptrace_ok("report", "--diff", "--json", native, gcm).stdout)
    status = {x["path"]: x["status"] for x in d["paths"]}
    check(status.get("evp/provider:default/aes-128-cbc/encrypt") == "vanished" and
          status.get("evp/provider:default/aes-256-gcm/encrypt") == "new",
          f"cbc vanished and gcm is new ({status})")
    new = [x for x in d["paths"] if x["status"] == "new"][0]
    check(new["a"] is None and new["b"]["calls"] > 0, "a new path has no A side")
    d = json.loads(ctlib.cryptrace_ok("report", "--diff", "--json", f"{masked},{gcm}", native).stdout)
    check(d["a"]["processes"] == 2, f"a comma-separated set is one side ({d['a']['processes']} processes)")
    text = ctlib.cryptrace_ok("report", "--diff", native, gcm).stdout.decode()
    check("[new] evp/provider:default/aes-256-gcm/encrypt" in text and
          "[vanished] evp/provider:default/aes-128-cbc/encrypt" in text,
          "the text diff marks [new] and [vanished] paths")


ctlib.main(test)
