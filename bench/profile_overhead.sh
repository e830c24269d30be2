#!/bin/sh
# SPDX-License-Identifier: MIT
# profile_overhead.sh - what the launcher's CPU profile (tracer/profile.c) costs the program:
# `openssl speed -evp aes-128-cbc` under `cryptrace run` with the profile's call stacks (the
# default: user registers and an 8 KiB stack copy per sample, unwound in the launcher), leaf only
# (CRYPTRACE_PROFILE_STACK=0) and with --no-profile, alternating round by round (the machine is
# shared and noisy), at 16 B and 16 KiB. Prints openssl's rates and the ratios to the
# unprofiled run, median (min..max), stacks and leaf only side by side. Goal: >= 0.99.
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

rate() { # rate BYTES STACK_BYTES [--no-profile]: openssl's rate in 1000s of bytes per second
	# (the profile at $CRYPTRACE_PROFILE_HZ when set; STACK_BYTES: CRYPTRACE_PROFILE_STACK)
	out=$tmp/t.$$
	rm -rf "$out"
	CRYPTRACE_PROFILE_STACK=$2 "$ct" run -q -o "$out" $3 -- \
		openssl speed -seconds 1 -bytes "$1" -evp aes-128-cbc 2>/dev/null |
		awk '/^AES-128-CBC/ { v = $NF; sub("k", "", v); print v }'
}

echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') ($(nproc) CPUs); $(openssl version)"
echo "openssl speed -evp aes-128-cbc under cryptrace run at ${CRYPTRACE_PROFILE_HZ:-250} Hz:" \
	"with stacks, leaf only, --no-profile; $rounds alternating rounds"
printf '%8s %12s %12s %12s %28s %28s\n' size "stacks kB/s" "leaf kB/s" "none kB/s" \
	"stacks/none (min..max)" "leaf/none (min..max)"
for size in 16 16384; do
	: >"$tmp/r"
	for i in $(seq "$rounds"); do
		a=$(rate "$size" 8192 "")
		b=$(rate "$size" 0 "")
		c=$(rate "$size" 8192 --no-profile)
		echo "$a $b $c" >>"$tmp/r"
	done
	awk -v size="$size" '
		function sort(v, n,   i, j, t) {
			for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
				if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
		}
		{ a[NR] = $1; b[NR] = $2; c[NR] = $3; ra[NR] = $1 / $3; rb[NR] = $2 / $3 }
		END {
			n = NR
			sort(a, n); sort(b, n); sort(c, n); sort(ra, n); sort(rb, n)
			m = int((n + 1) / 2)
			printf "%8d %12.0f %12.0f %12.0f %8.4f (%.4f..%.4f) %8.4f (%.4f..%.4f)\n", size,
				a[m], b[m], c[m], ra[m], ra[1], ra[n], rb[m], rb[1], rb[n]
		}' "$tmp/r"
done
