#!/bin/bash
# SPDX-License-Identifier: MIT
# cryptrace-afalg-examples.sh aesni|ce|generic: the project's AF_ALG clients and kcapi-enc in the
# guest (amd64, or arm64 with the cross build), each run twice: bare and under `cryptrace run`.
# Checks:
#   - transparency: the same exit status and, for kcapi-enc, byte-identical output and the same
#     error for an algorithm the kernel does not have and for a key it refuses, with and without
#     cryptrace; afalg_calls (every AF_ALG call with its return value, errno and the bytes read
#     back) prints the same with and without cryptrace, and with the cpu route's emulation;
#   - the examples' own checks against OpenSSL pass (they exit 1 on a mismatch);
#   - the trace: the afalg path's impl is kernel:<driver the guest picked>, calls and bytes are
#     exactly what the clients did (afalg_bench --count N: 2N requests per size; afalg_aead's own
#     printed count and sizes; kcapi-enc's input, and its requests and syscalls as strace counts
#     them), and syscalls per request are 2 for sendmsg+read, 4 for sendmsg+vmsplice+splice+read;
#   - the failures, each decoded with its call site: kcapi-enc's bind to cbc(no-such-cipher)
#     (ENOENT) and its 17-byte key (setsockopt EINVAL) inside libkcapi, the tampered GCM tag
#     (read EBADMSG) inside afalg_aead, and afalg_calls' refusals.
source "$(dirname "$0")/lib.sh"

mode=${1:?usage: cryptrace-afalg-examples.sh aesni|ce|generic}
guest_mode "$mode"

bench=$build_root/examples/kernel/afalg_bench
aead=$build_root/examples/kernel/afalg_aead
calls=$build_root/tests/kernel/afalg_calls
need_built "$cryptrace" "$preload" "$bench" "$aead" "$calls" "$host_cryptrace"
command -v python3 >/dev/null || fail "python3 is needed to read the JSON report"
need_strace	# the independent count of kcapi-enc's syscalls

count=16		# afalg_bench --count: 16 sessions with one request + 16 requests in one session
sizes=16,4096,65536
aead_count=8

# kcapi-enc's input: more than its 124 KiB pipe holds, so libkcapi makes two requests.
pt_len=204800
head -c $pt_len /dev/urandom >"$scratch/pt"
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
run calls "$CALLS"
# ... and the emulation (cpu route: AES-NI or ARMv8 CE) must answer every call as this kernel does.
"$CRYPTRACE" run -q --route 'aes-*=cpu' -o $OUT/calls.emul.trace -- "$CALLS" \
	>$OUT/calls.emul.out 2>$OUT/calls.emul.err
echo $? >$OUT/calls.emul.status
printf '%s' $KEY | sed 's/../\\x&/g' | xargs -0 printf >/tmp/key
head -c 17 /tmp/key >/tmp/key17
# kcapi-enc writes its -o file itself: name it after the variant (bare / under cryptrace). The
# output stays in the guest (the channel is slow): its hash comes back.
cat >/tmp/kcapi.sh <<'EOS'
kcapi-enc -e -c "$1" --iv $IV --keyfd 3 -i "$PT" -o /tmp/$2.$CT_VARIANT.bin 3<"$3" || exit
sha256sum </tmp/$2.$CT_VARIANT.bin >$OUT/$2.$CT_VARIANT.sha256
EOS
export IV PT OUT
run kcapi sh /tmp/kcapi.sh 'ctr(aes)' kcapi /tmp/key
run kcapi-bad sh /tmp/kcapi.sh 'cbc(no-such-cipher)' kcapi-bad /tmp/key
run kcapi-key sh /tmp/kcapi.sh 'cbc(aes)' kcapi-key /tmp/key17
# strace's count of the same kcapi-enc run, the truth for its requests and syscalls.
strace -f -qq -o $OUT/kcapi.strace -e trace=accept,accept4,sendmsg,sendto,write,writev,recvmsg,recvfrom,read,readv,splice,vmsplice \
	kcapi-enc -e -c 'ctr(aes)' --iv $IV --keyfd 3 -i "$PT" -o /tmp/kcapi.strace.bin 3</tmp/key
echo $? >$OUT/kcapi.strace.status
cat /proc/crypto >$OUT/proc-crypto
GUEST
)
guest "$guest_opt" --files "$cryptrace" "$preload" "$bench" "$aead" "$calls" "${strace_files[@]}" \
	"$scratch/pt" --out "$scratch/out" -- "
CRYPTRACE='$cryptrace' BENCH='$bench' AEAD='$aead' CALLS='$calls' PT='$scratch/pt'
COUNT=$count SIZES=$sizes AEAD_COUNT=$aead_count KEY=$key IV=$iv
$body" || fail "the guest script failed"

o=$scratch/out
for name in sendmsg splice aead calls kcapi kcapi-bad kcapi-key; do
	[[ -f $o/$name.bare.status && -f $o/$name.ct.status ]] || fail "$name: no results came back"
	echo "== $name: bare exit $(cat "$o/$name.bare.status"), under cryptrace $(cat "$o/$name.ct.status")"
	head -n 20 "$o/$name.ct.out" | cut -c1-100
	cat "$o/$name.ct.err"
	[[ $(cat "$o/$name.bare.status") == "$(cat "$o/$name.ct.status")" ]] ||
		fail "$name: exit status differs with cryptrace"
done
for name in sendmsg splice aead calls kcapi; do
	[[ $(cat "$o/$name.bare.status") == 0 ]] || fail "$name failed in the guest: $(cat "$o/$name.bare.err")"
done
[[ $(cat "$o/kcapi-bad.bare.status") != 0 ]] || fail "kcapi-enc accepted cbc(no-such-cipher)"
[[ $(cat "$o/kcapi-key.bare.status") != 0 ]] || fail "kcapi-enc accepted a 17-byte key"
[[ $(cat "$o/kcapi.strace.status") == 0 ]] || fail "kcapi-enc failed under strace"
cmp -s "$o/kcapi.bare.sha256" "$o/kcapi.ct.sha256" || fail "kcapi-enc output differs under cryptrace"
for name in kcapi-bad kcapi-key; do
	cmp -s "$o/$name.bare.err" "$o/$name.ct.err" ||
		fail "kcapi-enc's error ($name) differs under cryptrace: $(cat "$o/$name.ct.err")"
done
expected=$(openssl enc -aes-256-ctr -K $key -iv $iv -in "$scratch/pt" | sha256sum)
[[ $(cat "$o/kcapi.bare.sha256") == "$expected" ]] || fail "kcapi-enc ctr(aes) differs from openssl enc"
# afalg_calls: every return value, errno and byte read back, and the exit status.
diff -u "$o/calls.bare.out" "$o/calls.ct.out" >&2 ||
	fail "afalg_calls prints something else under cryptrace (diff above)"
diff -u "$o/calls.bare.out" "$o/calls.emul.out" >&2 ||
	fail "afalg_calls under the cpu route's emulation differs from the kernel (diff above)"
[[ $(cat "$o/calls.emul.status") == 0 ]] || fail "afalg_calls under the emulation exited $(cat "$o/calls.emul.status")"
for want in 'bind skcipher cbc\(no-such-cipher\) addrlen=88 +r=-1 errno=ENOENT' \
	'setsockopt\(tfm, ALG_SET_KEY, 17 bytes\) +r=-1 errno=EINVAL' \
	'read\(gcm decrypt, tampered tag\) +r=-1 errno=EBADMSG' \
	'recvmsg\(gcm decrypt, tampered tag\) +r=-1 errno=EBADMSG' \
	'io_getevents\(1\.\.2\) +r=1' '^  event res=64 data=42 obj=cb$' 'close\(gcm tfm\) +r=0'; do
	grep -Eq -- "$want" "$o/calls.bare.out" || fail "afalg_calls did not get as far as: $want"
done
note "transparency: same exit statuses; kcapi-enc output identical and equal to openssl enc;" \
	"afalg_calls identical bare, traced and emulated ($(wc -l <"$o/calls.bare.out") lines)"

cbc_driver=$(proc_crypto_pick "$o/proc-crypto" 'cbc(aes)')
ctr_driver=$(proc_crypto_pick "$o/proc-crypto" 'ctr(aes)')
gcm_driver=$(proc_crypto_pick "$o/proc-crypto" 'gcm(aes)')
note "guest drivers: cbc(aes) $cbc_driver, ctr(aes) $ctr_driver, gcm(aes) $gcm_driver"

for name in sendmsg splice aead calls kcapi kcapi-bad kcapi-key; do
	"$host_cryptrace" report --json "$o/$name.trace" >"$scratch/$name.json" ||
		fail "cryptrace report --json $name failed"
done

python3 - "$scratch" "$mode" "$cbc_driver" "$ctr_driver" "$gcm_driver" "$count" "$sizes" \
	"$aead_count" "$pt_len" "$cpu_driver_re" <<'PY' || fail "the traces do not match what the clients did"
import json, re, sys

scratch, mode, cbc, ctr, gcm, count, sizes, aead_count, pt_len, cpu_driver_re = sys.argv[1:11]
count, aead_count, pt_len = int(count), int(aead_count), int(pt_len)
out = scratch + "/out"
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
    want_cpu = mode != "generic"
    if want_cpu != bool(re.search(cpu_driver_re, driver)):
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

def total(paths, key):
    return sum(p.get(key, 0) for p in paths)

def expect(name, what, got, want):
    if got != want:
        errors.append(f"{name}: {what} {got}, expected {want}")

def failure(name, call, errno_name, detail, site):
    """The one call-failed event of (call, errno, detail), with site among its first frames."""
    evs = [e for e in json.load(open(f"{scratch}/{name}.json")).get("events", [])
           if e.get("kind") == "call-failed" and e.get("call") == call
           and e.get("errno_name") == errno_name and e.get("detail") == detail]
    if len(evs) != 1 or evs[0].get("count") != 1:
        errors.append(f"{name}: no single failed {call} {errno_name} '{detail}' ({len(evs)} events)")
        return
    frames = evs[0].get("callsite", "").split("\n")
    print(f"{name}: {call} {errno_name} '{detail}' at {frames[:3]}")
    # site: a module, with its function when the report could name it ("afalg_calls!main+...")
    mod = site.rstrip("+")
    if not any(f.startswith(mod) and f[len(mod):len(mod) + 1] in ("+", "!", ".") for f in frames[:4]):
        errors.append(f"{name}: failed {call} not called from {site}: {frames[:4]}")

# afalg_aead says what it did: "aad=20 len=1000 tag=16: 8 x (encrypt + decrypt)", and one
# tampered decryption after them. Bytes are what was sent: AAD + plaintext to encrypt, AAD +
# ciphertext + tag to decrypt; each request is a sendmsg and a read.
said = re.search(r"aad=(\d+) len=(\d+) tag=(\d+): (\d+) x \(encrypt \+ decrypt\)",
                 open(f"{out}/aead.ct.out").read())
if not said:
    errors.append("aead: afalg_aead did not print its counts")
else:
    aad, ln, tag, n = (int(x) for x in said.groups())
    expect("aead", "printed count", n, aead_count)
    paths = afalg_paths("aead")
    check_driver("aead", paths, gcm, "aes-128-gcm")
    enc = [p for p in paths if p.get("dir") == "encrypt"]
    dec = [p for p in paths if p.get("dir") == "decrypt"]
    expect("aead", "encrypt calls", total(enc, "calls"), n)
    expect("aead", "encrypt bytes", total(enc, "bytes"), n * (aad + ln))
    expect("aead", "encrypt syscalls", total(enc, "syscalls"), 2 * n)
    expect("aead", "encrypt errors", total(enc, "errors"), 0)
    expect("aead", "decrypt calls", total(dec, "calls"), n + 1)
    expect("aead", "decrypt bytes", total(dec, "bytes"), (n + 1) * (aad + ln + tag))
    expect("aead", "decrypt syscalls", total(dec, "syscalls"), 2 * (n + 1))
    expect("aead", "decrypt errors (the tampered tag)", total(dec, "errors"), 1)
    failure("aead", "read", "EBADMSG",
            f"type=aead name=gcm(aes) keylen=16 authsize={tag} dir=decrypt len={aad + ln + tag}",
            "afalg_aead+")

# kcapi-enc: bytes are its input; requests and syscalls are what strace saw on its op socket
# (sends, splices into it, reads) plus the vmsplices that fed those splices. A request ends
# with the first read after a send.
paths = afalg_paths("kcapi")
check_driver("kcapi", paths, ctr, "aes-256-ctr")
expect("kcapi", "bytes", total(paths, "bytes"), pt_len)
ops, fds, reqs, syscalls, sending = set(), set(), 0, 0, False
for line in open(f"{out}/kcapi.strace"):
    m = re.match(r"\d+\s+(\w+)\((\d+)(?:, NULL, (\d+))?.*\)\s+=\s+(-?\d+)", line)
    if not m:
        continue
    call, fd, splice_out, ret = m.group(1), int(m.group(2)), m.group(3), int(m.group(4))
    if call in ("accept", "accept4") and ret >= 0:
        fds.add(ret)
    elif call == "vmsplice":
        syscalls += 1
    elif call == "splice" and splice_out is not None and int(splice_out) in fds:
        syscalls += 1
        sending = True
    elif fd in fds:
        syscalls += 1
        if call.startswith(("send", "write")):
            sending = True
        elif sending:
            reqs, sending = reqs + 1, False
print(f"kcapi: strace saw {reqs} requests, {syscalls} syscalls on op sockets {sorted(fds)}")
if reqs < 2:
    errors.append(f"kcapi: strace saw {reqs} requests: the input no longer takes two")
expect("kcapi", "calls (strace's requests)", total(paths, "calls"), reqs)
expect("kcapi", "syscalls (strace's count)", total(paths, "syscalls"), syscalls)

# The refusals, decoded, with the caller: kcapi-enc's inside libkcapi.
failure("kcapi-bad", "bind", "ENOENT", "family=AF_ALG type=skcipher name=cbc(no-such-cipher)",
        "libkcapi.so")
failure("kcapi-key", "setsockopt", "EINVAL", "type=skcipher name=cbc(aes) opt=ALG_SET_KEY keylen=17",
        "libkcapi.so")
failure("calls", "bind", "ENOENT", "family=AF_ALG type=skcipher name=cbc(no-such-cipher)",
        "afalg_calls+")
failure("calls", "setsockopt", "EINVAL", "type=skcipher name=cbc(aes) opt=ALG_SET_KEY keylen=17",
        "afalg_calls+")
failure("calls", "setsockopt", "EINVAL", "type=aead name=gcm(aes) opt=ALG_SET_AEAD_AUTHSIZE authsize=5",
        "afalg_calls+")
for call in ("read", "recvmsg"):
    failure("calls", call, "EBADMSG",
            "type=aead name=gcm(aes) keylen=16 authsize=16 dir=decrypt len=136", "afalg_calls+")

for e in errors:
    print("MISMATCH:", e)
sys.exit(1 if errors else 0)
PY
note "PASS ($mode)"
