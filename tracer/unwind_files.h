/* SPDX-License-Identifier: MIT */
/*
 * unwind_files.h - the unwind tables of an ELF file on disk (unwind_files.c), for the unwinder
 * (unwind.h): its .eh_frame_hdr's table, or an index built from .eh_frame where a static
 * executable has no header. The profile's drain thread (profile.c) and the attach's check that
 * a stopped thread is not inside the loader (attach_loader.c) both walk stacks with them.
 */
#ifndef CT_TRACER_UNWIND_FILES_H
#define CT_TRACER_UNWIND_FILES_H

#include <stdbool.h>
#include <stdint.h>

#include "codefile.h"
#include "unwind.h"

/* One file's tables, opened at its first use: zero it, then ct_file_cfi_tables. */
struct ct_file_cfi {
	bool tried, ok;
	struct rp_codefile cf;
	struct ct_unwind_tables t;
	uint8_t *own_table; /* built from .eh_frame when the file has no .eh_frame_hdr */
};

/* The tables of path, opened on the first call (later calls answer the same): NULL when the file
 * has none the unwinder can read (not x86-64, no .eh_frame, not an ELF file). */
const struct ct_unwind_tables *ct_file_cfi_tables(struct ct_file_cfi *c, const char *path);

/* The vaddr of a file offset in an opened file (UINT64_MAX: in no loadable segment). */
uint64_t ct_file_cfi_vaddr(const struct ct_file_cfi *c, uint64_t off);

void ct_file_cfi_close(struct ct_file_cfi *c);

#endif
