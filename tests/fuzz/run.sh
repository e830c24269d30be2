#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# tests/fuzz/run.sh SECONDS [BUILD_DIR] - builds the libFuzzer target (clang, fuzzer + ASan +
# UBSan) over the trace reader and the report loader, then fuzzes for SECONDS starting from the
# corpus in tests/fuzz/corpus (new inputs go to a scratch copy, not into the repository).
# Exit 0 clean, 1 a crash/leak/timeout (the reproducer is printed), 77 when clang's fuzzer
# runtime is missing (Debian: clang + libclang-rt-dev / the clang package's runtime).
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
srcs=("$here/fuzz_trace.c" "$root"/common/trace_format.c "$root"/common/cpu.c \
	"$root"/common/route_spec.c "$root"/common/kernel/*.c)
for f in "$root"/report/*.c; do
	srcs+=("$f")
done
"$cc" -g -O1 -std=gnu11 -D_GNU_SOURCE -fsanitize=fuzzer,address,undefined \
	-fno-sanitize-recover=undefined -I"$root/common" -I"$root/common/kernel" -I"$root/report" \
	-I"$config_dir" "${srcs[@]}" -lm -o "$work/fuzz_trace"
mkdir "$work/corpus"
cp "$here"/corpus/* "$work/corpus/"
cd "$work"
ASAN_OPTIONS=detect_leaks=1 "$work/fuzz_trace" -max_total_time="$seconds" -timeout=10 \
	-rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 "$work/corpus" 2>&1 | tail -25
rc=${PIPESTATUS[0]}
if [ "$rc" -ne 0 ]; then
	for f in "$work"/crash-* "$work"/leak-* "$work"/timeout-* "$work"/oom-*; do
		[ -e "$f" ] && { echo "reproducer: $f"; xxd "$f" | head -20; }
	done
	exit 1
fi
