/* SPDX-License-Identifier: MIT */
/*
 * loader.c - a process the dynamic loader was started in as a command: `ld-linux-x86-64.so.2
 * --library-path DIR PROG ARGS` (how a program built for another release's glibc runs here, e.g.
 * OpenSSL 3.5 from Debian 13). The loader honours LD_PRELOAD, so such a process is traced, but
 * /proc/self/exe is the loader and /proc/self/cmdline starts with the loader and its options.
 * The trace and the call sites describe PROG, as they describe a program whose loader the kernel
 * started: its file, and argv from PROG on (what its main() receives).
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>

#include "internal.h"

static char program[PATH_MAX];
static const char *execfn;
static bool known;

/* The kernel loaded no interpreter (AT_BASE is 0, which it never is in a dynamic program the
 * kernel started: a static program cannot have our preload), and the loader has set AT_EXECFN
 * to PROG as given on its command line. */
const char *ct_loader_program(void)
{
	if (known)
		return program[0] ? program : NULL;
	known = true;
	const char *fn = (const char *)getauxval(AT_EXECFN);
	if (getauxval(AT_BASE) == 0 && fn && realpath(fn, program))
		execfn = fn;
	else
		program[0] = 0;
	return program[0] ? program : NULL;
}

size_t ct_loader_argv_start(const char *cmdline, size_t len)
{
	if (!ct_loader_program())
		return 0;
	/* PROG is the first argument that is the path the loader was given */
	for (size_t off = 0; off < len; off += strnlen(cmdline + off, len - off) + 1)
		if (!strcmp(cmdline + off, execfn))
			return off;
	return 0;
}
