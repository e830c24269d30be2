#!/bin/sh
# SPDX-License-Identifier: MIT
# route_restore.sh - does `--route aes-*=aesni` give back what a libcrypto without AES-NI lost,
# and does it beat native OpenSSL? `openssl speed -evp` per mode at 16 B and 8 KiB, side by side
# in one run, rounds alternating over the configurations so machine noise hits all alike:
#   native        openssl as is
#   traced        under libcryptrace.so, no route (what tracing alone costs)
#   masked        OPENSSL_ia32cap="~0x200000200000000" (no AES-NI, no PCLMULQDQ: the NetBSD case)
#   masked+route  masked, under libcryptrace.so with CRYPTRACE_ROUTE=aes-*=aesni
#   route         unmasked, under libcryptrace.so with CRYPTRACE_ROUTE=aes-*=aesni
# Prints medians (1000s of bytes/s, like openssl) and the ratios the issue asks for:
#   restore = masked+route / native (target >= 0.95 at 8 KiB, >= 0.90 at 16 B)
#   beat    = route / native        (target >= 1.3 at 8 KiB for the parallel modes)
#   limit   = route / LIMIT_GBS     (the limit of the widest AES instruction of this CPU for
#                                    AES-128, measured by aesni_bench --limits next to the preload's
#                                    build; 19.5 when that is not built; LIMIT_GBS overrides both)
#
# usage: bench/route_restore.sh [-r ROUNDS] [-s SECONDS] [-l libcryptrace.so] [-m "modes"]
# modes: cbc-enc cbc-dec ctr ecb xts gcm (default all; AES-128)
# Every routed run is a traced run too: CRYPTRACE_SAMPLE and the other CRYPTRACE_* settings in the
# environment reach the traced and routed configurations (e.g. CRYPTRACE_SAMPLE=256 to see the
# route with timing at 1 in 256 small calls); the header line says which sampling was in effect.
set -eu

rounds=3
seconds=1
lib=
modes="cbc-enc cbc-dec ctr ecb xts gcm"
while getopts r:s:l:m: opt; do
	case $opt in
	r) rounds=$OPTARG ;;
	s) seconds=$OPTARG ;;
	l) lib=$OPTARG ;;
	m) modes=$OPTARG ;;
	*) echo "usage: $0 [-r ROUNDS] [-s SECONDS] [-l libcryptrace.so] [-m modes]" >&2; exit 2 ;;
	esac
done
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
bench_find_preload route_restore.sh
command -v openssl >/dev/null || { echo "route_restore.sh: no openssl command" >&2; exit 77; }
grep -qw aes /proc/cpuinfo || { echo "route_restore.sh: no AES-NI on this CPU" >&2; exit 77; }
limit_from="LIMIT_GBS"
if [ -z "${LIMIT_GBS:-}" ]; then
	limit=19.5
	limit_from="default: aesni_bench not built"
	bench=$(dirname "$(dirname "$lib")")/aesni/aesni_bench
	if [ -x "$bench" ]; then
		# "parallel-mode limit: 256-bit VAES (ymm), ..." names the widest; its own line has the GB/s
		limits=$("$bench" --limits)
		widest=$(echo "$limits" | sed -n 's/^parallel-mode limit: \(.*\), the widest.*/\1/p')
		gbs=$(echo "$limits" | grep -F "$widest:" | sed -n 's/.*, \([0-9.]*\) GB\/s of AES-128/\1/p')
		if [ -n "$widest" ] && [ -n "$gbs" ]; then
			limit=$gbs
			limit_from="$widest, measured by aesni_bench --limits"
		fi
	fi
else
	limit=$LIMIT_GBS
fi
mask='~0x200000200000000'
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT INT TERM

cipher_of() { case $1 in cbc-*) echo aes-128-cbc ;; *) echo "aes-128-$1" ;; esac; }

# one run: prints openssl's figure in 1000s of bytes/s (the last line, number before 'k')
speed() { # mode bytes config
	c=$(cipher_of "$1")
	dec=
	[ "$1" = cbc-dec ] && dec=-decrypt
	set -- "$1" "$2" "$3" openssl speed -seconds "$seconds" -bytes "$2" $dec -evp "$c"
	case $3 in
	native) shift 3; env -u LD_PRELOAD -u OPENSSL_ia32cap "$@" ;;
	traced) shift 3; env -u OPENSSL_ia32cap LD_PRELOAD="$lib" CRYPTRACE_OUT="$out" "$@" ;;
	masked) shift 3; env -u LD_PRELOAD OPENSSL_ia32cap="$mask" "$@" ;;
	masked+route) shift 3; env OPENSSL_ia32cap="$mask" LD_PRELOAD="$lib" CRYPTRACE_OUT="$out" \
		CRYPTRACE_ROUTE='aes-*=aesni' "$@" ;;
	route) shift 3; env -u OPENSSL_ia32cap LD_PRELOAD="$lib" CRYPTRACE_OUT="$out" \
		CRYPTRACE_ROUTE='aes-*=aesni' "$@" ;;
	esac 2>/dev/null | awk 'END { v = $NF; sub(/k$/, "", v); print v + 0 }'
	rm -f "$out"/*.ctrace
}

median() { sort -g | awk '{ a[NR] = $1 } END { if (NR % 2) print a[(NR + 1) / 2]; else print (a[NR / 2] + a[NR / 2 + 1]) / 2 }'; }

configs="native traced masked masked+route route"
echo "route restore/beat: openssl speed -seconds $seconds -evp, AES-128, $rounds alternating rounds"
echo "library: $lib"
echo "host: $(nproc) cpus, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'), $(openssl version)"
echo "tracing: CRYPTRACE_SAMPLE=${CRYPTRACE_SAMPLE:-(library default)}"
echo "figures: median 1000s of bytes/s; restore = masked+route/native, beat = route/native,"
echo "         traced = traced/native, limit = route / $limit GB/s ($limit_from)"
printf '%-8s %6s %12s %12s %12s %12s %12s %8s %8s %8s %8s %6s\n' mode bytes native traced masked \
	masked+rt route masked/n restore beat traced limit
for mode in $modes; do
	for bytes in 16 8192; do
		for cfg in $configs; do : >"$out/$cfg.txt"; done
		i=0
		while [ $i -lt "$rounds" ]; do
			for cfg in $configs; do
				speed "$mode" "$bytes" "$cfg" >>"$out/$cfg.txt"
			done
			i=$((i + 1))
		done
		n=$(median <"$out/native.txt"); t=$(median <"$out/traced.txt"); m=$(median <"$out/masked.txt")
		mr=$(median <"$out/masked+route.txt"); r=$(median <"$out/route.txt")
		awk -v mode="$mode" -v b="$bytes" -v n="$n" -v t="$t" -v m="$m" -v mr="$mr" -v r="$r" -v lim="$limit" 'BEGIN {
			printf "%-8s %6d %12.0f %12.0f %12.0f %12.0f %12.0f %8.3f %8.3f %8.3f %8.3f %5.0f%%\n",
				mode, b, n, t, m, mr, r, (n > 0 ? m / n : 0), (n > 0 ? mr / n : 0),
				(n > 0 ? r / n : 0), (n > 0 ? t / n : 0), r / 1e6 / lim * 100
		}'
	done
done
