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

/* Known constants found in a file: the vaddrs of their first RP_CONST_SITES copies (0: no
 * more). A table's bytes may also stand in code as immediates (unrolled SHA-256 in C): the
 * copy the code addresses may be a later one. */
#define RP_CONST_SITES 8
struct rp_code_consts {
	uint64_t aes_sbox[RP_CONST_SITES], aes_te[RP_CONST_SITES], aes_te_asm[RP_CONST_SITES],
		vpaes[RP_CONST_SITES], k256[RP_CONST_SITES], k512[RP_CONST_SITES], chacha[RP_CONST_SITES],
		k160[RP_CONST_SITES], p256[RP_CONST_SITES], p256_ord[RP_CONST_SITES],
		poly1305[RP_CONST_SITES], keccak[RP_CONST_SITES];
	/* CRC folding's constants (not crypto: they tell a CRC's carry-less multiply from GHASH's) */
	uint64_t crc[RP_CONST_SITES];
	bool any; /* one of them is in the file: a crypto library, or a program with its own */
};

void rp_code_consts_find(const struct rp_codefile *f, struct rp_code_consts *k);

/* Classifies the function [start, end) of f (name: its symbol or NULL; module: the file's base
 * name); false when it is no crypto code we know (cat and impl untouched). */
bool rp_code_classify(const struct rp_codefile *f, const struct rp_code_consts *k, uint64_t start,
		      uint64_t end, const char *name, const char *module, char *cat, size_t ccap, char *impl,
		      size_t icap);

/* The group of a category, as the report adds them up: "bulk" (ciphers and their MACs: AES,
 * ChaCha20, GHASH, Poly1305), "digest" (SHA-*, SHA-3), "public key" (sntrup761, X25519, Curve25519,
 * ECC P-256, ECC, bignum, ML-KEM); "other" for a category of none of these, "" for no category. */
const char *rp_code_group(const char *category);

#endif
