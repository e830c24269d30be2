/* SPDX-License-Identifier: MIT */
/*
 * errno_abi.h - which errno numbering a trace records (Linux's generic one, or an architecture's
 * own: MIPS says EAFNOSUPPORT with 124, x86 with 97), and the same error in another numbering, so
 * a trace written on a MIPS router names the right errors on an x86 laptop (errno_abi.c).
 */
#ifndef CT_ERRNO_ABI_H
#define CT_ERRNO_ABI_H

#include <stdbool.h>
#include <stddef.h>

#include "trace_format.h"

enum ct_errno_abi {
	CT_ERRNO_ABI_GENERIC, /* asm-generic: x86, ARM, RISC-V, ... */
	CT_ERRNO_ABI_MIPS,
	/* Linux's other numberings: named, so a trace says which it is, but without a table here */
	CT_ERRNO_ABI_ALPHA,
	CT_ERRNO_ABI_SPARC,
	CT_ERRNO_ABI_PARISC,
	CT_ERRNO_ABI_UNKNOWN, /* a label this build does not know */
};

/* The numbering this build's C library and kernel use (set at compile time). */
enum ct_errno_abi ct_errno_abi_own(void);
/* The header's label: "generic", "mips", ...; "" for CT_ERRNO_ABI_UNKNOWN. */
const char *ct_errno_abi_label(enum ct_errno_abi abi);
/* A header's label as a numbering: "" (a trace written before the label) is generic. */
enum ct_errno_abi ct_errno_abi_parse(struct ct_str label);
/* Whether this build has that numbering's table (generic and MIPS). */
bool ct_errno_abi_has_table(enum ct_errno_abi abi);
/* "EAFNOSUPPORT" for err in that numbering; NULL for 0, an unknown number or a numbering without
 * a table. */
const char *ct_errno_abi_name(enum ct_errno_abi abi, int err);
/* The number of a name in that numbering; 0 when it has none. */
int ct_errno_abi_value(enum ct_errno_abi abi, const char *name);
/* err, recorded in numbering abi, as this build numbers the same error; 0 when there is no
 * counterpart (a name this numbering lacks, or a numbering without a table). */
int ct_errno_to_own(enum ct_errno_abi abi, int err);

/* errno_tables.c, generated from Linux's uapi headers by common/gen_errno_tables.py: errno-base.h's
 * names (the same on every architecture), then each numbering's own */
struct ct_errno_entry {
	int value;
	const char *name;
};
extern const struct ct_errno_entry ct_errno_base[], ct_errno_generic[], ct_errno_mips[];
extern const size_t ct_errno_base_count, ct_errno_generic_count, ct_errno_mips_count;

#endif
