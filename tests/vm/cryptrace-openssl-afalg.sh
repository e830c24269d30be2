#!/bin/bash
# SPDX-License-Identifier: MIT
# cryptrace-openssl-afalg.sh aesni|ce|generic [openssl111]: `openssl speed -elapsed -seconds 1
# -engine afalg -evp aes-128-cbc` under `cryptrace run` in the guest: the guest's openssl (the
# host's, or on arm64 the sysroot's with the arm64 cross build of cryptrace), or with
# openssl111 OpenSSL 1.1.1w's own openssl and afalg engine (Debian 11's, fetched by
# tests/libcrypto/fetch.sh into the libcrypto suite's cache; skipped when the archive cannot be
# reached). The trace comes back to the host, and
# `cryptrace report --json` must show the AF_ALG path served by the driver the guest kernel
# really picked for cbc(aes): cbc-aes-aesni with aesni-intel loaded (cbc-aes-ce with aes-ce-blk on
# arm64), the generic driver without it. Calls and bytes must add up to what openssl printed, with 3 syscalls per request (sendmsg,
# io_submit, io_getevents: what the afalg engine issues, as strace counts in
# openssl-afalg-engine.sh). The reporter's kernel-software-driver finding must name the driver
# and its class (generic software, or the same CPU instructions as in-process AES-NI).
source "$(dirname "$0")/lib.sh"

mode=${1:?usage: cryptrace-openssl-afalg.sh aesni|ce|generic [openssl111]}
release=${2:-host}
guest_mode "$mode"

need_built "$cryptrace" "$preload" "$host_cryptrace"
command -v python3 >/dev/null || fail "python3 is needed to read the JSON report"

openssl=openssl
openssl_env=
extra_files=()
if [[ $release == openssl111 ]]; then
	# the same directory and package list as tests/libcrypto/osslver.py: one cached tree
	tree=$CT_BUILD_ROOT/tests/libcrypto/cache/openssl-1.1.1
	rc=0
	"$(dirname "$0")/../libcrypto/fetch.sh" "$tree" bullseye openssl libssl1.1 >"$scratch/fetch.out" 2>&1 || rc=$?
	((rc == 77)) && skip "OpenSSL 1.1.1w cannot be fetched: $(tail -n1 "$scratch/fetch.out")"
	((rc == 0)) || fail "fetch.sh failed ($rc): $(tail -n1 "$scratch/fetch.out")"
	libdir=$(dirname "$(find "$tree/root" -name libcrypto.so.1.1 | head -n1)")
	[[ -d $libdir/engines-1.1 ]] || fail "the 1.1.1w tree has no engines-1.1 beside $libdir/libcrypto.so.1.1"
	openssl=$tree/root/usr/bin/openssl
	openssl_env="LD_LIBRARY_PATH=$libdir OPENSSL_ENGINES=$libdir/engines-1.1"
	extra_files=("$tree/root")
fi

guest "$guest_opt" --files "$cryptrace" "$preload" "${extra_files[@]}" --out "$scratch/out" -- "
	cat /proc/crypto >\$OUT/proc-crypto.before
	$openssl_env '$cryptrace' run -o \$OUT/t -- '$openssl' speed -elapsed -seconds 1 -engine afalg -evp aes-128-cbc \\
		>\$OUT/speed.out 2>\$OUT/speed.err
	echo cryptrace-status=\$?
	cat /proc/crypto >\$OUT/proc-crypto
" || fail "the guest script failed"

cat "$scratch/out/speed.out" "$scratch/out/speed.err" 2>/dev/null || true
grep -qx 'cryptrace-status=0' "$scratch/guest.out" || fail "cryptrace run openssl speed failed in the guest"
grep -qi '^Engine "afalg" set' "$scratch/out/speed.out" "$scratch/out/speed.err" ||
	fail "openssl did not set the afalg engine under cryptrace"
ls "$scratch/out/t"/* >/dev/null 2>&1 || fail "no trace files came back from the guest"

driver=$(proc_crypto_pick "$scratch/out/proc-crypto" 'cbc(aes)')
[[ -n $driver ]] || fail "the guest's /proc/crypto has no tested cbc(aes) driver"
note "the guest kernel serves cbc(aes) with $driver"

"$host_cryptrace" report --json "$scratch/out/t" >"$scratch/report.json" ||
	fail "cryptrace report --json failed (exit $?)"

# openssl speed prints its "Doing ..." lines on stderr and the table on stdout.
cat "$scratch/out/speed.out" "$scratch/out/speed.err" >"$scratch/speed.all"
python3 - "$scratch/report.json" "$scratch/speed.all" "$mode" "$driver" "$cpu_driver_re" <<'PY' || fail "the report does not match"
import json, re, sys

report_path, speed_path, mode, driver, cpu_driver_re = sys.argv[1:6]
report = json.load(open(report_path))
speed = open(speed_path).read()
errors = []

# "Doing AES-128-CBC for 1s on 16 size blocks: 372 AES-128-CBC's in 0.96s" (1.1.1: lower case)
runs = [(int(size), int(n)) for size, n in
        re.findall(r"^Doing AES-128-CBC .* on (\d+) size blocks: (\d+) AES-128-CBC's", speed,
                   re.M | re.I)]
if not runs:
    sys.exit("openssl printed no block counts")
blocks = sum(n for _, n in runs)
nbytes = sum(size * n for size, n in runs)
print(f"openssl: {blocks} blocks, {nbytes} bytes over sizes {[s for s, _ in runs]}")

paths = report.get("paths", [])
for p in paths:
    print("path:", {k: p.get(k) for k in ("api", "impl", "cipher", "dir", "key_bits", "entry",
                                         "calls", "bytes", "syscalls", "errors")})
afalg = [p for p in paths if p.get("api") == "afalg"]
if not afalg:
    sys.exit("no afalg path in the report")

want_impl = "kernel:" + driver
for p in afalg:
    if p.get("impl") != want_impl:
        errors.append(f"afalg path impl {p.get('impl')!r}, expected {want_impl!r}")
    if p.get("cipher") != "aes-128-cbc":
        errors.append(f"afalg path cipher {p.get('cipher')!r}, expected 'aes-128-cbc'")
cpu = mode != "generic"
if cpu and not re.search(cpu_driver_re, driver):
    errors.append(f"{mode} guest picked {driver}")
if mode == "generic" and "generic" not in driver:
    errors.append(f"generic guest picked {driver}")

calls = sum(p.get("calls", 0) for p in afalg)
total = sum(p.get("bytes", 0) for p in afalg)
syscalls = sum(p.get("syscalls", 0) for p in afalg)
if calls != blocks:
    errors.append(f"afalg calls {calls} != openssl's {blocks} blocks")
if total != nbytes:
    errors.append(f"afalg bytes {total} != openssl's {nbytes}")
if syscalls != 3 * calls:
    errors.append(f"afalg syscalls {syscalls} != 3 per request ({3 * calls}): "
                  "expected sendmsg + io_submit + io_getevents")

evp = [p for p in paths if p.get("api") == "evp" and p.get("impl") == "engine:afalg"]
evp_calls = sum(p.get("calls", 0) for p in evp)
if evp_calls != blocks:
    errors.append(f"evp path with impl engine:afalg has {evp_calls} calls, expected {blocks}")

# The driver's class, as the reporter explains it: the generic driver is software, the aesni (ce)
# one runs the same CPU instructions as in-process code (report/findings/kernel_offload.c).
phrase = ("runs on the same CPU instructions" if cpu else "is generic software code")
ksd = [f for f in report.get("findings", []) if f.get("kind") == "kernel-software-driver"]
for f in ksd:
    print("finding:", f.get("message", "")[:200])
if not any(want_impl in f.get("message", "") and phrase in f.get("message", "") for f in ksd):
    errors.append(f"no kernel-software-driver finding saying {want_impl} {phrase!r}")

# Here the engine works and every AES-128-CBC block reached the kernel: what still runs in
# software is OpenSSL's own CTR-DRBG (aes-256-ecb/ctr, never offered to the cbc-only afalg
# engine), so no fallback may be reported.
for f in report.get("findings", []):
    if f.get("kind") == "silent-fallback":
        errors.append("silent-fallback reported although the afalg engine served every block: "
                      + f.get("message", "")[:160])

for e in errors:
    print("MISMATCH:", e)
sys.exit(1 if errors else 0)
PY
note "PASS ($mode): afalg path kernel:$driver adds up to openssl's counts"
