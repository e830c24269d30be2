#!/bin/bash
# SPDX-License-Identifier: MIT
# doctor_vm.sh aesni|generic: `cryptrace doctor --json` in the qemu guest (tests/vm), where AF_ALG
# works. With aesni-intel loaded the doctor must report AF_ALG available and cbc(aes) served by
# cbc-aes-aesni (class cpu); without it, a generic driver (class software), aesni-intel not
# loaded and the recommendation to modprobe it. The guest's own /proc/crypto (saved after the
# doctor ran) is the reference, so the check can fail.
source "$(dirname "$0")/../vm/lib.sh"

mode=${1:?usage: doctor_vm.sh aesni|generic}
guest_mode "$mode"

need_built "$cryptrace"

guest "$guest_opt" --files "$cryptrace" --out "$scratch/out" -- "
	'$cryptrace' doctor --json >\$OUT/doctor.json
	echo doctor-status=\$?
	'$cryptrace' doctor >\$OUT/doctor.txt
	cat /proc/crypto >\$OUT/proc-crypto
	lsmod >\$OUT/lsmod
" || fail "the guest script failed"

grep -q '^doctor-status=[01]$' "$scratch/guest.out" || fail "doctor did not finish in the guest"
[[ -s $scratch/out/doctor.json ]] || fail "no doctor JSON came back"
cat "$scratch/out/doctor.txt"
picked=$(proc_crypto_pick "$scratch/out/proc-crypto" 'cbc(aes)')
note "the guest's /proc/crypto picks $picked for cbc(aes)"

ctlib_python - "$scratch/out/doctor.json" "$mode" "$picked" <<'PY' || fail "doctor's report is wrong"
import json, sys
import ctlib
from ctlib import check
doc = json.load(open(sys.argv[1]))
mode, picked = sys.argv[2], sys.argv[3]
c = ctlib.doctor_checks(doc)


def test():
    check(c["afalg"]["values"]["available"] is True, "AF_ALG available in the guest")
    k = c["kernel:cbc(aes)"]["values"]
    check(k["driver"] == picked,
          f"cbc(aes): the doctor names the driver /proc/crypto picks ({k['driver']})")
    if mode == "aesni":
        check(k["driver"] == "cbc-aes-aesni" and k["class"] == "cpu",
              f"cbc-aes-aesni, class cpu ({k})")
        check(c["kernel:accel"]["values"]["loaded"] is True, "aesni-intel loaded")
    else:
        check(k["class"] == "software" and "aesni" not in k["driver"], f"a generic driver ({k})")
        check(c["kernel:accel"]["values"]["loaded"] is False, "aesni-intel not loaded")
        check(any("modprobe aesni-intel" in r for r in doc["recommendations"]),
              "recommends modprobe aesni-intel")
    check(c["engine:afalg"]["values"]["loads"] is True,
          "the afalg engine loads where AF_ALG works")
    x = c["crossover"]
    check(x["status"] in ("info", "ok") and "kernel" in x["evidence"],
          f"the crossover was measured ({x['title']})")


ctlib.verdict(test)
PY
note "doctor in the $mode guest: AF_ALG available, cbc(aes) -> $picked"
