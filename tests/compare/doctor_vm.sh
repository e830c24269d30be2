#!/bin/bash
# SPDX-License-Identifier: MIT
# doctor_vm.sh aesni|generic: `cryptrace doctor --json` in the qemu guest (tests/vm), where AF_ALG
# works. With aesni-intel loaded the doctor must report AF_ALG available and cbc(aes) served by
# cbc-aes-aesni (class cpu); without it, a generic driver (class software), aesni-intel not
# loaded and the recommendation to modprobe it. The guest's own /proc/crypto (saved after the
# doctor ran) is the reference, so the check can fail.
source "$(dirname "$0")/../vm/lib.sh"

mode=${1:?usage: doctor_vm.sh aesni|generic}
case $mode in
aesni) guest_opt=--aesni ;;
generic) guest_opt=--no-aesni ;;
*) fail "unknown mode $mode" ;;
esac

ct=$build_root/tracer/cryptrace
[[ -x $ct ]] || fail "$ct is not built (ninja -C $build_root)"

guest "$guest_opt" --files "$ct" --out "$scratch/out" -- "
	'$ct' doctor --json >\$OUT/doctor.json
	echo doctor-status=\$?
	'$ct' doctor >\$OUT/doctor.txt
	cat /proc/crypto >\$OUT/proc-crypto
	lsmod >\$OUT/lsmod
" || fail "the guest script failed"

grep -q '^doctor-status=[01]$' "$scratch/guest.out" || fail "doctor did not finish in the guest"
[[ -s $scratch/out/doctor.json ]] || fail "no doctor JSON came back"
cat "$scratch/out/doctor.txt"
picked=$(proc_crypto_pick "$scratch/out/proc-crypto" 'cbc(aes)')
note "the guest's /proc/crypto picks $picked for cbc(aes)"

python3 - "$scratch/out/doctor.json" "$mode" "$picked" <<'PY' || fail "doctor's report is wrong"
import json, sys
doc = json.load(open(sys.argv[1]))
mode, picked = sys.argv[2], sys.argv[3]
c = {}
for x in doc["checks"]:
    c.setdefault(x["id"], x)
def need(cond, what):
    print(("ok: " if cond else "FAIL: ") + what)
    if not cond:
        sys.exit(1)
need(c["afalg"]["values"]["available"] is True, "AF_ALG available in the guest")
k = c["kernel:cbc(aes)"]["values"]
need(k["driver"] == picked, f"cbc(aes): the doctor names the driver /proc/crypto picks ({k['driver']})")
if mode == "aesni":
    need(k["driver"] == "cbc-aes-aesni" and k["class"] == "cpu", f"cbc-aes-aesni, class cpu ({k})")
    need(c["kernel:accel"]["values"]["loaded"] is True, "aesni-intel loaded")
else:
    need(k["class"] == "software" and "aesni" not in k["driver"], f"a generic driver ({k})")
    need(c["kernel:accel"]["values"]["loaded"] is False, "aesni-intel not loaded")
    need(any("modprobe aesni-intel" in r for r in doc["recommendations"]),
         "recommends modprobe aesni-intel")
need(c["engine:afalg"]["values"]["loads"] is True, "the afalg engine loads where AF_ALG works")
x = c["crossover"]
need(x["status"] in ("info", "ok") and "kernel" in x["evidence"],
     f"the crossover was measured ({x['title']})")
PY
note "doctor in the $mode guest: AF_ALG available, cbc(aes) -> $picked"
