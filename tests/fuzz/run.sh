#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/fuzz/run.sh SECONDS [BUILD_DIR] - builds the libFuzzer target (clang, fuzzer + ASan +
# UBSan) over the trace reader and the report loader, then fuzzes for SECONDS starting from the
# corpus in tests/fuzz/corpus (new inputs go to a scratch copy, not into the repository).
# Exit 0 clean; 1 on any fuzzer failure (crash, sanitizer error, leak, timeout, OOM), with the
# reproducer printed and kept, beside the log and the fuzzer binary, under
# BUILD_DIR/meson-logs/fuzz-findings.*; 77 when clang or its fuzzer runtime is missing (Debian:
# clang + libclang-rt-dev / the clang package's runtime).
set -euo pipefail
# the fuzzer carries clang's own ASan runtime: a gcc libasan preloaded by a sanitizer run clashes
unset LD_PRELOAD
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
seconds=${1:-60}
build=${2:-$root/build}
cc=${CLANG:-clang}
if ! command -v "$cc" >/dev/null; then
	echo "SKIP: clang is not installed"; exit 77
fi
work=$(mktemp -d /tmp/ct-fuzz.XXXXXX)
trap 'rm -rf "$work"' EXIT
if ! echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n){(void)d;(void)n;return 0;}' |
	"$cc" -x c -fsanitize=fuzzer - -o "$work/probe" 2>/dev/null; then
	echo "SKIP: clang's libFuzzer runtime is missing"; exit 77
fi
config_dir=$build
[ -f "$config_dir/ct_config.h" ] || config_dir=$(dirname "$(find "$root" -maxdepth 2 -name ct_config.h | head -1)")
srcs=("$here/fuzz_trace.c" "$root"/common/trace_format.c "$root"/common/trace_stream.c "$root"/common/timing_model.c "$root"/common/cpu.c \
	"$root"/common/route_spec.c "$root"/common/elf_note.c "$root"/common/redact.c \
	"$root"/common/errno_abi.c "$root"/common/errno_tables.c \
	"$root"/common/kernel/*.c)
for f in "$root"/report/*.c "$root"/report/findings/*.c; do
	srcs+=("$f")
done
"$cc" -g -O1 -std=gnu11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=undefined -I"$root" -I"$root/common" -I"$root/common/kernel" -I"$root/report" \
	-DCT_HAVE_CXA_DEMANGLE -I"$config_dir" "${srcs[@]}" -lm -lstdc++ -o "$work/fuzz_trace"
mkdir "$work/corpus"
cp "$here"/corpus/* "$work/corpus/"
cd "$work"
# Not a bare pipeline: under `set -e -o pipefail` a failing fuzzer would end the script right here
# with libFuzzer's own status (77 for a leak or an ASan/UBSan error, 70 for a timeout), which meson
# reads as SKIP, and the EXIT trap would delete the reproducer. The full log goes to a file.
rc=0
ASAN_OPTIONS=detect_leaks=1 "$work/fuzz_trace" -max_total_time="$seconds" -timeout=10 \
	-rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 "$work/corpus" >"$work/fuzz.log" 2>&1 ||
	rc=$?
tail -25 "$work/fuzz.log"
if [ "$rc" -ne 0 ]; then
	# Keep what reproduces it where the meson log is (the scratch dir goes with the trap).
	keep=$build/meson-logs/fuzz-findings.$(date +%Y%m%d-%H%M%S).$$
	mkdir -p "$keep"
	cp "$work/fuzz.log" "$work/fuzz_trace" "$keep/"
	echo "FAIL: the fuzzer exited $rc (1 crash or sanitizer error, 70 timeout, 77 leak or error)"
	found=0
	for f in "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-* \
		"$work"/slow-unit-*; do
		[ -e "$f" ] || continue
		found=1
		cp "$f" "$keep/"
		echo "reproducer: $keep/$(basename "$f") (replay: $keep/fuzz_trace $keep/$(basename "$f"))"
		xxd "$f" | head -20 || true
	done
	[ "$found" -eq 1 ] || echo "no reproducer file was written; the log says why"
	# the sanitizer's report may start above the last 25 lines: show it from its first line
	first=$(grep -n -m1 -E '^==[0-9]+==ERROR|runtime error:|ERROR: libFuzzer' "$work/fuzz.log" |
		cut -d: -f1 || true)
	if [ -n "$first" ]; then
		echo "---- from the first error ----"
		sed -n "$first,+60p" "$work/fuzz.log"
	fi
	echo "kept: $keep (log and reproducers)"
	exit 1
fi
