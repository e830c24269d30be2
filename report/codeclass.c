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
 *    round constants, ChaCha20's "expand 32-byte k", SHA-1's round-constant table, P-256's prime
 *    and order (OpenSSL's ecp_nistz256);
 *  - the immediates of its arithmetic: sntrup761's q = 4591 beside (q - 1) / 2 or its Barrett
 *    constant, the Montgomery ladder's a24 (121665, 121666) of X25519, Curve25519's 2^51 - 1
 *    limb mask, Poly1305's clamp masks, SHA-1's four round constants;
 *  - big-number arithmetic by its multiply-and-carry density (MULX with ADCX/ADOX, AVX-512
 *    IFMA's VPMADD52, or 64-bit MUL with ADC), after every named class;
 *
 * and by its symbol (profile_symbols.def) where no instruction says what it is, before the
 * constants and immediates: a constant addressed is weaker evidence than the function's own
 * name. What a function's neighbours say of it (its callers, the tail it shares) is codegraph.c's.
 */
#include "codeclass.h"

#include <stdio.h>
#include <string.h>

/* The vaddrs of the first RP_CONST_SITES occurrences of sig in the file's loaded bytes. */
static void find_const(const struct rp_codefile *e, const uint8_t *sig, size_t n, uint64_t *at)
{
	const uint8_t *p = e->im.p, *end = p + e->im.len;
	unsigned k = 0;
	memset(at, 0, RP_CONST_SITES * sizeof(*at));
	while (k < RP_CONST_SITES && (p = memmem(p, (size_t)(end - p), sig, n)) != NULL) {
		uint64_t va = rp_codefile_off_to_vaddr(e, (uint64_t)(p - e->im.p));
		if (va != UINT64_MAX)
			at[k++] = va ? va : 1;
		p++;
	}
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
	/* SHA-256 K[0..3] and SHA-512 K[0..1] as little-endian words (K[0] alone, 8 bytes, is also in
	 * libm's float128 tables) */
	static const uint8_t k256[] = { 0x98, 0x2f, 0x8a, 0x42, 0x91, 0x44, 0x37, 0x71,
					0xcf, 0xfb, 0xc0, 0xb5, 0xa5, 0xdb, 0xb5, 0xe9 };
	static const uint8_t k512[] = { 0x22, 0xae, 0x28, 0xd7, 0x98, 0x2f, 0x8a, 0x42,
					0xcd, 0x65, 0xef, 0x23, 0x91, 0x44, 0x37, 0x71 };
	static const char chacha[] = "expand 32-byte k";
	/* SHA-1's first round constant four times over: the SIMD code's K_XX_XX table */
	static const uint8_t k160[] = { 0x99, 0x79, 0x82, 0x5a, 0x99, 0x79, 0x82, 0x5a,
					0x99, 0x79, 0x82, 0x5a, 0x99, 0x79, 0x82, 0x5a };
	/* P-256's prime p = 2^256 - 2^224 + 2^192 + 2^96 - 1 as four little-endian 64-bit limbs,
	 * and its order n's low limbs: OpenSSL's ecp_nistz256 .Lpoly and .Lord */
	static const uint8_t p256[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
					0xff, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
					0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0xff, 0xff, 0xff, 0xff };
	static const uint8_t p256_ord[] = { 0x51, 0x25, 0x63, 0xfc, 0xc2, 0xca, 0xb9, 0xf3,
					    0x84, 0x9e, 0x17, 0xa7, 0xad, 0xfa, 0xe6, 0xbc };
	/* Keccak-f[1600]'s first three round constants (SHA-3, SHAKE: ML-KEM's hashing) */
	static const uint8_t iotas[] = { 1, 0, 0, 0, 0,    0,    0, 0, 0x82, 0x80, 0, 0,
					 0, 0, 0, 0, 0x8a, 0x80, 0, 0, 0,    0,    0, 0x80 };
	/* OpenSSL's poly1305-x86_64 SIMD constants: .L2_44_mask (2^44 - 1 twice, 2^42 - 1), 0x1b0
	 * bytes into the table (.Lmask24 ... .Lx_mask42) */
	static const uint8_t mask44[] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0x0f, 0, 0,
					  0xff, 0xff, 0xff, 0xff, 0xff, 0x0f, 0, 0,
					  0xff, 0xff, 0xff, 0xff, 0xff, 0x03, 0, 0 };
	find_const(f, sbox, sizeof(sbox), k->aes_sbox);
	find_const(f, te0, sizeof(te0), k->aes_te);
	find_const(f, te0_asm, sizeof(te0_asm), k->aes_te_asm);
	find_const(f, vpaes, sizeof(vpaes), k->vpaes);
	find_const(f, k256, sizeof(k256), k->k256);
	find_const(f, k512, sizeof(k512), k->k512);
	find_const(f, (const uint8_t *)chacha, 16, k->chacha);
	find_const(f, k160, sizeof(k160), k->k160);
	find_const(f, p256, sizeof(p256), k->p256);
	find_const(f, p256_ord, sizeof(p256_ord), k->p256_ord);
	find_const(f, mask44, sizeof(mask44), k->poly1305);
	find_const(f, iotas, sizeof(iotas), k->keccak);
	/* CRC's carry-less multiply looks like GHASH's; its folding constants (64-bit, little-endian)
	 * tell it apart: CRC32's reflected polynomial (and Chromium's crc_fold variant of it), its
	 * first fold constant, CRC32C's polynomial, CRC64's (ECMA, reflected and not: xz),
	 * coreutils cksum's 0xE8A45605, and OpenPGP's CRC24 as libgcrypt folds it (0x864cfb << 8) */
	static const uint64_t crc_consts[] = { 0x1DB710641ull, 0x1DB710640ull,        0x154442BD4ull,
					       0x105EC76F1ull, 0x92D8AF2BAF0E1E85ull, 0x42F0E1EBA9EA3693ull,
					       0xE8A45605ull,  0x1864CFB00ull };
	unsigned ncrc = 0;
	memset(k->crc, 0, sizeof(k->crc));
	for (size_t i = 0; i < sizeof(crc_consts) / sizeof(crc_consts[0]); i++) {
		uint8_t sig[8];
		uint64_t at[RP_CONST_SITES];
		for (unsigned b = 0; b < 8; b++)
			sig[b] = (uint8_t)(crc_consts[i] >> (8 * b));
		find_const(f, sig, sizeof(sig), at);
		for (unsigned j = 0; j < RP_CONST_SITES && at[j] && ncrc < RP_CONST_SITES; j++)
			k->crc[ncrc++] = at[j];
	}
	k->any = k->aes_sbox[0] || k->aes_te[0] || k->aes_te_asm[0] || k->vpaes[0] || k->k256[0] ||
		 k->k512[0] || k->chacha[0] || k->k160[0] || k->p256[0] || k->p256_ord[0] || k->poly1305[0] ||
		 k->keccak[0];
}

/* What a function's code does, from its bytes [p, p + n) at vaddr va. */
struct code_class {
	unsigned aes_legacy, aes_vex128, aes_vex256, aes_evex512, clmul, vclmul, sha256ni, sha1ni, pshufb;
	unsigned ref_tables, ref_vpaes, ref_k256, ref_k512, ref_chacha, ref_k160, ref_p256, ref_poly1305,
		ref_keccak, ref_crc;
	/* SIMD additions (PADDD/PADDQ) by encoding: legacy SSE, VEX 128-bit, VEX 256-bit, EVEX
	 * 512-bit */
	unsigned add_sse, add_vex128, add_vex256, add_evex512;
	/* immediates: sntrup761 (q, (q - 1) / 2), X25519's a24, Poly1305's
	 * clamps (64-bit, and donna's 26-bit limbs), SHA-1's round constants */
	unsigned q4591, q2295, a24, clamp64, clamp26, sha1_k, sha256_k, sha512_k;
	/* ML-KEM: q = 3329, its Barrett multiplier 5039 (2^24 / q), q in both halves of a word */
	unsigned q3329, b5039, q3329x2;
	/* big-number multiply and carry: MULX, ADCX/ADOX, VPMADD52[LH]UQ, 64-bit MUL, ADC */
	unsigned mulx, adx, ifma, mul64, adc64;
	/* Curve25519's reductions: x 19 (IMUL r64, r/m64, 19) with 51-bit shifts (SHR r64, 51) in
	 * radix 2^51, AND r64, 38 after a borrow in radix 2^64 */
	unsigned imul19, shr51, and38;
};

static bool refs(uint64_t target, const uint64_t *table, uint64_t len)
{
	for (unsigned i = 0; i < RP_CONST_SITES && table[i]; i++)
		if (target - table[i] < len)
			return true;
	return false;
}

static uint32_t le32(const uint8_t *p)
{
	return (uint32_t)rp_le32s(p);
}

/* The 4 bytes at i are the immediate of an arithmetic instruction: MOV r32, imm32 (B8+r), IMUL
 * r, r/m, imm32 (69), ALU on a register (81 /0../6: not CMP). Not a
 * compare, a displacement or a jump's offset (a jump 4591 bytes long is no sntrup761, and a
 * program's CMP with a Unicode code point no X25519). */
static bool arith_imm32(const uint8_t *p, size_t i)
{
	if (i >= 1 && p[i - 1] >= 0xb8 && p[i - 1] <= 0xbf)
		return true;
	if (i >= 2 && (p[i - 1] & 0xc0) == 0xc0 &&
	    (p[i - 2] == 0x69 || (p[i - 2] == 0x81 && ((p[i - 1] >> 3) & 7) != 7)))
		return true;
	for (size_t k = 3; k <= 7 && k <= i; k++) /* IMUL with a memory operand */
		if (p[i - k] == 0x69)
			return true;
	return false;
}

static void scan_immediates(const uint8_t *p, size_t n, size_t i, struct code_class *c)
{
	uint32_t v = le32(p + i);
	if ((v == 4591 || v == 2295 || v == 121665 || v == 121666 || v == 0x3ffff03 || v == 0x3ffc0ff ||
	     v == 0x3f03fff || v == 3329 || v == 5039 || v == 0x0d010d01) &&
	    arith_imm32(p, i)) {
		c->q3329 += v == 3329;
		c->b5039 += v == 5039;
		c->q3329x2 += v == 0x0d010d01;
		c->q4591 += v == 4591;
		c->q2295 += v == 2295;
		c->a24 += v == 121665 || v == 121666;
		c->clamp26 += v == 0x3ffff03 || v == 0x3ffc0ff || v == 0x3f03fff;
	}
	c->sha1_k += v == 0x5a827999 || v == 0x6ed9eba1 || v == 0x8f1bbcdc || v == 0xca62c1d6;
	c->sha256_k += v == 0x428a2f98 || v == 0x71374491 || v == 0xb5c0fbcf || v == 0xe9b5dba5;
	if (i + 8 <= n) {
		uint64_t w = (uint64_t)v | (uint64_t)le32(p + i + 4) << 32;
		c->sha512_k += w == 0x428a2f98d728ae22ULL || w == 0x7137449123ef65cdULL;
		c->clamp64 += w == 0x0ffffffc0fffffffULL;
	}
}

static void scan(const struct rp_code_consts *k, const uint8_t *p, size_t n, uint64_t va,
		 struct code_class *c)
{
	memset(c, 0, sizeof(*c));
	for (size_t i = 0; i + 4 < n; i++) {
		uint8_t b0 = p[i], b1 = p[i + 1], b2 = p[i + 2], b3 = p[i + 3];
		/* legacy SSE, 66 [REX] 0F ..: 0F 38 DB..DF (AESIMC, AESENC[LAST], AESDEC[LAST]),
		 * 0F 3A DF, 0F 3A 44 (PCLMULQDQ), 0F 38 00 (PSHUFB), 0F 38 F6 (ADCX), 0F FE/D4
		 * (PADDD/PADDQ) */
		if (b0 == 0x66 || b0 == 0xf3) {
			size_t j = i + 1 + (b1 >= 0x40 && b1 <= 0x4f);
			if (j + 2 < n && p[j] == 0x0f) {
				uint8_t m = p[j + 1], op = p[j + 2];
				if (m == 0x38 && op == 0xf6) /* ADCX (66), ADOX (F3) */
					c->adx++;
				if (b0 == 0x66) {
					if (m == 0x38 && op >= 0xdb && op <= 0xdf)
						c->aes_legacy++;
					if (m == 0x38 && op == 0x00) /* vpaes's S-box lookups */
						c->pshufb++;
					if (m == 0x3a && op == 0xdf)
						c->aes_legacy++;
					if (m == 0x3a && op == 0x44)
						c->clmul++;
					if (m == 0xfe || m == 0xd4)
						c->add_sse++;
				}
			}
		}
		/* SHA-NI (no prefix): 0F 38 CB/CC/CD (SHA-256), 0F 38 C8/C9/CA and 0F 3A CC (SHA-1) */
		if (b0 == 0x0f && b1 == 0x38 && b2 >= 0xcb && b2 <= 0xcd && (!i || p[i - 1] != 0x66))
			c->sha256ni++;
		if (b0 == 0x0f && ((b1 == 0x38 && b2 >= 0xc8 && b2 <= 0xca) || (b1 == 0x3a && b2 == 0xcc)) &&
		    (!i || p[i - 1] != 0x66))
			c->sha1ni++;
		/* VEX3: C4 [map] [W vvvv L pp] op: map 0F38 (AES, MULX) or 0F3A (PCLMUL), 0F (PADD) */
		if (b0 == 0xc4) {
			bool wide = b2 & 0x04;
			if ((b2 & 0x03) == 0x01 && (b1 & 0x1f) == 0x02 && b3 >= 0xdc && b3 <= 0xdf)
				wide ? c->aes_vex256++ : c->aes_vex128++;
			if ((b2 & 0x03) == 0x01 && (b1 & 0x1f) == 0x03 && b3 == 0x44)
				wide ? c->vclmul++ : c->clmul++;
			if ((b2 & 0x03) == 0x01 && (b1 & 0x1f) == 0x01 && (b3 == 0xfe || b3 == 0xd4))
				wide ? c->add_vex256++ : c->add_vex128++;
			/* MULX: VEX.LZ.F2.0F38.W1 F6 */
			if ((b2 & 0x87) == 0x83 && (b1 & 0x1f) == 0x02 && b3 == 0xf6)
				c->mulx++;
		}
		/* VEX2: C5 [R vvvv L pp] op: PADDD/PADDQ with pp 66 */
		if (b0 == 0xc5 && (b1 & 0x03) == 0x01 && (b2 == 0xfe || b2 == 0xd4))
			(b1 & 0x04) ? c->add_vex256++ : c->add_vex128++;
		/* EVEX: 62 P0 P1 P2 op, P0's map in its low 3 bits, P1 = W vvvv 1 pp with pp 66,
		 * vector length in P2 bits 6:5 */
		if (b0 == 0x62 && i + 5 < n && (b2 & 0x07) == 0x05) {
			uint8_t op = p[i + 4];
			unsigned ll = (b3 >> 5) & 3;
			if ((b1 & 0x07) == 0x02 && op >= 0xdc && op <= 0xdf)
				ll == 2 ? c->aes_evex512++ : ll == 1 ? c->aes_vex256++ : c->aes_vex128++;
			if ((b1 & 0x07) == 0x03 && op == 0x44)
				ll ? c->vclmul++ : c->clmul++;
			if ((b1 & 0x07) == 0x02 && (b2 & 0x80) && (op == 0xb4 || op == 0xb5))
				c->ifma++;
			if ((b1 & 0x07) == 0x01 && ll == 2 && (op == 0xfe || op == 0xd4))
				c->add_evex512++;
		}
		/* 64-bit MUL (REX.W F7 /4) and ADC (REX.W 11/13, 83 /2); IMUL by 19, SHR by 51,
		 * AND with 38 on registers */
		if ((b0 & 0xf8) == 0x48) {
			if (b1 == 0xf7 && ((b2 >> 3) & 7) == 4)
				c->mul64++;
			if (b1 == 0x11 || b1 == 0x13 || (b1 == 0x83 && ((b2 >> 3) & 7) == 2))
				c->adc64++;
			c->imul19 += b1 == 0x6b && (b2 & 0xc0) == 0xc0 && b3 == 19;
			c->shr51 += b1 == 0xc1 && (b2 & 0xf8) == 0xe8 && b3 == 51;
			c->and38 += b1 == 0x83 && (b2 & 0xf8) == 0xe0 && b3 == 38;
		}
		scan_immediates(p, n, i, c);
		/* a RIP-relative disp32 here (its ModRM just before: mod 00, r/m 101): the address
		 * it names (an immediate after it puts the address a few bytes short) */
		if (!i || (p[i - 1] & 0xc7) != 0x05)
			continue;
		uint64_t target = va + i + 4 + (int64_t)rp_le32s(p + i);
		c->ref_tables += refs(target, k->aes_sbox, 256) || refs(target, k->aes_te, 4096) ||
				 refs(target, k->aes_te_asm, 8192);
		/* vpaes's table from 0x100 before .Lk_mc_forward (libgcrypt's .Laes_consts) */
		c->ref_vpaes += refs(target + 0x100, k->vpaes, 0x280);
		c->ref_k256 += refs(target, k->k256, 256);
		c->ref_k512 += refs(target, k->k512, 640);
		c->ref_chacha += refs(target, k->chacha, 64);
		c->ref_k160 += refs(target, k->k160, 160);
		c->ref_poly1305 += refs(target + 0x1c0, k->poly1305, 0x240);
		c->ref_keccak += refs(target, k->keccak, 24 * 8);
		/* a 16-byte load whose either half is the constant */
		c->ref_crc += refs(target + 8, k->crc, 16);
		c->ref_p256 += refs(target, k->p256, 32) || refs(target, k->p256_ord, 48);
	}
}

/* Code without special instructions (SHA without SHA-NI, ChaCha20, Poly1305): the widest vector
 * its additions use */
static const char *simd_width(const struct code_class *c)
{
	return c->add_evex512 >= 4  ? "AVX-512"
	       : c->add_vex256 >= 4 ? "AVX2"
	       : c->add_vex128 >= 4 ? "AVX"
	       : c->add_sse >= 4    ? "SSSE3"
				    : "generic";
}

static bool named(char *cat, size_t ccap, char *impl, size_t icap, const char *category, const char *im)
{
	snprintf(cat, ccap, "%s", category);
	snprintf(impl, icap, "%s", im);
	return true;
}

/* The category and implementation of a function's code; false when it is none we know. */
static bool classify(const struct code_class *c, bool crypto_file, char *cat, size_t ccap, char *impl,
		     size_t icap)
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
	if (c->ref_vpaes >= 1 && c->pshufb >= 8)
		return named(cat, ccap, impl, icap, "AES", "vpaes (SSSE3, no AES-NI)");
	if (c->ref_tables >= 2)
		return named(cat, ccap, impl, icap, "AES", "tables (no AES-NI)");
	if (c->clmul + c->vclmul >= 2 && c->ref_crc) /* a CRC (xz, zlib-like, cksum): no crypto */
		return false;
	if (c->clmul + c->vclmul >= 2)
		return named(cat, ccap, impl, icap, "GHASH", c->vclmul >= 2 ? "VPCLMULQDQ" : "PCLMULQDQ");
	if (c->sha256ni >= 2 || c->ref_k256)
		return named(cat, ccap, impl, icap, "SHA-256", c->sha256ni >= 2 ? "SHA-NI" : simd_width(c));
	if (c->ref_k512)
		return named(cat, ccap, impl, icap, "SHA-512", simd_width(c));
	/* unrolled C: the round constants as immediates (SHA-512's 64-bit ones hold SHA-256's) */
	if (c->sha512_k >= 2)
		return named(cat, ccap, impl, icap, "SHA-512", "generic");
	if (c->sha256_k >= 4)
		return named(cat, ccap, impl, icap, "SHA-256", "generic");
	if (c->sha1ni >= 2)
		return named(cat, ccap, impl, icap, "SHA-1", "SHA-NI");
	/* SHA-1 without SHA-NI: its constants' table (SIMD), or all four as immediates (C) */
	if (c->ref_k160 || c->sha1_k >= 4)
		return named(cat, ccap, impl, icap, "SHA-1", c->ref_k160 ? simd_width(c) : "generic");
	/* Keccak's round constants: SHA-3 and SHAKE (no instruction set says more of it) */
	if (c->ref_keccak)
		return named(cat, ccap, impl, icap, "SHA-3", "");
	if (c->ref_chacha)
		return named(cat, ccap, impl, icap, "ChaCha20", simd_width(c));
	/* sntrup761's reduction mod q = 4591: q beside q12 = (q - 1) / 2 (the reference code's
	 * Fq_freeze and Encode, OpenSSH 9.2's; libntruprime's Barrett constants are untested) */
	if (c->q4591 && c->q2295)
		return named(cat, ccap, impl, icap, "sntrup761", "C");
	/* ML-KEM's reduction mod q = 3329: Barrett's x - q * ((x * 5039) >> 24) (OpenSSL 3.5's
	 * ml_kem.c), or q twice in a word (its packed coefficients) */
	if ((c->q3329 && c->b5039) || c->q3329x2)
		return named(cat, ccap, impl, icap, "ML-KEM", c->add_vex256 >= 4 ? "AVX2" : "C");
	/* the Montgomery ladder's a24 = (486662 - 2) / 4 (or + 1 as RFC 7748 has it) */
	if (c->a24)
		return named(cat, ccap, impl, icap, "X25519", c->mulx >= 4 ? "MULX/ADX" : "");
	/* the field arithmetic X25519 and Ed25519 share (OpenSSL's x25519_fe51_* and fe64_*) */
	if (c->imul19 >= 2 && c->shr51 >= 2)
		return named(cat, ccap, impl, icap, "Curve25519", "radix 2^51");
	if (c->and38 && c->mulx >= 8)
		return named(cat, ccap, impl, icap, "Curve25519", "radix 2^64, MULX/ADX");
	if (c->ref_p256)
		return named(cat, ccap, impl, icap, "ECC P-256", c->mulx >= 4 ? "MULX/ADX" : "MUL/ADC");
	/* r's clamp: 0x0ffffffc0fffffff (64-bit limbs), or donna's three 26-bit masks; or the
	 * SIMD code's table of masks and shifts */
	if (c->clamp64 || c->clamp26 >= 3 || c->ref_poly1305)
		return named(cat, ccap, impl, icap, "Poly1305",
			     c->ifma >= 8 ? "AVX-512 IFMA" : simd_width(c));
	/* multi-precision multiplication: many multiplies feeding carry chains */
	if (c->ifma >= 8)
		return named(cat, ccap, impl, icap, "bignum", "AVX-512 IFMA");
	if (c->mulx >= 8 && c->adx >= 8)
		return named(cat, ccap, impl, icap, "bignum", "MULX/ADX");
	/* 64-bit MUL and ADC also make 128-bit decimal conversion (libstdc++'s to_chars): counted
	 * only in a file that holds crypto constants (a crypto library, or a program with its own) */
	if (crypto_file && c->mul64 >= 8 && c->adc64 >= 16)
		return named(cat, ccap, impl, icap, "bignum", "MUL/ADC");
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
		return named(cat, ccap, impl, icap, known[i].category, known[i].impl);
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
	return classify(&c, k->any, cat, ccap, impl, icap);
}

const char *rp_code_group(const char *category)
{
	static const struct {
		const char *category, *group;
	} groups[] = {
		{ "AES", "bulk" },
		{ "ChaCha20", "bulk" },
		{ "GHASH", "bulk" },
		{ "Poly1305", "bulk" },
		{ "UMAC", "bulk" },
		{ "SHA-1", "digest" },
		{ "SHA-256", "digest" },
		{ "SHA-512", "digest" },
		{ "SHA-3", "digest" },
		{ "ML-KEM", "public key" },
		{ "sntrup761", "public key" },
		{ "X25519", "public key" },
		{ "Curve25519", "public key" },
		{ "ECC P-256", "public key" },
		{ "ECC", "public key" },
		{ "bignum", "public key" },
	};
	for (size_t i = 0; i < sizeof(groups) / sizeof(groups[0]); i++)
		if (!strcmp(category, groups[i].category))
			return groups[i].group;
	return category[0] ? "other" : "";
}
