#!/bin/bash
# SPDX-License-Identifier: MIT
# kcapi-cbc.sh aesni|ce|generic: the guest boots, AF_ALG works, and the kernel driver is the
# expected one. kcapi-enc (libkcapi over AF_ALG) encrypts a known vector with cbc(aes) in the
# guest; the ciphertext must equal the host's `openssl enc` (and, for the first blocks, NIST SP
# 800-38A F.2.1). The guest's /proc/crypto must pick the CPU's driver (cbc-aes-aesni with
# aesni-intel loaded; cbc-aes-ce with aes-ce-blk on arm64), and only generic drivers without it.
source "$(dirname "$0")/lib.sh"

mode=${1:?usage: kcapi-cbc.sh aesni|ce|generic}
guest_mode "$mode"

key=2b7e151628aed2a6abf7158809cf4f3c
iv=000102030405060708090a0b0c0d0e0f
nist_pt=6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51
nist_ct=7649abac8119b246cee98e9b12e9197d5086cb9b507219ee95db113a917678b2
# 4 KiB: the NIST blocks, then a counter pattern, so several kernel walk steps are exercised.
# (No `| head` here: under pipefail a writer killed by SIGPIPE would fail the test.)
seq 0 2000 | tr -d '\n' >"$scratch/pattern"
{
	printf '%s' "$nist_pt" | sed 's/../\\x&/g' | xargs -0 printf
	head -c $((4096 - 32)) "$scratch/pattern"
} >"$scratch/pt"
[[ $(stat -c %s "$scratch/pt") == 4096 ]] || fail "could not build the 4 KiB plaintext"

expected=$(openssl enc -aes-128-cbc -K "$key" -iv "$iv" -nopad -in "$scratch/pt" |
	od -An -v -tx1 | tr -d ' \n')
[[ ${expected:0:64} == "$nist_ct" ]] || fail "host openssl disagrees with NIST SP 800-38A: ${expected:0:64}"

guest "$guest_opt" --files "$scratch/pt" --out "$scratch/out" -- "
	printf '%s' '$key' | sed 's/../\\\\x&/g' | xargs -0 printf >/tmp/key
	kcapi-enc -e -c 'cbc(aes)' --iv $iv --keyfd 3 -i '$scratch/pt' -o /tmp/ct 3</tmp/key
	echo kcapi-enc-status=\$?
	echo ciphertext=\$(od -An -v -tx1 /tmp/ct | tr -d ' \\n' | sha256sum | cut -d' ' -f1)
	echo first-blocks=\$(head -c32 /tmp/ct | od -An -v -tx1 | tr -d ' \\n')
	lsmod >\$OUT/lsmod
	cat /proc/crypto >\$OUT/proc-crypto
" || fail "the guest script failed"

grep -qx 'kcapi-enc-status=0' "$scratch/guest.out" || fail "kcapi-enc failed in the guest"
got=$(sed -n 's/^ciphertext=//p' "$scratch/guest.out")
first=$(sed -n 's/^first-blocks=//p' "$scratch/guest.out")
[[ $first == "$nist_ct" ]] || fail "kcapi-enc's first blocks are not NIST's: $first"
[[ $got == "$(printf '%s' "$expected" | sha256sum | cut -d' ' -f1)" ]] ||
	fail "kcapi-enc ciphertext differs from openssl's"
note "kcapi-enc cbc(aes) over 4096 bytes == host openssl enc -aes-128-cbc"

[[ -s $scratch/out/proc-crypto ]] || fail "no /proc/crypto came back from the guest"
picked=$(proc_crypto_pick "$scratch/out/proc-crypto" 'cbc(aes)')
drivers=$(proc_crypto_drivers "$scratch/out/proc-crypto" 'cbc(aes)' | tr '\n' ' ')
note "cbc(aes) drivers in the guest: $drivers; the kernel picks: $picked"
if [[ $mode == "$cpu_mode" ]]; then
	grep -q "^$cpu_module " "$scratch/out/lsmod" || fail "$cpu_module is not loaded"
	[[ $picked == "$cpu_cbc_driver" ]] || fail "expected $cpu_cbc_driver to serve cbc(aes), got '$picked'"
else
	grep -q "^$cpu_module " "$scratch/out/lsmod" && fail "$cpu_module is loaded in the no-$cpu_mode guest"
	[[ -n $picked ]] || fail "no cbc(aes) driver with a passed self-test"
	if grep '^driver' "$scratch/out/proc-crypto" | sed 's/^driver *: //' | grep -Eq -e "$cpu_driver_re"; then
		fail "a driver of the CPU's AES instructions is registered in the no-$cpu_mode guest"
	fi
	[[ $picked == 'cbc(aes-generic)' ]] || fail "expected cbc(aes-generic), got '$picked'"
fi
note "PASS ($mode)"
