#!/bin/sh
# SPDX-License-Identifier: MIT
# msg_cost.sh - what one whole AES-GCM message costs through EVP (bench/msg_cost: the init, ctrl
# and final calls around the data), side by side: natively, traced (the default mode), routed to
# the in-process code with the direct lane (route/lane.h) and without it
# (CRYPTRACE_ROUTE_DIRECT=0), alternating run by run. Prints the median ns per message of each
# mode and each mode's ratio to native (native ns / mode ns: > 1 is faster than native), median
# and min..max over the runs. With -o OLD_LIB another build's library runs the traced and
# routed modes too, in the same rounds.
#
# With -i it counts instructions instead (valgrind's cachegrind: the instructions of N and of 2N
# messages, subtracted, over N): one run per mode, the same on any host however busy, for
# changes too small for a shared machine's clock. Valgrind has no AVX-512: the code levels are
# the ones it offers (AES-NI, AVX2), natively and in our backend alike.
#
# usage: bench/msg_cost.sh [-r ROUNDS] [-b BUILD_DIR] [-n LENS] [-s SHAPES] [-o OLD_LIB] [-i]
#        LENS: "16 1024" by default; SHAPES: "speed tls13-enc tls13-dec tls12-enc tls12-dec ssh"
set -eu
rounds=7
build=
lens="16 1024"
shapes="speed tls13-enc tls13-dec tls12-enc tls12-dec ssh"
old=
count=
while getopts r:b:n:s:o:i opt; do
	case $opt in
	r) rounds=$OPTARG ;;
	b) build=$OPTARG ;;
	n) lens=$OPTARG ;;
	s) shapes=$OPTARG ;;
	o) old=$OPTARG ;;
	i) count=1 ;;
	*) echo "usage: $0 [-r ROUNDS] [-b BUILD_DIR] [-n LENS] [-s SHAPES] [-o OLD_LIB] [-i]" >&2; exit 2 ;;
	esac
done
[ -z "$count" ] || command -v valgrind >/dev/null || { echo "msg_cost.sh: -i needs valgrind" >&2; exit 77; }
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
bench_build_prog msg_cost.sh msg_cost
echo "# $(bench_cpu_line "$build")"
route='aes-*=aesni'
for shape in $shapes; do
	case $shape in
	speed) args="speed enc" ;;
	tls13-enc) args="tls13 enc" ;;
	tls13-dec) args="tls13 dec" ;;
	tls12-enc) args="tls12 enc" ;;
	tls12-dec) args="tls12 dec" ;;
	ssh) args="ssh enc" ;;
	*) echo "msg_cost.sh: unknown shape $shape" >&2; exit 2 ;;
	esac
	for len in $lens; do
		msgs=$((len <= 1024 ? 200000 : 20000000 / len))
		one() { "$@" "$prog" "$len" "$msgs" 7 $args | sed -n 's/^ns_per_msg //p'; }
		modes="native traced lane no-lane"
		[ -z "$old" ] || modes="$modes old-traced old-lane"
		if [ -n "$count" ]; then
			# instructions of n messages (one batch), from cachegrind's summary
			irs() {
				n=$1
				shift
				"$@" valgrind --tool=cachegrind --cache-sim=no --cachegrind-out-file=/dev/null \
					"$prog" "$len" "$n" 1 $args 2>&1 | sed -n 's/.*I *refs: *//p' | tr -d ,
			}
			n=$((len <= 1024 ? 20000 : 2000))
			echo "AES-128-GCM $shape, $len B messages: instructions per message (valgrind), ratio to native"
			for m in $modes; do
				case $m in
				native) e= ;;
				traced) e="LD_PRELOAD=$lib" ;;
				lane) e="LD_PRELOAD=$lib CRYPTRACE_ROUTE=$route" ;;
				no-lane) e="LD_PRELOAD=$lib CRYPTRACE_ROUTE=$route CRYPTRACE_ROUTE_DIRECT=0" ;;
				old-traced) e="LD_PRELOAD=$old" ;;
				old-lane) e="LD_PRELOAD=$old CRYPTRACE_ROUTE=$route" ;;
				esac
				# shellcheck disable=SC2086
				a=$(irs "$n" env CRYPTRACE_OUT="$out/t" $e)
				# shellcheck disable=SC2086
				b=$(irs $((2 * n)) env CRYPTRACE_OUT="$out/t" $e)
				per=$(((b - a) / n))
				[ "$m" != native ] || base=$per
				printf '  %-11s %8s %7.3f\n' "$m" "$per" "$(echo "$base $per" | awk '{print $1 / $2}')"
				rm -rf "$out/t"
			done
			continue
		fi
		i=0
		while [ "$i" -lt "$rounds" ]; do
			one env >>"$out/native"
			one env LD_PRELOAD="$lib" CRYPTRACE_OUT="$out/t" >>"$out/traced"
			one env LD_PRELOAD="$lib" CRYPTRACE_OUT="$out/t" CRYPTRACE_ROUTE="$route" >>"$out/lane"
			one env LD_PRELOAD="$lib" CRYPTRACE_OUT="$out/t" CRYPTRACE_ROUTE="$route" \
				CRYPTRACE_ROUTE_DIRECT=0 >>"$out/no-lane"
			if [ -n "$old" ]; then
				one env LD_PRELOAD="$old" CRYPTRACE_OUT="$out/t" >>"$out/old-traced"
				one env LD_PRELOAD="$old" CRYPTRACE_OUT="$out/t" CRYPTRACE_ROUTE="$route" >>"$out/old-lane"
			fi
			rm -rf "$out/t"
			i=$((i + 1))
		done
		echo "AES-128-GCM $shape, $len B messages: best of 7 x $msgs messages per run, $rounds alternating runs"
		printf '  %-11s %10s %8s %s\n' mode ns/msg ratio min..max
		for m in $modes; do
			paste "$out/native" "$out/$m" | awk '{print $1 / $2}' >"$out/$m.ratio"
			printf '  %-11s %10s %8.3f %s..%s\n' "$m" "$(bench_median "$out/$m")" "$(bench_median "$out/$m.ratio")" \
				"$(sort -g "$out/$m.ratio" | head -1)" "$(sort -g "$out/$m.ratio" | tail -1)"
		done
		rm -f "$out"/native "$out"/traced "$out"/lane "$out"/no-lane "$out"/old-* "$out"/*.ratio
	done
done
if [ -n "$count" ]; then
	echo "ratio = native instructions / mode instructions"
else
	echo "ratio = native ns / mode ns (> 1: faster than OpenSSL's own code through EVP)"
fi
