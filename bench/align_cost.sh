#!/bin/sh
# SPDX-License-Identifier: MIT
# align_cost.sh - what the data's place on its cache line costs an EVP data call (bench/align_cost:
# in-place updates on a buffer OFFSET bytes past a page's start), natively and routed to the
# in-process code, alternating run by run; with -o OLD_LIB another build's library routed too, in
# the same rounds. Prints the median ns per call of each mode at each offset, and each mode's
# ratio to its own time at offset 0 (> 1: the offset costs nothing, < 1: it costs), median over
# the runs; with -o, OLD / route (> 1: this build faster).
#
# usage: bench/align_cost.sh [-r ROUNDS] [-b BUILD_DIR] [-c CIPHERS] [-n LENS] [-f OFFSETS]
#                            [-d] [-O OUT_OFFSET] [-o OLD_LIB]
#        CIPHERS "aes-128-xts" by default; LENS "1024 4096 16384"; OFFSETS "0 16 48"; -d: decrypt;
#        -O: out of place, the output OUT_OFFSET bytes into a page of its own, only the input
#        moved by OFFSETS (a cost that stays is the loads', one that goes the stores')
set -eu
rounds=5
build=
ciphers=aes-128-xts
lens="1024 4096 16384"
offsets="0 16 48"
dir=enc
old=
out_off=
while getopts r:b:c:n:f:dO:o: opt; do
	case $opt in
	r) rounds=$OPTARG ;;
	b) build=$OPTARG ;;
	c) ciphers=$OPTARG ;;
	n) lens=$OPTARG ;;
	f) offsets=$OPTARG ;;
	d) dir=dec ;;
	O) out_off=$OPTARG ;;
	o) old=$OPTARG ;;
	*) echo "usage: $0 [-r ROUNDS] [-b BUILD_DIR] [-c CIPHERS] [-n LENS] [-f OFFSETS] [-d] [-O OUT_OFFSET] [-o OLD_LIB]" >&2; exit 2 ;;
	esac
done
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
bench_build_prog align_cost.sh align_cost
echo "# $(bench_cpu_line "$build")"
modes="native route"
[ -z "$old" ] || modes="$modes old"
for cipher in $ciphers; do
	for len in $lens; do
		calls=$((len <= 1024 ? 100000 : 40000000 / len))
		i=0
		while [ "$i" -lt "$rounds" ]; do
			for f in $offsets; do
				for m in $modes; do
					case $m in
					native) e= ;;
					route) e="LD_PRELOAD=$lib CRYPTRACE_ROUTE=aes-*=aesni" ;;
					old) e="LD_PRELOAD=$old CRYPTRACE_ROUTE=aes-*=aesni" ;;
					esac
					# shellcheck disable=SC2086
					v=$(env CRYPTRACE_OUT="$out/t" $e "$prog" "$cipher" "$len" "$f" "$calls" 7 "$dir" $out_off |
						sed -n 's/^ns_per_call //p')
					[ -n "$v" ] || { echo "align_cost.sh: $m $cipher $len B at $f: no figure" >&2; exit 1; }
					echo "$v" >>"$out/$m.$f"
					rm -rf "$out/t"
				done
			done
			i=$((i + 1))
		done
		where="in place"
		[ -z "$out_off" ] || where="out of place, the output $out_off bytes into its page, the input moved"
		echo "$cipher $dir, $len B $where: ns per call (median of $rounds alternating runs, each the best of 7 x $calls calls), ratio to offset 0"
		printf '  %-7s' offset
		for m in $modes; do printf ' %10s %6s' "$m" ratio; done
		[ -z "$old" ] || printf ' %9s' old/route
		echo
		for f in $offsets; do
			printf '  %-7s' "$f"
			for m in $modes; do
				paste "$out/$m.$(echo "$offsets" | awk '{print $1}')" "$out/$m.$f" | awk '{print $1 / $2}' >"$out/r"
				printf ' %10s %6.3f' "$(bench_median "$out/$m.$f")" "$(bench_median "$out/r")"
			done
			if [ -n "$old" ]; then
				paste "$out/old.$f" "$out/route.$f" | awk '{print $1 / $2}' >"$out/r"
				printf ' %9.3f' "$(bench_median "$out/r")"
			fi
			echo
		done
		rm -f "$out"/native.* "$out"/route.* "$out"/old.* "$out/r"
	done
done
