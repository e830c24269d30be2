#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# cbc-partial.sh WORK - the route's AES_cbc_encrypt against the i386 libcrypto it replaces, on
# lengths that end in a partial block (tests/port/cbc_partial.c): run natively through the
# sysroot's loader (an x86-64 kernel runs i386 code), unrouted and under the i386 preload with an
# aesni route, the two outputs must be byte for byte the same, and the trace must show the calls
# served by the route (else the comparison proves nothing). WORK holds build-i386 and
# sysroot-i386 (tests/port/cross-build.sh i386 WORK).
set -euo pipefail

[ $# -eq 1 ] || { echo "usage: $0 WORK" >&2; exit 2; }
work=$(cd "$1" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
sr=$work/sysroot-i386
build=$work/build-i386
ld32=$sr/lib/ld-linux.so.2
lib=$build/preload/libcryptrace.so
skip() { echo "cbc-partial: SKIP: $*"; exit 77; }
command -v i686-linux-gnu-gcc >/dev/null || skip "i686-linux-gnu-gcc not installed (apt-get install gcc-i686-linux-gnu)"
[ -x "$ld32" ] && [ -f "$lib" ] && [ -x "$build/tracer/cryptrace" ] ||
	skip "no i386 build in $work (tests/port/cross-build.sh i386 $work)"
"$ld32" --version >/dev/null 2>&1 || skip "this kernel does not run i386 programs"
grep -qw aes /proc/cpuinfo || skip "no AES instructions on this CPU: the aesni route would fall back"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
libpath=$sr/lib/i386-linux-gnu:$sr/usr/lib/i386-linux-gnu
i686-linux-gnu-gcc -O2 -Wno-deprecated-declarations --sysroot="$sr" -isystem "$sr/usr/include/i386-linux-gnu" \
	-isystem "$sr/usr/include" -o "$tmp/cbc_partial" "$src/tests/port/cbc_partial.c" \
	-L"$sr/usr/lib/i386-linux-gnu" -Wl,-rpath-link,"$sr/usr/lib/i386-linux-gnu" \
	-Wl,-rpath-link,"$sr/lib/i386-linux-gnu" -lcrypto
"$ld32" --library-path "$libpath" "$tmp/cbc_partial" >"$tmp/native"
mkdir "$tmp/out"
CRYPTRACE_OUT=$tmp/out CRYPTRACE_ROUTE='aes-*=aesni' "$ld32" --library-path "$libpath" --preload "$lib" \
	"$tmp/cbc_partial" >"$tmp/routed"
"$ld32" --library-path "$libpath" "$build/tracer/cryptrace" report --json "$tmp/out" >"$tmp/report.json"
served=$(python3 -c '
import json, sys
d = json.load(open(sys.argv[1]))
print(sum(p["calls"] for p in d["paths"] if p["impl"] == "route:aesni" and "cbc" in p["cipher"]))' "$tmp/report.json")
lines=$(wc -l <"$tmp/native")
if [ "$served" -lt "$lines" ]; then
	echo "cbc-partial: FAIL: the route served $served of $lines AES_cbc_encrypt calls"
	exit 1
fi
if ! cmp -s "$tmp/native" "$tmp/routed"; then
	echo "cbc-partial: FAIL: routed AES_cbc_encrypt differs from i386 libcrypto's:"
	diff "$tmp/native" "$tmp/routed" | head -6 | cut -c1-160
	exit 1
fi
echo "cbc-partial: ok: $lines calls ($served served by the route), byte for byte the same"
