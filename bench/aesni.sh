#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/aesni.sh - the AES-NI backend's benchmark and long differential run, in one go.
#
#   bench/aesni.sh [BUILD_DIR] [extra aesni_bench options...]
#
# 1. aesni_bench for AES-128 and AES-256: native OpenSSL, OpenSSL with AES-NI masked
#    (OPENSSL_ia32cap="~0x200000200000000", in a child process) and our backend, side by side,
#    per mode and request size, with the ratios and the distance to the instruction limit;
# 2. the same for AES-128 with our backend capped to plain AES-NI (no VAES);
# 3. test_aesni_diff --long: 3,000,000 random cases against OpenSSL EVP on both code paths.
# Results go to stdout and to $OUT (default: BUILD_DIR/aesni-bench.txt).
set -eu

BUILD=${1:-build}
[ $# -gt 0 ] && shift
BENCH="$BUILD/aesni/aesni_bench"
DIFF="$BUILD/tests/unit/test_aesni_diff"
OUT=${OUT:-$BUILD/aesni-bench.txt}

if [ ! -x "$BENCH" ]; then
	echo "aesni.sh: $BENCH not built (meson setup $BUILD && ninja -C $BUILD)" >&2
	exit 1
fi
# Pin to one CPU when possible: the numbers are single-thread by design.
PIN=""
if command -v taskset >/dev/null 2>&1; then
	PIN="taskset -c $(($(nproc) - 1))"
fi

{
	echo "# aesni bench $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n), $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2-)"
	echo "# openssl: $(openssl version 2>/dev/null || echo '?')"
	echo
	$PIN "$BENCH" --bits 128 "$@"
	echo
	$PIN "$BENCH" --bits 256 "$@"
	echo
	echo "# our backend capped to plain AES-NI (the path for CPUs without VAES)"
	$PIN "$BENCH" --bits 128 --level aesni --no-masked \
		--modes ecb,cbc-dec,ctr,xts-enc,gcm-enc --sizes 16,1024,8192 "$@"
	echo
	if [ -x "$DIFF" ]; then
		echo "# long differential run against OpenSSL EVP"
		"$DIFF" --long
	else
		echo "# $DIFF not built (tests disabled?): long differential run skipped"
	fi
} 2>&1 | tee "$OUT"
