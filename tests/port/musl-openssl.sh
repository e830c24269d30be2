#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# musl-openssl.sh CACHE - Debian 12's own OpenSSL source package built with musl-gcc (shared,
# linux-x86_64, no-tests), installed into CACHE/openssl-<Debian version>: the libcrypto, libssl
# and `openssl` the musl build of cryptrace is traced against (a musl program cannot load
# Debian's glibc libcrypto). Prints the prefix on its last line.
#
# The source comes from Debian's archive only (tests/port/debsrc.sh: a private apt state, the
# host's own mirror as deb-src). The newest version whose files all fetch is built; the prefix's
# .done-<hash of the configuration> is the stamp, so a second run only prints the prefix
# (offline: the newest one built).
# Cold: well under a minute to fetch and unpack, ~10 minutes to build on 2 cores (make -j2).
#
# Kernel headers: musl ships none, and OpenSSL includes <linux/mman.h> (secure heap), and the afalg
# and devcrypto engines <linux/if_alg.h> and <crypto/cryptodev.h>'s kin. CACHE/linux-headers is
# the kernel's UAPI headers (linux/, asm/, asm-generic/) copied from linux-libc-dev, which are
# C-library independent (Alpine's linux-headers is the same set), added with -idirafter: musl's
# own headers always come first, and glibc's /usr/include is never on the path.
#
# -Wl,--eh-frame-hdr -Wl,--build-id: Debian's musl-gcc replaces gcc's link spec and drops the
# flags gcc (and a native musl gcc, Alpine's or OpenWrt's) passes by default; without
# PT_GNU_EH_FRAME the unwinder cannot step through libcrypto's frames to the program's call site,
# and the build id is what the reporter matches a module's file (or its debug file) by.
set -euo pipefail

[ $# -eq 1 ] || { echo "usage: $0 CACHE_DIR" >&2; exit 2; }
command -v musl-gcc >/dev/null || { echo "musl-openssl: musl-gcc not found (apt-get install musl-tools)" >&2; exit 1; }
command -v dpkg-source >/dev/null || { echo "musl-openssl: dpkg-source not found (apt-get install dpkg-dev)" >&2; exit 1; }
mkdir -p "$1"
cache=$(cd "$1" && pwd)
. "$(dirname "$0")/debsrc.sh"

# The kernel's UAPI headers, for every musl build here (musl-build.sh passes them on too).
kheaders=$cache/linux-headers
if [ ! -e "$kheaders/.done" ]; then
	[ -f /usr/include/linux/if_alg.h ] && [ -d /usr/include/x86_64-linux-gnu/asm ] || {
		echo "musl-openssl: the kernel's headers are missing (apt-get install linux-libc-dev)" >&2
		exit 1
	}
	rm -rf "$kheaders"
	mkdir -p "$kheaders"
	cp -a /usr/include/linux /usr/include/asm-generic "$kheaders/"
	cp -a /usr/include/x86_64-linux-gnu/asm "$kheaders/"
	touch "$kheaders/.done"
fi

# The algorithms nothing here uses are left out (legacy ciphers and digests, the legacy provider,
# CMS/TS/OCSP/CT/SRP): a third less to compile, so a cold CI run builds it in minutes. AES in
# every mode, ChaCha20 (route-diff's non-AES case), the TLS stack and the engines stay.
config=(linux-x86_64 shared no-tests
	no-legacy no-camellia no-aria no-seed no-sm2 no-sm3 no-sm4 no-idea no-whirlpool no-mdc2 no-rc2
	no-rc4 no-rc5 no-bf no-cast no-md4 no-rmd160 no-srp no-ts no-cms no-ct no-ocsp no-ssl3 no-comp
	-idirafter "$kheaders" -Wl,--eh-frame-hdr -Wl,--build-id)
stamp=.done-$(printf '%s\n' "${config[@]}" | sha256sum | cut -c1-12)

versions=$(debsrc_versions "$cache" openssl)
if [ -z "$versions" ]; then
	done=$(ls -d "$cache"/openssl-*/"$stamp" 2>/dev/null | sort -V | tail -1 || true)
	[ -n "$done" ] || {
		tail -5 "$cache/.apt/update.log" >&2
		echo "musl-openssl: no openssl source in Debian's archive (network?) and nothing cached" >&2
		exit 1
	}
	echo "musl-openssl: archive unreachable, using the cached build" >&2
	dirname "$done"
	exit 0
fi
version=
for v in $versions; do
	if [ -e "$cache/openssl-$v/$stamp" ]; then
		echo "musl-openssl: $cache/openssl-$v is ready" >&2
		echo "$cache/openssl-$v"
		exit 0
	fi
	if debsrc_fetch "$cache" openssl "$v"; then
		version=$v
		break
	fi
done
[ -n "$version" ] || { echo "musl-openssl: no openssl source version fetched whole" >&2; exit 1; }

src=$cache/src-openssl-$version
prefix=$cache/openssl-$version
rm -rf "$prefix"
echo "musl-openssl: building openssl $version with musl-gcc (make -j2, ~10 minutes)" >&2
(
	cd "$src/tree"
	# (set -e does not hold in a subshell whose status is tested: chain with &&)
	CC=musl-gcc ./Configure "${config[@]}" \
		--prefix="$prefix" --libdir=lib --openssldir="$prefix/ssl" -Wl,-rpath,"$prefix/lib" &&
		make -j2 && make install_sw install_ssldirs
) >"$src/build.log" 2>&1 || {
	tail -20 "$src/build.log" >&2
	echo "musl-openssl: the build failed (log: $src/build.log)" >&2
	exit 1
}
rm -rf "$src/tree" # ~300 MB of objects; the .dsc and tarballs stay
touch "$prefix/$stamp"
echo "musl-openssl: openssl $version built for musl in $prefix" >&2
echo "$prefix"
