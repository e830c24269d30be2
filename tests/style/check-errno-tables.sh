#!/bin/sh
# SPDX-License-Identifier: MIT
# common/errno_tables.c is what common/gen_errno_tables.py makes of Linux's uapi headers, never a
# hand edit: regenerated here and compared (skipped where the mipsel cross headers are missing).
cd "$(dirname "$0")/../.." || exit 1
inc=/usr/mipsel-linux-gnu/include
if [ ! -f "$inc/asm/errno.h" ]; then
	echo "skip: $inc/asm/errno.h is missing (apt-get install linux-libc-dev-mipsel-cross)"
	exit 77
fi
python3 common/gen_errno_tables.py "$inc" | diff -u common/errno_tables.c - || {
	echo "common/errno_tables.c differs from its generator's output: regenerate it with"
	echo "    python3 common/gen_errno_tables.py > common/errno_tables.c"
	exit 1
}
echo "common/errno_tables.c matches the kernel's headers"
