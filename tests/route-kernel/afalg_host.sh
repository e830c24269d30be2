#!/bin/bash
# SPDX-License-Identifier: MIT
# The kernel routes on a host that refuses them (AF_ALG: EAFNOSUPPORT, no /dev/crypto): the
# program is never broken. openssl enc output is byte-identical under `aes-*-cbc=afalg`
# (falls back to native), `aes-*-cbc=afalg>=4096,aesni` (falls back to the in-process route, whose
# path then says route:aesni) and `aes-*-ctr=cryptodev`, and each fallback event names the
# refusal. Exits 77 where the kernel would accept (the qemu guest test covers that case).
set -u
: "${CRYPTRACE:?}"
fail() { echo "FAIL: $*" >&2; exit 1; }
if python3 -c 'import socket; socket.socket(socket.AF_ALG, socket.SOCK_SEQPACKET)' 2>/dev/null; then
	echo "AF_ALG works on this host: the refusal path cannot be shown here (see tests/vm)"; exit 77
fi
if [ -e /dev/crypto ]; then echo "/dev/crypto exists on this host"; exit 77; fi
grep -qw aes /proc/cpuinfo || { echo "no AES-NI: the fallback to aesni cannot be shown"; exit 77; }
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
K=000102030405060708090a0b0c0d0e0f1011121314151617; IV=f0e1d2c3b4a5968778695a4b3c2d1e0f

# spec  cipher  expected fallback (regex on the event detail)  expected EVP impl
check() {
	local spec=$1 cipher=$2 want_event=$3 want_impl=$4 size pt=()
	for size in 0 15 4096 100003; do
		head -c "$size" /dev/urandom > "$tmp/in"
		for d in -e -d; do
			local src="$tmp/in"
			if [ "$d" = -d ]; then src="$tmp/native-e"; fi
			openssl enc "$d" "-$cipher" -K "${K:0:32}" -iv "$IV" -in "$src" -out "$tmp/native$d" \
				|| fail "native openssl enc $d"
			rm -rf "$tmp/trace"
			CRYPTRACE_ROUTE="$spec" "$CRYPTRACE" run -q -o "$tmp/trace" -- \
				openssl enc "$d" "-$cipher" -K "${K:0:32}" -iv "$IV" -in "$src" -out "$tmp/routed$d" \
				2> "$tmp/err" || { cat "$tmp/err"; fail "$spec: openssl enc $d exited non-zero"; }
			cmp -s "$tmp/native$d" "$tmp/routed$d" || fail "$spec: $cipher $d $size bytes differs from native"
			mkdir -p "$tmp/all" && cp -r "$tmp/trace" "$tmp/all/$d$size"	# scanned below
		done
		pt+=(--hex "plaintext $size=$(head -c 64 "$tmp/in" | od -An -tx1 -v | tr -d ' \n')")
	done
	# no key, IV or plaintext in any of the traces (the scan knows the K/IV above)
	python3 "$(dirname "$0")/../lib/ctlib/secretscan.py" "$tmp/all" "${pt[@]}" ||
		fail "$spec: a key, IV or plaintext is in a trace"
	rm -rf "$tmp/all"
	"$CRYPTRACE" report --json "$tmp/trace" > "$tmp/r.json" || fail "report"
	python3 - "$tmp/r.json" "$want_event" "$want_impl" "$cipher" <<'PY' || fail "$spec: trace check"
import json, re, sys
d = json.load(open(sys.argv[1]))
want_event, want_impl, cipher = sys.argv[2:5]
ev = [e["detail"] for e in d["events"] if e["kind"] == "fallback"]
assert any(re.search(want_event, e) for e in ev), f"no fallback event like {want_event!r}: {ev}"
evp = [p for p in d["paths"] if p["api"] == "evp" and p["cipher"] == cipher]
assert evp and all(p["impl"] == want_impl for p in evp), [(p["impl"], p["cipher"]) for p in evp]
print(f"  {ev[0]}; EVP path {want_impl}")
PY
	echo "ok: $spec"
}
check 'aes-*-cbc=afalg' aes-128-cbc 'route afalg -> native: aes-128-cbc (enc|dec): socket\(AF_ALG\): EAFNOSUPPORT' provider:default
# with an aesni rule the kernel-interface emulation is on: the route must still ask the real kernel
check 'aes-*-cbc=afalg>=4096,aesni' aes-128-cbc 'route afalg -> aesni: aes-128-cbc (enc|dec): socket\(AF_ALG\): EAFNOSUPPORT' route:aesni
check 'aes-*-ctr=cryptodev' aes-128-ctr 'route cryptodev -> native: aes-128-ctr (enc|dec): open\(/dev/crypto\): ENOENT' provider:default
echo PASS
