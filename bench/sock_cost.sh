#!/bin/sh
# SPDX-License-Identifier: MIT
# sock_cost.sh - the fd check the kTLS / AF_ALG socket hooks make on every send, recv, write and
# read, on a socket that is neither: bench/sock_cost (16-byte send+recv, or write+read, on a UNIX
# socketpair, thread CPU time, best batch) natively and under the preload, alternating round by
# round. Prints ns per pair and native/traced ratios (median, min..max).
#
# usage: bench/sock_cost.sh [-r ROUNDS] [-b BUILD_DIR] [-n LEN]
set -eu
rounds=9
build=
len=16
while getopts r:b:n: opt; do
	case $opt in
	r) rounds=$OPTARG ;;
	b) build=$OPTARG ;;
	n) len=$OPTARG ;;
	*) echo "usage: $0 [-r ROUNDS] [-b BUILD_DIR] [-n LEN]" >&2; exit 2 ;;
	esac
done
here=$(cd "$(dirname "$0")" && pwd)
build=${build:-$here/../build}
prog=$build/bench/sock_cost
lib=$build/preload/libcryptrace.so
[ -x "$prog" ] && [ -f "$lib" ] || { echo "sock_cost.sh: build first ($prog, $lib)" >&2; exit 77; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT INT TERM
one() { "$@" | sed -n 's/^ns_per_pair //p'; }
i=0
while [ "$i" -lt "$rounds" ]; do
	for via in send write; do
		one "$prog" "$via" 100000 5 "$len" >>"$out/native-$via"
		one env LD_PRELOAD="$lib" CRYPTRACE_OUT="$out/t" "$prog" "$via" 100000 5 "$len" >>"$out/traced-$via"
	done
	rm -rf "$out/t"
	i=$((i + 1))
done
median() { sort -g "$1" | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
echo "socket hook cost: $len B on a UNIX socketpair, best of 5 x 100000 pairs per run, $rounds alternating runs"
printf '%-13s %10s %10s %8s %s\n' calls native traced ratio min..max
for via in send write; do
	paste "$out/native-$via" "$out/traced-$via" | awk '{print $1 / $2}' >"$out/$via.ratio"
	printf '%-13s %10s %10s %8.4f %s..%s\n' "$via+$( [ $via = send ] && echo recv || echo read)" \
		"$(median "$out/native-$via")" "$(median "$out/traced-$via")" "$(median "$out/$via.ratio")" \
		"$(sort -g "$out/$via.ratio" | head -1)" "$(sort -g "$out/$via.ratio" | tail -1)"
done
echo "ns per pair (one send and one recv); ratio = native ns / traced ns (1.0: no cost)"
