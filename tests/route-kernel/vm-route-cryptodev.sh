#!/bin/bash
# SPDX-License-Identifier: MIT
# vm-route-cryptodev.sh: the EVP -> cryptodev route in the qemu guest, against the CUSE
# /dev/crypto of tests/cryptodev-cuse (profile full: a real cryptodev ABI served by the kernel
# through AF_ALG). evp_kernel_diff's transcript of random ECB/CBC/CTR work is identical natively
# and under 'aes-*=cryptodev>=256,aesni', with CIOCCRYPT requests for all three modes in the
# trace and a route event naming the driver CIOCGSESSINFO reported; `openssl enc` under
# 'aes-*-cbc=cryptodev' is byte-identical, every request on one session.
source "$(dirname "$0")/../vm/lib.sh"

server=$build_root/tests/cryptodev-cuse/cdev-cuse
diffprog=${EVP_KERNEL_DIFF:-$build_root/tests/route-kernel/evp_kernel_diff}
# the CUSE server needs libfuse3 (optional at meson setup); everything else is always built
[[ -x $server ]] || pkg-config --exists fuse3 ||
	skip "$server is not built: libfuse3 is missing (apt-get install libfuse3-dev)"
need_built "$cryptrace" "$preload" "$server" "$diffprog"
command -v python3 >/dev/null || fail "python3 is needed to read the JSON report"
# libfuse ends its workers with pthread_cancel, for which glibc dlopens libgcc_s (ldd cannot see it)
libgcc=$(ldconfig -p | awk '$1 == "libgcc_s.so.1" && /x86-64/ && !n++ { print $NF }')
[[ -n $libgcc ]] || fail "libgcc_s.so.1 not found (ldconfig -p)"

seed=${CT_ROUTE_SEED:-$RANDOM}
note "evp_kernel_diff seed $seed"
K=000102030405060708090a0b0c0d0e0f; IV=f0e1d2c3b4a5968778695a4b3c2d1e0f
guest --files "$cryptrace" "$preload" "$server" "$diffprog" "$libgcc" --out "$scratch/out" -- "
	[ -e /dev/cuse ] || modprobe cuse
	'$server' --profile full >\$OUT/server.log 2>&1 &
	i=0; while [ ! -e /dev/crypto ] && [ \$i -lt 150 ]; do sleep 0.1; i=\$((i + 1)); done
	[ -e /dev/crypto ] || { echo 'no /dev/crypto from cdev-cuse' >&2; cat \$OUT/server.log >&2; exit 4; }
	C='$cryptrace'
	'$diffprog' 120 $seed >\$OUT/diff-native.txt; echo diff-native=\$?
	\$C run -q -o \$OUT/t1 --route 'aes-*=cryptodev>=256,aesni' -- '$diffprog' 120 $seed >\$OUT/diff-routed.txt
	echo diff-routed=\$?
	head -c 100003 /dev/urandom >/tmp/in
	openssl enc -e -aes-128-cbc -K $K -iv $IV -in /tmp/in -out /tmp/n-e
	\$C run -q -o \$OUT/t2 --route 'aes-*-cbc=cryptodev' -- openssl enc -e -aes-128-cbc -K $K -iv $IV -in /tmp/in -out /tmp/r-e
	cmp /tmp/n-e /tmp/r-e && echo enc-same
	true
" || fail "the guest script failed"

grep -qx 'diff-native=0' "$scratch/guest.out" && grep -qx 'diff-routed=0' "$scratch/guest.out" ||
	fail "evp_kernel_diff failed in the guest"
cat "$scratch/out/diff-native.txt"
diff "$scratch/out/diff-native.txt" "$scratch/out/diff-routed.txt" ||
	fail "EVP output differs under aes-*=cryptodev>=256,aesni"
grep -qx 'enc-same' "$scratch/guest.out" || fail "openssl enc output differs under aes-*-cbc=cryptodev"
for t in t1 t2; do
	"$cryptrace" report --json "$scratch/out/$t" >"$scratch/$t.json" || fail "cryptrace report $t"
done
python3 - "$scratch" <<'PY' || fail "the traces do not show the cryptodev route"
import json, sys
scratch = sys.argv[1]
errors = []
r1, r2 = (json.load(open(f"{scratch}/{t}.json")) for t in ("t1", "t2"))
for tag, r in (("diff", r1), ("enc", r2)):
    for p in r["paths"]:
        print(tag, "path:", {k: p.get(k) for k in ("api", "impl", "cipher", "dir", "calls", "bytes", "syscalls")})
    for e in r["events"]:
        if e["kind"] in ("route", "fallback"):
            print(tag, "event:", e["kind"], e["detail"])
    fb = [e["detail"] for e in r["events"] if e["kind"] == "fallback" and "cryptodev" in e["detail"]]
    if fb:
        errors.append(f"{tag}: the cryptodev route fell back: {fb}")
    ev = [e["detail"] for e in r["events"] if e["kind"] == "route" and "-> cryptodev (" in e["detail"]]
    if not ev or any("(?" in d for d in ev):
        errors.append(f"{tag}: no route event naming the cryptodev driver: {ev}")
for m in ("ecb", "cbc", "ctr"):
    k = [p for p in r1["paths"] if p["api"] == "cryptodev" and p["cipher"].endswith(m)]
    if not sum(p["calls"] for p in k):
        errors.append(f"diff: no {m} request reached /dev/crypto")
k = [p for p in r2["paths"] if p["api"] == "cryptodev" and p["cipher"] == "aes-128-cbc"]
if sum(p["bytes"] for p in k) < 100000:
    errors.append(f"enc: {sum(p['bytes'] for p in k)} bytes on /dev/crypto, want the whole input")
for e in errors:
    print("MISMATCH:", e)
sys.exit(1 if errors else 0)
PY
note "PASS: EVP moved to /dev/crypto (CUSE), bit-exact"
