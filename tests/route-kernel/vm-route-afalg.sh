#!/bin/bash
# SPDX-License-Identifier: MIT
# vm-route-afalg.sh: the EVP -> afalg route in the qemu guest, where AF_ALG works. Plain
# `openssl speed -seconds 1 -evp aes-128-cbc` (no engine) under --route 'aes-*-cbc=afalg' must
# put every request in the kernel: a route event naming the driver the guest picked for cbc(aes),
# the EVP path labelled for the route, and an AF_ALG path served by that driver with openssl's
# exact request count and bytes and the kernel syscalls counted (sendmsg + read per request).
# Under 'aes-*-cbc=afalg>=4096,aesni' only openssl's 8192 and 16384-byte requests reach the
# kernel; the smaller ones stay in-process. `openssl enc` output (both directions, several sizes)
# is byte-identical with and without the route, and so is evp_kernel_diff's transcript of random
# ECB/CBC/CTR work (chunking across the threshold, padding, copies, IV re-inits) under
# 'aes-*=afalg>=256,aesni', whose trace must show kernel requests for all three modes. A process
# under a seccomp filter (seccomp_enc) is never routed to the kernel: same output, no AF_ALG
# path, a fallback event naming the filter. A program that closes its sockets halfway through a
# context (closefds_enc) still gets the native result: the failed requests and the rest of the
# context run in-process, with a fallback event.
source "$(dirname "$0")/../vm/lib.sh"

need_built "$cryptrace" "$preload"
command -v python3 >/dev/null || fail "python3 is needed to read the JSON report"
diffprog=${EVP_KERNEL_DIFF:-$build_root/tests/route-kernel/evp_kernel_diff}
seccompprog=${SECCOMP_ENC:-$build_root/tests/route-kernel/seccomp_enc}
closeprog=${CLOSEFDS_ENC:-$build_root/tests/route-kernel/closefds_enc}
need_built "$diffprog" "$seccompprog" "$closeprog"

seed=${CT_ROUTE_SEED:-$RANDOM}
note "evp_kernel_diff seed $seed"
K=000102030405060708090a0b0c0d0e0f; IV=f0e1d2c3b4a5968778695a4b3c2d1e0f
guest --files "$cryptrace" "$preload" "$diffprog" "$seccompprog" "$closeprog" --out "$scratch/out" -- "
	cat /proc/crypto >\$OUT/proc-crypto
	C='$cryptrace'
	\$C run -q -o \$OUT/t1 --route 'aes-*-cbc=afalg' -- openssl speed -seconds 1 -evp aes-128-cbc \\
		>\$OUT/speed1.all 2>&1; echo speed1=\$?
	\$C run -q -o \$OUT/t2 --route 'aes-*-cbc=afalg>=4096,aesni' -- openssl speed -seconds 1 -evp aes-128-cbc \\
		>\$OUT/speed2.all 2>&1; echo speed2=\$?
	for n in 0 16 4095 4096 70000 200003; do
		head -c \$n /dev/urandom >/tmp/in
		openssl enc -e -aes-128-cbc -K $K -iv $IV -in /tmp/in -out /tmp/n-e
		\$C run -q -o \$OUT/t3 --route 'aes-*-cbc=afalg' -- openssl enc -e -aes-128-cbc -K $K -iv $IV -in /tmp/in -out /tmp/r-e
		cmp /tmp/n-e /tmp/r-e && echo enc-same-\$n
		openssl enc -d -aes-128-cbc -K $K -iv $IV -in /tmp/n-e -out /tmp/n-d
		\$C run -q -o \$OUT/t3 --route 'aes-*-cbc=afalg' -- openssl enc -d -aes-128-cbc -K $K -iv $IV -in /tmp/n-e -out /tmp/r-d
		cmp /tmp/n-d /tmp/r-d && cmp /tmp/n-d /tmp/in && echo dec-same-\$n
	done
	'$diffprog' 150 $seed v >\$OUT/diff-native.txt; echo diff-native=\$?
	\$C run -q -o \$OUT/t4 --route 'aes-*=afalg>=256,aesni' -- '$diffprog' 150 $seed v >\$OUT/diff-routed.txt; echo diff-routed=\$?
	'$seccompprog' nofilter >\$OUT/sc-native.txt; echo sc-native=\$?
	\$C run -q -o \$OUT/t5 --route 'aes-*-cbc=afalg' -- '$seccompprog' >\$OUT/sc-routed.txt; echo sc-routed=\$?
	\$C run -q -o \$OUT/t6 --route 'aes-*-cbc=afalg' -- '$seccompprog' nofilter >\$OUT/sc-unfiltered.txt
	\$C run -q -o \$OUT/t8 --route 'aes-*-cbc=afalg,aes-*-ctr=aesni' -- openssl enc -e -aes-128-cbc -K $K -iv $IV -in /tmp/in -out /tmp/r-e
	cmp /tmp/n-e /tmp/r-e && echo mixed-same
	'$closeprog' >\$OUT/cf-native.txt; echo cf-native=\$?
	\$C run -q -o \$OUT/t7 --route 'aes-*-cbc=afalg' -- '$closeprog' >\$OUT/cf-routed.txt; echo cf-routed=\$?
	true
" || fail "the guest script failed"

grep -qx 'speed1=0' "$scratch/guest.out" || fail "openssl speed under aes-*-cbc=afalg failed"
grep -qx 'speed2=0' "$scratch/guest.out" || fail "openssl speed under the threshold spec failed"
for n in 0 16 4095 4096 70000 200003; do
	grep -qx "enc-same-$n" "$scratch/guest.out" || fail "openssl enc -e of $n bytes differs under the route"
	grep -qx "dec-same-$n" "$scratch/guest.out" || fail "openssl enc -d of $n bytes differs under the route"
done
driver=$(proc_crypto_pick "$scratch/out/proc-crypto" 'cbc(aes)')
[[ -n $driver ]] || fail "the guest's /proc/crypto has no tested cbc(aes) driver"
note "the guest kernel serves cbc(aes) with $driver"

grep -qx 'diff-native=0' "$scratch/guest.out" && grep -qx 'diff-routed=0' "$scratch/guest.out" ||
	fail "evp_kernel_diff failed in the guest"
tail -9 "$scratch/out/diff-native.txt"
diff "$scratch/out/diff-native.txt" "$scratch/out/diff-routed.txt" >"$scratch/diff.out" ||
	{ head -5 "$scratch/diff.out"; fail "EVP output differs under aes-*=afalg>=256,aesni"; }
grep -qx 'sc-native=0' "$scratch/guest.out" && grep -qx 'sc-routed=0' "$scratch/guest.out" ||
	fail "seccomp_enc failed in the guest"
cmp "$scratch/out/sc-native.txt" "$scratch/out/sc-routed.txt" || fail "seccomp_enc output differs under the route"
cmp "$scratch/out/sc-native.txt" "$scratch/out/sc-unfiltered.txt" || fail "seccomp_enc nofilter differs under the route"
grep -qx 'cf-native=0' "$scratch/guest.out" && grep -qx 'cf-routed=0' "$scratch/guest.out" ||
	fail "closefds_enc failed in the guest"
cmp "$scratch/out/cf-native.txt" "$scratch/out/cf-routed.txt" || fail "closefds_enc output differs under the route"
grep -qx 'mixed-same' "$scratch/guest.out" || fail "openssl enc differs under aes-*-cbc=afalg,aes-*-ctr=aesni"
for t in t1 t2 t3 t4 t5 t6 t7 t8; do
	"$cryptrace" report --json "$scratch/out/$t" >"$scratch/$t.json" || fail "cryptrace report $t"
done
python3 - "$scratch" "$driver" <<'PY' || fail "the traces do not show the route"
import json, re, sys
scratch, driver = sys.argv[1:3]
errors = []

def runs(name):
    text = open(f"{scratch}/out/{name}").read()
    r = [(int(s), int(n)) for s, n in
         re.findall(r"^Doing AES-128-CBC .* on (\d+) size blocks: (\d+) AES-128-CBC's", text, re.M)]
    if not r:
        sys.exit(f"{name}: openssl printed no block counts")
    return r

def check(tag, rep, speed, kernel_sizes):
    paths = rep["paths"]
    for p in paths:
        print(tag, "path:", {k: p.get(k) for k in ("api", "impl", "cipher", "dir", "calls", "bytes",
                                                   "syscalls", "route")})
    for e in rep["events"]:
        if e["kind"] in ("route", "fallback"):
            print(tag, "event:", e["kind"], e["detail"])
    want_calls = sum(n for s, n in speed if s in kernel_sizes)
    want_bytes = sum(s * n for s, n in speed if s in kernel_sizes)
    all_calls = sum(n for s, n in speed)
    ev = [e["detail"] for e in rep["events"] if e["kind"] == "route"]
    if not any(f"aes-128-cbc enc -> afalg ({driver}" in d for d in ev):
        errors.append(f"{tag}: no route event 'aes-128-cbc enc -> afalg ({driver}...': {ev}")
    fb = [e["detail"] for e in rep["events"] if e["kind"] == "fallback" and "afalg" in e["detail"]]
    if fb:
        errors.append(f"{tag}: the kernel route fell back: {fb}")
    evp = [p for p in paths if p["api"] == "evp" and p["cipher"] == "aes-128-cbc"]
    impls = {p["impl"] for p in evp}
    # the EVP hooks name a kernel-routed context after the route and the driver behind it
    if impls != {f"route:afalg:{driver}"}:
        errors.append(f"{tag}: EVP aes-128-cbc path impl {impls}")
    if sum(p["calls"] for p in evp) != all_calls:
        errors.append(f"{tag}: EVP calls {sum(p['calls'] for p in evp)} != openssl's {all_calls}")
    k = [p for p in paths if p["api"] == "afalg" and p["cipher"] == "aes-128-cbc"]
    kc, kb = sum(p["calls"] for p in k), sum(p["bytes"] for p in k)
    ks = sum(p.get("syscalls", 0) for p in k)
    if not k or {p["impl"] for p in k} != {f"kernel:{driver}"}:
        errors.append(f"{tag}: AF_ALG path impl {[p['impl'] for p in k]}, want kernel:{driver}")
    if kc != want_calls or kb != want_bytes:
        errors.append(f"{tag}: kernel requests {kc} / {kb} B, want {want_calls} / {want_bytes} B "
                      f"(openssl's sizes {sorted(kernel_sizes)})")
    if ks < 2 * kc or ks == 0:
        errors.append(f"{tag}: {ks} kernel syscalls counted for {kc} requests (sendmsg + read each)")
    print(f"{tag}: {kc} kernel requests ({kb} B, {ks} syscalls) of {all_calls} EVP calls")

rep4 = json.load(open(f"{scratch}/t4.json"))
for m in ("ecb", "cbc", "ctr"):
    k = [p for p in rep4["paths"] if p["api"] == "afalg" and p["cipher"].endswith(m)]
    calls = sum(p["calls"] for p in k)
    print(f"evp_kernel_diff {m}: {calls} kernel requests on {sorted({p['impl'] for p in k})}")
    if not calls:
        errors.append(f"evp_kernel_diff: no {m} request reached the kernel")
fb = [e["detail"] for e in rep4["events"] if e["kind"] == "fallback"]
if fb:
    errors.append(f"evp_kernel_diff: fallbacks {fb}")

# seccomp: t5 (filtered) must not reach the kernel and must say why; t6 (same program, no
# filter) must, so the check above is not vacuous
rep5, rep6 = json.load(open(f"{scratch}/t5.json")), json.load(open(f"{scratch}/t6.json"))
k5 = [p for p in rep5["paths"] if p["api"] == "afalg"]
k6 = [p for p in rep6["paths"] if p["api"] == "afalg"]
fb5 = [e["detail"] for e in rep5["events"] if e["kind"] == "fallback"]
print("seccomp_enc filtered:", fb5, "unfiltered kernel requests:", sum(p["calls"] for p in k6))
if k5:
    errors.append(f"seccomp_enc: the filtered process reached the kernel: {k5}")
if not any("route afalg -> native: aes-128-cbc enc: a seccomp filter is active" in d for d in fb5):
    errors.append(f"seccomp_enc: no fallback event naming the filter: {fb5}")
if not k6:
    errors.append("seccomp_enc nofilter: no kernel request (the route did not apply at all)")

# closed sockets: half the requests in the kernel, then one failure and the rest in-process
rep7 = json.load(open(f"{scratch}/t7.json"))
k7 = sum(p["calls"] for p in rep7["paths"] if p["api"] == "afalg")
fb7 = [e["detail"] for e in rep7["events"] if e["kind"] == "fallback"]
print("closefds_enc: kernel requests", k7, "fallbacks", fb7)
if not any(re.search("route afalg -> aesni: aes-128-cbc enc: (sendmsg/read failed|the program closed the kernel descriptor)", d) for d in fb7):
    errors.append(f"closefds_enc: no fallback event for the failed request: {fb7}")
if not 16 <= k7 <= 17:
    errors.append(f"closefds_enc: {k7} kernel requests, want the 16 before the close (+1 failed)")
# the close was seen by the kernel hooks: nothing may be sent to the descriptor afterwards
if any("sendmsg/read failed" in d for d in fb7):
    errors.append("closefds_enc: a request went to the closed descriptor")

# an aesni rule beside the kernel one turns the kernel-interface emulation on: the route's own
# sockets must still be the real kernel's
rep8 = json.load(open(f"{scratch}/t8.json"))
k8 = [p for p in rep8["paths"] if p["api"] == "afalg"]
print("mixed spec: AF_ALG paths", [(p["impl"], p["calls"]) for p in k8])
if not k8 or {p["impl"] for p in k8} != {f"kernel:{driver}"} or not sum(p["calls"] for p in k8):
    errors.append(f"mixed spec: the route did not reach the real kernel: {[(p['impl'], p['calls']) for p in k8]}")

s1, s2 = runs("speed1.all"), runs("speed2.all")
check("afalg", json.load(open(f"{scratch}/t1.json")), s1, {s for s, _ in s1})
check("afalg>=4096,aesni", json.load(open(f"{scratch}/t2.json")), s2, {s for s, _ in s2 if s >= 4096})
for e in errors:
    print("MISMATCH:", e)
sys.exit(1 if errors else 0)
PY
note "PASS: plain EVP moved to afalg ($driver), threshold split, openssl enc identical"
