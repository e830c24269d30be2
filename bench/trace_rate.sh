#!/bin/sh
# SPDX-License-Identifier: MIT
# trace_rate.sh - what per-call mode's rate cap (--max-ops-rate, preload/ops_cap.c) buys: trace
# bytes per second of tracing and `openssl speed` throughput, side by side in each round:
# untraced, stats mode (the default), calls mode capped (the default 250,000 ops/s) and calls
# mode uncapped (--max-ops-rate 0), and as a baseline of the same kind, `perf record -g` (perf's
# default 4 kHz sampling with call graphs: what a profiler's file grows by), when perf works here.
# Rounds alternate them (the machine is shared and noisy); prints the median (min..max) of each,
# and ns per call from openssl's own count.
#
# usage: bench/trace_rate.sh [-r ROUNDS] [-s SECONDS] [-n BYTES] [-b BUILD_DIR]
set -eu
rounds=3
seconds=3
bytes=64
build=
while getopts r:s:n:b: opt; do
	case $opt in
	r) rounds=$OPTARG ;;
	s) seconds=$OPTARG ;;
	n) bytes=$OPTARG ;;
	b) build=$OPTARG ;;
	*) echo "usage: $0 [-r ROUNDS] [-s SECONDS] [-n BYTES] [-b BUILD_DIR]" >&2; exit 2 ;;
	esac
done
here=$(cd "$(dirname "$0")" && pwd)
build=${build:-$here/../build}
ct=$build/tracer/cryptrace
[ -x "$ct" ] || { echo "trace_rate.sh: build first ($ct)" >&2; exit 77; }
command -v openssl >/dev/null || { echo "trace_rate.sh: no openssl" >&2; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

now() { date +%s.%N; }

# one MODE: prints "calls seconds_of_tracing trace_bytes" (openssl's count and time, the run's
# wall time, the trace directory's size; 0 bytes untraced)
one() {
	out=$tmp/t
	rm -rf "$out"
	set -- openssl speed -seconds "$seconds" -bytes "$bytes" -evp aes-128-ctr
	t0=$(now)
	case $mode in
	untraced) "$@" 2>"$tmp/err" >/dev/null ;;
	stats) "$ct" run -q -o "$out" -- "$@" 2>"$tmp/err" >/dev/null ;;
	capped) "$ct" run -q -o "$out" --mode calls -- "$@" 2>"$tmp/err" >/dev/null ;;
	uncapped) "$ct" run -q -o "$out" --mode calls --max-ops-rate 0 -- "$@" 2>"$tmp/err" >/dev/null ;;
	perf) mkdir -p "$out" && perf record -q -g -o "$out/perf.data" -- "$@" 2>"$tmp/err" >/dev/null ;;
	esac
	t1=$(now)
	size=0
	[ -d "$out" ] && size=$(du -sb "$out" | cut -f1)
	# "Doing AES-128-CTR for 3s on 64 size blocks: 22293809 AES-128-CTR's in 2.97s" (openssl's
	# own seconds: the process's CPU time unless -elapsed; "ops in" from OpenSSL 3.2 on)
	awk -v t0="$t0" -v t1="$t1" -v size="$size" '
		/ in [0-9.]+s$/ { for (i = 1; i < NF; i++) if (tolower($(i + 1)) ~ /^aes-128-ctr/) n = $i
		                  s = $NF; sub("s$", "", s) }
		END { printf "%s %s %.3f %s\n", n, s, t1 - t0, size }' "$tmp/err"
}

echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') ($(nproc) CPUs); $(openssl version)"
echo "openssl speed -seconds $seconds -bytes $bytes -evp aes-128-ctr: untraced, stats, calls capped" \
	"(default 250k ops/s), calls uncapped (--max-ops-rate 0); $rounds alternating rounds"
modes="untraced stats capped uncapped"
if command -v perf >/dev/null && perf record -q -o "$tmp/probe.data" -- true >/dev/null 2>&1; then
	modes="$modes perf"
else
	echo "(perf record does not work here: no perf baseline)"
fi
: >"$tmp/r"
for i in $(seq "$rounds"); do
	for mode in $modes; do
		echo "$mode $(one)" >>"$tmp/r"
	done
done
echo "(ns/call and MB/s from openssl's count and its own seconds; trace MB/s: per second of the run's wall time)"
printf '%-9s %16s %22s %22s %24s\n' mode "ns/call" "openssl MB/s" "trace MB" "trace MB/s of tracing"
for mode in $modes; do
	awk -v mode="$mode" -v bytes="$bytes" '
		function sort(v, n,   i, j, t) {
			for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
				if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
		}
		function col(v, n,   m) { sort(v, n); m = int((n + 1) / 2)
			return sprintf(v[n] < 1 ? "%.3f (%.3f..%.3f)" : "%.1f (%.1f..%.1f)", v[m], v[1], v[n]) }
		$1 == mode { n++; ns[n] = $3 * 1e9 / $2; mbs[n] = $2 * bytes / $3 / 1e6
		             mb[n] = $5 / 1e6; rate[n] = $5 / 1e6 / $4 }
		END { printf "%-9s %16s %22s %22s %24s\n", mode, col(ns, n), col(mbs, n), col(mb, n),
		             col(rate, n) }' "$tmp/r"
done
