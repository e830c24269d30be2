#!/bin/bash
# SPDX-License-Identifier: MIT
# vm-route-afalg.sh: in the qemu guest, where the kernel has AF_ALG and cbc-aes-aesni,
# `--route aes-*=aesni` moves `openssl speed -engine afalg -evp aes-128-cbc` from the kernel to
# in-process AES-NI. Without a route the trace shows afalg kernel:cbc-aes-aesni with 3 syscalls
# per request; with it, afalg route:aesni with 0, calls equal to openssl's count both ways. A
# route that leaves cbc to the kernel (aes-*-ctr=aesni) gives the kernel path back (bind hands
# the socket to the real AF_ALG). `openssl enc -engine afalg` output is byte-identical under each,
# and equal to the host's openssl without an engine. Guest timings are TCG: not performance data.
source "$(dirname "$0")/../vm/lib.sh"

need_built "$cryptrace" "$preload"
examples=$build_root/examples/kernel
need_built "$examples/afalg_bench" "$examples/afalg_aead"
command -v python3 >/dev/null || fail "python3 is needed to read the JSON report"

key=000102030405060708090a0b0c0d0e0f
iv=f0e0d0c0b0a090807060504030201000
head -c 100000 /dev/urandom >"$scratch/plain"
openssl enc -aes-128-cbc -K $key -iv $iv -in "$scratch/plain" -out "$scratch/want"

strace_bin=$(command -v strace || true)
[[ -n $strace_bin ]] || skip "strace is needed to count the syscalls independently of the trace"

guest --files "$cryptrace" "$preload" "$scratch/plain" "$strace_bin" "$examples/afalg_bench" \
	"$examples/afalg_aead" --out "$scratch/out" -- "
	# the examples, with the kernel's AF_ALG there, served in-process (they verify vs OpenSSL)
	'$cryptrace' run -o \$OUT/x-bench --route='aes-*=aesni' -- '$examples/afalg_bench' --mode splice \
		--count 3 --sizes 16,4096,65536 >\$OUT/x-bench.out 2>&1
	echo \"afalg_bench status=\$?\"
	'$cryptrace' run -o \$OUT/x-aead --route='aes-*=aesni' -- '$examples/afalg_aead' --count 5 \
		>\$OUT/x-aead.out 2>&1
	echo \"afalg_aead status=\$?\"
	# strace's own count of the AF_ALG data syscalls, without and with the route
	for r in none 'aes-*=aesni'; do
		n=\$(echo \"\$r\" | tr -c 'a-z0-9\n' _)
		if [ \"\$r\" = none ]; then opt=''; else opt=\"--route=\$r\"; fi
		'$strace_bin' -f -qq -c -e trace=sendmsg,io_submit,io_getevents -o \$OUT/strace-\$n \
			'$cryptrace' run -o \$OUT/s-\$n \$opt -- openssl speed -elapsed -seconds 1 -bytes 16 \
			-engine afalg -evp aes-128-cbc >/dev/null 2>&1
		echo \"strace \$n status=\$?\"
	done
	for r in none 'aes-*=aesni' 'aes-*-ctr=aesni'; do
		n=\$(echo \"\$r\" | tr -c 'a-z0-9\n' _)
		if [ \"\$r\" = none ]; then opt=''; else opt=\"--route=\$r\"; fi
		'$cryptrace' run -o \$OUT/t-\$n \$opt -- openssl speed -elapsed -seconds 1 -bytes 16 \\
			-engine afalg -evp aes-128-cbc >\$OUT/speed-\$n.out 2>&1
		echo \"speed \$n status=\$?\"
		'$cryptrace' run -o \$OUT/e-\$n \$opt -- openssl enc -engine afalg -aes-128-cbc \\
			-K $key -iv $iv -in '$scratch/plain' -out \$OUT/enc-\$n >\$OUT/enc-\$n.log 2>&1
		echo \"enc \$n status=\$?\"
	done
" || fail "the guest script failed"

for x in afalg_bench afalg_aead; do
	grep -qx "$x status=0" "$scratch/guest.out" || fail "$x under the route failed in the guest"
done
"$cryptrace" report --json "$scratch/out/x-bench" "$scratch/out/x-aead" >"$scratch/x.json" ||
	fail "cryptrace report --json (examples) failed"
python3 - "$scratch/x.json" <<'PY' || fail "the examples' afalg paths are not all route:aesni with 0 syscalls"
import json, sys
ps = [p for p in json.load(open(sys.argv[1]))['paths'] if p['api'] == 'afalg']
print(sorted((p['cipher'], p['dir'], p['entry'], p['impl'], p['calls'], p['syscalls']) for p in ps))
sys.exit(0 if ps and all(p['impl'] == 'route:aesni' and p['syscalls'] == 0 for p in ps) else 1)
PY
note "afalg_bench (splice) and afalg_aead under the route in the guest: verified, route:aesni, 0 syscalls"

for n in none aes___aesni aes___ctr_aesni; do
	grep -qx "speed $n status=0" "$scratch/guest.out" || fail "openssl speed ($n) failed in the guest"
	grep -qx "enc $n status=0" "$scratch/guest.out" || fail "openssl enc ($n) failed in the guest"
	grep -q '^Engine "afalg" set' "$scratch/out/speed-$n.out" || fail "no afalg engine ($n)"
	cmp -s "$scratch/want" "$scratch/out/enc-$n" ||
		fail "openssl enc -engine afalg output ($n) differs from the host's openssl enc"
	"$cryptrace" report --json "$scratch/out/t-$n" >"$scratch/report-$n.json" ||
		fail "cryptrace report --json ($n) failed"
	"$cryptrace" report --json "$scratch/out/e-$n" >"$scratch/enc-report-$n.json" ||
		fail "cryptrace report --json (enc $n) failed"
done
note "openssl enc -engine afalg: byte-identical to the host's openssl enc under each route"

# strace -c: a line per syscall that was made ("calls" is the 4th column, or the 3rd when no
# errors column is printed); the route must leave none of the three, the kernel run all three.
for n in none aes___aesni; do
	grep -qx "strace $n status=0" "$scratch/guest.out" || fail "the strace run ($n) failed"
	cat "$scratch/out/strace-$n"
done
for sc in sendmsg io_submit io_getevents; do
	grep -qw "$sc" "$scratch/out/strace-none" || fail "strace saw no $sc without the route (the control)"
	! grep -qw "$sc" "$scratch/out/strace-aes___aesni" || fail "strace saw $sc under the route"
done
note "strace: sendmsg, io_submit and io_getevents without the route, none of them with it"

python3 - "$scratch" <<'PY' || fail "the traces do not show the move"
import json, re, sys
d = sys.argv[1]
ok = True
def check(cond, what):
    global ok
    print(('ok: ' if cond else 'FAIL: ') + what)
    ok &= bool(cond)
for n, impl, per_op in (('none', 'kernel:cbc-aes-aesni', 3), ('aes___aesni', 'route:aesni', 0),
                        ('aes___ctr_aesni', 'kernel:cbc-aes-aesni', 3)):
    text = open('%s/out/speed-%s.out' % (d, n)).read()
    count = sum(int(c) for c in re.findall(r": (\d+) aes-128-cbc's in", text, re.I))
    rep = json.load(open('%s/report-%s.json' % (d, n)))
    ps = [p for p in rep['paths'] if p['api'] == 'afalg']
    calls = sum(p['calls'] for p in ps)
    sysc = sum(p['syscalls'] for p in ps)
    impls = sorted({p['impl'] for p in ps})
    check(impls == [impl], '%s: the afalg path is %s (%s)' % (n, impl, impls))
    check(count > 0 and calls == count, '%s: afalg calls == openssl count (%d == %d)' % (n, calls, count))
    check(sysc == per_op * calls, '%s: %d kernel syscalls per request (%d for %d)' % (n, per_op, sysc, calls))
    evp = [p for p in rep['paths'] if p['api'] == 'evp' and p['impl'] == 'engine:afalg']
    check(sum(p['calls'] for p in evp) == calls, '%s: EVP engine:afalg has the same calls' % n)
    routed = [e for e in rep['events'] if e['kind'] == 'route' and e.get('call') == 'bind']
    check(bool(routed) == (impl == 'route:aesni'), '%s: a bind route event only when routed' % n)
    erep = json.load(open('%s/enc-report-%s.json' % (d, n)))
    eps = [p for p in erep['paths'] if p['api'] == 'afalg']
    check(eps and all(p['impl'] == impl for p in eps), '%s: openssl enc went through %s' % (n, impl))
sys.exit(0 if ok else 1)
PY
