/* SPDX-License-Identifier: MIT */
/*
 * codeclass.h - the category ("AES", "SHA-256", ...) and implementation ("VAES-512", "tables (no
 * AES-NI)", ...) of a function's machine code (codeclass.c).
 */
#ifndef CT_REPORT_CODECLASS_H
#define CT_REPORT_CODECLASS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codefile.h"

/* Known constants found in a file (their vaddr; 0: not in it). */
struct rp_code_consts {
	uint64_t aes_sbox, aes_te, aes_te_asm, vpaes, k256, k512, chacha;
};

void rp_code_consts_find(const struct rp_codefile *f, struct rp_code_consts *k);

/* Classifies the function [start, end) of f (name: its symbol or NULL; module: the file's base
 * name); false when it is no crypto code we know (cat and impl untouched). */
bool rp_code_classify(const struct rp_codefile *f, const struct rp_code_consts *k, uint64_t start,
		      uint64_t end, const char *name, const char *module, char *cat, size_t ccap, char *impl,
		      size_t icap);

#endif
