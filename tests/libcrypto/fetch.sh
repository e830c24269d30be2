#!/bin/sh
# SPDX-License-Identifier: MIT
#
# fetch.sh DIR SUITE PKG... - another Debian release's packages, unpacked into DIR/root, for the
# libcrypto suite (OpenSSL 1.1.1w from bullseye, 3.5.x and its glibc from trixie, BoringSSL).
#
# apt runs with a private source list, private lists, cache and an empty dpkg status, all under
# DIR: the host's apt configuration and state are never read for sources nor written. Each
# package is fetched as PKG/SUITE (without the suite apt would pick the host's version) and
# unpacked with dpkg-deb -x: nothing is installed. A second run with the same SUITE and packages
# does nothing (DIR/done holds what was fetched); parallel tests wait on DIR/lock.
#
# Exit 0 with DIR/root ready; 77 with one line on stderr when the archive cannot be reached (the
# test skips with that reason); 1 on any other failure.
set -u

if [ $# -lt 3 ]; then
	echo "usage: fetch.sh DIR SUITE PKG..." >&2
	exit 2
fi
dir=$1
suite=$2
shift 2
mirror=${CT_DEBIAN_MIRROR:-http://deb.debian.org/debian}
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
want="$suite $*"

mkdir -p "$dir" || exit 1
dir=$(cd "$dir" && pwd) || exit 1

# One fetch at a time per DIR: the tests of one version share its tree.
exec 9>"$dir/lock"
flock 9 || exit 1

if [ -f "$dir/done" ] && [ "$(cat "$dir/done")" = "$want" ] && [ -d "$dir/root" ]; then
	exit 0
fi
if ! command -v apt-get >/dev/null 2>&1 || ! command -v dpkg-deb >/dev/null 2>&1; then
	echo "fetch.sh: apt-get and dpkg-deb are needed to fetch Debian $suite packages" >&2
	exit 77
fi
if [ ! -r "$keyring" ]; then
	echo "fetch.sh: $keyring is missing (debian-archive-keyring), cannot check Debian $suite" >&2
	exit 77
fi

rm -rf "$dir/done" "$dir/root" "$dir/debs" "$dir/apt"
mkdir -p "$dir/apt/lists/partial" "$dir/apt/cache/archives/partial" "$dir/debs" || exit 1
echo "deb [signed-by=$keyring] $mirror $suite main" >"$dir/apt/sources.list"
: >"$dir/apt/status"
# apt with every directory it reads or writes under DIR (root needs no sandbox user: the
# downloads land in DIR/debs, which _apt may not be able to write)
apt() {
	apt-get -q -o Dir::Etc::sourcelist="$dir/apt/sources.list" -o Dir::Etc::sourceparts=- \
		-o Dir::State::Lists="$dir/apt/lists" -o Dir::Cache="$dir/apt/cache" \
		-o Dir::State::status="$dir/apt/status" -o APT::Get::List-Cleanup=0 \
		-o Debug::NoLocking=1 -o APT::Sandbox::User=root -o Acquire::http::Timeout=30 \
		-o Acquire::Retries=2 "$@"
}
pkgs=
for p in "$@"; do
	pkgs="$pkgs $p/$suite"
done

log=$dir/apt/log
# apt update exits 0 when it could not reach the archive, saying so in W: lines
if ! apt update >"$log" 2>&1 || grep -q '^E: \|Failed to fetch\|index files failed' "$log"; then
	echo "fetch.sh: cannot read Debian $suite from $mirror ($(grep -m1 '^[WE]: ' "$log" || tail -n1 "$log"))" >&2
	exit 77
fi
# shellcheck disable=SC2086 # package names hold no spaces
if ! (cd "$dir/debs" && apt download $pkgs) >>"$log" 2>&1; then
	if grep -q "Unable to locate\|Can't select\|has no installation candidate" "$log"; then
		echo "fetch.sh: Debian $suite has no$pkgs: $(grep -m1 '^E: ' "$log")" >&2
		exit 1
	fi
	echo "fetch.sh: cannot download$pkgs from $mirror ($(grep -m1 '^E: ' "$log" || tail -n1 "$log"))" >&2
	exit 77
fi
for deb in "$dir"/debs/*.deb; do
	dpkg-deb -x "$deb" "$dir/root" || {
		echo "fetch.sh: cannot unpack $deb" >&2
		exit 1
	}
done
# the package lists (tens of MB) are not needed once the tree is there: a new set of packages
# starts from scratch anyway
rm -rf "$dir/apt/lists" "$dir/apt/cache"
echo "$want" >"$dir/done"
