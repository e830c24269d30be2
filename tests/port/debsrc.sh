# SPDX-License-Identifier: MIT
# debsrc.sh - sourced by the musl scripts: a Debian source package fetched and unpacked from
# Debian's archive with a private apt state (the host's apt config, lists and dpkg database are
# not touched). Its sources are the host's own `deb` entries turned into `deb-src`, one-line lists
# and deb822 .sources files alike, so a mirror the machine is set up for is used.
#
#   debsrc_versions CACHE PKG     the versions the archive has, newest first (none: offline)
#   debsrc_fetch CACHE PKG VER    CACHE/src-PKG-VER/tree unpacked; false when a file did not fetch
#                                 (a mirror may lag behind its index: try the next version; a
#                                 version that failed is not tried again for a day)

debsrc_aptopts() {
	local apt_dir=$1/.apt
	mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$apt_dir/sources.list.d"
	if [ ! -e "$apt_dir/sources.list" ]; then
		: >"$apt_dir/sources.list"
		local f
		for f in /etc/apt/sources.list /etc/apt/sources.list.d/*.list; do
			[ -f "$f" ] && sed -n 's/^deb \(.*\)/deb-src \1/p' "$f" >>"$apt_dir/sources.list"
		done
		for f in /etc/apt/sources.list.d/*.sources; do
			[ -f "$f" ] && sed 's/^Types:.*/Types: deb-src/' "$f" >"$apt_dir/sources.list.d/$(basename "$f")"
		done
	fi
	aptopts=(
		-o "Dir::Etc::sourcelist=$apt_dir/sources.list"
		-o "Dir::Etc::sourceparts=$apt_dir/sources.list.d"
		-o "Dir::State::Lists=$apt_dir/lists" -o "Dir::Cache=$apt_dir/cache"
		-o "Dir::State::status=/dev/null" -o "Debug::NoLocking=1"
	)
}

debsrc_versions() {
	local aptopts
	debsrc_aptopts "$1"
	# one update per run of the calling script
	if [ -z "${DEBSRC_UPDATED:-}" ]; then
		apt-get -q "${aptopts[@]}" update >"$1/.apt/update.log" 2>&1 || return 0
		DEBSRC_UPDATED=1
	fi
	apt-cache "${aptopts[@]}" showsrc "$2" 2>/dev/null | sed -n 's/^Version: //p' | sort -rV | uniq
}

debsrc_fetch() {
	local aptopts src=$1/src-$2-$3 failed=$1/.apt/failed-$2-$3
	debsrc_aptopts "$1"
	if [ -n "$(find "$failed" -mmin -1440 2>/dev/null)" ]; then
		echo "debsrc: $2 $3 did not fetch today: not tried again" >&2
		return 1
	fi
	rm -rf "$src"
	mkdir -p "$src"
	echo "debsrc: fetching $2 $3 (source) into $src" >&2
	if ! (cd "$src" && apt-get -q "${aptopts[@]}" source --download-only "$2=$3") >"$src/fetch.log" 2>&1; then
		grep -E '^E:' "$src/fetch.log" | head -3 >&2
		rm -rf "$src"
		touch "$failed"
		return 1
	fi
	(cd "$src" && dpkg-source -x --no-check ./*.dsc tree) >"$src/unpack.log" 2>&1 || {
		tail -5 "$src/unpack.log" >&2
		echo "debsrc: dpkg-source -x $2 failed" >&2
		return 1
	}
}
