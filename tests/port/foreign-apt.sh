#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# foreign-apt.sh ARCH STATE apt-get|apt-cache ARGS... - apt for another Debian architecture,
# through a private state in STATE (lists, cache, sources), never the host's: no
# `dpkg --add-architecture`, no change to /var/lib/apt or dpkg's database. The lists are fetched
# when STATE has none or they are older than 6 hours (FOREIGN_APT_REFRESH=1: now), so a package
# version resolved here can still be downloaded. Used by tests/port/sysroot.sh (the cross
# builds' sysroot), tests/vm/build-guest.sh (the arm64 guest's kernel and tools) and
# tests/compare/doctor_multiarch.py (Debian's libssl3 for arm64 and i386).
#
#   ARCH: a Debian architecture (arm64, i386, mipsel...)
set -euo pipefail

usage() { echo "usage: $0 ARCH STATE apt-get|apt-cache ARGS..." >&2; exit 2; }
[ $# -ge 3 ] || usage
arch=$1 state=$2 tool=$3
shift 3
case $tool in apt-get | apt-cache) ;; *) usage ;; esac

mkdir -p "$state/lists/partial" "$state/cache/archives/partial"
state=$(cd "$state" && pwd)
# The host's own sources (one-line or deb822), so a mirror the machine is set up for is used.
cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | grep -E '^deb ' >"$state/sources.list" || true
opts=(
	-o "APT::Architecture=$arch" -o "APT::Architectures::=$arch"
	-o "Dir::Etc::sourcelist=$state/sources.list"
	-o "Dir::Etc::sourceparts=$([ -s "$state/sources.list" ] && echo - || echo /etc/apt/sources.list.d)"
	-o "Dir::State::Lists=$state/lists" -o "Dir::Cache=$state/cache"
	-o "Dir::State::status=/dev/null" -o "Debug::NoLocking=1"
)

# One update at a time per state (several tests may ask at once); whoever waited finds it fresh.
exec 9>"$state/.lock"
flock 9
if [ "${FOREIGN_APT_REFRESH:-0}" = 1 ] || [ ! -e "$state/updated" ] ||
	[ -z "$(find "$state/updated" -mmin -360 2>/dev/null)" ]; then
	echo "foreign-apt: fetching Debian's $arch package lists into $state" >&2
	if ! apt-get -q "${opts[@]}" update >"$state/update.log" 2>&1; then
		sleep 5 # a mirror caught mid-sync may be done: once more
		apt-get -q "${opts[@]}" update >"$state/update.log" 2>&1 || {
			# A mirror mid-sync serves an index that does not match its Release file ("File
			# has unexpected size ... Mirror sync in progress?"), often for one suite only
			# (bookworm-security's i386 list, 2026-12-05). The base suite's main list is
			# enough for a sysroot or a guest: go on with the lists that came, and say so.
			tail -5 "$state/update.log" >&2
			if ls "$state/lists/"*_dists_*_main_binary-"${arch}"_Packages* 2>/dev/null |
				grep -qE '_dists_[a-z]+_main_binary' &&
				! grep -E '^Err:' "$state/update.log" | grep -qvE ' [a-z]+-(security|updates|backports)[ /]'; then
				echo "foreign-apt: apt-get update for $arch failed for these suites only; using the base suite's lists:" >&2
				grep -E '^Err:' "$state/update.log" >&2
			else
				echo "foreign-apt: apt-get update for $arch failed (network?)" >&2
				exit 1
			fi
		}
	fi
	touch "$state/updated"
fi
flock -u 9
exec "$tool" -q "${opts[@]}" "$@"
