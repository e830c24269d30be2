#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# quickstart.sh - the README's two commands on a fresh Debian 12 machine:
#   ./quickstart.sh demo   install what is missing, build, trace `openssl speed -evp aes-128-cbc`
#                          and print the report
#   ./quickstart.sh test   install what is missing, build, run every test suite
set -euo pipefail
cd "$(dirname "$0")"

usage() { echo "usage: $0 demo|test" >&2; exit 2; }
[ $# -eq 1 ] || usage
case $1 in demo | test) ;; *) usage ;; esac

tests/setup-deps.sh
[ -f build/build.ninja ] || meson setup build
ninja -C build

case $1 in
demo)
	out=$(mktemp -d /tmp/cryptrace-demo.XXXXXX)
	build/tracer/cryptrace run -o "$out" -- openssl speed -seconds 1 -evp aes-128-cbc
	echo
	build/tracer/cryptrace report "$out"
	echo
	echo "traces: $out  (JSON: build/tracer/cryptrace report --json $out)"
	;;
test)
	meson test -C build --print-errorlogs
	;;
esac
