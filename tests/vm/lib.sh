# SPDX-License-Identifier: MIT
# shellcheck shell=bash disable=SC2034  # sourced: the variables are for the test scripts
# lib.sh: helpers shared by the vm suite's test scripts (sourced, not run).
#
# Meson passes: CT_BUILD_ROOT (the build dir), QEMU (qemu-system-x86_64, or -aarch64 for the
# arm64 guest), CT_VM_WORK (initramfs cache and run dirs inside the build dir), and for the arm64
# guest CT_VM_ARCH=arm64. Run by hand, the defaults below find ./build.

set -euo pipefail

vm_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src_root=$(cd "$vm_dir/../.." && pwd)
build_root=${CT_BUILD_ROOT:-$src_root/build}
run_in_guest=$vm_dir/run-in-guest.sh
test_name=$(basename "$0" .sh)

# A scratch dir per test, removed on success and kept (and named) on failure.
scratch=$(mktemp -d "${TMPDIR:-/tmp}/ct-vm-$test_name.XXXXXX")
_vm_keep=0
trap '((_vm_keep)) && echo "$test_name: kept $scratch" >&2 || rm -rf "$scratch"' EXIT

fail() {
	_vm_keep=1
	echo "$test_name: FAIL: $*" >&2
	exit 1
}
skip() {
	echo "$test_name: SKIP: $*"
	exit 77
}
note() { echo "$test_name: $*"; }

# The guest's architecture, and what differs per architecture:
#   host_cryptrace   this build's launcher, which reads the traces back on the host
#   build_root       the build whose files go into the guest: this one, or for arm64 the cross
#                    build tests/port/cross-build.sh keeps in <this build>/tests/port/build-arm64
#   cpu_mode         the guest_mode name of "the CPU's AES drivers loaded" (aesni, ce)
#   cpu_module       the module that brings the CPU's AES block-cipher drivers
#   cpu_driver_re    an extended regex matching the drivers of the CPU's AES instructions
#   cpu_cbc_driver   what such a guest's kernel picks for cbc(aes)
vm_arch=${CT_VM_ARCH:-amd64}
host_build_root=$build_root
host_cryptrace=$host_build_root/tracer/cryptrace
case $vm_arch in
amd64)
	# The qemu guest is not optional in this suite: a missing qemu fails loudly (CI installs it).
	[[ -n ${QEMU:-} ]] || QEMU=$(command -v qemu-system-x86_64 || true)
	[[ -n $QEMU && -x $QEMU ]] ||
		fail "qemu-system-x86_64 not found: the vm suite needs it (apt-get install qemu-system-x86)"
	cpu_mode=aesni cpu_module=aesni_intel cpu_driver_re=aesni cpu_cbc_driver=cbc-aes-aesni
	;;
arm64)
	# An arm64 guest needs the cross toolchain and qemu beside the native build: a machine without
	# them skips, saying which (.ci/run installs them; tests/setup-deps.sh lists them).
	[[ -n ${QEMU:-} ]] || QEMU=$(command -v qemu-system-aarch64 || true)
	[[ -n $QEMU && -x $QEMU ]] ||
		skip "qemu-system-aarch64 not found: the arm64 guest needs it (apt-get install qemu-system-arm)"
	command -v aarch64-linux-gnu-gcc >/dev/null ||
		skip "aarch64-linux-gnu-gcc not found: the arm64 guest runs the arm64 cross build (apt-get install gcc-aarch64-linux-gnu)"
	command -v qemu-aarch64-static >/dev/null ||
		skip "qemu-aarch64-static not found: the arm64 guest's files are listed with it (apt-get install qemu-user-static)"
	# The cross build, shared with tests/port: incremental, and serialised by cross-build.sh.
	port_work=$host_build_root/tests/port
	build_root=$("$src_root/tests/port/cross-build.sh" arm64 "$port_work" 2>"$scratch/cross-build.err" | tail -n1) ||
		fail "the arm64 cross build failed: $(tail -n 20 "$scratch/cross-build.err")"
	export CT_VM_SYSROOT=$port_work/sysroot-arm64
	cpu_mode=ce cpu_module=aes_ce_blk cpu_driver_re='-ce$|-ce-|neon' cpu_cbc_driver=cbc-aes-ce
	;;
*) fail "unknown CT_VM_ARCH $vm_arch (amd64 or arm64)" ;;
esac
export QEMU CT_VM_ARCH=$vm_arch

# The launcher and the preload the guest tests copy in (the guest's architecture).
cryptrace=$build_root/tracer/cryptrace
preload=$build_root/preload/libcryptrace.so

# need_built FILE...: each exists, else the test fails saying how to build it.
need_built() {
	local f
	for f; do
		[[ -e $f ]] || fail "$f is not built (ninja -C $build_root)"
	done
}

# guest_mode aesni|ce|generic: sets guest_opt, run-in-guest's option for a guest with the CPU's
# AES drivers loaded (aesni-intel on amd64, aes-ce on arm64) or with the generic drivers only.
guest_mode() {
	case $1 in
	"$cpu_mode") guest_opt=--$cpu_mode ;;
	generic) guest_opt=--no-$cpu_mode ;;
	*) fail "unknown mode $1 for an $vm_arch guest ($cpu_mode or generic)" ;;
	esac
}

# need_strace: sets strace_files, the --files that give the guest an strace (an independent count
# of a program's system calls). The amd64 guest gets the host's (tests/setup-deps.sh installs it;
# missing, the test fails); the arm64 guest has the target's own (build-guest.sh), and needs none.
need_strace() {
	strace_files=()
	if [[ $vm_arch == amd64 ]]; then
		local s
		s=$(command -v strace) || fail "strace is not installed on the host (tests/setup-deps.sh; apt-get install strace)"
		strace_files=("$s")
	fi
}

# ctlib_python ARGS...: python3 with the Python suites' helper library (tests/lib/ctlib) on its
# path, for the checks that read back what a guest wrote.
ctlib_python() {
	PYTHONPATH=$src_root/tests/lib python3 "$@"
}

# guest [run-in-guest options] -- 'script': run it, capturing stdout/stderr into the scratch dir.
# Prints both (so meson's log has them) and returns the guest script's status. The trace files
# the guest wrote back are scanned for keys, IVs and plaintexts first: a hit fails the test
# (tests/lib/ctlib/secretscan.py; the scripts' K=/IV= literals and the examples' are known).
guest() {
	local rc=0
	"$run_in_guest" "$@" >"$scratch/guest.out" 2>"$scratch/guest.err" || rc=$?
	echo "---- guest stdout ----"
	cat "$scratch/guest.out"
	echo "---- guest stderr ----"
	cat "$scratch/guest.err"
	echo "----"
	python3 "$src_root/tests/lib/ctlib/secretscan.py" "$scratch" ||
		fail "a key, IV or plaintext is in a trace file the guest wrote"
	return $rc
}

# The kernel's choice for an algorithm name in a saved /proc/crypto: the driver with the highest
# priority among entries of that name whose self-test passed.
proc_crypto_pick() {	# FILE NAME
	awk -v want="$2" '
		function flush() {
			if (name == want && selftest == "passed" && prio + 0 > best) { best = prio + 0; pick = drv }
			name = drv = selftest = ""; prio = -1
		}
		BEGIN { best = -1 }
		/^$/ { flush(); next }
		{ k = $1; v = $0; sub(/^[^:]*: /, "", v) }
		k == "name" { name = v } k == "driver" { drv = v }
		k == "priority" { prio = v } k == "selftest" { selftest = v }
		END { flush(); print pick }' "$1"
}

# The drivers of every entry of one algorithm name in a saved /proc/crypto.
proc_crypto_drivers() {	# FILE NAME
	awk -v want="$2" '
		/^name/ { n = $0; sub(/^[^:]*: /, "", n) }
		/^driver/ && n == want { d = $0; sub(/^[^:]*: /, "", d); print d }' "$1"
}
