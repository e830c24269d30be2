/* SPDX-License-Identifier: MIT */
/*
 * gopclntab.h - function names and bounds from a Go program's pclntab (gopclntab.c): the table
 * the Go runtime itself reads for its tracebacks, so stripping the ELF symbols leaves it there.
 */
#ifndef CT_REPORT_GOPCLNTAB_H
#define CT_REPORT_GOPCLNTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct rp_gopclntab {
	const uint8_t *p; /* the table's header; NULL: none */
	size_t len;       /* bytes readable from p */
	unsigned go;      /* the layout: 116 (Go 1.16-1.17), 118 (1.18-1.19), 120 (1.20 and later) */
	unsigned ptrsize;
	uint32_t nfunc;
	uint64_t text;      /* 1.18 on: what functions' entry offsets count from */
	uint64_t funcnames; /* offset of the function names from p */
	uint64_t functab;   /* offset of the function table (and the _func records) from p */
	size_t entry_size;  /* one function-table entry: 8 (1.18 on) or 2 pointers */
};

/* Reads the table whose header is at p (len bytes readable from there); false when it is none
 * of the layouts above, or any part of it lies outside the len bytes. */
bool rp_gopclntab_parse(struct rp_gopclntab *t, const uint8_t *p, size_t len);

/* Looks for the table in a file's bytes by its header (a stripped Go program has no section
 * that names it); the first one that parses. */
bool rp_gopclntab_find(struct rp_gopclntab *t, const uint8_t *p, size_t len);

/* [*start, *end) and name of the function holding vaddr va; false when none does. */
bool rp_gopclntab_function_at(const struct rp_gopclntab *t, uint64_t va, uint64_t *start, uint64_t *end,
			      const char **name);

#endif
