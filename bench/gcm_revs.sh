#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/gcm_revs.sh - GCM per message: another revision's mode layer (aesni/aes_gcm.c) against
# this tree's, side by side in one process (bench/gcm_revs.c says how).
#
#   bench/gcm_revs.sh [-b BUILD_DIR] [-r REV] [SIZE...]     (REV: default HEAD; sizes in bytes)
#
# Both sides run this tree's kernels, so the ratio is the mode layer's alone (the message's fixed
# cost, the short path, the stitched-kernel choice); a REV whose aes_gcm.c does not compile
# against this tree's aes_internal.h cannot be compared this way.
set -eu
BUILD=build REV=HEAD
while getopts b:r: o; do
	case $o in
	b) BUILD=$OPTARG ;;
	r) REV=$OPTARG ;;
	*) echo "usage: $0 [-b BUILD_DIR] [-r REV] [SIZE...]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ $# -gt 0 ] || set -- 16 32 64 128 256 512 1024 8192 16384
SRC=$(cd "$(dirname "$0")/.." && pwd)
for lib in "$BUILD/aesni/libct_aesni.a" "$BUILD/common/libct_common.a"; do
	[ -f "$lib" ] || { echo "gcm_revs.sh: $lib not built (meson setup $BUILD && ninja -C $BUILD)" >&2; exit 1; }
done
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
mkdir -p "$TMP/rev"
git -C "$SRC" show "$REV:aesni/aes_gcm.c" >"$TMP/rev/aes_gcm.c"
git -C "$SRC" show "$REV:aesni/aesni.h" >"$TMP/rev/aesni.h"
cp "$SRC/aesni/aes_internal.h" "$TMP/rev/"
RENAME=""
for f in init reset setiv aad encrypt decrypt tag verify wipe; do
	RENAME="$RENAME -Dct_aes_gcm_$f=rev_$f"
done
CC=${CC:-cc}
# shellcheck disable=SC2086
$CC -O2 $RENAME -I"$TMP/rev" -c "$TMP/rev/aes_gcm.c" -o "$TMP/rev_gcm.o"
$CC -O2 -I"$SRC/aesni" -o "$TMP/gcm_revs" "$SRC/bench/gcm_revs.c" "$TMP/rev_gcm.o" \
	"$BUILD/aesni/libct_aesni.a" "$BUILD/common/libct_common.a"
echo "# gcm_revs: $(git -C "$SRC" rev-parse --short "$REV") ($REV) against the tree, $(date -u '+%Y-%m-%d %H:%M UTC')"
. "$SRC/bench/lib.sh"
echo "# $(bench_cpu_line "$BUILD")"
PIN=""
command -v taskset >/dev/null 2>&1 && PIN="taskset -c $(($(nproc) - 1))"
$PIN "$TMP/gcm_revs" "$@"
