#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# cross-build.sh ARCH WORK - the tree cross-built for a Debian architecture, in WORK/build-ARCH,
# against WORK/sysroot-ARCH (tests/port/sysroot.sh). Incremental: a second run only rebuilds what
# changed. Prints the build directory on its last line.
#
#   ARCH: arm64 | i386 | mipsel
set -euo pipefail

usage() { echo "usage: $0 arm64|i386|mipsel WORK" >&2; exit 2; }
[ $# -eq 2 ] || usage
arch=$1
case $arch in
arm64) cross=aarch64-linux-gnu ;;
i386) cross=i686-linux-gnu ;;
mipsel) cross=mipsel-linux-gnu ;;
*) usage ;;
esac
src=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$2"
work=$(cd "$2" && pwd)
command -v "$cross-gcc" >/dev/null || {
	echo "cross-build: $cross-gcc not found (apt-get install gcc-$cross)" >&2
	exit 1
}

# One build per WORK and arch at a time: the arm64 guest tests and tests/port share it, and
# meson may start several of them at once; whoever waited finds the build up to date.
exec 9>"$work/.lock-$arch"
flock 9
"$src/tests/port/sysroot.sh" "$arch" "$work/sysroot-$arch" >&2
build=$work/build-$arch
if [ ! -f "$build/build.ninja" ]; then
	# -Dwerror: "builds clean under -Wall -Wextra" is asserted on every target, not hoped for.
	meson setup -Dwerror=true --cross-file "$work/sysroot-$arch/sysroot.ini" \
		--cross-file "$src/cross/$cross.ini" "$build" "$src" >"$work/setup-$arch.log" 2>&1 || {
		tail -20 "$work/setup-$arch.log" >&2
		echo "cross-build: meson setup for $arch failed (log: $work/setup-$arch.log)" >&2
		exit 1
	}
fi
ninja -C "$build" >"$work/ninja-$arch.log" 2>&1 || {
	grep -E 'error|FAILED' "$work/ninja-$arch.log" | head -30 >&2
	echo "cross-build: the $arch build failed (log: $work/ninja-$arch.log)" >&2
	exit 1
}
echo "$build"
