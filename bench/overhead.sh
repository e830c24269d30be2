#!/bin/sh
# SPDX-License-Identifier: MIT
# overhead.sh - what tracing costs: `openssl speed -evp aes-128-cbc` at 16 B and 8 KiB requests,
# natively and under libcryptrace.so, alternating (native, traced, native, traced...) so that
# machine noise hits both alike. Prints the median throughput of each and traced/native ratios
# (median, min..max over the rounds). Also measures other sampling periods, no call timed at all,
# per-call mode and "every call timed", so the cost of the hook and of timing show separately.
#
# usage: bench/overhead.sh [-r ROUNDS] [-s SECONDS] [-l path/to/libcryptrace.so] [-m "MODES"]
# MODES (default all): stats sample256 untimed sample64 calls sample1
# Targets (issue 2): ratio >= 0.90 at 16 B, >= 0.99 at 8 KiB, in the default mode.
set -eu

rounds=5
seconds=1
lib=
modes="stats sample256 untimed sample64 calls sample1"
while getopts r:s:l:m: opt; do
	case $opt in
	r) rounds=$OPTARG ;;
	s) seconds=$OPTARG ;;
	l) lib=$OPTARG ;;
	m) modes=$OPTARG ;;
	*) echo "usage: $0 [-r ROUNDS] [-s SECONDS] [-l libcryptrace.so] [-m MODES]" >&2; exit 2 ;;
	esac
done
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
bench_find_preload overhead.sh
command -v openssl >/dev/null || { echo "overhead.sh: no openssl command" >&2; exit 77; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT INT TERM

# one run: prints the throughput in 1000s of bytes/s (openssl's last line, the number before 'k')
speed() { # bytes mode(native|stats|sample256|untimed|sample64|calls|sample1)
	case $2 in
	native) env -u LD_PRELOAD openssl speed -seconds "$seconds" -bytes "$1" -evp aes-128-cbc 2>/dev/null ;;
	stats) LD_PRELOAD=$lib CRYPTRACE_OUT=$out openssl speed -seconds "$seconds" -bytes "$1" -evp aes-128-cbc 2>/dev/null ;;
	calls) LD_PRELOAD=$lib CRYPTRACE_OUT=$out CRYPTRACE_MODE=calls openssl speed -seconds "$seconds" -bytes "$1" -evp aes-128-cbc 2>/dev/null ;;
	sample1) LD_PRELOAD=$lib CRYPTRACE_OUT=$out CRYPTRACE_SAMPLE=1 openssl speed -seconds "$seconds" -bytes "$1" -evp aes-128-cbc 2>/dev/null ;;
	sample64) LD_PRELOAD=$lib CRYPTRACE_OUT=$out CRYPTRACE_SAMPLE=64 openssl speed -seconds "$seconds" -bytes "$1" -evp aes-128-cbc 2>/dev/null ;;
	sample256) LD_PRELOAD=$lib CRYPTRACE_OUT=$out CRYPTRACE_SAMPLE=256 openssl speed -seconds "$seconds" -bytes "$1" -evp aes-128-cbc 2>/dev/null ;;
	# no small call timed (period 2^30); calls >= 1 KiB still are
	untimed) LD_PRELOAD=$lib CRYPTRACE_OUT=$out CRYPTRACE_SAMPLE=1073741824 openssl speed -seconds "$seconds" -bytes "$1" -evp aes-128-cbc 2>/dev/null ;;
	esac | awk '/^(AES|aes)-128-(CBC|cbc)/ { v = $2; sub(/k$/, "", v); print v }'
	rm -f "$out"/*
}

median() { sort -g | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

echo "cryptrace overhead: openssl speed -seconds $seconds -evp aes-128-cbc, $rounds alternating rounds"
echo "library: $lib"
echo "host: $(nproc) cpus, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
printf '%-8s %-8s %14s %14s %8s %s\n' bytes mode native_k traced_k ratio "min..max"
for bytes in 16 8192; do
	for mode in $modes; do
		: >"$out.n"; : >"$out.t"; : >"$out.r"
		i=0
		while [ $i -lt "$rounds" ]; do
			n=$(speed "$bytes" native)
			t=$(speed "$bytes" "$mode")
			echo "$n" >>"$out.n"; echo "$t" >>"$out.t"
			awk -v n="$n" -v t="$t" 'BEGIN { if (n > 0) printf "%.4f\n", t / n }' >>"$out.r"
			i=$((i + 1))
		done
		mn=$(median <"$out.n"); mt=$(median <"$out.t"); mr=$(median <"$out.r")
		lo=$(sort -g "$out.r" | head -1); hi=$(sort -g "$out.r" | tail -1)
		printf '%-8s %-8s %14s %14s %8s %s..%s\n' "$bytes" "$mode" "$mn" "$mt" "$mr" "$lo" "$hi"
	done
done
rm -f "$out.n" "$out.t" "$out.r"
echo "modes: stats = default (on average 1 in CRYPTRACE_SAMPLE calls < 1024 B timed, at random"
echo "       intervals; every larger call timed); the trace header's timing line says which period;"
echo "       sample256 / sample64 = CRYPTRACE_SAMPLE=256 / 64; untimed = no call < 1 KiB timed;"
echo "       calls = CRYPTRACE_MODE=calls (every call timed and kept);"
echo "       sample1 = CRYPTRACE_SAMPLE=1 (every call timed, aggregates only)"
