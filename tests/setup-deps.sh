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
	python3 file              # integration test scripts; ELF checks in tests
	strace                    # the vm suite counts the afalg engine's syscalls independently
	clang libclang-rt-14-dev  # the reliability suite's libFuzzer target over the trace reader
	clang-format-14           # the style suite: the tree's C files as .clang-format says
	openssh-server openssh-client curl # real programs traced by tests
	chromium                  # the reports suite renders the HTML report headless (skips without it)
	qemu-system-x86 busybox-static kcapi-tools libfuse3-dev # the vm suite: a real kernel with AF_ALG
	# the real suite: packaged programs nobody here wrote, each traced for a second or two
	stunnel4 borgbackup openvpn qpdf wget gpg cryptsetup-bin age python3-cryptography
	# the libcrypto suite: BoringSSL's libcrypto.so.0 and headers (under .../android), which a
	# test program of ours links against (tests/libcrypto/boringssl*)
	android-libboringssl android-libboringssl-dev
	android-boringssl         # its bssl-tool: BoringSSL's own speed command, traced by that suite
)

missing=()
for p in "${packages[@]}"; do
	if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
		missing+=("$p")
	fi
done

if [ ${#missing[@]} -eq 0 ]; then
	echo "setup-deps: all ${#packages[@]} packages present"
	exit 0
fi

sudo=()
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null || { echo "setup-deps: run as root to install: ${missing[*]}" >&2; exit 1; }
	sudo=(sudo)
fi
echo "setup-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
"${sudo[@]}" apt-get update
"${sudo[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
