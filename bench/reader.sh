#!/bin/sh
# SPDX-License-Identifier: MIT
# reader.sh - the reporter's speed and peak memory against the trace's size ([scale]): per-call
# traces written by tests/scale/gentrace (the real encoder; two threads, 1 MB batches, a flush
# every 5 ms of trace time) from 1 MB to 5 GB, each read side by side in one run by
#   cat                      the read speed of this disk / page cache (the floor)
#   report                   the text report (reads and checks every byte: CRC32C)
#   report --json            the same as JSON
#   report --since/--until   a 10 ms window in the middle (snapshots and the window's batches)
#   report --perfetto        the timeline export
# and, where perf works here, `perf script` and `perf report` on a perf.data of about 100 MB
# (`perf record --call-graph dwarf`: a per-event record stream, the same kind of file) as a
# baseline. Prints seconds, GB/s and peak RSS.
#
# usage: bench/reader.sh [-b BUILD_DIR] [-m MAX_BYTES] [-d WORK_DIR]
set -eu
build=
max=5000000000
work=
while getopts b:m:d: opt; do
	case $opt in
	b) build=$OPTARG ;;
	m) max=$OPTARG ;;
	d) work=$OPTARG ;;
	*) echo "usage: $0 [-b BUILD_DIR] [-m MAX_BYTES] [-d WORK_DIR]" >&2; exit 2 ;;
	esac
done
here=$(cd "$(dirname "$0")" && pwd)
build=${build:-$here/../build}
ct=$build/tracer/cryptrace
gen=$build/tests/scale/gentrace
peak=$build/tests/scale/peak_rss
[ -x "$ct" ] && [ -x "$gen" ] && [ -x "$peak" ] || { echo "reader.sh: build first ($ct, $gen, $peak)" >&2; exit 77; }
work=${work:-$(mktemp -d)}
trap 'rm -rf "$work"/bench-*' EXIT

echo "CPU: $(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1), $(nproc) cores"
echo "work: $work ($(df -h "$work" | awk 'NR==2 {print $4}') free)"

# measure LABEL CMD...: one line: seconds, GB/s over $size, peak RSS (tests/scale/peak_rss)
measure() {
	label=$1
	shift
	t0=$(date +%s.%N)
	"$peak" "$work/bench-rss" "$@" >/dev/null 2>&1 || true
	t1=$(date +%s.%N)
	awk -v l="$label" -v s="$size" -v t0="$t0" -v t1="$t1" -v o="$(cat "$work/bench-rss")" 'BEGIN {
		split(o, f, " "); t = t1 - t0; if (t < 0.001) t = 0.001
		printf "  %-26s %8.3f s %8.2f GB/s %8.0f MB RSS\n", l, t, s / t / 1e9, f[2] / 1024 }'
}

for size in 1000000 10000000 100000000 1000000000 5000000000; do
	[ "$size" -le "$max" ] || break
	f=$work/bench-$size.4000.ctrace
	"$gen" "$f" "$size" >"$work/bench-made.json"
	size=$(stat -c %s "$f")
	mid=$(python3 -c "import json; d = json.load(open('$work/bench-made.json')); print((d['last_ns'] - d['first_ns']) / 2e9)")
	echo "trace of $(awk -v s="$size" 'BEGIN {printf "%.3f GB", s / 1e9}'), $(python3 -c "import json; print(json.load(open('$work/bench-made.json'))['ops'])") ops:"
	measure "cat" cat "$f"
	measure "report" "$ct" report "$f"
	measure "report --json" "$ct" report --json "$f"
	measure "report (10 ms window)" "$ct" report --since "$mid" --until "$(awk -v m="$mid" 'BEGIN {print m + 0.01}')" "$f"
	measure "report --perfetto" "$ct" report --perfetto "$work/bench-out.json" "$f"
	echo "    perfetto file: $(stat -c %s "$work/bench-out.json" | awk '{printf "%.1f MB", $1 / 1e6}')"
	rm -f "$f" "$work/bench-out.json"
done

if command -v perf >/dev/null && command -v openssl >/dev/null &&
	perf record -q -o "$work/bench-perf.data" -F 5000 --call-graph dwarf -- openssl speed -seconds 3 \
		-evp aes-128-ctr >/dev/null 2>&1; then
	size=$(stat -c %s "$work/bench-perf.data")
	echo "baseline: perf.data of $(awk -v s="$size" 'BEGIN {printf "%.3f GB", s / 1e9}') (perf record --call-graph dwarf -F 5000):"
	measure "cat" cat "$work/bench-perf.data"
	measure "perf script" perf script -i "$work/bench-perf.data"
	measure "perf report --stdio" perf report --stdio -i "$work/bench-perf.data"
else
	echo "baseline: perf record does not work here (perf_event_paranoid, or no perf): skipped"
fi
