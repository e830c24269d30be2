#!/bin/bash
# SPDX-License-Identifier: MIT
# cryptrace-afalg-examples.sh aesni|generic: the project's AF_ALG clients and kcapi-enc in the
# guest, each run twice: bare and under `cryptrace run`. Checks:
#   - transparency: the same exit status and, for kcapi-enc, byte-identical output and the same
#     error for an algorithm the kernel does not have, with and without cryptrace;
#   - the examples' own checks against OpenSSL pass (they exit 1 on a mismatch);
#   - the trace: the afalg path's impl is kernel:<driver the guest picked>, calls and bytes are
#     exactly what the clients did (afalg_bench --count N: 2N requests per size), and syscalls
#     per request are 2 for sendmsg+read, 4 for sendmsg+vmsplice+splice+read.
source "$(dirname "$0")/lib.sh"

mode=${1:?usage: cryptrace-afalg-examples.sh aesni|generic}
case $mode in
aesni) guest_opt=--aesni ;;
generic) guest_opt=--no-aesni ;;
*) fail "unknown mode $mode" ;;
esac

cryptrace=$build_root/tracer/cryptrace
preload=$build_root/preload/libcryptrace.so
bench=$build_root/examples/kernel/afalg_bench
aead=$build_root/examples/kernel/afalg_aead
for f in "$cryptrace" "$preload" "$bench" "$aead"; do
	[[ -f $f ]] || fail "$f is not built (ninja -C $build_root)"
done
command -v python3 >/dev/null || fail "python3 is needed to read the JSON report"

count=16		# afalg_bench --count: 16 sessions with one request + 16 requests in one session
sizes=16,4096,65536
aead_count=8

head -c 8192 /dev/urandom >"$scratch/pt"
key=000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f
iv=0f0e0d0c0b0a09080706050403020100
# The guest script: a quoted here-document, with the host's values prepended as variables.
body=$(cat <<'GUEST'
run() {	# NAME CMD...: bare, then under cryptrace; stdout, stderr and status of each into $OUT
	name=$1
	shift
	CT_VARIANT=bare "$@" >$OUT/$name.bare.out 2>$OUT/$name.bare.err
	echo $? >$OUT/$name.bare.status
	CT_VARIANT=ct "$CRYPTRACE" run -q -o $OUT/$name.trace -- "$@" \
		>$OUT/$name.ct.out 2>$OUT/$name.ct.err
	echo $? >$OUT/$name.ct.status
}
run sendmsg "$BENCH" --mode sendmsg --count $COUNT --sizes $SIZES
run splice "$BENCH" --mode splice --count $COUNT --sizes $SIZES
run aead "$AEAD" --count $AEAD_COUNT --aad 20 --len 1000
printf '%s' $KEY | sed 's/../\\x&/g' | xargs -0 printf >/tmp/key
# kcapi-enc writes its -o file itself: name it after the variant (bare / under cryptrace).
cat >/tmp/kcapi.sh <<'EOS'
exec kcapi-enc -e -c "$1" --iv $IV --keyfd 3 -i "$PT" -o "$OUT/$2.$CT_VARIANT.bin" 3</tmp/key
EOS
export IV PT OUT
run kcapi sh /tmp/kcapi.sh 'ctr(aes)' kcapi
run kcapi-bad sh /tmp/kcapi.sh 'cbc(no-such-cipher)' kcapi-bad
cat /proc/crypto >$OUT/proc-crypto
GUEST
)
guest "$guest_opt" --files "$cryptrace" "$preload" "$bench" "$aead" "$scratch/pt" \
	--out "$scratch/out" -- "
CRYPTRACE='$cryptrace' BENCH='$bench' AEAD='$aead' PT='$scratch/pt'
COUNT=$count SIZES=$sizes AEAD_COUNT=$aead_count KEY=$key IV=$iv
$body" || fail "the guest script failed"

o=$scratch/out
for name in sendmsg splice aead kcapi kcapi-bad; do
	[[ -f $o/$name.bare.status && -f $o/$name.ct.status ]] || fail "$name: no results came back"
	echo "== $name: bare exit $(cat "$o/$name.bare.status"), under cryptrace $(cat "$o/$name.ct.status")"
	head -n 20 "$o/$name.ct.out" | cut -c1-100
	cat "$o/$name.ct.err"
	[[ $(cat "$o/$name.bare.status") == "$(cat "$o/$name.ct.status")" ]] ||
		fail "$name: exit status differs with cryptrace"
done
for name in sendmsg splice aead kcapi; do
	[[ $(cat "$o/$name.bare.status") == 0 ]] || fail "$name failed in the guest: $(cat "$o/$name.bare.err")"
done
[[ $(cat "$o/kcapi-bad.bare.status") != 0 ]] || fail "kcapi-enc accepted cbc(no-such-cipher)"
cmp -s "$o/kcapi.bare.bin" "$o/kcapi.ct.bin" || fail "kcapi-enc output differs under cryptrace"
cmp -s "$o/kcapi-bad.bare.err" "$o/kcapi-bad.ct.err" ||
	fail "kcapi-enc's error for a missing cipher differs under cryptrace"
expected=$(openssl enc -aes-256-ctr -K $key -iv $iv -in "$scratch/pt" | sha256sum)
[[ $(sha256sum <"$o/kcapi.bare.bin") == "$expected" ]] || fail "kcapi-enc ctr(aes) differs from openssl enc"
note "transparency: same exit statuses; kcapi-enc output identical and equal to openssl enc"

cbc_driver=$(proc_crypto_pick "$o/proc-crypto" 'cbc(aes)')
ctr_driver=$(proc_crypto_pick "$o/proc-crypto" 'ctr(aes)')
gcm_driver=$(proc_crypto_pick "$o/proc-crypto" 'gcm(aes)')
note "guest drivers: cbc(aes) $cbc_driver, ctr(aes) $ctr_driver, gcm(aes) $gcm_driver"

for name in sendmsg splice aead kcapi; do
	"$cryptrace" report --json "$o/$name.trace" >"$scratch/$name.json" ||
		fail "cryptrace report --json $name failed"
done

python3 - "$scratch" "$mode" "$cbc_driver" "$ctr_driver" "$gcm_driver" "$count" "$sizes" \
	"$aead_count" <<'PY' || fail "the traces do not match what the clients did"
import json, sys

scratch, mode, cbc, ctr, gcm, count, sizes, aead_count = sys.argv[1:9]
count, aead_count = int(count), int(aead_count)
sizes = [int(s) for s in sizes.split(",")]
errors = []

def afalg_paths(name):
    report = json.load(open(f"{scratch}/{name}.json"))
    paths = [p for p in report.get("paths", []) if p.get("api") == "afalg"]
    for p in paths:
        print(f"{name}:", {k: p.get(k) for k in ("impl", "cipher", "dir", "entry", "calls", "bytes",
                                                 "syscalls", "errors")})
    if not paths:
        errors.append(f"{name}: no afalg path")
    return paths

def check_driver(name, paths, driver, cipher):
    for p in paths:
        if p.get("impl") != "kernel:" + driver:
            errors.append(f"{name}: impl {p.get('impl')!r}, expected 'kernel:{driver}'")
        if p.get("cipher") != cipher:
            errors.append(f"{name}: cipher {p.get('cipher')!r}, expected {cipher!r}")
    want_cpu = mode == "aesni"
    if want_cpu != ("aesni" in driver):
        errors.append(f"{name}: driver {driver} in the {mode} guest")

for name, per_call in (("sendmsg", {2}), ("splice", {4})):
    paths = afalg_paths(name)
    check_driver(name, paths, cbc, "aes-128-cbc")
    calls = sum(p.get("calls", 0) for p in paths)
    nbytes = sum(p.get("bytes", 0) for p in paths)
    syscalls = sum(p.get("syscalls", 0) for p in paths)
    if calls != 2 * count * len(sizes):
        errors.append(f"{name}: {calls} calls, expected {2 * count * len(sizes)}")
    if nbytes != 2 * count * sum(sizes):
        errors.append(f"{name}: {nbytes} bytes, expected {2 * count * sum(sizes)}")
    if calls and syscalls not in {n * calls for n in per_call}:
        errors.append(f"{name}: {syscalls} syscalls for {calls} requests, expected "
                      f"{' or '.join(str(n) for n in sorted(per_call))} per request")

paths = afalg_paths("aead")
check_driver("aead", paths, gcm, "aes-128-gcm")
enc = [p for p in paths if p.get("dir") == "encrypt"]
dec = [p for p in paths if p.get("dir") == "decrypt"]
if sum(p.get("calls", 0) for p in enc) != aead_count:
    errors.append(f"aead: encrypt calls != {aead_count}")
if sum(p.get("calls", 0) for p in dec) < aead_count:
    errors.append(f"aead: fewer than {aead_count} decrypt calls")
if sum(p.get("errors", 0) for p in dec) != 1:
    errors.append("aead: the refused (tampered-tag) decryption is not the one decrypt error")

paths = afalg_paths("kcapi")
check_driver("kcapi", paths, ctr, "aes-256-ctr")
if sum(p.get("bytes", 0) for p in paths) != 8192:
    errors.append("kcapi: bytes != 8192 (the input file)")

for e in errors:
    print("MISMATCH:", e)
sys.exit(1 if errors else 0)
PY
note "PASS ($mode)"
