#!/bin/bash
# SPDX-License-Identifier: MIT
# ktls.sh: kernel TLS (kTLS) at work, and refused, in two guest boots.
#  With the tls module loaded (--tls):
#   - examples/kernel/ktls_pair, bare and traced (same output and exit status), through every
#     data call it has: send/recv TLS 1.3 AES-256-GCM, sendfile + an alert (a control record) /
#     recvmsg TLS 1.2 AES-128-GCM, splice TLS 1.3 TX only, writev/readv and write/read: the kTLS
#     paths (impl kernel:tls-sw from /proc/net/tls_stat, cipher, TLS1.2/TLS1.3, encrypt = TX,
#     decrypt = RX, flag IO_WAIT) carry exactly the bytes it sent and received, the alert on the
#     "control" path; set-up timed; CPU in sys; no finding but ktls-tx-only where RX was not set
#     up; AES-128-CCM, whose kernel module the guest lacks, is refused (TLS_TX ENOENT), and a
#     crypto_info of the wrong length (EINVAL), both decoded and said (ktls-refused).
#   - openssl s_server -WWW serving a 1 MiB file to openssl s_client, both asking for kTLS
#     (OPENSSL_CONF with `Options = KTLS`): TLS 1.3 (kTLS TX only: OpenSSL 3.0) and TLS 1.2 with
#     s_server -sendfile (TX and RX): the server's kTLS encrypt path carries the file and the HTTP
#     header exactly, the client's kTLS decrypt path (TLS 1.2) the same bytes; the client's output
#     is the same with and without cryptrace; no warning.
#   - wget (GnuTLS) fetching the file with GnuTLS's `ktls = true` (GNUTLS_SYSTEM_PRIORITY_FILE),
#     when wget is on this host: its kTLS decrypt path carries the file and the header.
#  Without it: the same openssl pair: TCP_ULP ENOENT, and silent-fallback with `modprobe tls`.
source "$(dirname "$0")/lib.sh"

pair=$build_root/examples/kernel/ktls_pair
need_built "$cryptrace" "$preload" "$pair"
command -v python3 >/dev/null || fail "python3 is needed to read the JSON report"
command -v openssl >/dev/null || fail "openssl is needed for the certificate"

# Host-side inputs, at the same path in the guest (--files).
in=$scratch/in
mkdir -p "$in"
openssl req -x509 -newkey rsa:2048 -nodes -keyout "$in/key.pem" -out "$in/cert.pem" -days 1 \
	-subj /CN=localhost 2>/dev/null || fail "no throwaway certificate"
head -c 1048576 /dev/urandom >"$in/file.bin"
printf '[global]\nktls = true\n' >"$in/gnutls.cfg"
ctlib_python -c "import sys; sys.path.insert(0, '$src_root/tests/ktls'); import ktls_common as k; open('$in/openssl.cnf', 'w').write(k.OPENSSL_KTLS_CONF)"
wget=$(command -v wget || true)
files=("$cryptrace" "$preload" "$pair" "$in")
[[ -n $wget ]] && files+=("$wget")

# One openssl s_server/s_client transfer in the guest: NAME PORT [s_server opts] -- [s_client opts]
openssl_pair='
ossl() {
	name=$1 port=$2; shift 2
	sopts= copts=
	while [ $# -gt 0 ] && [ "$1" != -- ]; do sopts="$sopts $1"; shift; done
	shift; copts="$*"
	'"'$cryptrace'"' run -q -o $OUT/$name-server -- openssl s_server -WWW -naccept 1 \
		-accept 127.0.0.1:$port -cert cert.pem -key key.pem $sopts >$OUT/$name-server.out 2>&1 &
	i=0; while ! grep -q ACCEPT $OUT/$name-server.out 2>/dev/null && [ $i -lt 50 ]; do sleep 0.2; i=$((i+1)); done
	printf "GET /file.bin HTTP/1.0\r\n\r\n" | '"'$cryptrace'"' run -q -o $OUT/$name-client -- \
		openssl s_client -connect 127.0.0.1:$port -quiet -ign_eof $copts >$OUT/$name-got 2>/dev/null
	echo $name-client-status=$?
	wait
	echo $name-server-status=$?
}
'

guest --tls --timeout 200 --files "${files[@]}" --out "$scratch/out" -- "
	cd '$in'
	export OPENSSL_CONF='$in/openssl.cnf'
	$openssl_pair
	run_pair() {	# NAME ARGS...: bare, then traced
		name=\$1; shift
		'$pair' \"\$@\" >\$OUT/\$name-bare.out 2>&1; echo \$name-bare-status=\$?
		'$cryptrace' run -q -o \$OUT/\$name -- '$pair' \"\$@\" >\$OUT/\$name-traced.out 2>&1
		echo \$name-traced-status=\$?
	}
	run_pair send --rx
	run_pair sendfile --rx --tls12 --cipher aes-128-gcm --via sendfile --alert --rx-via recvmsg
	run_pair splice --via splice --alert
	run_pair writev --rx --cipher aes-128-gcm --via writev --rx-via readv --bytes 65536
	run_pair write --rx --tls12 --cipher aes-256-gcm --via write --rx-via read --bytes 1000
	run_pair ccm --cipher aes-128-ccm
	run_pair badlen --bad-len
	ossl tls13 4433 --
	ossl tls12 4434 -sendfile -- -tls1_2
	openssl s_server -WWW -naccept 1 -accept 127.0.0.1:4435 -cert cert.pem -key key.pem >\$OUT/bare-server.out 2>&1 &
	i=0; while ! grep -q ACCEPT \$OUT/bare-server.out 2>/dev/null && [ \$i -lt 50 ]; do sleep 0.2; i=\$((i+1)); done
	printf 'GET /file.bin HTTP/1.0\r\n\r\n' | openssl s_client -connect 127.0.0.1:4435 -quiet -ign_eof \
		>\$OUT/bare-got 2>/dev/null
	wait
	if [ -n '$wget' ]; then
		unset OPENSSL_CONF
		openssl s_server -WWW -naccept 1 -accept 127.0.0.1:4436 -cert cert.pem -key key.pem >\$OUT/wget-server.out 2>&1 &
		i=0; while ! grep -q ACCEPT \$OUT/wget-server.out 2>/dev/null && [ \$i -lt 50 ]; do sleep 0.2; i=\$((i+1)); done
		GNUTLS_SYSTEM_PRIORITY_FILE='$in/gnutls.cfg' '$cryptrace' run -q -o \$OUT/wget -- \
			'$wget' -q --no-check-certificate -O \$OUT/wget-got https://127.0.0.1:4436/file.bin
		echo wget-status=\$?
		wait
	fi
	grep -v ' 0\$' /proc/net/tls_stat
" || fail "the guest script failed"
cp "$scratch/guest.out" "$scratch/guest-tls.out"

guest --timeout 120 --files "${files[@]}" --out "$scratch/out-notls" -- "
	cd '$in'
	export OPENSSL_CONF='$in/openssl.cnf'
	$openssl_pair
	ossl refused 4433 --
	lsmod | grep -c '^tls ' || true
" || fail "the guest script (no tls module) failed"

for d in "$scratch"/out/*/ "$scratch"/out-notls/*/; do
	"$cryptrace" report --json "$d" >"${d%/}.json" || fail "report of $d failed"
done

ctlib_python "$src_root/tests/vm/ktls_check.py" "$scratch" "$in/file.bin" "${wget:+wget}" ||
	fail "the kTLS checks failed"
note "kTLS paths, bytes, set-up, refusals and fallback all as expected"
