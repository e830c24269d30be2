#!/bin/sh
# SPDX-License-Identifier: MIT
# perfetto_size.sh - what `cryptrace report --perfetto` costs on a dense per-call trace, side by
# side: one slice per operation (--resolution 0, what the export wrote before it aggregated), the
# default (--resolution auto), a coarse --resolution 1ms, and a 10 ms window (--since/--until);
# with -o OLD_CRYPTRACE also an older launcher's export of the same trace. Prints per row the
# wall time, the peak memory, the file's size and the slices written. The trace is a per-call run
# of `openssl speed -bytes 16 -evp aes-128-ctr` (-s seconds), or the directory -t names.
#
# usage: bench/perfetto_size.sh [-b BUILD_DIR] [-s SECONDS] [-t TRACE_DIR] [-o OLD_CRYPTRACE]
set -eu
seconds=2
build=
trace=
old=
while getopts b:s:t:o: opt; do
	case $opt in
	b) build=$OPTARG ;;
	s) seconds=$OPTARG ;;
	t) trace=$OPTARG ;;
	o) old=$OPTARG ;;
	*) echo "usage: $0 [-b BUILD_DIR] [-s SECONDS] [-t TRACE_DIR] [-o OLD_CRYPTRACE]" >&2; exit 2 ;;
	esac
done
here=$(cd "$(dirname "$0")" && pwd)
build=${build:-$here/../build}
ct=$build/tracer/cryptrace
[ -x "$ct" ] || { echo "perfetto_size.sh: build first ($ct)" >&2; exit 77; }
[ -x /usr/bin/time ] || { echo "perfetto_size.sh: needs /usr/bin/time (apt-get install time)" >&2; exit 77; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

if [ -z "$trace" ]; then
	command -v openssl >/dev/null || { echo "perfetto_size.sh: no openssl" >&2; exit 77; }
	trace=$tmp/trace
	"$ct" run -q --mode calls -o "$trace" -- \
		openssl speed -seconds "$seconds" -bytes 16 -evp aes-128-ctr >/dev/null 2>&1
fi
ops=$("$ct" report --json "$trace" | python3 -c \
	'import json, sys; print(sum(p.get("per_call_ops", 0) for p in json.load(sys.stdin)["processes"]))')
echo "trace: $(du -sh "$trace" | cut -f1) per-call, $ops operations; $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //') ($(nproc) CPUs)"

# the middle of the run, for the 10 ms window: half the process's life
mid=$("$ct" report --json "$trace" | python3 -c \
	'import json, sys; p = json.load(sys.stdin)["processes"][0]; print("%.3f" % ((p.get("wall_ns") or 2e9) / 2e9))')
until=$(python3 -c "print(f'{$mid + 0.01:.3f}')")

printf '%-34s %9s %9s %11s %9s  %s\n' "export" "time s" "peak MB" "size MB" "slices" "resolution"
row() { # row LABEL CRYPTRACE [report options...]
	label=$1
	bin=$2
	shift 2
	out=$tmp/out.json
	rm -f "$out"
	/usr/bin/time -f '%e %M' -o "$tmp/time" "$bin" report --perfetto "$out" "$@" "$trace"
	set -- $(cat "$tmp/time")
	python3 - "$out" "$label" "$1" "$2" "$ops" <<-'EOF'
		import json, os, sys
		out, label, secs, kb, ops = sys.argv[1:]
		size = os.path.getsize(out)
		slices, res = f"{ops}*", "-"  # *: one per operation, not read back
		if size < 400e6:  # a file of one event per operation is too large to parse here
		    with open(out) as f:
		        od = json.load(f).get("otherData", {})
		    slices, res = od.get("slices", "?"), od.get("resolution", "-")
		print(f"{label:34s} {float(secs):9.2f} {int(kb) / 1024:9.0f} {size / 1e6:11.1f} {slices!s:>9s}  {res}")
	EOF
	rm -f "$out"
}
[ -n "$old" ] && row "before (one event per operation)" "$old"
row "--resolution 0 (every operation)" "$ct" --resolution 0ns
row "--resolution auto (the default)" "$ct"
row "--resolution 1ms" "$ct" --resolution 1ms
row "--since $mid --until $until" "$ct" --since "$mid" --until "$until"
