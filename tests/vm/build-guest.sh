#!/bin/bash
# SPDX-License-Identifier: MIT
# build-guest.sh: fetch Debian's cloud kernel once and extract what the qemu test guest needs.
#
# Usage: tests/vm/build-guest.sh [--arch amd64|arm64] [CACHE_DIR]
#        (default: the host's amd64, or $CT_VM_ARCH; CACHE_DIR: tests/vm/cache, git-ignored)
#
# Result (printed on stdout, one line): CACHE_DIR/kernel/<version>/ holding
#   vmlinuz                         the kernel image
#   lib/modules/<version>/...       the modules the tests need plus their dependencies, at their
#                                   original relative paths, uncompressed, with modules.dep
#                                   (busybox depmod) so `modprobe cuse` works in the guest
#   load-order                      "name relative/path.ko" lines, dependencies first: the order
#                                   the guest's init insmods them in
#   cpu-drivers                     the modules of the CPU's AES instructions (aesni-intel, aes-ce...)
#                                   that a --no-aesni / --no-ce guest leaves out
#   version                         the kernel release string (uname -r in the guest)
#   root/ (arm64)                   the guest's tools that the cross sysroot lacks (kcapi-tools,
#                                   strace, libgcc_s), unpacked from the target's packages
# Idempotent: a kernel already extracted for the version apt resolves (or, offline, the last one
# extracted) is reused without touching the network.
#
# Packages come from the host's apt for amd64, and for arm64 from a private apt state in
# CACHE_DIR/apt-arm64 (tests/port/foreign-apt.sh; the host's dpkg is not touched).
# Environment: CT_VM_KERNEL_PKG overrides the package (default: what linux-image-cloud-<arch>
# depends on, e.g. linux-image-6.1.0-57-cloud-amd64); CT_VM_REFRESH=1 asks apt again at once.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
arch=${CT_VM_ARCH:-amd64}
if [[ ${1:-} == --arch ]]; then
	arch=${2:?--arch wants amd64 or arm64}
	shift 2
fi
cache=${1:-${CT_VM_CACHE:-$here/cache}}
mkdir -p "$cache/kernel"
cache=$(cd "$cache" && pwd)

die() { echo "build-guest: $*" >&2; exit 1; }

# The modules the tests load, by name. Their dependencies come from each .ko's modinfo
# "depends=" (the deb ships no modules.dep). Why each one:
#   af_alg, algif_skcipher, algif_aead    the AF_ALG socket family and its cipher/AEAD types
#   algif_hash, algif_rng                 the rest of AF_ALG (kcapi-dgst / kcapi-rng, afalg probes)
#   ecb, ctr, xts, gcm, ghash-generic,    modes that are modules in these kernels (cbc and
#   seqiv                                 aes-generic are built in)
#   crypto_user                           NETLINK_CRYPTO: libkcapi (kcapi-enc) asks it about ciphers
#   fuse, cuse                            /dev/cuse for the cryptodev CUSE server (issue [cuse])
#   tls                                   kTLS (tests/vm/ktls.sh), loaded only with --tls
common_modules=(af_alg algif_skcipher algif_aead algif_hash algif_rng crypto_user ecb ctr xts gcm
	ghash-generic seqiv fuse cuse tls)
# Per architecture: the CPU's AES drivers (cpu_drivers, left out by --no-aesni / --no-ce) and
# what the machine itself needs.
#   amd64: cryptd, crypto_simd (dependencies), aesni-intel (cbc-aes-aesni, ...), ghash-clmulni-intel
#          (the PCLMULQDQ ghash gcm(aes) uses next to AES-NI). qemu's pc machine has two UARTs.
#   arm64: aes-ce-cipher (the single-block aes-ce), aes-ce-blk (cbc-aes-ce, ctr-aes-ce, xts-aes-ce),
#          aes-neon-blk and aes-neon-bs (the NEON drivers; below CE in priority), ghash-ce
#          (gcm-aes-ce, PMULL), aes-ce-ccm. virt has one PL011 UART (the console): the results go
#          through a virtio-serial port, hence virtio_mmio and virtio_console.
case $arch in
amd64)
	cpu_drivers=(aesni-intel ghash-clmulni-intel)
	machine_modules=(cryptd crypto_simd)
	guest_packages=()
	;;
arm64)
	cpu_drivers=(aes-ce-cipher aes-ce-blk aes-neon-blk aes-neon-bs ghash-ce aes-ce-ccm)
	machine_modules=(virtio_mmio virtio_console)
	# The guest's userland is the cross sysroot (tests/port/sysroot.sh: busybox, openssl); these
	# are the tools the tests run beside it. libgcc_s: glibc dlopens it for pthread_cancel.
	guest_packages=(kcapi-tools libkcapi1 strace libgcc-s1)
	;;
*) die "unknown --arch $arch (amd64 or arm64)" ;;
esac
wanted_modules=("${machine_modules[@]}" "${cpu_drivers[@]}" "${common_modules[@]}")
# The host's architecture keeps the unsuffixed names of the cache (debs/, kernel/current).
sfx=
[[ $arch == amd64 ]] || sfx=-$arch

apt_run() {	# apt-get|apt-cache ARGS...: with the host's apt, or the private state of a foreign arch
	if [[ -z $sfx ]]; then
		"$@"
	else
		"$here/../port/foreign-apt.sh" "$arch" "$cache/apt$sfx" "$@"
	fi
}

resolve_package() {
	if [[ -n ${CT_VM_KERNEL_PKG:-} ]]; then
		echo "$CT_VM_KERNEL_PKG"
		return
	fi
	apt_run apt-cache depends "linux-image-cloud-$arch" 2>/dev/null |
		sed -n "s/^ *Depends: \\(linux-image-[0-9].*-cloud-$arch\\)\$/\\1/p" | head -n1
}

# apt-cache takes over a second: a resolution younger than 6 hours is reused (CT_VM_REFRESH=1
# forces a new one), which keeps a suite of short guest runs from asking apt every time.
stamp=$cache/kernel/resolved$sfx
if [[ -z ${CT_VM_KERNEL_PKG:-} && ${CT_VM_REFRESH:-0} != 1 && -s $stamp &&
	-n $(find "$stamp" -mmin -360 2>/dev/null) ]]; then
	pkg=$(cat "$stamp")
else
	pkg=$(resolve_package || true)
	# A fresh container often has no apt lists at all: as root, fetch them once and ask again.
	if [[ -z $pkg && -z $sfx && ! -e $cache/kernel/current/vmlinuz && $(id -u) == 0 ]]; then
		echo "build-guest: no apt index for linux-image-cloud-amd64; running apt-get update" >&2
		apt-get update -qq >&2 || true
		pkg=$(resolve_package || true)
	fi
	[[ -n $pkg && -z ${CT_VM_KERNEL_PKG:-} ]] && echo "$pkg" >"$stamp"
fi
if [[ -z $pkg ]]; then
	# Offline or no apt index: reuse the last extracted kernel if there is one.
	if [[ -e $cache/kernel/current$sfx/vmlinuz ]]; then
		readlink -f "$cache/kernel/current$sfx"
		exit 0
	fi
	die "cannot resolve linux-image-cloud-$arch (run apt-get update?) and no cached kernel in $cache"
fi
version=${pkg#linux-image-}
kdir=$cache/kernel/$version

# A kernel extracted with a different module list is extracted again (from the kept .deb).
wanted_stamp="${wanted_modules[*]} | ${guest_packages[*]}"
kernel_ready() {
	[[ -e $kdir/vmlinuz && -e $kdir/load-order && -e $kdir/version &&
		$(cat "$kdir/wanted" 2>/dev/null) == "$wanted_stamp" ]]
}
if kernel_ready; then
	ln -sfn "$version" "$cache/kernel/current$sfx"
	echo "$kdir"
	exit 0
fi

# Several build dirs may run the suite at once: one extraction at a time, and whoever waited
# finds the kernel ready.
exec 9>"$cache/.lock"
flock 9
if kernel_ready; then
	ln -sfn "$version" "$cache/kernel/current$sfx"
	echo "$kdir"
	exit 0
fi

work=$(mktemp -d "$cache/.extract.XXXXXX")
trap 'rm -rf "$work"' EXIT

debs=$cache/debs$sfx
mkdir -p "$debs"
fetch() {	# PACKAGE: its .deb, downloaded once into $debs
	local deb
	deb=$(ls "$debs/${1}_"*.deb 2>/dev/null | head -n1 || true)
	if [[ -z $deb ]]; then
		echo "build-guest: fetching $1 ($arch)" >&2
		# apt's _apt user may not be able to write here; the download then runs as the caller.
		(cd "$work" && apt_run apt-get download "$1" 2>&1 |
			grep -v '^W: Download is performed unsandboxed' >&2) || true
		deb=$(ls "$work/${1}_"*.deb 2>/dev/null | head -n1 || true)
		[[ -n $deb ]] || die "apt-get download $1 ($arch) failed"
		mv "$deb" "$debs/"
		deb=$debs/$(basename "$deb")
	fi
	echo "$deb"
}
deb=$(fetch "$pkg")
tool_debs=()
for p in "${guest_packages[@]}"; do
	tool_debs+=("$(fetch "$p")")
done
# Old kernels' and tools' packages are not needed any more.
keep=("$deb" "${tool_debs[@]}")
for f in "$debs"/*.deb; do
	[[ " ${keep[*]} " == *" $f "* ]] || rm -f "$f"
done
dpkg-deb -x "$deb" "$work/x"

mod_root="$work/x/lib/modules/$version"
[[ -d $mod_root ]] || mod_root=$(ls -d "$work"/x/lib/modules/* | head -n1)
release=$(basename "$mod_root")
vmlinuz=$(ls "$work"/x/boot/vmlinuz-* | head -n1)
[[ -f $vmlinuz ]] || die "no vmlinuz in $deb"

# Decompress modules the guest's busybox insmod might not read (.ko.xz / .ko.zst / .ko.gz).
while IFS= read -r -d '' f; do
	case $f in
	*.ko.xz) xz -dc "$f" >"${f%.xz}" ;;
	*.ko.zst) zstd -qdc "$f" >"${f%.zst}" ;;
	*.ko.gz) gzip -dc "$f" >"${f%.gz}" ;;
	esac
	rm -f "$f"
done < <(find "$mod_root" \( -name '*.ko.xz' -o -name '*.ko.zst' -o -name '*.ko.gz' \) -print0)

# name -> relative path; module names treat - and _ alike.
declare -A path_of
while IFS= read -r rel; do
	name=$(basename "$rel" .ko)
	path_of[${name//-/_}]=$rel
done < <(cd "$mod_root" && find . -name '*.ko' | sed 's|^\./||')

modinfo_field() {	# FIELD FILE: the values of one .modinfo field, one per line
	local tmp=$work/modinfo
	# -I: the host's objcopy reads any 64-bit little-endian module (arm64's too) this way.
	objcopy -I elf64-little -O binary -j .modinfo "$1" "$tmp" 2>/dev/null || { : >"$tmp"; }
	tr '\0' '\n' <"$tmp" | sed -n "s/^$2=//p"
}

declare -A visited
order=()
visit() {	# depth-first: dependencies are appended before the module itself
	local key=${1//-/_}
	[[ -n ${visited[$key]:-} ]] && return
	visited[$key]=1
	local rel=${path_of[$key]:-}
	if [[ -z $rel ]]; then
		if grep -q "/${1}.ko\$\|/${key}.ko\$\|/${1//_/-}.ko\$" "$mod_root/modules.builtin" 2>/dev/null; then
			return	# built into this kernel: nothing to load
		fi
		die "module $1 is neither in $pkg nor built in"
	fi
	local deps dep
	deps=$(modinfo_field "$mod_root/$rel" depends | tr ',' ' ')
	# softdep "pre:" modules (xts wants ecb) are loaded first as well.
	deps+=" $(modinfo_field "$mod_root/$rel" softdep | sed -n 's/^pre: *//p')"
	for dep in $deps; do
		visit "$dep"
	done
	order+=("$key $rel")
}
for m in "${wanted_modules[@]}"; do
	visit "$m"
done

stage=$work/out
mkdir -p "$stage/lib/modules/$release"
cp "$vmlinuz" "$stage/vmlinuz"
for line in "${order[@]}"; do
	rel=${line#* }
	mkdir -p "$stage/lib/modules/$release/$(dirname "$rel")"
	cp "$mod_root/$rel" "$stage/lib/modules/$release/$rel"
done
cp "$mod_root"/modules.builtin* "$mod_root/modules.order" "$stage/lib/modules/$release/" 2>/dev/null || true
# modules.dep + modules.alias for the guest's busybox modprobe (and the kernel's request_module).
busybox depmod -b "$stage" "$release" >&2 || die "busybox depmod failed"
printf '%s\n' "${order[@]}" >"$stage/load-order"
printf '%s\n' "${cpu_drivers[@]//-/_}" >"$stage/cpu-drivers"
for d in "${tool_debs[@]}"; do
	dpkg-deb -x "$d" "$stage/root"
done
echo "$release" >"$stage/version"
echo "$wanted_stamp" >"$stage/wanted"

rm -rf "$kdir"
mv "$stage" "$kdir"
ln -sfn "$version" "$cache/kernel/current$sfx"
echo "build-guest: kernel $release with ${#order[@]} modules in $kdir" >&2
echo "$kdir"
