#!/bin/bash
# SPDX-License-Identifier: MIT
# findings-afalg.sh: the [findings] diagnoses that need a kernel with AF_ALG, in one guest boot
# (the CPU's AES drivers loaded: aesni-intel, or aes-ce in the arm64 guest):
#  - `openssl speed -engine afalg -evp` as people run it, timed on user CPU (no -elapsed): the
#    work happens in the kernel, so the report must say user time misleads (user-time-misleads);
#  - 16-byte AF_ALG requests from afalg_bench, where each request's syscalls cost more than the
#    AES work: small-requests-offload, with the crossover taken from the trace's own sizes;
#  - in the arm64 guest, findings true for that machine: no AES-NI, aesni_intel or `aesni` route
#    in what they say (issue 20: the CPU's AES instructions there are ARMv8 CE).
source "$(dirname "$0")/lib.sh"

bench=$build_root/examples/kernel/afalg_bench
need_built "$cryptrace" "$preload" "$bench" "$host_cryptrace"
command -v python3 >/dev/null || fail "python3 is needed to read the JSON report"

guest "--$cpu_mode" --files "$cryptrace" "$preload" "$bench" --out "$scratch/out" -- "
	'$cryptrace' run -q -o \$OUT/speed -- openssl speed -seconds 1 -bytes 16 -engine afalg -evp aes-128-cbc \\
		>\$OUT/speed.out 2>&1
	echo speed-status=\$?
	'$cryptrace' run -q -o \$OUT/small -- '$bench' --mode sendmsg --alg 'cbc(aes)' --sizes 16,16384 --count 64 \\
		>\$OUT/bench.out 2>&1
	echo bench-status=\$?
" || fail "the guest script failed"

grep -qx 'speed-status=0' "$scratch/guest.out" || { cat "$scratch/out/speed.out"; fail "openssl speed failed in the guest"; }
grep -qx 'bench-status=0' "$scratch/guest.out" || { cat "$scratch/out/bench.out"; fail "afalg_bench failed in the guest"; }
"$host_cryptrace" report --json "$scratch/out/speed" >"$scratch/speed.json" || fail "report of the speed run failed"
"$host_cryptrace" report --json "$scratch/out/small" >"$scratch/small.json" || fail "report of the bench run failed"

python3 - "$scratch/speed.json" "$scratch/small.json" "$vm_arch" <<'PY' || fail "a finding is missing or untrue"
import json, re, sys
speed, small = (json.load(open(p)) for p in sys.argv[1:3])
arch = sys.argv[3]
errors = []
def kinds(doc):
    return {f["kind"]: f for f in doc.get("findings", [])}
k = kinds(speed)
print("speed run findings:", sorted(k))
if "user-time-misleads" not in k:
    errors.append("openssl speed -engine afalg -evp: no user-time-misleads finding")
else:
    print("  ", k["user-time-misleads"]["message"][:300])
k = kinds(small)
print("afalg_bench 16 B findings:", sorted(k))
if "small-requests-offload" not in k:
    errors.append("16-byte AF_ALG requests: no small-requests-offload finding")
else:
    f = k["small-requests-offload"]
    print("  ", f["message"][:300])
    if "afalg" not in (f["message"] + f["evidence"]).lower():
        errors.append("small-requests-offload does not name the AF_ALG path")
if arch != "amd64":
    for doc in (speed, small):
        for f in doc.get("findings", []):
            for field in ("message", "evidence", "fix"):
                m = re.search(r"AES-NI|aesni", f.get(field, ""))
                if m:
                    errors.append(f"{f['kind']} {field} names {m.group(0)} on {arch}: "
                                  f"...{f[field][max(0, m.start() - 60):m.end() + 40]}...")
for e in errors:
    print("WRONG:", e)
sys.exit(1 if errors else 0)
PY
note "user-time-misleads and small-requests-offload both found"
