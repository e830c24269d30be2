#!/bin/bash
# SPDX-License-Identifier: MIT
# openssl-afalg-engine.sh: the guest's `openssl speed -elapsed -seconds 1 -engine afalg -evp
# aes-128-cbc` (the host's; the sysroot's in the arm64 guest) runs in the guest and really sends
# its work to the kernel. On this host the same
# command prints 'Invalid engine "afalg"' and silently benchmarks software AES; in the guest the
# engine must be set, and strace must count exactly one AF_ALG request (sendmsg + io_submit +
# io_getevents) per block openssl says it processed.
source "$(dirname "$0")/lib.sh"

need_strace

guest "--$cpu_mode" --files "${strace_files[@]}" --out "$scratch/out" -- "
	strace -f -c -o \$OUT/strace -e trace=socket,bind,accept,sendmsg,io_submit,io_getevents \\
		openssl speed -elapsed -seconds 1 -engine afalg -evp aes-128-cbc \\
		>\$OUT/speed.out 2>\$OUT/speed.err
	echo openssl-status=\$?
" || fail "the guest script failed"

speed=$scratch/out/speed.out
[[ -s $speed ]] || fail "no openssl speed output came back"
grep -qx 'openssl-status=0' "$scratch/guest.out" || fail "openssl speed failed in the guest"
cat "$speed" "$scratch/out/speed.err" "$scratch/out/strace"
grep -q 'Invalid engine' "$speed" "$scratch/out/speed.err" && fail "openssl says: Invalid engine"
grep -q '^Engine "afalg" set' "$speed" "$scratch/out/speed.err" ||
	fail "openssl did not report the afalg engine as set"

# "Doing AES-128-CBC for 1s on 16 size blocks: 372 AES-128-CBC's in 0.96s" -> 372
blocks=$(cat "$speed" "$scratch/out/speed.err" |
	sed -n "s/^Doing AES-128-CBC .* blocks: \([0-9]*\) AES-128-CBC's in .*/\1/p" |
	awk '{ n += $1 } END { print n + 0 }')
((blocks > 0)) || fail "openssl printed no block counts"

count() {	# SYSCALL: its count in strace -c's table
	awk -v s="$1" '$NF == s { print $4 }' "$scratch/out/strace" | head -n1
}
for sc in socket bind accept; do
	n=$(count "$sc")
	((${n:-0} > 0)) || fail "openssl made no $sc() call: the afalg engine did not reach AF_ALG"
done
for sc in sendmsg io_submit io_getevents; do
	n=$(count "$sc")
	[[ ${n:-0} == "$blocks" ]] ||
		fail "$sc() was called ${n:-0} times, expected one per block: $blocks"
done
note "PASS: engine afalg set; $blocks blocks = $blocks sendmsg + io_submit + io_getevents in the guest"
