#!/bin/bash
# SPDX-License-Identifier: MIT
# doctor_cuse.sh: `cryptrace doctor --json` against a real /dev/crypto in the qemu guest: the
# CUSE cryptodev server of tests/cryptodev-cuse under its "glxsb" profile (a Geode-like engine:
# AES-128-CBC and nothing else). The doctor must find /dev/crypto, get a CIOCGSESSION for
# aes-128-cbc with the driver CIOCGSESSINFO names (the kernel's pick for cbc(aes), which the
# server serves through AF_ALG), be refused (EINVAL) for every other cipher and key size, and
# measure the /dev/crypto crossover.
source "$(dirname "$0")/../vm/lib.sh"
export CT_VM_APPEND="${CT_VM_APPEND:-} no_timer_check"

server=$build_root/tests/cryptodev-cuse/cdev-cuse
need_built "$cryptrace"
# the CUSE server needs libfuse3 (optional at meson setup)
[[ -x $server ]] || pkg-config --exists fuse3 ||
	skip "$server is not built: libfuse3 is missing (apt-get install libfuse3-dev)"
need_built "$server"
libgcc=$(ldconfig -p | awk '$1 == "libgcc_s.so.1" && /x86-64/ && !n++ { print $NF }')
[[ -n $libgcc ]] || fail "libgcc_s.so.1 not found (ldconfig -p)"

guest --aesni --files "$cryptrace" "$server" "$libgcc" --out "$scratch/out" -- "
	[ -e /dev/cuse ] || modprobe cuse
	'$server' --profile glxsb >\$OUT/server.log 2>&1 &
	spid=\$!
	i=0
	while [ ! -e /dev/crypto ] && [ \$i -lt 150 ]; do sleep 0.1; i=\$((i + 1)); done
	[ -e /dev/crypto ] || { echo 'no /dev/crypto from the CUSE server' >&2; cat \$OUT/server.log >&2; exit 4; }
	'$cryptrace' doctor --json >\$OUT/doctor.json
	echo doctor-status=\$?
	kill -TERM \$spid; wait \$spid
	cat /proc/crypto >\$OUT/proc-crypto
" || fail "the guest script failed"

grep -q '^doctor-status=[01]$' "$scratch/guest.out" || fail "doctor did not finish in the guest"
picked=$(proc_crypto_pick "$scratch/out/proc-crypto" 'cbc(aes)')
ctlib_python - "$scratch/out/doctor.json" "$picked" <<'PY' || fail "doctor's /dev/crypto report is wrong"
import json, sys
import ctlib
from ctlib import check
picked = sys.argv[2]
c = ctlib.doctor_checks(json.load(open(sys.argv[1])))


def test():
    check(c["cryptodev"]["values"]["present"] is True, "/dev/crypto present")
    s = c["cryptodev:aes-128-cbc"]
    check(s["values"]["session"] is True, f"aes-128-cbc: CIOCGSESSION succeeds ({s['evidence']})")
    check(s["values"]["driver"] == picked, f"aes-128-cbc: CIOCGSESSINFO names the kernel's pick "
          f"{picked} ({s['values']['driver']})")
    for name in ("aes-192-cbc", "aes-256-cbc", "aes-128-ctr", "aes-128-ecb", "aes-256-xts",
                 "aes-128-gcm"):
        x = c["cryptodev:" + name]
        check(x["values"]["session"] is False and "EINVAL" in x["evidence"],
              f"{name}: refused with EINVAL ({x['evidence']})")
    x = c.get("crossover:cryptodev")
    check(x is not None and "kernel" in x["evidence"],
          f"the /dev/crypto crossover was measured ({x and x['title']})")


ctlib.verdict(test)
PY
note "doctor against the CUSE /dev/crypto (glxsb): aes-128-cbc -> $picked, the rest refused"
