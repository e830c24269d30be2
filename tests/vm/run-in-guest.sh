#!/bin/bash
# SPDX-License-Identifier: MIT
# run-in-guest.sh: run one shell script inside a throw-away qemu (TCG) guest with a real kernel.
#
# Usage: tests/vm/run-in-guest.sh [--aesni|--no-aesni] [--tls] [--files PATH...] [--out DIR]
#                                 [--timeout SECONDS] [--smp N] [--cache DIR] [--work DIR]
#                                 [--keep] -- 'guest shell script'
#
# The guest is Debian's cloud kernel (tests/vm/build-guest.sh) with a busybox-static initramfs that
# also holds the host's openssl (with engines-3/afalg.so and ossl-modules), kcapi-tools and their
# shared libraries. --files adds host files or directories at the same absolute paths, with the
# shared libraries of every ELF file among them (found with ldd), so build-tree binaries find
# their libraries and each other exactly as on the host. The script runs as root in /tmp with
# $OUT=/out; whatever it leaves in $OUT is copied back into --out DIR on the host.
#
# The script's stdout and stderr come out on this script's stdout and stderr, byte for byte, and
# its exit status is this script's exit status. A guest that does not boot, or a script that hits
# the timeout, is a loud failure: exit 1 (timeout: 124) with the end of the kernel console.
#
# Environment: QEMU (qemu-system-x86_64 to use), CT_VM_CACHE (kernel cache dir), CT_VM_WORK
# (initramfs cache and run dirs), CT_VM_VERBOSE=1 (print the kernel console after the run).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
qemu=${QEMU:-qemu-system-x86_64}
cache=${CT_VM_CACHE:-$here/cache}
work=${CT_VM_WORK:-${TMPDIR:-/tmp}/cryptrace-vm-$(id -u)}
aesni=1
tls=0
timeout_s=240
smp=1
out_dir=
keep=0
files=()

usage() {
	sed -n 's/^# \{0,1\}//;3,8p' "${BASH_SOURCE[0]}" >&2
	exit 2
}
die() { echo "run-in-guest: $*" >&2; exit 1; }

while (($#)); do
	case $1 in
	--aesni) aesni=1 ;;
	--no-aesni) aesni=0 ;;
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

command -v "$qemu" >/dev/null || die "$qemu not found (Debian: apt-get install qemu-system-x86)"
busybox=$(command -v busybox) || die "busybox not found (Debian: apt-get install busybox-static)"
ldd "$busybox" >/dev/null 2>&1 && die "$busybox is dynamically linked; install busybox-static"

kdir=$("$here/build-guest.sh" "$cache") || die "could not prepare the guest kernel"
kver=$(cat "$kdir/version")
mkdir -p "$work"
work=$(cd "$work" && pwd)

# ---- staging helpers -----------------------------------------------------------------------

is_elf() { [[ -f $1 && $(head -c4 "$1" 2>/dev/null | od -An -c | tr -d ' ') == '177ELF' ]]; }

# The shared libraries (and the dynamic loader) an ELF file needs, as absolute host paths.
elf_deps() {
	ldd "$1" 2>/dev/null | sed -n 's/.*=> \(\/[^ ]*\) (0x.*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) (0x.*/\1/p' || true
}

# Emit "guestpath<TAB>hostpath" for a file and, for ELF files, every library it needs. A path's
# directory is resolved (so /lib/x86_64-linux-gnu lands in /usr/lib/...: the guest keeps Debian's
# merged-/usr symlinks) but its last component is kept, so symlinked names stay reachable.
emit_file() {
	local p=$1 dir
	dir=$(readlink -f "$(dirname "$p")")
	printf '%s\t%s\n' "$dir/$(basename "$p")" "$p"
	if is_elf "$p"; then
		local d
		for d in $(elf_deps "$p"); do
			dir=$(readlink -f "$(dirname "$d")")
			printf '%s\t%s\n' "$dir/$(basename "$d")" "$d"
			# Also the real file behind a versioned symlink, for dlopen by another name.
			# (An if: a non-link last in ldd's list must not make the function fail.)
			if [[ -L $d ]]; then
				printf '%s\t%s\n' "$(readlink -f "$d")" "$d"
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

libdir=$(dirname "$(readlink -f "$(ldd /usr/bin/openssl | sed -n 's/.*libcrypto.so.3 => \([^ ]*\).*/\1/p')")")
base_list=$run/base.list
{
	emit_file "$(command -v openssl)"
	for f in "$libdir"/engines-3/*.so "$libdir"/ossl-modules/*.so; do
		[[ -e $f ]] && emit_file "$f"
	done
	for t in kcapi-enc kcapi-dgst kcapi-rng; do
		t=$(command -v "$t") && emit_file "$t"
	done
	# glibc dlopens libgcc_s for pthread_cancel and thread exit unwinding; ldd cannot see that.
	[[ -e $libdir/libgcc_s.so.1 ]] && emit_file "$libdir/libgcc_s.so.1"
	[[ -e /etc/ssl/openssl.cnf ]] && printf '%s\t%s\n' /etc/ssl/openssl.cnf /etc/ssl/openssl.cnf
} | LC_ALL=C sort -u >"$base_list"

base_key=$(
	{
		echo "kernel $kver"
		sha256sum "$here/guest-init.sh" "$kdir/load-order" "$busybox"
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
	cp "$busybox" "$stage/usr/bin/busybox"
	for applet in $("$busybox" --list); do
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
	cp "$kdir/load-order" "$stage/ct/load-order"
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

# The guest CPU always has AES-NI (TCG emulates it): "--no-aesni" means no aesni-intel driver.
cpu=max
host_timeout=$((timeout_s + 90))
set +e
timeout --kill-after=10 "$host_timeout" "$qemu" \
	-accel tcg -machine pc -cpu "$cpu" -m 1024 -smp "$smp" \
	-nodefaults -no-user-config -display none -no-reboot \
	-kernel "$kdir/vmlinuz" -initrd "$run/initrd.cpio" \
	-append "console=ttyS0 quiet loglevel=3 panic=-1 rdinit=/init ct.aesni=$aesni ct.tls=$tls ct.timeout=$timeout_s ${CT_VM_APPEND:-}" \
	-serial "file:$run/console.log" -serial "file:$run/data.log" \
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
