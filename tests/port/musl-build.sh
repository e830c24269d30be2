#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# musl-build.sh WORK - the tree built with musl-gcc (cross/x86_64-linux-musl.ini) into
# WORK/build-musl, against what it needs built for musl, cached under WORK/cache:
#   - Debian's OpenSSL (tests/port/musl-openssl.sh): headers, libcrypto, and the `openssl` the
#     tests trace;
#   - Debian's cmocka (the unit tests), built with cmake;
#   - WORK/musl-headers: libgcrypt's and GnuTLS's headers copied from the host's -dev packages,
#     with .pc files that give them and nothing to link (the preload binds both at run time);
#   - the kernel's UAPI headers (musl-openssl.sh copies them to WORK/cache/linux-headers).
# Writes WORK/musl.ini (the constants the cross file reads). Incremental: a second run only
# rebuilds what changed. Prints the build directory on its last line.
set -euo pipefail

[ $# -eq 1 ] || { echo "usage: $0 WORK" >&2; exit 2; }
src=$(cd "$(dirname "$0")/../.." && pwd)
mkdir -p "$1"
work=$(cd "$1" && pwd)
cache=$work/cache
command -v musl-gcc >/dev/null || { echo "musl-build: musl-gcc not found (apt-get install musl-tools)" >&2; exit 1; }
command -v cmake >/dev/null || { echo "musl-build: cmake not found (apt-get install cmake)" >&2; exit 1; }

openssl=$("$src/tests/port/musl-openssl.sh" "$cache" | tail -1)

# cmocka, the newest Debian version that fetches whole (stamp: its prefix's .done)
. "$src/tests/port/debsrc.sh"
cmocka=$(ls -d "$cache"/cmocka-*/.done 2>/dev/null | sort -V | tail -1 || true)
cmocka=${cmocka%/.done}
if [ -z "$cmocka" ]; then
	for version in $(debsrc_versions "$cache" cmocka); do
		debsrc_fetch "$cache" cmocka "$version" || continue
		tree=$cache/src-cmocka-$version/tree
		cmocka=$cache/cmocka-$version
		echo "musl-build: building cmocka $version with musl-gcc" >&2
		(CC=musl-gcc cmake -S "$tree" -B "$tree/build" -DCMAKE_INSTALL_PREFIX="$cmocka" \
			-DCMAKE_INSTALL_LIBDIR=lib -DCMAKE_BUILD_TYPE=Release -DWITH_EXAMPLES=OFF -DUNIT_TESTING=OFF &&
			cmake --build "$tree/build" -j2 && cmake --install "$tree/build") >"$tree/../build.log" 2>&1 || {
			tail -20 "$tree/../build.log" >&2
			echo "musl-build: the cmocka build failed (log: $tree/../build.log)" >&2
			exit 1
		}
		touch "$cmocka/.done"
		break
	done
	[ -n "$cmocka" ] || { echo "musl-build: cmocka's source did not fetch (network?)" >&2; exit 1; }
fi

# libgcrypt's and GnuTLS's prototypes only (x86-64 headers: the same ABI under musl)
headers=$work/musl-headers
mkdir -p "$headers/include/gnutls" "$headers/pkgconfig"
for h in /usr/include/gcrypt.h /usr/include/x86_64-linux-gnu/gpg-error.h /usr/include/x86_64-linux-gnu/gpgrt.h; do
	[ -f "$h" ] || { echo "musl-build: $h missing (apt-get install libgcrypt20-dev)" >&2; exit 1; }
	cp -p "$h" "$headers/include/"
done
[ -f /usr/include/gnutls/gnutls.h ] || { echo "musl-build: GnuTLS headers missing (apt-get install libgnutls28-dev)" >&2; exit 1; }
cp -p /usr/include/gnutls/*.h "$headers/include/gnutls/"
for pc in "libgcrypt $(pkg-config --modversion libgcrypt)" "gnutls $(pkg-config --modversion gnutls)"; do
	set -- $pc
	printf 'Name: %s\nDescription: %s headers only (no library built for musl)\nVersion: %s\nCflags: -isystem %s\n' \
		"$1" "$1" "$2" "$headers/include" >"$headers/pkgconfig/$1.pc"
done

cat >"$work/musl.ini" <<INI
# Written by tests/port/musl-build.sh: read before cross/x86_64-linux-musl.ini.
[constants]
musl_openssl = '$openssl'
musl_cmocka = '$cmocka'
musl_headers = '$headers'
musl_kernel_headers = '$cache/linux-headers'
INI

build=$work/build-musl
if [ ! -f "$build/build.ninja" ]; then
	meson setup --cross-file "$work/musl.ini" --cross-file "$src/cross/x86_64-linux-musl.ini" \
		"$build" "$src" >"$work/setup-musl.log" 2>&1 || {
		tail -20 "$work/setup-musl.log" >&2
		echo "musl-build: meson setup failed (log: $work/setup-musl.log)" >&2
		exit 1
	}
fi
ninja -C "$build" >"$work/ninja-musl.log" 2>&1 || {
	grep -E 'error|FAILED' "$work/ninja-musl.log" | head -30 >&2
	echo "musl-build: the musl build failed (log: $work/ninja-musl.log)" >&2
	exit 1
}
echo "$build"
