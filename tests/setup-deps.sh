#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# setup-deps.sh - the ONE list of Debian packages that building and testing cryptrace needs
# (used by quickstart.sh demo|test and so by .ci/run). Installs only what is missing, so a
# prepared machine (or one without network) goes straight on.
set -euo pipefail

packages=(
	build-essential meson ninja-build pkg-config # the build (g++: a C++ test program; libstdc++: the demangler)
	libssl-dev openssl        # OpenSSL headers (build time only for the preload) and the CLI traced by tests
	libcmocka-dev             # unit tests
	libgcrypt20-dev           # gcrypt.h for the preload's libgcrypt hooks (build time only: never linked) and examples/gcrypt_bench
	python3 file              # integration test scripts; ELF checks in tests
	strace                    # the vm suite counts the afalg engine's syscalls independently
	clang libclang-rt-14-dev  # the reliability suite's libFuzzer target over the trace reader
	clang-format-14           # the style suite: the tree's C files as .clang-format says
	openssh-server openssh-client curl # real programs traced by tests
	chromium                  # the reports suite renders the HTML report headless (skips without it)
	qemu-system-x86 busybox-static kcapi-tools libfuse3-dev # the vm suite: a real kernel with AF_ALG
	# the vm-arm64 suite: an aarch64 guest (ARM CE drivers) running the arm64 cross build (the
	# cross compiler and qemu-user, which lists the arm64 files' libraries, are the port suite's)
	qemu-system-arm
	# the real suite: packaged programs nobody here wrote, each traced for a second or two
	stunnel4 borgbackup openvpn qpdf wget gpg cryptsetup-bin age python3-cryptography
	# the libcrypto suite: BoringSSL's libcrypto.so.0 and headers (under .../android), which a
	# test program of ours links against (tests/libcrypto/boringssl*)
	android-libboringssl android-libboringssl-dev
	android-boringssl         # its bssl-tool: BoringSSL's own speed command, traced by that suite
	golang-go                 # the profile suite builds examples/go_aes (Go's AES-GCM named from its pclntab): ~15 s to install, 0.4 s to build
	gnutls-bin                # the profile suite: gnutls-cli, GnuTLS's AES named by its instructions
	gcc-aarch64-linux-gnu gcc-i686-linux-gnu gcc-mipsel-linux-gnu # the port suite: Debian's cross compilers
	libc6-dev-arm64-cross libc6-dev-i386-cross libc6-dev-mipsel-cross # the cross builds' C library (crt files, headers): a Recommends of each compiler, which --no-install-recommends leaves out
	qemu-user-static          # the port suite (and vm-arm64): the cross builds' tests and the targets' own openssl under qemu-user
	libgnutls28-dev           # the GnuTLS hooks' prototypes (headers only: GnuTLS is found at run time) and examples/gnutls_cipher_bench
	# the port suite's musl build (tests/port/musl-build.sh): musl-gcc and musl's loader, cmake for
	# cmocka and dpkg-source for Debian's openssl and cmocka sources, the kernel's UAPI headers
	musl-tools cmake dpkg-dev linux-libc-dev
	# the metrics suite: promtool and a real Prometheus server and node_exporter scraping
	# cryptrace's metrics; the Prometheus project's Python parsers (strict OpenMetrics)
	prometheus prometheus-node-exporter python3-prometheus-client
	systemd                   # systemd-analyze verify: contrib/systemd's units (the metrics suite)
	nginx-light               # the attach suite: a TLS server started without cryptrace whose workers are attached
	libipsec-mb-dev           # bench/peers.py: Intel ipsec-mb as a peer of the route (bench/ipsecmb_bench.c, its job API)
)

missing=()
for p in "${packages[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing+=("$p")
	fi
done

# apt runs as root, or through sudo when there is one: can_apt says whether either is possible
sudo=()
can_apt=1
if [ "$(id -u)" -ne 0 ]; then
	if command -v sudo >/dev/null; then sudo=(sudo); else can_apt=0; fi
fi
export DEBIAN_FRONTEND=noninteractive
updated=0

if [ ${#missing[@]} -gt 0 ]; then
	if [ $can_apt = 0 ]; then
		echo "setup-deps: run as root to install: ${missing[*]}" >&2
		exit 1
	fi
	echo "setup-deps: installing ${missing[*]}"
	"${sudo[@]}" apt-get update
	updated=1
	"${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
else
	echo "setup-deps: all ${#packages[@]} packages present"
fi

# OpenSSL at the archive's current 3.0.x, as a user's `apt-get upgrade` has it: patch releases
# change behaviour the route must match (3.0.22 refuses EVP_CIPHER_CTX_set_num past the block
# size, 3.0.19 took any). Package lists older than a day are refreshed first. Without network or
# root, the installed OpenSSL is what gets tested, and this says so.
openssl_pkgs=(libssl3 libssl-dev openssl)
if [ $updated = 0 ] && [ -z "$(find /var/lib/apt/lists -maxdepth 1 -name '*Packages*' -mmin -1440 2>/dev/null | head -1)" ]; then
	if [ $can_apt = 1 ]; then
		"${sudo[@]}" apt-get update -qq >/dev/null 2>&1 || echo "setup-deps: apt-get update failed: testing the installed OpenSSL"
	fi
fi
installed=$(dpkg-query -W -f='${Version}' libssl3 2>/dev/null || true)
candidate=$(apt-cache policy libssl3 2>/dev/null | sed -n 's/^ *Candidate: //p')
if [ -n "$candidate" ] && [ "$candidate" != "(none)" ] && [ "$candidate" != "$installed" ]; then
	if [ $can_apt = 1 ]; then
		echo "setup-deps: upgrading OpenSSL $installed -> $candidate"
		"${sudo[@]}" apt-get install -y -qq --only-upgrade "${openssl_pkgs[@]}" >/dev/null ||
			echo "setup-deps: the OpenSSL upgrade failed: testing $installed"
	else
		echo "setup-deps: OpenSSL $installed, the archive has $candidate (run as root to upgrade)"
	fi
fi
echo "setup-deps: $(openssl version 2>/dev/null || echo 'no openssl command')"
