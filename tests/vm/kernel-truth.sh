#!/bin/bash
# SPDX-License-Identifier: MIT
# kernel-truth.sh: the report's AF_ALG times against what the client measures itself (issue
# [truth]), in the guest (TCG: not performance data, but both clocks see the same guest).
# examples/kernel/afalg_bench times, per request size, whole sessions (set-up, one request,
# teardown: `init_us`, `deinit_us`, `full_MB/s`) and then requests on one session (`MB/s`); run
# under cryptrace for a time budget, the report's per-request time of each size bucket, and its
# set-up and teardown times per session, must agree with the bench's own (its requests in both
# loops, weighted by how many of each the report counted): a request within 10 % from 1 KiB up
# and 15 % at 16 B, a set-up or a teardown within 35 %. The report times the syscalls; the bench
# also sees the hooks' own instructions around them (file-descriptor bookkeeping, decoding), which
# under TCG are a larger share of a 16-byte request or of a session's four set-up calls than on
# hardware (on this machine's CPU a few hundred ns of a set-up's ~10 us). 1.2 s per mode: the
# session loop's per-request time is what is left of a session once its set-up and teardown are
# taken out, a small difference of large figures at 16 B, and with 0.4 s (a few hundred
# sessions) a Zen 3 host's TCG jitter moved the comparison from 0.66 to 1.10 between runs, on the
# last landed build as on later ones; with 1.2 s it stayed within 0.87-1.06. A case out of bound
# runs the guest again (below).
source "$(dirname "$0")/lib.sh"

bench=$build_root/examples/kernel/afalg_bench
need_built "$cryptrace" "$preload" "$bench"
command -v python3 >/dev/null || fail "python3 is needed to read the JSON report"

sizes=16,1024,16384
# A case out of bound runs the whole guest again, up to 5 times in all, and each case is judged by
# the median of its ratios over the attempts (the rule of ctlib.truth for the host's suites): one
# TCG run on a loaded host moved a 16-byte ratio to 0.72, the next one at 0.94.
for attempt in 1 2 3 4 5; do
	o=$scratch/out$attempt
	guest --aesni --files "$cryptrace" "$preload" "$bench" --out "$o" -- "
for mode in sendmsg splice; do
	'$cryptrace' run -q -o \$OUT/\$mode.trace -- '$bench' --mode \$mode --seconds 1.2 \
		--sizes $sizes >\$OUT/\$mode.out 2>\$OUT/\$mode.err
	echo \$? >\$OUT/\$mode.status
done" || fail "the guest script failed"

	for mode in sendmsg splice; do
		[[ -f $o/$mode.status ]] || fail "$mode: no results came back"
		cat "$o/$mode.out"
		[[ $(cat "$o/$mode.status") == 0 ]] || fail "afalg_bench --mode $mode failed: $(cat "$o/$mode.err")"
		"$cryptrace" report --json "$o/$mode.trace" >"$o/$mode.json" ||
			fail "cryptrace report --json $mode failed"
	done

	python3 - "$scratch" "$attempt" <<'PY' && break
import json, statistics, sys

scratch, attempt = sys.argv[1], int(sys.argv[2])
out = f"{scratch}/out{attempt}"
def bound(size):
    return 0.10 if size >= 1024 else 0.15
SESSION_BOUND = 0.35
bad, ratios = [], {}  # ratios: case -> [ratio, bound, what the report and the bench said]
for mode in ("sendmsg", "splice"):
    rows = {}
    for line in open(f"{out}/{mode}.out"):
        f = line.split()
        if len(f) == 6 and f[0].isdigit():
            rows[int(f[0])] = dict(ops=int(f[1]), init_us=float(f[2]), mbps=float(f[3]),
                                   deinit_us=float(f[4]), full_mbps=float(f[5]))
    doc = json.load(open(f"{out}/{mode}.json"))
    paths = [p for p in doc["paths"] if p["api"] == "afalg"]
    if len(paths) != 1 or not rows:
        bad.append(f"{mode}: one afalg path and the bench's table ({len(paths)} paths, {len(rows)} rows)")
        continue
    p = paths[0]
    init_w = deinit_w = cycles_all = 0.0
    for size, r in sorted(rows.items()):
        b = [x for x in p["sizes"] if x["bucket_low"] <= size < 2 * max(1, x["bucket_low"])]
        if not b or not b[0]["wall_ns"]:
            bad.append(f"{mode} {size} B: no timed bucket")
            continue
        b = b[0]
        if r["mbps"] <= 0 or r["full_mbps"] <= 0:  # "0.00": the bench's own figure is unreadable
            print(f"{mode} {size} B: the bench printed a rate of 0.00 MB/s (a guest this slow "
                  "cannot be compared): not judged in this attempt")
            continue
        cycles = b["calls"] - r["ops"]  # the requests of the session loop
        op_us = size / r["mbps"]                                        # MB/s = B/us
        cyc_op_us = size / r["full_mbps"] - r["init_us"] - r["deinit_us"]
        truth = (r["ops"] * op_us + cycles * cyc_op_us) / (r["ops"] + cycles) * 1000
        got = b["wall_ns"] / b["calls"]
        print(f"{mode} {size:6d} B: report {got:9.0f} ns per request, bench {truth:9.0f} "
              f"(ratio {got / truth:.3f}; {r['ops']} + {cycles} requests)")
        ratios[f"{mode} {size} B per request"] = [got / truth, bound(size), f"{got:.0f} vs {truth:.0f} ns"]
        init_w += cycles * r["init_us"]
        deinit_w += cycles * r["deinit_us"]
        cycles_all += cycles
    s = p["session"]
    for what, got_ns, calls, want_us in (("set-up", s["setup_ns"], s["setup_calls"], init_w),
                                         ("teardown", s["teardown_ns"], s["teardown_calls"], deinit_w)):
        if not calls or not cycles_all:
            bad.append(f"{mode}: no {what} timed")
            continue
        got, want = got_ns / calls, want_us / cycles_all * 1000
        print(f"{mode} {what}: report {got:9.0f} ns per session, bench {want:9.0f} (ratio {got / want:.3f})")
        ratios[f"{mode} {what} per session"] = [got / want, SESSION_BOUND, f"{got:.0f} vs {want:.0f} ns"]
json.dump(ratios, open(f"{scratch}/ratios{attempt}.json", "w"))
# every case by the median of its ratios over the attempts so far
seen = [json.load(open(f"{scratch}/ratios{a}.json")) for a in range(1, attempt + 1)]
for case in sorted({c for r in seen for c in r}):
    rs = [r[case][0] for r in seen if case in r]
    lim = next(r[case][1] for r in seen if case in r)
    med = statistics.median(rs)
    if abs(med - 1) > lim:
        bad.append(f"{case}: median ratio {med:.3f} over {len(rs)} attempt(s) {[round(x, 3) for x in rs]}, "
                   f"bound {lim:.0%} (last: {seen[-1].get(case, [0, 0, '-'])[2]})")
for b in bad:
    print(f"MISMATCH (attempt {attempt} of 5):", b)
sys.exit(1 if bad else 0)
PY
	[[ $attempt == 5 ]] && fail "the report's AF_ALG times are not the bench's own"
	note "attempt $attempt out of bound: the guest runs again"
done
note "PASS: AF_ALG request, set-up and teardown times agree with afalg_bench's own"
