# SPDX-License-Identifier: MIT
# Shared by the bench/ shell scripts (sourced, not run).

# bench_find_preload NAME: sets $lib to an absolute libcryptrace.so: the -l argument already in
# $lib, else $CRYPTRACE_LIB, else build/ or any build*/ next to bench/. Exits 77 (skip) when none
# is found, NAME saying which script it was.
bench_find_preload() {
	here=$(cd "$(dirname "$0")" && pwd)
	if [ -z "$lib" ]; then
		for c in "${CRYPTRACE_LIB:-}" "$here/../build/preload/libcryptrace.so" \
			$(ls -d "$here"/../build*/preload/libcryptrace.so 2>/dev/null); do
			if [ -n "$c" ] && [ -f "$c" ]; then lib=$c; break; fi
		done
	fi
	if [ -z "$lib" ] || [ ! -f "$lib" ]; then
		echo "$1: libcryptrace.so not found (build it, or pass -l)" >&2
		exit 77
	fi
	lib=$(cd "$(dirname "$lib")" && pwd)/$(basename "$lib")
}
