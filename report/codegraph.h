/* SPDX-License-Identifier: MIT */
/*
 * codegraph.h - every function of a file, classified with its neighbours (codegraph.c): by its
 * code and symbol (codeclass.h), else by the tail it shares or the callers it has.
 */
#ifndef CT_REPORT_CODEGRAPH_H
#define CT_REPORT_CODEGRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codeclass.h"

/* A file's functions, classified as asked, each once: by code, then symbol (codeclass.c); a
 * function neither names, or only as "bignum", by the function whose tail it jumps into; else,
 * when it has no exported symbol, by the category every direct caller of it has. */
struct rp_code_file_class;
struct rp_code_fn {
	uint64_t start, end;
	const char *name; /* its symbol, or NULL */
	char category[24], impl[40];
};
/* f stays open while the result lives; NULL when out of memory. */
struct rp_code_file_class *rp_code_file_class_new(const struct rp_codefile *f, const char *module);
/* The function holding va; false when no symbol or FDE covers it. */
bool rp_code_file_class_lookup(struct rp_code_file_class *fc, uint64_t va, struct rp_code_fn *out);
/* Every function with an FDE or a symbol, by index (codescan's walk over a whole file; a
 * function with both comes twice; false for an index that is no function). */
size_t rp_code_file_class_count(const struct rp_code_file_class *fc);
bool rp_code_file_class_at(struct rp_code_file_class *fc, size_t i, struct rp_code_fn *out);
void rp_code_file_class_free(struct rp_code_file_class *fc);

#endif
