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

# bench_cpu_line [BUILD]: the CPU this ran on, for a bench table's header: its model name, CPUID
# family and model, and (with BUILD's aesni_bench) the level of our AES code on it.
bench_cpu_line() {
	model=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | sed 's/^ //')
	fam=$(grep -m1 '^cpu family' /proc/cpuinfo | cut -d: -f2 | tr -d ' ')
	mod=$(grep -m1 '^model[[:space:]]*:' /proc/cpuinfo | cut -d: -f2 | tr -d ' ')
	level=
	if [ -n "${1:-}" ] && [ -x "$1/aesni/aesni_bench" ]; then
		level=$("$1/aesni/aesni_bench" --limits 2>/dev/null | sed -n 's/.*our code level: //p' | head -1)
	fi
	echo "CPU: $model (family $fam model $mod, $(nproc) CPUs)${level:+; code level: $level}"
}

# bench_build_prog SCRIPT PROG: for a script that runs BUILD/bench/PROG beside the build's
# preload: $build (default build/ next to bench/, $here being bench/), $prog and $lib, both
# required (exit 77: build first); $old, when set, must name a library (exit 2); $out a temporary
# directory removed on exit. SCRIPT names the script in its messages.
bench_build_prog() {
	build=${build:-$here/../build}
	prog=$build/bench/$2
	lib=$build/preload/libcryptrace.so
	[ -x "$prog" ] && [ -f "$lib" ] || { echo "$1: build first ($prog, $lib)" >&2; exit 77; }
	[ -z "${old:-}" ] || [ -f "$old" ] || { echo "$1: -o $old: no such library" >&2; exit 2; }
	out=$(mktemp -d)
	trap 'rm -rf "$out"' EXIT INT TERM
}

# bench_median FILE: the median of FILE's numbers, one a line (the upper one of an even count).
bench_median() { sort -g "$1" | awk '{v[NR] = $1} END {print v[int((NR + 1) / 2)]}'; }
