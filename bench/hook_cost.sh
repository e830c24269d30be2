#!/bin/sh
# SPDX-License-Identifier: MIT
# hook_cost.sh - the hook's own cost per EVP call, side by side: bench/hook_cost (a 16-byte
# EVP_EncryptUpdate loop timed by thread CPU time, best batch) natively and under the preload,
# alternating round by round, in the default mode and with no small call timed ("untimed").
# Prints ns/call medians and native/traced throughput ratios (median, min..max). With -o OLD_LIB
# (another build's libcryptrace.so, e.g. from before a refactoring) it is run in the same rounds
# too, so that before and after are measured side by side on the same noisy machine. With -p
# gcrypt_cost it measures the libgcrypt hooks instead (bench/gcrypt_cost: gcry_cipher_encrypt of
# LEN bytes on one AES-128-CBC handle, the same arguments and output).
#
# usage: bench/hook_cost.sh [-r ROUNDS] [-b BUILD_DIR] [-n LEN] [-o OLD_LIB] [-p PROGRAM]
set -eu
rounds=9
build=
len=16
old=
name=hook_cost
while getopts r:b:n:o:p: opt; do
	case $opt in
	r) rounds=$OPTARG ;;
	b) build=$OPTARG ;;
	n) len=$OPTARG ;;
	o) old=$OPTARG ;;
	p) name=$OPTARG ;;
	*) echo "usage: $0 [-r ROUNDS] [-b BUILD_DIR] [-n LEN] [-o OLD_LIB] [-p PROGRAM]" >&2; exit 2 ;;
	esac
done
here=$(cd "$(dirname "$0")" && pwd)
build=${build:-$here/../build}
prog=$build/bench/$name
lib=$build/preload/libcryptrace.so
[ -x "$prog" ] && [ -f "$lib" ] || { echo "hook_cost.sh: build first ($prog, $lib)" >&2; exit 77; }
[ -z "$old" ] || [ -f "$old" ] || { echo "hook_cost.sh: -o $old: no such library" >&2; exit 2; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT INT TERM
# 1M calls per batch up to 64 B, fewer above (64 MB of data per batch): 8 KiB stays ~50 ms a batch
calls=$((len <= 64 ? 1000000 : 64000000 / len))
one() { "$@" "$prog" "$len" "$calls" 9 | sed -n 's/^ns_per_call //p'; }
i=0
while [ "$i" -lt "$rounds" ]; do
	one env >>"$out/native"
	one env LD_PRELOAD="$lib" CRYPTRACE_OUT="$out/t" >>"$out/stats"
	one env LD_PRELOAD="$lib" CRYPTRACE_OUT="$out/t" CRYPTRACE_SAMPLE=1073741824 >>"$out/untimed"
	if [ -n "$old" ]; then
		one env LD_PRELOAD="$old" CRYPTRACE_OUT="$out/t" >>"$out/old"
		one env LD_PRELOAD="$old" CRYPTRACE_OUT="$out/t" CRYPTRACE_SAMPLE=1073741824 >>"$out/old-untimed"
	fi
	rm -rf "$out/t"
	i=$((i + 1))
done
median() { sort -g "$1" | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
what="EVP_EncryptUpdate $len B on one aes-128-cbc ctx"
[ "$name" = hook_cost ] || what="$name: $len B calls on one aes-128-cbc handle"
echo "hook cost: $what, best of 9 x $calls calls per run, $rounds alternating runs"
printf '%-11s %10s %8s %s\n' mode ns/call ratio min..max
printf '%-11s %10s\n' native "$(median "$out/native")"
modes="stats untimed"
[ -z "$old" ] || modes="$modes old old-untimed"
for m in $modes; do
	paste "$out/native" "$out/$m" | awk '{print $1 / $2}' >"$out/$m.ratio"
	printf '%-11s %10s %8.4f %s..%s\n' "$m" "$(median "$out/$m")" "$(median "$out/$m.ratio")" \
		"$(sort -g "$out/$m.ratio" | head -1)" "$(sort -g "$out/$m.ratio" | tail -1)"
done
echo "ratio = native ns / traced ns (throughput traced/native; the [foundation] target is >= 0.90)"
