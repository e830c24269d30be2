/* SPDX-License-Identifier: MIT */
/*
 * elfsyms.h - an ELF file's function symbols, and where its separate debug file is (elfsyms.c):
 * what names a call site's frame (symbols.c) and a profiled function (codefile.c) alike.
 */
#ifndef CT_REPORT_ELFSYMS_H
#define CT_REPORT_ELFSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace_format.h"
#include "elfimage.h"

struct rp_elfsyms {
	struct rp_image im; /* the mapping (a copy of its bounds: the owner unmaps it) */
	struct rp_elf eh;   /* the file's class and byte order, to decode each entry */
	uint64_t off;       /* the table's file offset */
	size_t entsize, nsyms;
	const char *strtab;
	size_t strtab_len;
	bool full; /* from .symtab (every function), not .dynsym (the exported ones) */
};

/* Indexes the image's .symtab, else its .dynsym (all zero when it has neither inside the
 * mapping). The image must stay mapped while s is used. */
void rp_elfsyms_index(struct rp_elfsyms *s, const struct rp_image *im, const struct rp_elf *eh);

/* Symbol i, decoded; false past the end. */
bool rp_elfsyms_get(const struct rp_elfsyms *s, size_t i, Elf64_Sym *y);

/* The defined symbol called name (a function or an object): its address in the file's terms in
 * *value. False when the table has none. */
bool rp_elfsyms_lookup(const struct rp_elfsyms *s, const char *name, uint64_t *value);

/* The function symbol covering vaddr va: its name, *start and *end; NULL when none does. */
const char *rp_elfsyms_function_at(const struct rp_elfsyms *s, uint64_t va, uint64_t *start, uint64_t *end);

/* The debug file of a GNU build id (hex, as traces record it): DIR/.build-id/xx/rest.debug, DIR
 * from CRYPTRACE_DEBUG_DIR, else /usr/lib/debug (gdb's debug-file-directory). False when the id
 * is no hex build id (it comes from a trace: it must not make a path of its own) or the path
 * does not fit in cap. */
bool rp_debugfile_path(struct ct_str build_id, char *out, size_t cap);

#endif
