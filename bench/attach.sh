#!/bin/sh
# SPDX-License-Identifier: MIT
# bench/attach.sh - what `cryptrace attach` costs a server under load (docs/attach.md), side by
# side in one run: `openssl s_server -WWW` (started without cryptrace) serves a file over TLS 1.3
# to 4 curl loops; each round counts the downloads finished per second for T seconds before the
# attach, T seconds attached and T seconds after the detach, and how long the attach and the
# detach stopped the process (the tracer's own figures: first thread stopped to last resumed).
#
#   bench/attach.sh [-r ROUNDS] [-t SECONDS] [-s FILE_KIB] [BUILD_DIR]
#
# The rates are per phase of the same round, so a neighbour's load moves all three; the ratio
# during/before is the figure to read. Output: one line per round, then the medians.
set -eu

ROUNDS=3
SECS=5
KIB=1024
while getopts r:t:s: opt; do
	case $opt in
	r) ROUNDS=$OPTARG ;;
	t) SECS=$OPTARG ;;
	s) KIB=$OPTARG ;;
	*) echo "usage: bench/attach.sh [-r ROUNDS] [-t SECONDS] [-s FILE_KIB] [BUILD_DIR]" >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
BUILD=${1:-build}
CRYPTRACE="$BUILD/tracer/cryptrace"
[ -x "$CRYPTRACE" ] || { echo "attach.sh: $CRYPTRACE not built" >&2; exit 1; }
for p in openssl curl python3; do
	command -v $p >/dev/null || { echo "attach.sh: $p is not installed" >&2; exit 1; }
done

W=$(mktemp -d /tmp/ct-bench-attach.XXXXXX)
SERVER=""
LOOPS=""
cleanup() {
	[ -n "$LOOPS" ] && kill $LOOPS 2>/dev/null || true
	[ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null || true
	wait 2>/dev/null || true
	rm -rf "$W"
}
trap cleanup EXIT INT TERM

now() { date +%s.%N; }
# downloads finished in [from, to), per second, over every loop's log
rate() {
	cat "$W"/done.* 2>/dev/null | awk -v a="$1" -v b="$2" '$1 >= a && $1 < b { n++ } END { printf "%.1f", n / (b - a) }'
}
# downloads that failed in [from, to) (the teardown's are after it)
failed() {
	cat "$W"/fail.* 2>/dev/null | awk -v a="$1" -v b="$2" '$1 >= a && $1 < b { n++ } END { printf "%d", n }'
}

openssl req -x509 -newkey rsa:2048 -nodes -keyout "$W/key.pem" -out "$W/cert.pem" -days 1 \
	-subj /CN=localhost 2>/dev/null
head -c $((KIB * 1024)) /dev/urandom >"$W/file.bin"
PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')

echo "# attach bench $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -n), $(nproc) CPUs, $(openssl version)"
echo "# s_server -WWW, ${KIB} KiB file over TLS 1.3 to 4 curl loops; ${SECS} s per phase"
printf "%-6s %10s %10s %10s %8s %8s %12s %12s %7s\n" round before/s during/s after/s during/b after/b \
	"attach ms" "detach ms" failed
: >"$W/rows"
r=1
while [ $r -le "$ROUNDS" ]; do
	(cd "$W" && exec openssl s_server -WWW -quiet -accept "127.0.0.1:$PORT" -cert cert.pem \
		-key key.pem >/dev/null 2>&1) &
	SERVER=$!
	sleep 1
	rm -f "$W"/done.* "$W"/fail.*
	LOOPS=""
	for i in 1 2 3 4; do
		(while :; do
			if curl -sk --tlsv1.3 -o /dev/null "https://127.0.0.1:$PORT/file.bin"; then
				now >>"$W/done.$i"
			else
				now >>"$W/fail.$i"
			fi
		done) &
		LOOPS="$LOOPS $!"
	done
	sleep 1 # the loops get going
	t0=$(now)
	sleep "$SECS"
	t1=$(now)
	"$CRYPTRACE" attach -o "$W/out.$r" "$SERVER" 2>"$W/attach.$r" &
	ATT=$!
	while ! grep -q "tracing into" "$W/attach.$r" 2>/dev/null; do sleep 0.05; done
	t1a=$(now)
	sleep "$SECS"
	t2=$(now)
	kill -INT $ATT
	wait $ATT
	t2d=$(now)
	sleep "$SECS"
	t3=$(now)
	kill $LOOPS 2>/dev/null || true
	wait $LOOPS 2>/dev/null || true
	LOOPS=""
	kill "$SERVER"
	wait "$SERVER" 2>/dev/null || true
	SERVER=""
	before=$(rate "$t0" "$t1")
	during=$(rate "$t1a" "$t2")
	after=$(rate "$t2d" "$t3")
	nfail=$(failed "$t0" "$t3")
	pa=$(sed -n 's/.*attached to .* stopped for \([0-9.]*\) ms.*/\1/p' "$W/attach.$r")
	pd=$(sed -n 's/.*detached from .* stopped for \([0-9.]*\) ms.*/\1/p' "$W/attach.$r")
	echo "$r $before $during $after $pa $pd" >>"$W/rows"
	awk -v r=$r -v b="$before" -v d="$during" -v a="$after" -v pa="$pa" -v pd="$pd" -v f="$nfail" 'BEGIN {
		printf "%-6s %10s %10s %10s %8.3f %8.3f %12s %12s %7s\n", r, b, d, a, d / b, a / b, pa, pd, f }'
	r=$((r + 1))
done
sort -n -k1 "$W/rows" | awk '
	{ b[NR] = $2; d[NR] = $3; a[NR] = $4; db[NR] = $3 / $2; ab[NR] = $4 / $2; pa[NR] = $5; pd[NR] = $6 }
	function med(x, n,   i, j, t) {
		for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (x[j] < x[i]) { t = x[i]; x[i] = x[j]; x[j] = t }
		return n % 2 ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2
	}
	END {
		n = NR
		printf "%-6s %10.1f %10.1f %10.1f %8.3f %8.3f %12.3f %12.3f\n", "median", med(b, n), med(d, n),
			med(a, n), med(db, n), med(ab, n), med(pa, n), med(pd, n)
	}'
