#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# time64.sh WORK - the i386 build's _TIME_BITS=64 hooks on real programs: examples/kernel's
# afalg_bench and cryptodev_bench built for i386 with -D_TIME_BITS=64 -D_FILE_OFFSET_BITS=64
# call __setsockopt64, __sendmsg64 and __ioctl_time64 (glibc >= 2.34), not setsockopt, sendmsg and
# ioctl. Run natively through the sysroot's loader (an x86-64 kernel runs i386 code) under the
# i386 preload with an aesni route, whose in-process AF_ALG and /dev/crypto emulation serves them
# here, where the kernel has neither: every call must reach the hooks, or the emulated socket's
# key set-up goes to the kernel and fails (the program exits 2), and the trace must count every
# request. WORK holds build-i386 and sysroot-i386 (tests/port/cross-build.sh i386 WORK).
set -euo pipefail

[ $# -eq 1 ] || { echo "usage: $0 WORK" >&2; exit 2; }
work=$(cd "$1" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
sr=$work/sysroot-i386
build=$work/build-i386
ld32=$sr/lib/ld-linux.so.2
lib=$build/preload/libcryptrace.so
report=$build/tracer/cryptrace
skip() { echo "time64: SKIP: $*"; exit 77; }
command -v i686-linux-gnu-gcc >/dev/null || skip "i686-linux-gnu-gcc not installed (apt-get install gcc-i686-linux-gnu)"
[ -x "$ld32" ] && [ -f "$lib" ] && [ -x "$report" ] ||
	skip "no i386 build in $work (tests/port/cross-build.sh i386 $work)"
"$ld32" --version >/dev/null 2>&1 || skip "this kernel does not run i386 programs"
command -v python3 >/dev/null || skip "python3 is needed to read the report's JSON"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
libpath=$sr/lib/i386-linux-gnu:$sr/usr/lib/i386-linux-gnu
for prog in afalg_bench cryptodev_bench; do
	i686-linux-gnu-gcc -O2 -D_GNU_SOURCE -D_TIME_BITS=64 -D_FILE_OFFSET_BITS=64 --sysroot="$sr" \
		-isystem "$sr/usr/include/i386-linux-gnu" -isystem "$sr/usr/include" \
		-I"$src/examples/kernel" -I"$src/common/kernel" -o "$tmp/$prog" "$src/examples/kernel/$prog.c" \
		-L"$sr/usr/lib/i386-linux-gnu" -Wl,-rpath-link,"$sr/usr/lib/i386-linux-gnu" \
		-Wl,-rpath-link,"$sr/lib/i386-linux-gnu" -lcrypto
done
# the premise: this glibc redirects the calls to their time64 twins
i686-linux-gnu-nm -D "$tmp/afalg_bench" | grep -q ' U __setsockopt64' &&
	i686-linux-gnu-nm -D "$tmp/afalg_bench" | grep -q ' U __sendmsg64' &&
	i686-linux-gnu-nm -D "$tmp/cryptodev_bench" | grep -q ' U __ioctl_time64' ||
	skip "this sysroot's glibc has no time64 entry points (glibc < 2.34?)"

count=3
fail=0
for prog in afalg_bench cryptodev_bench; do
	mkdir "$tmp/out-$prog"
	if ! CRYPTRACE_OUT=$tmp/out-$prog CRYPTRACE_ROUTE='aes-*=aesni' "$ld32" --library-path "$libpath" \
		--preload "$lib" "$tmp/$prog" --count $count --sizes 16 >"$tmp/$prog.out" 2>&1; then
		echo "time64: FAIL: $prog (i386, _TIME_BITS=64) exits non-zero under the routed preload:"
		cat "$tmp/$prog.out"
		fail=1
		continue
	fi
	"$ld32" --library-path "$libpath" "$report" report --json "$tmp/out-$prog" >"$tmp/$prog.json"
	python3 - "$tmp/$prog.json" "$prog" "$count" <<'EOF' || fail=1
import json, sys
d = json.load(open(sys.argv[1]))
prog, count = sys.argv[2], int(sys.argv[3])
api = 'afalg' if prog == 'afalg_bench' else 'cryptodev'
paths = [p for p in d['paths'] if p['api'] == api]
# afalg_bench runs cbc(aes) alone; cryptodev_bench CBC, CTR, ECB and XTS
want = 1 if api == 'afalg' else 4
ok = len(paths) == want and all(p['calls'] >= count and p['bytes'] == 16 * p['calls'] and
                                p['errors'] == 0 and p['impl'] == 'route:aesni' for p in paths)
print('time64: %s: %s paths %s' % ('ok' if ok else 'FAIL', api,
      [(p['cipher'], p['entry'], p['calls'], p['bytes'], p['errors'], p['impl']) for p in paths]))
sys.exit(0 if ok else 1)
EOF
done
exit $fail
