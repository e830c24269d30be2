#!/bin/bash
# SPDX-License-Identifier: MIT
# bench/emulation.sh [BUILD_DIR]: the cost per AF_ALG / cryptodev-style request served in-process
# (--route aes-*=aesni, the emulation) against the same request through the kernel, in the qemu
# guest (tests/vm), at 16 B .. 64 KiB: afalg_bench --mode sendmsg, cbc(aes) encrypt, both runs in
# one boot, side by side. Prints per-op microseconds each way, their ratio, and the syscalls per
# request each trace counted.
#
# The guest runs under TCG (no KVM on these hosts): its absolute timings are NOT performance data,
# and the ratio mostly measures how expensive TCG makes a syscall. Use it for the shape (where the
# kernel round trip dominates) and the syscall counts; measure real numbers on real hardware.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
build=$(cd "${1:-$src/build}" && pwd)
cryptrace=$build/tracer/cryptrace
preload=$build/preload/libcryptrace.so
bench=$build/examples/kernel/afalg_bench
for f in "$cryptrace" "$preload" "$bench"; do
	[[ -e $f ]] || { echo "emulation.sh: $f is not built" >&2; exit 2; }
done
out=$(mktemp -d "${TMPDIR:-/tmp}/ct-bench-emul.XXXXXX")
sizes=16,64,256,1024,4096,16384,65536
count=${CT_BENCH_COUNT:-300}

"$src/tests/vm/run-in-guest.sh" --files "$cryptrace" "$preload" "$bench" --out "$out" -- "
	'$cryptrace' run -o \$OUT/kernel -- '$bench' --mode sendmsg --count $count --sizes $sizes \\
		>\$OUT/kernel.txt 2>&1
	'$cryptrace' run -o \$OUT/emul --route 'aes-*=aesni' -- '$bench' --mode sendmsg --count $count \\
		--sizes $sizes >\$OUT/emul.txt 2>&1
" >"$out/guest.log" 2>&1 || { cat "$out/guest.log"; echo "emulation.sh: the guest run failed" >&2; exit 1; }

"$cryptrace" report --json "$out/kernel" >"$out/kernel.json"
"$cryptrace" report --json "$out/emul" >"$out/emul.json"
python3 - "$out" <<'PY'
import json, sys
d = sys.argv[1]
def table(name):
    rows = {}
    for line in open('%s/%s.txt' % (d, name)):
        if line.startswith('cryptrace'):
            break  # the launcher's summary follows the program's table
        f = line.split()
        if len(f) == 6 and f[0].isdigit():
            size, mbs = int(f[0]), float(f[3])
            rows[size] = size / mbs if mbs > 0 else float('nan')  # bytes / (MB/s) = microseconds
    return rows
def syscalls(name):
    rep = json.load(open('%s/%s.json' % (d, name)))
    ps = [p for p in rep['paths'] if p['api'] == 'afalg']
    calls = sum(p['calls'] for p in ps)
    return sum(p['syscalls'] for p in ps) / calls if calls else float('nan'), sorted({p['impl'] for p in ps})
k, e = table('kernel'), table('emul')
ks, ki = syscalls('kernel')
es, ei = syscalls('emul')
print('afalg_bench --mode sendmsg cbc(aes) encrypt, in the qemu guest (TCG: not performance data)')
print('kernel path: %s, %.1f syscalls/request; emulated: %s, %.1f syscalls/request' % (ki, ks, ei, es))
print('%8s %14s %14s %16s' % ('size', 'kernel us/op', 'emul us/op', 'kernel/emul'))
for s in sorted(k):
    if s in e:
        print('%8d %14.2f %14.2f %15.1fx' % (s, k[s], e[s], k[s] / e[s]))
PY
echo "raw output: $out"
