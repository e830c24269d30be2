/* SPDX-License-Identifier: MIT */
/*
 * codeclass.c - what a sampled function's machine code does. Debian's libcrypto, libgnutls and
 * libgcrypt are stripped of their internal names (the nearest exported name would lie), so a
 * function is classified by its code first:
 *
 *  - its instructions, matched by their encodings (no disassembler: the byte sequences below do
 *    not occur by chance more than once in a function of ordinary code, and a class needs two):
 *    AESENC/AESDEC and their VEX/EVEX forms (the vector length says AES-NI, VAES-256 or -512),
 *    PCLMULQDQ/VPCLMULQDQ, the SHA-NI rounds;
 *  - the constants it addresses (RIP-relative): the AES S-box or T-tables (table AES, no AES-NI),
 *    vpaes's constants (SSSE3 AES: OpenSSL's, GnuTLS's and libgcrypt's), the SHA-256 and SHA-512
 *    round constants, ChaCha20's "expand 32-byte k";
 *
 * and by its symbol (profile_symbols.def) where no instruction says what it is: a constant
 * addressed is weaker evidence than the function's own name.
 */
#include "codeclass.h"

#include <stdio.h>
#include <string.h>

/* The vaddr of the first occurrence of sig in the file's loaded bytes, or 0. */
static uint64_t find_const(const struct rp_codefile *e, const uint8_t *sig, size_t n)
{
	const uint8_t *p = e->im.p, *end = p + e->im.len;
	while ((p = memmem(p, (size_t)(end - p), sig, n)) != NULL) {
		uint64_t va = rp_codefile_off_to_vaddr(e, (uint64_t)(p - e->im.p));
		if (va != UINT64_MAX)
			return va ? va : 1;
		p++;
	}
	return 0;
}

void rp_code_consts_find(const struct rp_codefile *f, struct rp_code_consts *k)
{
	static const uint8_t sbox[] = { 0x63, 0x7c, 0x77, 0x7b, 0xf2, 0x6b, 0x6f, 0xc5,
					0x30, 0x01, 0x67, 0x2b, 0xfe, 0xd7, 0xab, 0x76 };
	/* Te0 as 32-bit words, little-endian, as C tables and OpenSSL's aes-x86_64 lay it out */
	static const uint8_t te0[] = { 0xa5, 0x63, 0x63, 0xc6, 0x84, 0x7c, 0x7c, 0xf8 };
	static const uint8_t te0_asm[] = { 0xc6, 0x63, 0x63, 0xa5, 0xc6, 0x63, 0x63, 0xa5 };
	/* vpaes: .Lk_mc_forward (0x0407060500030201, 0x0C0F0E0D080B0A09) */
	static const uint8_t vpaes[] = { 0x01, 0x02, 0x03, 0x00, 0x05, 0x06, 0x07, 0x04,
					 0x09, 0x0a, 0x0b, 0x08, 0x0d, 0x0e, 0x0f, 0x0c };
	/* SHA-256 K[0..3] and SHA-512 K[0] as little-endian words */
	static const uint8_t k256[] = { 0x98, 0x2f, 0x8a, 0x42, 0x91, 0x44, 0x37, 0x71,
					0xcf, 0xfb, 0xc0, 0xb5, 0xa5, 0xdb, 0xb5, 0xe9 };
	static const uint8_t k512[] = { 0x22, 0xae, 0x28, 0xd7, 0x98, 0x2f, 0x8a, 0x42 };
	static const char chacha[] = "expand 32-byte k";
	k->aes_sbox = find_const(f, sbox, sizeof(sbox));
	k->aes_te = find_const(f, te0, sizeof(te0));
	k->aes_te_asm = find_const(f, te0_asm, sizeof(te0_asm));
	k->vpaes = find_const(f, vpaes, sizeof(vpaes));
	k->k256 = find_const(f, k256, sizeof(k256));
	k->k512 = find_const(f, k512, sizeof(k512));
	k->chacha = find_const(f, (const uint8_t *)chacha, 16);
}

/* What a function's code does, from its bytes [p, p + n) at vaddr va. */
struct code_class {
	unsigned aes_legacy, aes_vex128, aes_vex256, aes_evex512, clmul, vclmul, sha256ni, sha1ni, pshufb;
	unsigned ref_tables, ref_vpaes, ref_k256, ref_k512, ref_chacha;
};

static bool refs(uint64_t target, uint64_t table, uint64_t len)
{
	return table && target - table < len;
}

static void scan(const struct rp_code_consts *k, const uint8_t *p, size_t n, uint64_t va,
		 struct code_class *c)
{
	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i + 4 < n; i++) {
		uint8_t b0 = p[i], b1 = p[i + 1], b2 = p[i + 2], b3 = p[i + 3];
		/* legacy SSE, 66 [REX] 0F ..: 0F 38 DB..DF (AESIMC, AESENC[LAST], AESDEC[LAST]),
		 * 0F 3A DF, 0F 3A 44 (PCLMULQDQ), 0F 38 00 (PSHUFB) */
		if (b0 == 0x66) {
			size_t j = i + 1 + (b1 >= 0x40 && b1 <= 0x4f);
			if (j + 2 < n && p[j] == 0x0f) {
				uint8_t m = p[j + 1], op = p[j + 2];
				if (m == 0x38 && op >= 0xdb && op <= 0xdf)
					c->aes_legacy++;
				if (m == 0x38 && op == 0x00) /* vpaes's S-box lookups */
					c->pshufb++;
				if (m == 0x3a && op == 0xdf)
					c->aes_legacy++;
				if (m == 0x3a && op == 0x44)
					c->clmul++;
			}
		}
		/* SHA-NI (no prefix): 0F 38 CB/CC/CD (SHA-256), 0F 38 C8/C9/CA and 0F 3A CC (SHA-1) */
		if (b0 == 0x0f && b1 == 0x38 && b2 >= 0xcb && b2 <= 0xcd && (!i || p[i - 1] != 0x66))
			c->sha256ni++;
		if (b0 == 0x0f && ((b1 == 0x38 && b2 >= 0xc8 && b2 <= 0xca) || (b1 == 0x3a && b2 == 0xcc)) &&
		    (!i || p[i - 1] != 0x66))
			c->sha1ni++;
		/* VEX3: C4 [map] [W vvvv L pp] op: map 0F38 (AES) or 0F3A (PCLMUL), pp 66 */
		if (b0 == 0xc4 && (b2 & 0x03) == 0x01) {
			bool wide = b2 & 0x04;
			if ((b1 & 0x1f) == 0x02 && b3 >= 0xdc && b3 <= 0xdf)
				wide ? c->aes_vex256++ : c->aes_vex128++;
			if ((b1 & 0x1f) == 0x03 && b3 == 0x44)
				wide ? c->vclmul++ : c->clmul++;
		}
		/* EVEX: 62 P0 P1 P2 op, P0's map in its low 3 bits, P1 = W vvvv 1 pp with pp 66,
		 * vector length in P2 bits 6:5 */
		if (b0 == 0x62 && i + 5 < n && (b2 & 0x07) == 0x05) {
			uint8_t op = p[i + 4];
			unsigned ll = (b3 >> 5) & 3;
			if ((b1 & 0x07) == 0x02 && op >= 0xdc && op <= 0xdf)
				ll == 2 ? c->aes_evex512++ : ll == 1 ? c->aes_vex256++ : c->aes_vex128++;
			if ((b1 & 0x07) == 0x03 && op == 0x44)
				ll ? c->vclmul++ : c->clmul++;
		}
		/* a RIP-relative disp32 ending here: the address it names */
		uint64_t target = va + i + 4 + (int64_t)rp_le32s(p + i);
		c->ref_tables += refs(target, k->aes_sbox, 256) || refs(target, k->aes_te, 4096) ||
				 refs(target, k->aes_te_asm, 8192);
		c->ref_vpaes += refs(target, k->vpaes, 0x180);
		c->ref_k256 += refs(target, k->k256, 256);
		c->ref_k512 += refs(target, k->k512, 640);
		c->ref_chacha += refs(target, k->chacha, 64);
	}
}

/* The category and implementation of a function's code; false when it is none we know. */
static bool classify(const struct code_class *c, char *cat, size_t ccap, char *impl, size_t icap)
{
	unsigned aes = c->aes_legacy + c->aes_vex128 + c->aes_vex256 + c->aes_evex512;
	const char *clmul = c->vclmul >= 2 ? " + VPCLMULQDQ" : c->clmul >= 2 ? " + PCLMULQDQ" : "";
	if (aes >= 2) {
		const char *lvl = c->aes_evex512 >= 2  ? "VAES-512"
				  : c->aes_vex256 >= 2 ? "VAES-256"
				  : c->aes_vex128 >= 2 ? "AES-NI (AVX)"
						       : "AES-NI";
		snprintf(cat, ccap, "AES");
		snprintf(impl, icap, "%s%s", lvl, clmul);
		return true;
	}
	/* vpaes: its constants, looked up by byte shuffles (a byte-swap mask alone is not it) */
	if (c->ref_vpaes >= 1 && c->pshufb >= 8) {
		snprintf(cat, ccap, "AES");
		snprintf(impl, icap, "vpaes (SSSE3, no AES-NI)");
		return true;
	}
	if (c->ref_tables >= 2) {
		snprintf(cat, ccap, "AES");
		snprintf(impl, icap, "tables (no AES-NI)");
		return true;
	}
	if (c->clmul + c->vclmul >= 2) {
		snprintf(cat, ccap, "GHASH");
		snprintf(impl, icap, "%s", c->vclmul >= 2 ? "VPCLMULQDQ" : "PCLMULQDQ");
		return true;
	}
	if (c->sha256ni >= 2 || c->ref_k256) {
		snprintf(cat, ccap, "SHA-256");
		snprintf(impl, icap, "%s", c->sha256ni >= 2 ? "SHA-NI" : "no SHA-NI");
		return true;
	}
	if (c->ref_k512) {
		snprintf(cat, ccap, "SHA-512");
		snprintf(impl, icap, "generic or SIMD");
		return true;
	}
	if (c->sha1ni >= 2) {
		snprintf(cat, ccap, "SHA-1");
		snprintf(impl, icap, "SHA-NI");
		return true;
	}
	if (c->ref_chacha) {
		snprintf(cat, ccap, "ChaCha20");
		snprintf(impl, icap, "%s", "");
		return true;
	}
	return false;
}

/* A function named by its symbol (profile_symbols.def) where its instructions do not say what it
 * is. Go's standard library carries its copy of golang.org/x/crypto under "vendor/". */
static bool classify_by_name(const char *module, const char *name, char *cat, size_t ccap, char *impl,
			     size_t icap)
{
	static const struct {
		const char *module, *symbol;
		bool prefix;
		const char *category, *impl;
	} known[] = {
#define PROFILE_SYMBOL(m, s, p, c, i) { m, s, p, c, i },
#include "profile_symbols.def"
#undef PROFILE_SYMBOL
	};
	if (!strncmp(name, "vendor/", 7))
		name += 7;
	for (size_t i = 0; i < sizeof(known) / sizeof(known[0]); i++) {
		size_t n = strlen(known[i].symbol);
		if (strncmp(module, known[i].module, strlen(known[i].module)) ||
		    (known[i].prefix ? strncmp(name, known[i].symbol, n) : strcmp(name, known[i].symbol)))
			continue;
		snprintf(cat, ccap, "%s", known[i].category);
		snprintf(impl, icap, "%s", known[i].impl);
		return true;
	}
	return false;
}

/* The instructions alone say what the code is (AES, carry-less multiply or SHA rounds, twice):
 * a name cannot say better. A constant the code seems to address is weaker evidence than the
 * function's own name from a symbol table or a Go pclntab: in Debian's age, 4 bytes of an
 * ordinary instruction in Go's chacha20Poly1305Seal read as a disp32 that lands inside the
 * SHA-512 round constants (which Go's sha512.blockAMD64 holds as immediates, so they are found
 * in its code). */
static bool instructions_say(const struct code_class *c)
{
	return c->aes_legacy + c->aes_vex128 + c->aes_vex256 + c->aes_evex512 >= 2 ||
	       c->clmul + c->vclmul >= 2 || c->sha256ni >= 2 || c->sha1ni >= 2;
}

bool rp_code_classify(const struct rp_codefile *f, const struct rp_code_consts *k, uint64_t start,
		      uint64_t end, const char *name, const char *module, char *cat, size_t ccap, char *impl,
		      size_t icap)
{
	struct code_class c;
	uint64_t so = rp_codefile_vaddr_to_off(f, start);
	if (so != UINT64_MAX && end > start && rp_image_in(&f->im, so, end - start))
		scan(k, f->im.p + so, end - start, start, &c);
	else
		memset(&c, 0, sizeof(c));
	if (name && !instructions_say(&c) && classify_by_name(module, name, cat, ccap, impl, icap))
		return true;
	return classify(&c, cat, ccap, impl, icap);
}
