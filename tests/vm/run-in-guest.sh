#!/bin/bash
# SPDX-License-Identifier: MIT
# run-in-guest.sh: run one shell script inside a throw-away qemu (TCG) guest with a real kernel.
#
# Usage: tests/vm/run-in-guest.sh [--arch amd64|arm64 [--sysroot DIR]] [--aesni|--no-aesni]
#                                 [--ce|--no-ce] [--tls] [--files PATH...] [--out DIR]
#                                 [--timeout SECONDS] [--smp N] [--cache DIR] [--work DIR]
#                                 [--keep] -- 'guest shell script'
#
# The guest is Debian's cloud kernel (tests/vm/build-guest.sh) with a busybox-static initramfs that
# also holds openssl (with engines-3/afalg.so and ossl-modules), kcapi-tools and their shared
# libraries: the host's for amd64; for arm64 (qemu-system-aarch64, -machine virt) those of the
# target's sysroot (tests/port/sysroot.sh arm64 DIR, --sysroot) and the guest tools build-guest.sh
# unpacks. --files adds host files or directories at the same absolute paths, with the shared
# libraries of every ELF file among them (found with ldd; for arm64 with the sysroot's dynamic
# loader under qemu-aarch64-static), so build-tree binaries (a cross build's too) find
# their libraries and each other exactly as on the host. The script runs as root in /tmp with
# $OUT=/out; whatever it leaves in $OUT is copied back into --out DIR on the host.
#
# The script's stdout and stderr come out on this script's stdout and stderr, byte for byte, and
# its exit status is this script's exit status. A guest that does not boot, or a script that hits
# the timeout, is a loud failure: exit 1 (timeout: 124) with the end of the kernel console.
#
# Environment: CT_VM_ARCH (default for --arch), CT_VM_SYSROOT (for --sysroot), QEMU
# (qemu-system-x86_64 or -aarch64 to use), CT_VM_CACHE (kernel cache dir), CT_VM_WORK
# (initramfs cache and run dirs), CT_VM_VERBOSE=1 (print the kernel console after the run).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
arch=${CT_VM_ARCH:-amd64}
sysroot=${CT_VM_SYSROOT:-}
cache=${CT_VM_CACHE:-$here/cache}
work=${CT_VM_WORK:-${TMPDIR:-/tmp}/cryptrace-vm-$(id -u)}
cpu_aes=1
tls=0
timeout_s=240
smp=1
out_dir=
keep=0
files=()

usage() {
	sed -n 's/^# \{0,1\}//;3,16p' "${BASH_SOURCE[0]}" >&2
	exit 2
}
die() { echo "run-in-guest: $*" >&2; exit 1; }

while (($#)); do
	case $1 in
	# The CPU's AES drivers: aesni-intel on amd64, aes-ce (and the NEON ones) on arm64.
	--aesni | --ce) cpu_aes=1 ;;
	--no-aesni | --no-ce) cpu_aes=0 ;;
	--arch) arch=$2; shift ;;
	--sysroot) sysroot=$2; shift ;;
	--tls) tls=1 ;;
	--out) out_dir=$2; shift ;;
	--timeout) timeout_s=$2; shift ;;
	--smp) smp=$2; shift ;;
	--cache) cache=$2; shift ;;
	--work) work=$2; shift ;;
	--keep) keep=1 ;;
	--files)
		while (($# > 1)) && [[ $2 != -* ]]; do
			files+=("$2")
			shift
		done
		;;
	--) shift; break ;;
	-h|--help) usage ;;
	*) echo "run-in-guest: unknown option $1" >&2; usage ;;
	esac
	shift
done
(($# == 1)) || { echo "run-in-guest: expected exactly one guest script after --" >&2; usage; }
script=$1
[[ $timeout_s =~ ^[0-9]+$ ]] || die "--timeout wants whole seconds"

# The machine per architecture: qemu, its arguments, the console, and the results channel
# (guest-init.sh's ct.data). x86's pc machine has two UARTs: ttyS0 is the console, ttyS1 the
# results. arm64's virt machine has one PL011 (ttyAMA0, the console), so the results travel on a
# virtio-serial port named ct.data: a byte stream like the UART (the same protocol, no kernel
# messages in it) that is not limited to a UART's speed.
case $arch in
amd64)
	qemu=${QEMU:-qemu-system-x86_64}
	qemu_pkg=qemu-system-x86
	;;
arm64)
	qemu=${QEMU:-qemu-system-aarch64}
	qemu_pkg=qemu-system-arm
	triplet=aarch64-linux-gnu
	qemu_user=qemu-aarch64-static
	[[ -n $sysroot ]] || die "--arch arm64 needs --sysroot DIR (tests/port/sysroot.sh arm64 DIR)"
	[[ -x $sysroot/bin/busybox ]] || die "$sysroot/bin/busybox is missing: not a sysroot from tests/port/sysroot.sh"
	sysroot=$(cd "$sysroot" && pwd)
	command -v "$qemu_user" >/dev/null ||
		die "$qemu_user not found (apt-get install qemu-user-static): it lists the arm64 files' libraries"
	;;
*) die "unknown --arch $arch (amd64 or arm64)" ;;
esac
command -v "$qemu" >/dev/null || die "$qemu not found (Debian: apt-get install $qemu_pkg)"
# The host's busybox writes the cpio archives; the guest's is the same one on amd64.
busybox=$(command -v busybox) || die "busybox not found (Debian: apt-get install busybox-static)"
ldd "$busybox" >/dev/null 2>&1 && die "$busybox is dynamically linked; install busybox-static"
guest_busybox=$busybox
[[ $arch == arm64 ]] && guest_busybox=$sysroot/bin/busybox

kdir=$("$here/build-guest.sh" --arch "$arch" "$cache") || die "could not prepare the guest kernel"
kver=$(cat "$kdir/version")
mkdir -p "$work"
work=$(cd "$work" && pwd)

# ---- staging helpers -----------------------------------------------------------------------

is_elf() { [[ -f $1 && $(head -c4 "$1" 2>/dev/null | od -An -c | tr -d ' ') == '177ELF' ]]; }

# Where a foreign guest's own files are on the host: the sysroot and the tools build-guest.sh
# unpacked. Their paths in the guest are their paths below these roots.
guest_roots=()
if [[ $arch != amd64 ]]; then
	guest_roots=("$sysroot" "$kdir/root")
	libpath=
	for r in "${guest_roots[@]}"; do
		libpath+=${libpath:+:}$r/lib/$triplet:$r/usr/lib/$triplet
	done
fi

# The shared libraries (and the dynamic loader) an ELF file needs, as absolute host paths: ldd,
# or for a foreign guest the sysroot's own dynamic loader (--list) under qemu-user, which finds
# them in the sysroot and the build tree (RUNPATH) as the guest's loader will.
elf_deps() {
	if [[ $arch == amd64 ]]; then
		ldd "$1" 2>/dev/null
	else
		"$qemu_user" -L "$sysroot" "$sysroot/lib/ld-linux-aarch64.so.1" --library-path "$libpath" \
			--list "$1" 2>/dev/null
	fi | sed -n 's/.*=> \(\/[^ ]*\) (0x.*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) (0x.*/\1/p' || true
}

# A host file's path in the guest. Its directory is resolved (so /lib/x86_64-linux-gnu lands in
# /usr/lib/...: the guest keeps Debian's merged-/usr symlinks) but its last component is kept, so
# symlinked names stay reachable. A foreign guest's own files lose their root, and /lib, /bin and
# /sbin become /usr/... (the sysroot is unpacked packages, not merged).
guest_path() {
	local dir r
	dir=$(readlink -f "$(dirname "$1")")
	for r in "${guest_roots[@]}"; do
		if [[ $dir == "$r" || $dir == "$r"/* ]]; then
			dir=${dir#"$r"}
			case $dir in
			/lib | /lib/* | /bin | /bin/* | /sbin | /sbin/*) dir=/usr$dir ;;
			esac
			break
		fi
	done
	echo "${dir%/}/$(basename "$1")"
}

# Emit "guestpath<TAB>hostpath" for a file and, for ELF files, every library it needs.
emit_file() {
	local p=$1
	printf '%s\t%s\n' "$(guest_path "$p")" "$p"
	if is_elf "$p"; then
		local d
		for d in $(elf_deps "$p"); do
			printf '%s\t%s\n' "$(guest_path "$d")" "$d"
			# Also the real file behind a versioned symlink, for dlopen by another name.
			# (An if: a non-link last in ldd's list must not make the function fail.)
			if [[ -L $d ]]; then
				printf '%s\t%s\n' "$(guest_path "$(readlink -f "$d")")" "$d"
			fi
		done
	fi
}

emit_tree() {
	local p
	p=$(realpath -s "$1")
	[[ -e $p ]] || die "--files: $1 does not exist"
	if [[ -d $p ]]; then
		while IFS= read -r -d '' f; do
			emit_file "$f"
		done < <(find "$p" -type f -print0)
	else
		emit_file "$p"
	fi
}

# Copy a "guest<TAB>host" list into a staging directory.
stage_list() {
	local stage=$1 g h
	while IFS=$'\t' read -r g h; do
		mkdir -p "$stage$(dirname "$g")"
		cp -L --preserve=mode "$h" "$stage$g"
	done
}

make_cpio() {	# STAGE OUTPUT
	(cd "$1" && find . -mindepth 1 | LC_ALL=C sort | "$busybox" cpio -o -H newc 2>/dev/null) >"$2.$$"
	mv "$2.$$" "$2"
}

# ---- the base initramfs: cached by the hash of everything in it ------------------------------

# Everything of this run lives in its own dir (other runs may share $work).
run=$(mktemp -d "$work/run.XXXXXX")
cleanup() { if ((keep)); then echo "run-in-guest: kept $run" >&2; else rm -rf "$run"; fi; }
trap cleanup EXIT

# The guest's openssl, kcapi tools, libgcc_s and openssl.cnf: the host's, or a foreign guest's
# from its sysroot and build-guest.sh's tools.
if [[ $arch == amd64 ]]; then
	openssl_bin=$(command -v openssl)
	libdir=$(dirname "$(readlink -f "$(ldd /usr/bin/openssl | sed -n 's/.*libcrypto.so.3 => \([^ ]*\).*/\1/p')")")
	gcc_s=$libdir/libgcc_s.so.1
	tool_dir=$(dirname "$(command -v kcapi-enc || echo /usr/bin/kcapi-enc)")
	tools=(kcapi-enc kcapi-dgst kcapi-rng)
	ssl_cnf=/etc/ssl/openssl.cnf
else
	openssl_bin=$sysroot/usr/bin/openssl
	libdir=$sysroot/usr/lib/$triplet
	gcc_s=$kdir/root/lib/$triplet/libgcc_s.so.1
	tool_dir=$kdir/root/usr/bin
	# The host's strace cannot trace arm64 programs: the guest has the target's own.
	tools=(kcapi-enc kcapi-dgst kcapi-rng strace)
	ssl_cnf=$sysroot/etc/ssl/openssl.cnf
	[[ -x $openssl_bin ]] || die "$openssl_bin is missing: not a sysroot from tests/port/sysroot.sh"
fi
base_list=$run/base.list
{
	emit_file "$openssl_bin"
	for f in "$libdir"/engines-3/*.so "$libdir"/ossl-modules/*.so; do
		[[ -e $f ]] && emit_file "$f"
	done
	for t in "${tools[@]}"; do
		[[ -x $tool_dir/$t ]] && emit_file "$tool_dir/$t"
	done
	# glibc dlopens libgcc_s for pthread_cancel and thread exit unwinding; ldd cannot see that.
	[[ -e $gcc_s ]] && emit_file "$gcc_s"
	[[ -e $ssl_cnf ]] && printf '%s\t%s\n' /etc/ssl/openssl.cnf "$ssl_cnf"
} | LC_ALL=C sort -u >"$base_list"

base_key=$(
	{
		echo "kernel $kver"
		sha256sum "$here/guest-init.sh" "$kdir/load-order" "$kdir/cpu-drivers" "$guest_busybox"
		cut -f2 "$base_list" | xargs -r sha256sum
		cat "$base_list"
	} | sha256sum | cut -c1-16
)
base_cpio=$work/base-$base_key.cpio
if [[ ! -s $base_cpio ]]; then
	echo "run-in-guest: building the base initramfs ($base_key)" >&2
	stage=$(mktemp -d "$work/stage.XXXXXX")
	mkdir -p "$stage"/{usr/bin,usr/sbin,usr/lib,usr/lib64,etc,proc,sys,dev,tmp,run,root,out,ct}
	ln -s usr/bin "$stage/bin"
	ln -s usr/sbin "$stage/sbin"
	ln -s usr/lib "$stage/lib"
	ln -s usr/lib64 "$stage/lib64"
	cp "$guest_busybox" "$stage/usr/bin/busybox"
	# (The foreign busybox is static: qemu-user runs it without a sysroot.)
	for applet in $(${qemu_user:-} "$guest_busybox" --list); do
		[[ -e $stage/usr/bin/$applet ]] || ln -s busybox "$stage/usr/bin/$applet"
	done
	# The kernel runs /sbin/modprobe for request_module() (AF_ALG auto-loading).
	for applet in modprobe insmod rmmod lsmod depmod poweroff; do
		ln -s ../bin/busybox "$stage/usr/sbin/$applet"
	done
	stage_list "$stage" <"$base_list"
	mkdir -p "$stage/usr/lib/ssl"
	ln -sf /etc/ssl/openssl.cnf "$stage/usr/lib/ssl/openssl.cnf"
	cp -a "$kdir/lib/modules" "$stage/usr/lib/"
	cp "$kdir/load-order" "$kdir/cpu-drivers" "$stage/ct/"
	cp "$here/guest-init.sh" "$stage/init"
	chmod 755 "$stage/init"
	printf 'root:x:0:0:root:/root:/bin/sh\n' >"$stage/etc/passwd"
	printf 'root:x:0:\n' >"$stage/etc/group"
	make_cpio "$stage" "$base_cpio"
	rm -rf "$stage"
	# Keep only the newest few base images.
	ls -t "$work"/base-*.cpio 2>/dev/null | tail -n +4 | xargs -r rm -f
fi

# ---- this run: the script, the nonce and --files ---------------------------------------------

nonce=$(head -c12 /dev/urandom | od -An -tx1 | tr -d ' \n')
stage=$run/stage
mkdir -p "$stage/ct"
printf '%s\n' "$script" >"$stage/ct/script.sh"
echo "$nonce" >"$stage/ct/nonce"
if ((${#files[@]})); then
	for f in "${files[@]}"; do
		emit_tree "$f"
	done | LC_ALL=C sort -u | stage_list "$stage"
fi
make_cpio "$stage" "$run/extra.cpio"
# Linux unpacks concatenated newc archives in order, so the per-run part rides on the cached base.
cat "$base_cpio" "$run/extra.cpio" >"$run/initrd.cpio"

# ---- boot -------------------------------------------------------------------------------------

# The guest CPU always has the AES instructions (TCG emulates AES-NI, and ARMv8's AES and PMULL):
# "--no-aesni" / "--no-ce" means no driver that uses them.
case $arch in
amd64)
	machine=(-machine pc -cpu max -serial "file:$run/console.log" -serial "file:$run/data.log")
	console=ttyS0 data=ttyS1
	;;
arm64)
	# pauth-impdef: TCG's architected pointer authentication (QARMA) is slow; the
	# implementation-defined one is what qemu recommends for speed, and nothing here tests PAC.
	machine=(-machine virt -cpu max,pauth-impdef=on -serial "file:$run/console.log"
		-device virtio-serial-device -chardev "file,id=ctdata,path=$run/data.log"
		-device virtserialport,chardev=ctdata,name=ct.data)
	console=ttyAMA0 data=ct.data
	;;
esac
# Without them, the kernel itself refuses them too: its crypto self-tests request_module() drivers
# by alias (arm64's aes-ce-blk for cbc(aes)) before /init could delete the files.
blacklist=
if ((cpu_aes == 0)); then
	blacklist="module_blacklist=$(paste -sd, "$kdir/cpu-drivers")"
fi
host_timeout=$((timeout_s + 90))
set +e
timeout --kill-after=10 "$host_timeout" "$qemu" \
	-accel tcg "${machine[@]}" -m 1024 -smp "$smp" \
	-nodefaults -no-user-config -display none -no-reboot \
	-kernel "$kdir/vmlinuz" -initrd "$run/initrd.cpio" \
	-append "console=$console quiet loglevel=3 panic=-1 rdinit=/init ct.data=$data ct.cpu_aes=$cpu_aes ct.tls=$tls ct.timeout=$timeout_s $blacklist ${CT_VM_APPEND:-}" \
	>"$run/qemu.log" 2>&1
qemu_rc=$?
set -e

console_tail() {
	echo "---- last lines of the guest console ($run/console.log) ----" >&2
	tail -n 40 "$run/console.log" >&2 2>/dev/null || true
	if [[ -s $run/qemu.log ]]; then
		echo "---- qemu ----" >&2
		tail -n 20 "$run/qemu.log" >&2
	fi
	echo "----" >&2
}

if [[ ${CT_VM_VERBOSE:-0} == 1 ]]; then
	echo "---- guest console ----" >&2
	cat "$run/console.log" >&2
fi

# The data channel: sections between "==CT-<nonce>-NAME==" lines, each base64.
section() {
	awk -v begin="==CT-$nonce-$1==" -v prefix="==CT-$nonce-" '
		$0 == begin { on = 1; next }
		index($0, prefix) == 1 { on = 0 }
		on { print }' "$run/data.log" | tr -d '\r'
}
status_line=$(grep -a "^==CT-$nonce-STATUS [0-9]*==" "$run/data.log" 2>/dev/null | head -n1 || true)
if ! grep -aqx "==CT-$nonce-END==" "$run/data.log" 2>/dev/null || [[ -z $status_line ]]; then
	if ((qemu_rc == 124 || qemu_rc == 137)); then
		echo "run-in-guest: FAILED: the guest did not finish within ${host_timeout}s" >&2
	else
		echo "run-in-guest: FAILED: the guest did not report results (qemu exit $qemu_rc):" \
			"it did not boot, or crashed" >&2
	fi
	keep=1
	console_tail
	exit 1
fi
rc=${status_line#==CT-$nonce-STATUS }
rc=${rc%==}

section STDOUT | base64 -d
section STDERR | base64 -d >&2
if [[ -n $out_dir ]]; then
	mkdir -p "$out_dir"
	section OUT | base64 -d | tar -xz -C "$out_dir" --no-same-owner
fi
if ((rc == 137)); then
	echo "run-in-guest: FAILED: the guest script was killed after ${timeout_s}s" >&2
	console_tail
	exit 124
fi
exit "$rc"
