/* SPDX-License-Identifier: MIT */
/*
 * aes_xmm.c - AES-NI + PCLMULQDQ kernels on 128-bit registers: the key expansion, the serial
 * modes (CBC/CFB encrypt, OFB: latency-bound on every CPU, so this code serves both levels), and
 * the parallel modes for CPUs without VAES, with eight blocks in flight to cover AESENC latency.
 */
#include <immintrin.h>
#include <string.h>

#include "aes_internal.h"

#define XI static inline __attribute__((always_inline)) CT_TARGET_XMM

/* Expands to m(0) .. m(n-1): the unrolled per-block statements below keep every block in its own
 * register instead of trusting the compiler to scalarise an array. */
#define X8(m) m(0) m(1) m(2) m(3) m(4) m(5) m(6) m(7)
#define X4(m) m(0) m(1) m(2) m(3)
#define X1(m) m(0)

#define LD(p, i) _mm_loadu_si128((const __m128i *)(p) + (i))
#define ST(p, i, v) _mm_storeu_si128((__m128i *)(p) + (i), (v))

XI __m128i bswap128(__m128i v)
{
	return _mm_shuffle_epi8(v, _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
}

/* ---- key expansion (FIPS-197 section 5.2), SubWord done by AESENCLAST ---- */

/* With the word in all four columns, ShiftRows is the identity, so AESENCLAST with a zero round
 * key is exactly SubBytes: a constant-time S-box for the schedule, for every key size. */
XI uint32_t sub_word(uint32_t w)
{
	__m128i v = _mm_aesenclast_si128(_mm_set1_epi32((int)w), _mm_setzero_si128());
	return (uint32_t)_mm_cvtsi128_si32(v);
}

CT_TARGET_XMM void ct_aes_expand_key_xmm(struct ct_aes_key *k, const uint8_t *key, unsigned bits)
{
	const unsigned nk = bits / 32, rounds = nk + 6, total = 4 * (rounds + 1);
	uint32_t w[4 * (CT_AES_MAX_ROUNDS + 1)];
	uint32_t rcon = 1;

	memcpy(w, key, 4 * nk); /* little-endian words: byte 0 of the word is its low byte */
	for (unsigned i = nk; i < total; i++) {
		uint32_t t = w[i - 1];
		if (i % nk == 0) {
			t = sub_word((t >> 8) | (t << 24)) ^ rcon; /* RotWord, SubWord, Rcon */
			rcon = (rcon << 1) ^ ((rcon >> 7) * 0x11b);
		} else if (nk > 6 && i % nk == 4) {
			t = sub_word(t);
		}
		w[i] = w[i - nk] ^ t;
	}
	memcpy(k->enc, w, 16 * (rounds + 1));
	explicit_bzero(w, sizeof(w));

	/* Equivalent inverse cipher: reversed order, InvMixColumns on the inner round keys. */
	const __m128i *e = (const __m128i *)k->enc;
	__m128i *d = (__m128i *)k->dec;
	d[0] = e[rounds];
	for (unsigned r = 1; r < rounds; r++)
		d[r] = _mm_aesimc_si128(e[rounds - r]);
	d[rounds] = e[0];
	k->rounds = rounds;
	k->bits = bits;
}

/* ---- one block ---- */

XI __m128i enc1(const __m128i *rk, unsigned rounds, __m128i b)
{
	b = _mm_xor_si128(b, rk[0]);
	for (unsigned r = 1; r < rounds; r++)
		b = _mm_aesenc_si128(b, rk[r]);
	return _mm_aesenclast_si128(b, rk[rounds]);
}

XI __m128i dec1(const __m128i *rk, unsigned rounds, __m128i b)
{
	b = _mm_xor_si128(b, rk[0]);
	for (unsigned r = 1; r < rounds; r++)
		b = _mm_aesdec_si128(b, rk[r]);
	return _mm_aesdeclast_si128(b, rk[rounds]);
}

/* Runs the rounds of 'cipher' (enc/dec) over the blocks b0.. named by XN, keys rk. */
#define ROUNDS(XN, cipher, rk, rounds)                                                             \
	do {                                                                                       \
		__m128i k_ = (rk)[0];                                                              \
		XN(WHITEN)                                                                         \
		for (unsigned r_ = 1; r_ < (rounds); r_++) {                                       \
			k_ = (rk)[r_];                                                             \
			XN(cipher##_ROUND)                                                         \
		}                                                                                  \
		k_ = (rk)[rounds];                                                                 \
		XN(cipher##_LAST)                                                                  \
	} while (0)
#define WHITEN(i) b##i = _mm_xor_si128(b##i, k_);
#define ENC_ROUND(i) b##i = _mm_aesenc_si128(b##i, k_);
#define ENC_LAST(i) b##i = _mm_aesenclast_si128(b##i, k_);
#define DEC_ROUND(i) b##i = _mm_aesdec_si128(b##i, k_);
#define DEC_LAST(i) b##i = _mm_aesdeclast_si128(b##i, k_);
#define DECL(i) __m128i b##i;
#define LOAD_IN(i) b##i = LD(in, i);
#define STORE_OUT(i) ST(out, i, b##i);

/* ---- ECB ---- */

#define ECB_STEP(XN, n, cipher, rk)                                                                \
	while (nblocks >= (n)) {                                                                   \
		XN(DECL)                                                                           \
		XN(LOAD_IN)                                                                        \
		ROUNDS(XN, cipher, rk, rounds);                                                    \
		XN(STORE_OUT)                                                                      \
		in += 16 * (n), out += 16 * (n), nblocks -= (n);                                   \
	}

CT_TARGET_XMM static void ecb_enc(const struct ct_aes_key *k, const uint8_t *in, uint8_t *out,
				  size_t nblocks)
{
	const __m128i *rk = (const __m128i *)k->enc;
	const unsigned rounds = k->rounds;
	ECB_STEP(X8, 8, ENC, rk)
	ECB_STEP(X4, 4, ENC, rk)
	ECB_STEP(X1, 1, ENC, rk)
}

CT_TARGET_XMM static void ecb_dec(const struct ct_aes_key *k, const uint8_t *in, uint8_t *out,
				  size_t nblocks)
{
	const __m128i *rk = (const __m128i *)k->dec;
	const unsigned rounds = k->rounds;
	ECB_STEP(X8, 8, DEC, rk)
	ECB_STEP(X4, 4, DEC, rk)
	ECB_STEP(X1, 1, DEC, rk)
}

/* ---- CBC ---- */

/* Serial: each block waits for the previous ciphertext, so the chain is rounds x AESENC latency.
 * The plaintext is pre-whitened off the chain; the chain itself is one XOR plus the rounds. */
CT_TARGET_XMM static void cbc_enc(const struct ct_aes_key *k, uint8_t iv[16], const uint8_t *in,
				  uint8_t *out, size_t nblocks)
{
	const __m128i *rk = (const __m128i *)k->enc;
	const unsigned rounds = k->rounds;
	const __m128i k0 = rk[0], klast = rk[rounds];
	__m128i c = LD(iv, 0);
	for (; nblocks; nblocks--, in += 16, out += 16) {
		__m128i b = _mm_xor_si128(c, _mm_xor_si128(LD(in, 0), k0));
		for (unsigned r = 1; r < rounds; r++)
			b = _mm_aesenc_si128(b, rk[r]);
		c = _mm_aesenclast_si128(b, klast);
		ST(out, 0, c);
	}
	ST(iv, 0, c);
}

/* Every previous ciphertext block is loaded before the first store of a batch, so in-place
 * decryption never overwrites a block that is still needed. */
#define CBC_XOR_PREV(i) b##i = _mm_xor_si128(b##i, (i) ? LD(in, (i) - 1) : prev);
#define CBC_DEC_STEP(XN, n)                                                                        \
	while (nblocks >= (n)) {                                                                   \
		XN(DECL)                                                                           \
		XN(LOAD_IN)                                                                        \
		__m128i next_ = LD(in, (n) - 1);                                                   \
		ROUNDS(XN, DEC, rk, rounds);                                                       \
		XN(CBC_XOR_PREV)                                                                   \
		XN(STORE_OUT)                                                                      \
		prev = next_;                                                                      \
		in += 16 * (n), out += 16 * (n), nblocks -= (n);                                   \
	}

CT_TARGET_XMM static void cbc_dec(const struct ct_aes_key *k, uint8_t iv[16], const uint8_t *in,
				  uint8_t *out, size_t nblocks)
{
	const __m128i *rk = (const __m128i *)k->dec;
	const unsigned rounds = k->rounds;
	__m128i prev = LD(iv, 0);
	CBC_DEC_STEP(X8, 8)
	CBC_DEC_STEP(X4, 4)
	CBC_DEC_STEP(X1, 1)
	ST(iv, 0, prev);
}

/* ---- CTR ---- */

/* The counter as a little-endian 128-bit integer: the low qword is the low 64 bits, which the
 * caller guarantees do not wrap here, so a 64-bit lane add is the whole increment. */
#define CTR_BLOCK(i) b##i = bswap128(_mm_add_epi64(c, _mm_set_epi64x(0, i)));
#define CTR_XOR_IN(i) b##i = _mm_xor_si128(b##i, LD(in, i));
#define CTR_STEP(XN, n)                                                                            \
	while (nblocks >= (n)) {                                                                   \
		XN(DECL)                                                                           \
		XN(CTR_BLOCK)                                                                      \
		c = _mm_add_epi64(c, _mm_set_epi64x(0, n));                                        \
		ROUNDS(XN, ENC, rk, rounds);                                                       \
		XN(CTR_XOR_IN)                                                                     \
		XN(STORE_OUT)                                                                      \
		in += 16 * (n), out += 16 * (n), nblocks -= (n);                                   \
	}

CT_TARGET_XMM static void ctr_blocks(const struct ct_aes_key *k, uint8_t ctr[16], const uint8_t *in,
				     uint8_t *out, size_t nblocks)
{
	const __m128i *rk = (const __m128i *)k->enc;
	const unsigned rounds = k->rounds;
	__m128i c = bswap128(LD(ctr, 0));
	CTR_STEP(X8, 8)
	CTR_STEP(X4, 4)
	CTR_STEP(X1, 1)
	ST(ctr, 0, bswap128(c));
}

/* ---- CFB128, OFB (full blocks; the mode layer handles num) ---- */

CT_TARGET_XMM static void cfb_enc(const struct ct_aes_key *k, uint8_t iv[16], const uint8_t *in,
				  uint8_t *out, size_t nblocks)
{
	const __m128i *rk = (const __m128i *)k->enc;
	const unsigned rounds = k->rounds;
	__m128i c = LD(iv, 0);
	for (; nblocks; nblocks--, in += 16, out += 16) {
		c = _mm_xor_si128(enc1(rk, rounds, c), LD(in, 0));
		ST(out, 0, c);
	}
	ST(iv, 0, c);
}

/* Decryption is parallel: P_i = C_i ^ E(C_{i-1}); every input is loaded before the stores. */
#define CFB_PREV(i) b##i = (i) ? LD(in, (i) - 1) : prev;
#define CFB_DEC_STEP(XN, n)                                                                        \
	while (nblocks >= (n)) {                                                                   \
		XN(DECL)                                                                           \
		XN(CFB_PREV)                                                                       \
		__m128i next_ = LD(in, (n) - 1);                                                   \
		ROUNDS(XN, ENC, rk, rounds);                                                       \
		XN(CTR_XOR_IN)                                                                     \
		XN(STORE_OUT)                                                                      \
		prev = next_;                                                                      \
		in += 16 * (n), out += 16 * (n), nblocks -= (n);                                   \
	}

CT_TARGET_XMM static void cfb_dec(const struct ct_aes_key *k, uint8_t iv[16], const uint8_t *in,
				  uint8_t *out, size_t nblocks)
{
	const __m128i *rk = (const __m128i *)k->enc;
	const unsigned rounds = k->rounds;
	__m128i prev = LD(iv, 0);
	CFB_DEC_STEP(X8, 8)
	CFB_DEC_STEP(X1, 1)
	ST(iv, 0, prev);
}

CT_TARGET_XMM static void ofb(const struct ct_aes_key *k, uint8_t iv[16], const uint8_t *in,
			      uint8_t *out, size_t nblocks)
{
	const __m128i *rk = (const __m128i *)k->enc;
	const unsigned rounds = k->rounds;
	__m128i s = LD(iv, 0);
	for (; nblocks; nblocks--, in += 16, out += 16) {
		s = enc1(rk, rounds, s);
		ST(out, 0, _mm_xor_si128(s, LD(in, 0)));
	}
	ST(iv, 0, s);
}

/* ---- XTS ---- */

/* tweak * x in GF(2^128), little-endian: shift left one bit; bit 63 carries into bit 64 and
 * bit 127 folds back as 0x87. */
XI __m128i xts_mulx(__m128i t)
{
	__m128i m = _mm_shuffle_epi32(_mm_srai_epi32(t, 31), 0x13);
	m = _mm_and_si128(m, _mm_set_epi32(0, 1, 0, 0x87));
	return _mm_xor_si128(_mm_add_epi64(t, t), m);
}

#define XTS_TWEAK(i) __m128i t##i = t; t = xts_mulx(t);
#define XTS_IN(i) b##i = _mm_xor_si128(LD(in, i), t##i);
#define XTS_OUT(i) ST(out, i, _mm_xor_si128(b##i, t##i));
#define XTS_STEP(XN, n, cipher)                                                                    \
	while (nblocks >= (n)) {                                                                   \
		XN(DECL)                                                                           \
		XN(XTS_TWEAK)                                                                      \
		XN(XTS_IN)                                                                         \
		ROUNDS(XN, cipher, rk, rounds);                                                    \
		XN(XTS_OUT)                                                                        \
		in += 16 * (n), out += 16 * (n), nblocks -= (n);                                   \
	}

CT_TARGET_XMM static void xts_enc(const struct ct_aes_key *k, uint8_t tweak[16], const uint8_t *in,
				  uint8_t *out, size_t nblocks)
{
	const __m128i *rk = (const __m128i *)k->enc;
	const unsigned rounds = k->rounds;
	__m128i t = LD(tweak, 0);
	XTS_STEP(X8, 8, ENC)
	XTS_STEP(X1, 1, ENC)
	ST(tweak, 0, t);
}

CT_TARGET_XMM static void xts_dec(const struct ct_aes_key *k, uint8_t tweak[16], const uint8_t *in,
				  uint8_t *out, size_t nblocks)
{
	const __m128i *rk = (const __m128i *)k->dec;
	const unsigned rounds = k->rounds;
	__m128i t = LD(tweak, 0);
	XTS_STEP(X8, 8, DEC)
	XTS_STEP(X1, 1, DEC)
	ST(tweak, 0, t);
}

/* ---- GHASH ---- */

/* Operands are byte-reflected GHASH elements (bswap128 of the wire bytes); the product of two
 * reflected 128-bit values is the reflected 256-bit product shifted right by one bit, so the
 * reduction first shifts [hi:lo] left by one, then reduces modulo x^128 + x^7 + x^2 + x + 1
 * (Gueron and Kounavis, "Intel carry-less multiplication instruction and its usage for
 * computing the GCM mode", algorithm 5). Linear, so several products can share one reduction. */
XI __m128i gf_reduce(__m128i lo, __m128i mid, __m128i hi)
{
	lo = _mm_xor_si128(lo, _mm_slli_si128(mid, 8));
	hi = _mm_xor_si128(hi, _mm_srli_si128(mid, 8));

	__m128i lc = _mm_srli_epi32(lo, 31), hc = _mm_srli_epi32(hi, 31);
	__m128i across = _mm_srli_si128(lc, 12);
	lo = _mm_or_si128(_mm_slli_epi32(lo, 1), _mm_slli_si128(lc, 4));
	hi = _mm_or_si128(_mm_slli_epi32(hi, 1), _mm_slli_si128(hc, 4));
	hi = _mm_or_si128(hi, across);

	__m128i a = _mm_xor_si128(_mm_slli_epi32(lo, 31), _mm_slli_epi32(lo, 30));
	a = _mm_xor_si128(a, _mm_slli_epi32(lo, 25));
	__m128i b = _mm_srli_si128(a, 4);
	lo = _mm_xor_si128(lo, _mm_slli_si128(a, 12));
	__m128i d = _mm_xor_si128(_mm_srli_epi32(lo, 1), _mm_srli_epi32(lo, 2));
	d = _mm_xor_si128(d, _mm_srli_epi32(lo, 7));
	d = _mm_xor_si128(d, b);
	lo = _mm_xor_si128(lo, d);
	return _mm_xor_si128(hi, lo);
}

XI void clmul_acc(__m128i a, __m128i b, __m128i *lo, __m128i *mid, __m128i *hi)
{
	*lo = _mm_xor_si128(*lo, _mm_clmulepi64_si128(a, b, 0x00));
	*hi = _mm_xor_si128(*hi, _mm_clmulepi64_si128(a, b, 0x11));
	*mid = _mm_xor_si128(*mid, _mm_clmulepi64_si128(a, b, 0x01));
	*mid = _mm_xor_si128(*mid, _mm_clmulepi64_si128(a, b, 0x10));
}

XI __m128i gf_mul(__m128i a, __m128i b)
{
	__m128i lo = _mm_setzero_si128(), mid = lo, hi = lo;
	clmul_acc(a, b, &lo, &mid, &hi);
	return gf_reduce(lo, mid, hi);
}

CT_TARGET_XMM void ct_ghash_init_xmm(uint8_t hpow[8][16], const uint8_t h[16])
{
	__m128i h1 = bswap128(LD(h, 0)), p = h1;
	ST(hpow[7], 0, h1);
	for (int j = 6; j >= 0; j--) {
		p = gf_mul(p, h1);
		ST(hpow[j], 0, p);
	}
}

/* Up to 8 blocks with one reduction: block i of n is multiplied by H^(n-i) = hpow[8-n+i]. */
CT_TARGET_XMM static void ghash(const uint8_t hpow[8][16], uint8_t xi[16], const uint8_t *in,
				size_t nblocks)
{
	__m128i x = bswap128(LD(xi, 0));
	while (nblocks) {
		const size_t n = nblocks < 8 ? nblocks : 8;
		__m128i lo = _mm_setzero_si128(), mid = lo, hi = lo;
		for (size_t i = 0; i < n; i++) {
			__m128i blk = bswap128(LD(in, i));
			if (i == 0)
				blk = _mm_xor_si128(blk, x);
			clmul_acc(blk, LD(hpow[8 - n + i], 0), &lo, &mid, &hi);
		}
		x = gf_reduce(lo, mid, hi);
		in += 16 * n;
		nblocks -= n;
	}
	ST(xi, 0, bswap128(x));
}

const struct ct_aes_kernels ct_aes_kernels_xmm = {
	.ecb_enc = ecb_enc,
	.ecb_dec = ecb_dec,
	.cbc_enc = cbc_enc,
	.cbc_dec = cbc_dec,
	.ctr = ctr_blocks,
	.cfb_enc = cfb_enc,
	.cfb_dec = cfb_dec,
	.ofb = ofb,
	.xts_enc = xts_enc,
	.xts_dec = xts_dec,
	.ghash = ghash,
};
