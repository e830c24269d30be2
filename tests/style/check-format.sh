#!/bin/sh
# SPDX-License-Identifier: MIT
# Every C file of the tree is formatted as .clang-format says (docs/hacking.md "Style"). The
# format is pinned to clang-format 14, Debian 12's: another major version lays out some
# constructs differently, so it would report changes nobody made. Fix: `tests/style/format.sh`.
cd "$(dirname "$0")/../.." || exit 1
fmt=$(command -v clang-format-14 || true)
if [ -z "$fmt" ]; then
	echo "SKIP: clang-format-14 is not installed (apt-get install clang-format-14)" >&2
	exit 77
fi
if ! git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	echo "SKIP: not a git checkout, so the list of the tree's C files is unknown" >&2
	exit 77
fi
files=$(git ls-files '*.c' '*.h')
n=$(echo "$files" | wc -l)
if echo "$files" | xargs "$fmt" --dry-run --Werror 2>&1 | head -40 | grep .; then
	echo "FAIL: the files above are not formatted; run tests/style/format.sh and commit" >&2
	exit 1
fi
echo "ok: $n C files formatted as .clang-format says ($($fmt --version | head -1))"
