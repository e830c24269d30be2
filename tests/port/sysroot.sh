#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# sysroot.sh ARCH DIR - a target's Debian 12 libraries and headers, unpacked (never installed) into
# DIR, for cross builds and for running the target's own programs under qemu-user.
#
#   ARCH: arm64 | i386 | mipsel (Debian architecture names)
#
# Uses a private apt state under DIR/.apt (tests/port/foreign-apt.sh: the host's apt config and
# dpkg database are not touched, no `dpkg --add-architecture`). Fetches the target's openssl +
# libssl3 (what the traced `openssl speed` runs), the -dev packages whose headers and .pc files
# the build reads, cmocka for the unit tests, and busybox-static (the aarch64 guest's userland). The C library comes from
# the cross toolchain (/usr/<triplet>), which is Debian's own glibc built for that target.
#
# Writes DIR/sysroot.ini: a meson machine file with the constant `sysroot`, read before the
# tree's cross/<triplet>.ini. Idempotent: DIR/.done-<hash of the package list> skips the work.
set -euo pipefail

usage() { echo "usage: $0 arm64|i386|mipsel DIR" >&2; exit 2; }
[ $# -eq 2 ] || usage
arch=$1 dir=$2
case $arch in
arm64) triplet=aarch64-linux-gnu ;;
i386) triplet=i386-linux-gnu ;;
mipsel) triplet=mipsel-linux-gnu ;;
*) usage ;;
esac

# Headers and libraries the build links or reads (.pc files with their Requires.private).
pkgs=(
	libc6 libssl3 openssl libssl-dev
	libcmocka0 libcmocka-dev
	libgcrypt20 libgcrypt20-dev libgpg-error0 libgpg-error-dev
	libgnutls30 libgnutls28-dev nettle-dev libgmp-dev libidn2-dev libp11-kit-dev libtasn1-6-dev
	libunistring2 libidn2-0 libp11-kit0 libtasn1-6 libnettle8 libhogweed6 libgmp10 libffi8
	zlib1g libzstd1 libbrotli1 libbrotli-dev zlib1g-dev
	libatomic1                # mipsel: its libcrypto needs it (64-bit atomics are calls there)
	busybox-static
)
stamp="$dir/.done-$(printf '%s\n' "$arch" "${pkgs[@]}" | sha256sum | cut -c1-16)"
if [ -e "$stamp" ]; then
	echo "sysroot: $dir is ready ($arch)"
	exit 0
fi

mkdir -p "$dir/.apt/debs"
dir=$(cd "$dir" && pwd)
here=$(cd "$(dirname "$0")" && pwd)
echo "sysroot: fetching Debian's $arch packages into $dir"
(cd "$dir/.apt/debs" && "$here/foreign-apt.sh" "$arch" "$dir/.apt" apt-get download "${pkgs[@]}" \
	>"$dir/.apt/download.log" 2>&1) || {
	tail -5 "$dir/.apt/download.log" >&2
	echo "sysroot: apt-get download for $arch failed" >&2
	exit 1
}
for deb in "$dir"/.apt/debs/*.deb; do
	dpkg-deb -x "$deb" "$dir"
done
# Debian's -dev symlinks are absolute (/lib/...): make the ones the linker follows relative to DIR.
find "$dir/usr/lib" -maxdepth 2 -type l -lname '/*' | while read -r link; do
	target=$(readlink "$link")
	ln -sfn "$dir$target" "$link"
done
cat >"$dir/sysroot.ini" <<INI
# Written by tests/port/sysroot.sh: read before cross/<triplet>.ini.
[constants]
sysroot = '$dir'
INI
touch "$stamp"
echo "sysroot: $arch ready in $dir"
