#!/bin/sh
# SPDX-License-Identifier: MIT
# ssh_route.sh - does `--route aes-*=aesni` make a real scp faster when libcrypto has lost AES-NI?
# Uploads a random file (64 MiB by default) over loopback to a throwaway sshd (not traced, not
# masked: the client is the side under test), with `scp -c aes128-ctr` run by
#   masked        cryptrace run, OPENSSL_ia32cap="~0x200000200000000" (no AES-NI, no PCLMULQDQ)
#   masked+route  the same with --route 'aes-*=aesni'
# in alternating rounds, checks every copy with cmp, and prints the median wall time of each and
# the ratio masked / masked+route (> 1: the route made the copy faster). Loopback copies are
# dominated by the cipher only when it is slow, so the masked case shows the gap best.
#
# usage: bench/ssh_route.sh [-r ROUNDS] [-m MIB] [-c cryptrace] [-C ssh-cipher]
# Exits 77 when it cannot run here (not root, no sshd/scp, no AES-NI, no --route in cryptrace).
set -eu

rounds=3
mib=64
ct=
ssh_cipher=aes128-ctr
while getopts r:m:c:C: opt; do
	case $opt in
	r) rounds=$OPTARG ;;
	m) mib=$OPTARG ;;
	c) ct=$OPTARG ;;
	C) ssh_cipher=$OPTARG ;;
	*) echo "usage: $0 [-r ROUNDS] [-m MIB] [-c cryptrace] [-C ssh-cipher]" >&2; exit 2 ;;
	esac
done
here=$(cd "$(dirname "$0")" && pwd)
if [ -z "$ct" ]; then
	for c in "$here/../build/tracer/cryptrace" $(ls -d "$here"/../build*/tracer/cryptrace 2>/dev/null); do
		if [ -x "$c" ]; then ct=$c; break; fi
	done
fi
skip() { echo "ssh_route.sh: $*" >&2; exit 77; }
[ -n "$ct" ] && [ -x "$ct" ] || skip "cryptrace not found (build it, or pass -c)"
[ "$(id -u)" = 0 ] || skip "needs root (sshd)"
[ -x /usr/sbin/sshd ] && command -v scp >/dev/null && command -v ssh-keygen >/dev/null ||
	skip "needs sshd, scp and ssh-keygen"
grep -qw aes /proc/cpuinfo || skip "no AES-NI on this CPU"
{ "$ct" --help; "$ct" help run; } 2>&1 | grep -q -- '--route' || skip "this cryptrace has no --route"

mask='~0x200000200000000'
tmp=$(mktemp -d)
chmod 755 "$tmp"
pidfile=$tmp/sshd.pid
cleanup() {
	[ -f "$pidfile" ] && kill "$(cat "$pidfile")" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT INT TERM

ssh-keygen -q -t ed25519 -N '' -f "$tmp/hostkey"
ssh-keygen -q -t ed25519 -N '' -f "$tmp/userkey"
cp "$tmp/userkey.pub" "$tmp/authorized_keys"
cat > "$tmp/sshd_config" <<CFG
HostKey $tmp/hostkey
UsePAM no
StrictModes no
PidFile $pidfile
AuthorizedKeysFile $tmp/authorized_keys
PermitRootLogin prohibit-password
Subsystem sftp internal-sftp
CFG
mkdir -p /run/sshd
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
/usr/sbin/sshd -f "$tmp/sshd_config" -p "$port" -o ListenAddress=127.0.0.1
i=0
while [ ! -s "$pidfile" ] && [ $i -lt 50 ]; do sleep 0.1; i=$((i + 1)); done
[ -s "$pidfile" ] || { echo "ssh_route.sh: sshd did not start" >&2; exit 1; }
head -c $((mib * 1048576)) /dev/urandom > "$tmp/src.bin"

# one copy; prints its wall time in ms
copy() { # config round
	dst=$tmp/dst-$1-$2.bin
	route=
	[ "$1" = masked+route ] && route="--route aes-*=aesni"
	t0=$(date +%s%N)
	# shellcheck disable=SC2086
	OPENSSL_ia32cap=$mask "$ct" run -q $route -o "$tmp/trace-$1-$2" -- scp -q -c "$ssh_cipher" \
		-o BatchMode=yes -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null \
		-i "$tmp/userkey" -P "$port" "$tmp/src.bin" "root@127.0.0.1:$dst"
	t1=$(date +%s%N)
	cmp -s "$tmp/src.bin" "$dst" || { echo "ssh_route.sh: $1 copy differs" >&2; exit 1; }
	rm -f "$dst"
	echo $(((t1 - t0) / 1000000))
}

median() { sort -n | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

r=1
while [ $r -le "$rounds" ]; do
	copy masked $r >> "$tmp/masked.ms"
	copy masked+route $r >> "$tmp/route.ms"
	r=$((r + 1))
done
m=$(median < "$tmp/masked.ms")
mr=$(median < "$tmp/route.ms")
echo "scp -c $ssh_cipher, $mib MiB over loopback, client under OPENSSL_ia32cap=$mask, $rounds rounds"
echo "  masked        median $m ms   ($(tr '\n' ' ' < "$tmp/masked.ms"))"
echo "  masked+route  median $mr ms   ($(tr '\n' ' ' < "$tmp/route.ms"))"
awk -v a="$m" -v b="$mr" 'BEGIN { printf "  ratio masked / masked+route = %.2f (> 1: the route made scp faster)\n", a / b }'
# which path served the client's bulk encryption under the route
"$ct" report "$tmp/trace-masked+route-1" 2>/dev/null | sed -n '/^Paths/,/^$/p'
if ! "$ct" report --json "$tmp/trace-masked+route-1" 2>/dev/null | grep -q '"route":"aesni"'; then
	echo "note: no path was routed to aesni: this build's preload did not apply the route," \
		"so the ratio only shows noise"
fi
