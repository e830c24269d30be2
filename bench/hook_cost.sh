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
x32=
sr32=
old32=
while getopts r:b:n:o:p:x:s:y: opt; do
	case $opt in
	r) rounds=$OPTARG ;;
	b) build=$OPTARG ;;
	n) len=$OPTARG ;;
	o) old=$OPTARG ;;
	p) name=$OPTARG ;;
	x) x32=$OPTARG ;;
	s) sr32=$OPTARG ;;
	y) old32=$OPTARG ;;
	*) echo "usage: $0 [-r ROUNDS] [-b BUILD_DIR] [-n LEN] [-o OLD_LIB] [-p PROGRAM] [-x I386_BUILD [-s I386_SYSROOT] [-y OLD_I386_LIB]]" >&2; exit 2 ;;
	esac
done
here=$(cd "$(dirname "$0")" && pwd)
build=${build:-$here/../build}
prog=$build/bench/$name
lib=$build/preload/libcryptrace.so
[ -x "$prog" ] && [ -f "$lib" ] || { echo "hook_cost.sh: build first ($prog, $lib)" >&2; exit 77; }
[ -z "$old" ] || [ -f "$old" ] || { echo "hook_cost.sh: -o $old: no such library" >&2; exit 2; }
[ -z "$old32" ] || [ -f "$old32" ] || { echo "hook_cost.sh: -y $old32: no such library" >&2; exit 2; }
if [ -n "$x32" ]; then
	sr32=${sr32:-$(dirname "$x32")/sysroot-i386}
	ld32=$sr32/lib/ld-linux.so.2
	prog32=$x32/bench/$name
	lib32=$x32/preload/libcryptrace.so
	[ -x "$ld32" ] && [ -x "$prog32" ] && [ -f "$lib32" ] ||
		{ echo "hook_cost.sh: -x $x32: no i386 build or sysroot ($ld32, $prog32, $lib32)" >&2; exit 77; }
	"$ld32" --version >/dev/null 2>&1 ||
		{ echo "hook_cost.sh: this kernel does not run i386 programs" >&2; exit 77; }
fi
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT INT TERM
# 1M calls per batch up to 64 B, fewer above (64 MB of data per batch): 8 KiB stays ~50 ms a batch
calls=$((len <= 64 ? 1000000 : 64000000 / len))
one() { "$@" "$prog" "$len" "$calls" 9 | sed -n 's/^ns_per_call //p'; }
# the i386 program through its own loader; the preload by --preload (an LD_PRELOAD of a 32-bit
# library would reach env, a 64-bit program, first)
one32() {
	"$@" "$ld32" --library-path "$sr32/lib/i386-linux-gnu:$sr32/usr/lib/i386-linux-gnu" \
		${pre32:+--preload "$pre32"} "$prog32" "$len" "$calls" 9 | sed -n 's/^ns_per_call //p'
}
i=0
while [ "$i" -lt "$rounds" ]; do
	one env >>"$out/native"
	one env LD_PRELOAD="$lib" CRYPTRACE_OUT="$out/t" >>"$out/stats"
	one env LD_PRELOAD="$lib" CRYPTRACE_OUT="$out/t" CRYPTRACE_SAMPLE=1073741824 >>"$out/untimed"
	if [ -n "$old" ]; then
		one env LD_PRELOAD="$old" CRYPTRACE_OUT="$out/t" >>"$out/old"
		one env LD_PRELOAD="$old" CRYPTRACE_OUT="$out/t" CRYPTRACE_SAMPLE=1073741824 >>"$out/old-untimed"
	fi
	if [ -n "$x32" ]; then
		pre32= one32 env >>"$out/i386"
		pre32=$lib32 one32 env CRYPTRACE_OUT="$out/t" >>"$out/i386-stats"
		pre32=$lib32 one32 env CRYPTRACE_OUT="$out/t" CRYPTRACE_SAMPLE=1073741824 >>"$out/i386-untimed"
		if [ -n "$old32" ]; then
			pre32=$old32 one32 env CRYPTRACE_OUT="$out/t" >>"$out/i386-old"
			pre32=$old32 one32 env CRYPTRACE_OUT="$out/t" CRYPTRACE_SAMPLE=1073741824 >>"$out/i386-old-untimed"
		fi
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
[ -z "$x32" ] || modes="$modes i386 i386-stats i386-untimed"
[ -z "$old32" ] || modes="$modes i386-old i386-old-untimed"
for m in $modes; do
	base=native
	case $m in i386-*) base=i386 ;; i386) printf '%-11s %10s\n' i386 "$(median "$out/i386")"; continue ;; esac
	paste "$out/$base" "$out/$m" | awk '{print $1 / $2}' >"$out/$m.ratio"
	printf '%-11s %10s %8.4f %s..%s\n' "$m" "$(median "$out/$m")" "$(median "$out/$m.ratio")" \
		"$(sort -g "$out/$m.ratio" | head -1)" "$(sort -g "$out/$m.ratio" | tail -1)"
done
echo "ratio = native ns / traced ns (throughput traced/native; the [foundation] target is >= 0.90)"
[ -z "$x32" ] || echo "i386 rows: the i386 build run natively, ratios against the i386 native row"
