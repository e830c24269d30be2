#!/bin/bash
# SPDX-License-Identifier: MIT
# Low-level AES_* routed to aesni, bit-exact: lowlevel_diff's per-mode digests (random keys,
# lengths, IVs, num positions, partial CBC blocks, wrong-direction and copied keys) are identical
# natively and under CRYPTRACE_ROUTE=aes-*=aesni, and the trace shows the work on route:aesni
# paths (so the comparison did compare the route); examples/lowlevel_aes prints the same lines and
# its paths carry exactly the calls and bytes it expects: routed for the modes the route serves,
# in libcrypto with one fallback event each for CFB-8/CFB-1/IGE/bi-IGE/key wrap.
set -u
: "${CRYPTRACE:?}" "${LOWLEVEL_DIFF:?}" "${LOWLEVEL_AES:?}"
fail() { echo "FAIL: $*" >&2; exit 1; }
if ! grep -qw aes /proc/cpuinfo; then echo "no AES-NI on this CPU: the aesni route cannot serve"; exit 77; fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
cases=${CT_LOWLEVEL_CASES:-30000}
seed=${CT_LOWLEVEL_SEED:-$RANDOM}
echo "cases=$cases seed=$seed"

"$LOWLEVEL_DIFF" "$cases" "$seed" > "$tmp/native.txt" || fail "native run failed"
CRYPTRACE_ROUTE='aes-*=aesni' "$CRYPTRACE" run -o "$tmp/diff.ctrace" -- "$LOWLEVEL_DIFF" "$cases" "$seed" \
	> "$tmp/routed.txt" 2> "$tmp/routed.err" || { cat "$tmp/routed.err"; fail "routed run failed"; }
cat "$tmp/native.txt"
diff "$tmp/native.txt" "$tmp/routed.txt" || fail "routed AES_* output differs from native (seed $seed)"

"$CRYPTRACE" report --json "$tmp/diff.ctrace" > "$tmp/diff.json" || fail "report failed"
python3 - "$tmp/diff.json" <<'PY' || fail "trace check (lowlevel_diff)"
import json, sys
d = json.load(open(sys.argv[1]))
routed = [p for p in d["paths"] if p["api"] == "aes" and p["impl"] == "route:aesni"]
native = [p for p in d["paths"] if p["api"] == "aes" and p["impl"] == "lowlevel"]
modes = {p["cipher"].rsplit("-", 1)[1] for p in routed}
calls = sum(p["calls"] for p in routed)
print(f"routed paths {len(routed)} ({sorted(modes)}), routed calls {calls}, "
      f"native calls {sum(p['calls'] for p in native)}")
assert modes >= {"ecb", "cbc", "cfb", "ofb"}, modes
# copied and rewritten keys and wrong-direction schedules (about 1 case in 11) run natively
assert native and calls > 5 * sum(p["calls"] for p in native), "too little served by the route"
fb = [e for e in d["events"] if e["kind"] == "fallback" and "AES_KEY not set up" in e["detail"]]
assert fb, "no fallback event for the keys the side table does not know"
PY

"$LOWLEVEL_AES" > "$tmp/ll-native.txt" || fail "lowlevel_aes native"
CRYPTRACE_ROUTE='aes-*=aesni' "$CRYPTRACE" run -o "$tmp/ll.ctrace" -- "$LOWLEVEL_AES" > "$tmp/ll-routed.txt" \
	|| fail "lowlevel_aes routed exited non-zero"
diff "$tmp/ll-native.txt" "$tmp/ll-routed.txt" || fail "lowlevel_aes prints differently when routed"
"$CRYPTRACE" report --json "$tmp/ll.ctrace" > "$tmp/ll.json" || fail "report failed"
python3 - "$tmp/ll.json" "$tmp/ll-native.txt" <<'PY' || fail "trace check (lowlevel_aes)"
import json, sys
d = json.load(open(sys.argv[1]))
want = {}
for line in open(sys.argv[2]):
    if line.startswith("expect "):
        kv = dict(f.split("=", 1) for f in line.split()[1:])
        want[(kv["cipher"], kv["dir"])] = (int(kv["calls"]), int(kv["bytes"]))
# the route serves the block functions, ECB, CBC, CFB-128 and OFB; CFB-8, CFB-1, IGE, bi-IGE and
# key wrap stay in libcrypto, each said once by a fallback event
UNSERVED = ("-cfb8", "-cfb1", "-ige", "-biige", "-wrap")
got = {}
for p in d["paths"]:
    if p["api"] != "aes":
        continue
    if p["cipher"].endswith(UNSERVED):
        assert p["impl"] == "lowlevel" and p["route"] == "", (p["cipher"], p["impl"])
    else:
        assert p["impl"] == "route:aesni" and p["route"] == "aesni", (p["cipher"], p["impl"])
    got[(p["cipher"], p["dir"])] = (p["calls"], p["bytes"])
for k, v in want.items():
    assert got.get(k) == v, f"{k}: want {v}, trace {got.get(k)}"
said = [e["detail"] for e in d["events"] if e["kind"] == "fallback"]
for cipher, direction in want:
    if cipher.endswith(UNSERVED):
        hits = [x for x in said if f"{cipher} {direction[:3]}" in x and "runs in libcrypto" in x]
        assert len(hits) == 1, f"{cipher} {direction}: one fallback event, got {hits or said}"
served = sum(1 for c, _ in want if not c.endswith(UNSERVED))
print(f"lowlevel_aes: {len(want)} expected paths, exact calls and bytes; {served} on route:aesni, "
      f"the rest in libcrypto with one fallback event each")
PY
# no key, IV or plaintext of lowlevel_aes (its literals are known to the scan) in either trace
python3 "$(dirname "$0")/../lib/ctlib/secretscan.py" "$tmp" || fail "a secret is in a trace"
echo "PASS"
