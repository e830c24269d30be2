#!/bin/sh
# SPDX-License-Identifier: MIT
# profile_overhead.sh - what the launcher's CPU profile (tracer/profile.c) costs the program:
# `openssl speed -evp aes-128-cbc` under `cryptrace run` with and without --no-profile,
# alternating round by round (the machine is shared and noisy), at 16 B and 16 KiB. Prints
# openssl's rates and the profiled/unprofiled ratio: median (min..max). Goal: >= 0.99.
#
# usage: bench/profile_overhead.sh [-r ROUNDS] [-b BUILD_DIR]
set -eu
rounds=7
build=
while getopts r:b: opt; do
	case $opt in
	r) rounds=$OPTARG ;;
	b) build=$OPTARG ;;
	*) echo "usage: $0 [-r ROUNDS] [-b BUILD_DIR]" >&2; exit 2 ;;
	esac
done
here=$(cd "$(dirname "$0")" && pwd)
build=${build:-$here/../build}
ct=$build/tracer/cryptrace
[ -x "$ct" ] || { echo "profile_overhead.sh: build first ($ct)" >&2; exit 77; }
command -v openssl >/dev/null || { echo "profile_overhead.sh: no openssl" >&2; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

rate() { # rate BYTES [--no-profile]: openssl's rate in 1000s of bytes per second (the profile at
	# $CRYPTRACE_PROFILE_HZ when set)
	out=$tmp/t.$$
	rm -rf "$out"
	"$ct" run -q -o "$out" $2 -- openssl speed -seconds 1 -bytes "$1" -evp aes-128-cbc 2>/dev/null |
		awk '/^AES-128-CBC/ { v = $NF; sub("k", "", v); print v }'
}

echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') ($(nproc) CPUs); $(openssl version)"
echo "openssl speed -evp aes-128-cbc under cryptrace run: profiled / --no-profile, $rounds alternating rounds"
printf '%8s %16s %16s %10s %s\n' size "profiled kB/s" "unprofiled kB/s" ratio "(min..max)"
for size in 16 16384; do
	: >"$tmp/r"
	for i in $(seq "$rounds"); do
		a=$(rate "$size" "")
		b=$(rate "$size" --no-profile)
		echo "$a $b" >>"$tmp/r"
	done
	awk -v size="$size" '
		{ a[NR] = $1; b[NR] = $2; r[NR] = $1 / $2 }
		END {
			n = NR
			for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) {
				if (r[j] < r[i]) { t = r[i]; r[i] = r[j]; r[j] = t }
				if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t }
				if (b[j] < b[i]) { t = b[i]; b[i] = b[j]; b[j] = t }
			}
			m = int((n + 1) / 2)
			printf "%8d %16.0f %16.0f %10.4f (%.4f..%.4f)\n", size, a[m], b[m], r[m], r[1], r[n]
		}' "$tmp/r"
done
