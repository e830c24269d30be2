/* SPDX-License-Identifier: MIT */
/*
 * aes_xmm.c - AES-NI + PCLMULQDQ kernels on 128-bit registers: the key expansion, the serial
 * modes (CBC/CFB encrypt, OFB: latency-bound on every CPU, so this code serves both levels), and
 * the parallel modes for CPUs without VAES, with eight blocks in flight to cover AESENC latency.
 */
#include <string.h>

#include "aes_internal.h"
#include "unroll.h"
#include "key_schedule.h"

#define CT_SIMD_TARGET CT_TARGET_XMM
#include "simd_inline.h"
#define XI SI

/* Expands to m(0) .. m(n-1): the unrolled per-block statements below keep every block in its own
 * register instead of trusting the compiler to scalarise an array. */

/* ---- key expansion (key_schedule.h), SubWord done by AESENCLAST ---- */

/* With the word in all four columns, ShiftRows is the identity, so AESENCLAST with a zero round
 * key is exactly SubBytes: a constant-time S-box for the schedule, for every key size. */
XI uint32_t sub_word(uint32_t w)
{
	__m128i v = _mm_aesenclast_si128(_mm_set1_epi32((int)w), _mm_setzero_si128());
	return (uint32_t)_mm_cvtsi128_si32(v);
}

CT_TARGET_XMM void ct_aes_expand_key_xmm(struct ct_aes_key *k, const uint8_t *key, unsigned bits)
{
	ct_aes_schedule(k, key, bits, sub_word);
	const unsigned rounds = k->rounds;

	/* Equivalent inverse cipher: reversed order, InvMixColumns on the inner round keys. */
	const __m128i *e = (const __m128i *)k->enc;
	__m128i *d = (__m128i *)k->dec;
	d[0] = e[rounds];
	for (unsigned r = 1; r < rounds; r++)
		d[r] = _mm_aesimc_si128(e[rounds - r]);
	d[rounds] = e[0];
}

/* Runs the rounds of 'cipher' (ENC/DEC) over the blocks b0.. named by XN, keys rk. Fully
 * unrolled (1..9 always, 10..13 by key size): a loop over the rounds makes the compiler copy
 * every block register at each iteration at -O2. */
/* clang-format off */
#define ROUND(XN, cipher, rk, r)                                                                             \
	k_ = (rk)[r];                                                                                        \
	XN(cipher##_ROUND)
#define ROUNDS(XN, cipher, rk, rounds)                                                                       \
	do {                                                                                                 \
		__m128i k_ = (rk)[0];                                                                        \
		XN(WHITEN)                                                                                   \
		ROUND(XN, cipher, rk, 1) ROUND(XN, cipher, rk, 2) ROUND(XN, cipher, rk, 3)                   \
		ROUND(XN, cipher, rk, 4) ROUND(XN, cipher, rk, 5) ROUND(XN, cipher, rk, 6)                   \
		ROUND(XN, cipher, rk, 7) ROUND(XN, cipher, rk, 8) ROUND(XN, cipher, rk, 9)                   \
		if ((rounds) > 10) {                                                                         \
			ROUND(XN, cipher, rk, 10) ROUND(XN, cipher, rk, 11)                                  \
		}                                                                                            \
		if ((rounds) > 12) {                                                                         \
			ROUND(XN, cipher, rk, 12) ROUND(XN, cipher, rk, 13)                                  \
		}                                                                                            \
		k_ = (rk)[rounds];                                                                           \
		XN(cipher##_LAST)                                                                            \
	} while (0)
/* clang-format on */
#define WHITEN(i) b##i = _mm_xor_si128(b##i, k_);
#define ENC_ROUND(i) b##i = _mm_aesenc_si128(b##i, k_);
#define ENC_LAST(i) b##i = _mm_aesenclast_si128(b##i, k_);
#define DEC_ROUND(i) b##i = _mm_aesdec_si128(b##i, k_);
#define DEC_LAST(i) b##i = _mm_aesdeclast_si128(b##i, k_);
#define DECL(i) __m128i b##i;
#define LOAD_IN(i) b##i = LD(in, i);
#define STORE_OUT(i) ST(out, i, b##i);

/* ---- ECB ---- */

#define ECB_STEP(XN, n, cipher, rk)                                                                          \
	while (nblocks >= (n)) {                                                                             \
		XN(DECL)                                                                                     \
		XN(LOAD_IN)                                                                                  \
		ROUNDS(XN, cipher, rk, rounds);                                                              \
		XN(STORE_OUT)                                                                                \
		in += 16 * (n), out += 16 * (n), nblocks -= (n);                                             \
	}

CT_TARGET_XMM static void ecb_enc(const struct ct_aes_key *k, const uint8_t *in, uint8_t *out, size_t nblocks)
{
	const __m128i *rk = (const __m128i *)k->enc;
	const unsigned rounds = k->rounds;
	ECB_STEP(X8, 8, ENC, rk)
	ECB_STEP(X4, 4, ENC, rk)
	ECB_STEP(X1, 1, ENC, rk)
}

CT_TARGET_XMM static void ecb_dec(const struct ct_aes_key *k, const uint8_t *in, uint8_t *out, size_t nblocks)
{
	const __m128i *rk = (const __m128i *)k->dec;
	const unsigned rounds = k->rounds;
	ECB_STEP(X8, 8, DEC, rk)
	ECB_STEP(X4, 4, DEC, rk)
	ECB_STEP(X1, 1, DEC, rk)
}

/* ---- CBC ---- */

/* ---- serial modes: CBC and CFB encryption, OFB ----
 * Each block waits for the previous one, so the speed is the latency of the dependency chain.
 * The chain is kept to the AES rounds alone: AESENCLAST ends with an XOR of its key, so giving
 * it klast ^ k0 ^ (next plaintext) yields the next block's whitened input directly, and this
 * block's output is recovered off the chain by XORing k0 ^ plaintext back. */

/* Rounds 1 .. rounds-1 of one block (unrolled: the chain must not wait for loop overhead). */
XI __m128i mid_rounds(const __m128i *rk, unsigned rounds, __m128i b)
{
	b = _mm_aesenc_si128(b, rk[1]);
	b = _mm_aesenc_si128(b, rk[2]);
	b = _mm_aesenc_si128(b, rk[3]);
	b = _mm_aesenc_si128(b, rk[4]);
	b = _mm_aesenc_si128(b, rk[5]);
	b = _mm_aesenc_si128(b, rk[6]);
	b = _mm_aesenc_si128(b, rk[7]);
	b = _mm_aesenc_si128(b, rk[8]);
	b = _mm_aesenc_si128(b, rk[9]);
	if (rounds > 10) {
		b = _mm_aesenc_si128(b, rk[10]);
		b = _mm_aesenc_si128(b, rk[11]);
	}
	if (rounds > 12) {
		b = _mm_aesenc_si128(b, rk[12]);
		b = _mm_aesenc_si128(b, rk[13]);
	}
	return b;
}

/* C_i = E(P_i ^ C_{i-1}); the state b holds P_i ^ C_{i-1} ^ k0. */
CT_TARGET_XMM void ct_aes_xmm_cbc_enc(const struct ct_aes_key *k, uint8_t iv[16], const uint8_t *in,
				      uint8_t *out, size_t nblocks)
{
	const __m128i *rk = (const __m128i *)k->enc;
	const unsigned rounds = k->rounds;
	const __m128i k0 = rk[0], klast = rk[rounds];
	__m128i b = _mm_xor_si128(LD(iv, 0), _mm_xor_si128(LD(in, 0), k0)), c = LD(iv, 0);
	for (; nblocks > 1; nblocks--, in += 16, out += 16) {
		const __m128i next = _mm_xor_si128(LD(in, 1), k0); /* P_{i+1} ^ k0 */
		b = _mm_aesenclast_si128(mid_rounds(rk, rounds, b), _mm_xor_si128(klast, next));
		c = _mm_xor_si128(b, next);
		ST(out, 0, c);
	}
	if (nblocks) {
		c = _mm_aesenclast_si128(mid_rounds(rk, rounds, b), klast);
		ST(out, 0, c);
	}
	ST(iv, 0, c);
}

/* Every previous ciphertext block is loaded before the first store of a batch, so in-place
 * decryption never overwrites a block that is still needed. */
#define CBC_XOR_PREV(i) b##i = _mm_xor_si128(b##i, (i) ? LD(in, (i)-1) : prev);
#define CBC_DEC_STEP(XN, n)                                                                                  \
	while (nblocks >= (n)) {                                                                             \
		XN(DECL)                                                                                     \
		XN(LOAD_IN)                                                                                  \
		__m128i next_ = LD(in, (n)-1);                                                               \
		ROUNDS(XN, DEC, rk, rounds);                                                                 \
		XN(CBC_XOR_PREV)                                                                             \
		XN(STORE_OUT)                                                                                \
		prev = next_;                                                                                \
		in += 16 * (n), out += 16 * (n), nblocks -= (n);                                             \
	}

CT_TARGET_XMM static void cbc_dec(const struct ct_aes_key *k, uint8_t iv[16], const uint8_t *in, uint8_t *out,
				  size_t nblocks)
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
#define CTR_STEP(XN, n)                                                                                      \
	while (nblocks >= (n)) {                                                                             \
		XN(DECL)                                                                                     \
		XN(CTR_BLOCK)                                                                                \
		c = _mm_add_epi64(c, _mm_set_epi64x(0, n));                                                  \
		ROUNDS(XN, ENC, rk, rounds);                                                                 \
		XN(CTR_XOR_IN)                                                                               \
		XN(STORE_OUT)                                                                                \
		in += 16 * (n), out += 16 * (n), nblocks -= (n);                                             \
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

/* C_i = E(C_{i-1}) ^ P_i; the state b holds C_{i-1} ^ k0. */
CT_TARGET_XMM void ct_aes_xmm_cfb_enc(const struct ct_aes_key *k, uint8_t iv[16], const uint8_t *in,
				      uint8_t *out, size_t nblocks)
{
	const __m128i *rk = (const __m128i *)k->enc;
	const unsigned rounds = k->rounds;
	const __m128i k0 = rk[0], klast = rk[rounds];
	__m128i b = _mm_xor_si128(LD(iv, 0), k0), c = LD(iv, 0);
	for (; nblocks; nblocks--, in += 16, out += 16) {
		const __m128i p = _mm_xor_si128(LD(in, 0), k0); /* P_i ^ k0 */
		b = _mm_aesenclast_si128(mid_rounds(rk, rounds, b), _mm_xor_si128(klast, p));
		c = _mm_xor_si128(b, k0);
		ST(out, 0, c);
	}
	ST(iv, 0, c);
}

/* Decryption is parallel: P_i = C_i ^ E(C_{i-1}); every input is loaded before the stores. */
#define CFB_PREV(i) b##i = (i) ? LD(in, (i)-1) : prev;
#define CFB_DEC_STEP(XN, n)                                                                                  \
	while (nblocks >= (n)) {                                                                             \
		XN(DECL)                                                                                     \
		XN(CFB_PREV)                                                                                 \
		__m128i next_ = LD(in, (n)-1);                                                               \
		ROUNDS(XN, ENC, rk, rounds);                                                                 \
		XN(CTR_XOR_IN)                                                                               \
		XN(STORE_OUT)                                                                                \
		prev = next_;                                                                                \
		in += 16 * (n), out += 16 * (n), nblocks -= (n);                                             \
	}

CT_TARGET_XMM static void cfb_dec(const struct ct_aes_key *k, uint8_t iv[16], const uint8_t *in, uint8_t *out,
				  size_t nblocks)
{
	const __m128i *rk = (const __m128i *)k->enc;
	const unsigned rounds = k->rounds;
	__m128i prev = LD(iv, 0);
	CFB_DEC_STEP(X8, 8)
	CFB_DEC_STEP(X1, 1)
	ST(iv, 0, prev);
}

/* S_i = E(S_{i-1}), O_i = P_i ^ S_i; the state b holds S_{i-1} ^ k0. */
CT_TARGET_XMM void ct_aes_xmm_ofb(const struct ct_aes_key *k, uint8_t iv[16], const uint8_t *in, uint8_t *out,
				  size_t nblocks)
{
	const __m128i *rk = (const __m128i *)k->enc;
	const unsigned rounds = k->rounds;
	const __m128i k0 = rk[0], klk0 = _mm_xor_si128(rk[rounds], k0);
	__m128i b = _mm_xor_si128(LD(iv, 0), k0);
	for (; nblocks; nblocks--, in += 16, out += 16) {
		b = _mm_aesenclast_si128(mid_rounds(rk, rounds, b), klk0);
		ST(out, 0, _mm_xor_si128(_mm_xor_si128(b, k0), LD(in, 0)));
	}
	ST(iv, 0, _mm_xor_si128(b, k0));
}

/* ---- XTS ---- */

/* The first tweak: tweak itself, or with tk the IV in tweak encrypted (aes_internal.h). */
XI __m128i xts_tweak(const struct ct_aes_key *tk, const uint8_t tweak[16])
{
	if (!tk)
		return LD(tweak, 0);
	const __m128i *tr = (const __m128i *)tk->enc;
	const __m128i t = _mm_xor_si128(LD(tweak, 0), tr[0]);
	return _mm_aesenclast_si128(mid_rounds(tr, tk->rounds, t), tr[tk->rounds]);
}

#define XTS_TWEAK(i)                                                                                         \
	__m128i t##i = t;                                                                                    \
	t = xts_mulx(t);
#define XTS_IN(i) b##i = _mm_xor_si128(LD(in, i), t##i);
#define XTS_OUT(i) ST(out, i, _mm_xor_si128(b##i, t##i));
#define XTS_STEP(XN, n, cipher)                                                                              \
	while (nblocks >= (n)) {                                                                             \
		XN(DECL)                                                                                     \
		XN(XTS_TWEAK)                                                                                \
		XN(XTS_IN)                                                                                   \
		ROUNDS(XN, cipher, rk, rounds);                                                              \
		XN(XTS_OUT)                                                                                  \
		in += 16 * (n), out += 16 * (n), nblocks -= (n);                                             \
	}

CT_TARGET_XMM static void xts_enc(const struct ct_aes_key *k, const struct ct_aes_key *tk, uint8_t tweak[16],
				  const uint8_t *in, uint8_t *out, size_t nblocks)
{
	const __m128i *rk = (const __m128i *)k->enc;
	const unsigned rounds = k->rounds;
	__m128i t = xts_tweak(tk, tweak);
	XTS_STEP(X8, 8, ENC)
	XTS_STEP(X1, 1, ENC)
	ST(tweak, 0, t);
}

CT_TARGET_XMM static void xts_dec(const struct ct_aes_key *k, const struct ct_aes_key *tk, uint8_t tweak[16],
				  const uint8_t *in, uint8_t *out, size_t nblocks)
{
	const __m128i *rk = (const __m128i *)k->dec;
	const unsigned rounds = k->rounds;
	__m128i t = xts_tweak(tk, tweak);
	XTS_STEP(X8, 8, DEC)
	XTS_STEP(X1, 1, DEC)
	ST(tweak, 0, t);
}

/* A data unit of exactly one block (a 16-byte request): the tweak is made and used in registers,
 * with no call in between and no copy of it left in memory to wipe. Same result as the tweak
 * encryption followed by xts_enc/xts_dec of one block. */
CT_TARGET_XMM void ct_aes_xmm_xts_one(const struct ct_aes_key *data_key, const struct ct_aes_key *tweak_key,
				      const uint8_t iv[16], const uint8_t *in, uint8_t *out, bool encrypt)
{
	const unsigned rounds = data_key->rounds;
	const __m128i t = xts_tweak(tweak_key, iv);
	__m128i b0 = _mm_xor_si128(LD(in, 0), t);
	if (encrypt) {
		const __m128i *rk = (const __m128i *)data_key->enc;
		ROUNDS(X1, ENC, rk, rounds);
	} else {
		const __m128i *rk = (const __m128i *)data_key->dec;
		ROUNDS(X1, DEC, rk, rounds);
	}
	ST(out, 0, _mm_xor_si128(b0, t));
}

/* The stealing's second block and both stores, first's result given (steal_second's caller
 * says which is which): second = crypt(tail bytes || first's bytes n..15) with t_second, the
 * tail bytes being ending's top n; out gets second, and out + n second's bytes n..15 and then
 * first's first n (index i + n: its low nibble is the byte in either). */
XI void steal_second(const __m128i *rk, unsigned rounds, bool encrypt, __m128i first, __m128i ending,
		     __m128i t_second, uint8_t *out, size_t tail)
{
	const __m128i iota = _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
	const char n = (char)tail;
	const __m128i below_n = _mm_cmpgt_epi8(_mm_set1_epi8(n), iota);
	const __m128i tail_bytes =
		_mm_shuffle_epi8(ending, _mm_add_epi8(iota, _mm_set1_epi8((char)(16 - n))));
	__m128i b = _mm_xor_si128(_mm_blendv_epi8(first, tail_bytes, below_n), t_second);
	b = encrypt ? enc1(rk, rounds, b) : dec1(rk, rounds, b);
	const __m128i second = _mm_xor_si128(b, t_second);
	const __m128i from_n = _mm_add_epi8(iota, _mm_set1_epi8(n));
	const __m128i top_n = _mm_cmpgt_epi8(iota, _mm_set1_epi8((char)(15 - n)));
	ST(out, 0, second);
	_mm_storeu_si128((__m128i *)(out + tail), _mm_blendv_epi8(_mm_shuffle_epi8(second, from_n),
								  _mm_shuffle_epi8(first, from_n), top_n));
}

/* XTS ciphertext stealing's last two blocks in registers: in holds the last whole block and the
 * tail (1..15 bytes) after it, t_prev the block's tweak T_{m-1}. Encryption: CC =
 * E(P_{m-1}) with T_{m-1}, C_m = CC's first tail bytes, C_{m-1} = E(P_m || CC's rest) with T_m.
 * Decryption: PP = D(C_{m-1}) with T_m, P_m = PP's first tail bytes, P_{m-1} = D(C_m || PP's
 * rest) with T_{m-1}. Both inputs are read first (the block, and the 16 bytes that end with the
 * tail), and the 16 + tail bytes written as two overlapping stores: in may be out. The bytes
 * move between registers by shuffles whose indices count from the tail's length. */
CT_TARGET_XMM void ct_aes_xmm_xts_steal(const struct ct_aes_key *k, const uint8_t t_prev[16],
					const uint8_t *in, uint8_t *out, size_t tail, bool encrypt)
{
	const __m128i t1 = LD(t_prev, 0), t2 = xts_mulx(t1);
	const __m128i t_first = encrypt ? t1 : t2, t_second = encrypt ? t2 : t1;
	const __m128i block = LD(in, 0), ending = _mm_loadu_si128((const __m128i *)(in + tail));
	const __m128i *rk = (const __m128i *)(encrypt ? k->enc : k->dec);
	__m128i b = _mm_xor_si128(block, t_first);
	b = encrypt ? enc1(rk, k->rounds, b) : dec1(rk, k->rounds, b);
	steal_second(rk, k->rounds, encrypt, _mm_xor_si128(b, t_first), ending, t_second, out, tail);
}

/* The stealing after a kernel that made its first block's result (at out) with the others:
 * encrypting, CC (with T_{m-1}), and C_{m-1} = E(P_m || CC's bytes n..15) follows with t_second
 * = T_m; decrypting, PP (with T_m: xts_dec_steal), and P_{m-1} = D(C_m || PP's bytes n..15)
 * follows with t_second = T_{m-1}. ending: the unit's last 16 bytes, copied before the kernel
 * could write over them. */
CT_TARGET_XMM void ct_aes_xmm_xts_steal_last(const struct ct_aes_key *k, const uint8_t t_second[16],
					     const uint8_t ending[16], uint8_t *out, size_t tail,
					     bool encrypt)
{
	steal_second((const __m128i *)(encrypt ? k->enc : k->dec), k->rounds, encrypt, LD(out, 0),
		     LD(ending, 0), LD(t_second, 0), out, tail);
}

/* ---- GHASH ---- */

XI __m128i gf_mul(__m128i a, __m128i b)
{
	__m128i lo = _mm_setzero_si128(), mid = lo, hi = lo;
	clmul_acc(a, b, &lo, &mid, &hi);
	return gf_reduce(lo, mid, hi);
}

/* H^1..H^16 one after the other, then H^17.. as H^(k-16) * H^16: those multiplies are
 * independent of each other, so the key set-up's serial chain stays 15 multiplies long. */
CT_TARGET_XMM void ct_ghash_init_xmm(uint8_t hpow[CT_GHASH_KEY_ROWS][16], const uint8_t h[16])
{
	__m128i h1 = bswap128(LD(h, 0)), p = h1;
	ST(hpow[CT_GHASH_POWERS - 1], 0, h1);
	for (int j = CT_GHASH_POWERS - 2; j >= CT_GHASH_POWERS - 16; j--) {
		p = gf_mul(p, h1);
		ST(hpow[j], 0, p);
	}
	for (int j = CT_GHASH_POWERS - 17; j >= 0; j--)
		ST(hpow[j], 0, gf_mul(LD(hpow[j + 16], 0), p));
	ST(hpow[CT_GHASH_XDIV_ROW], 0, gf_div_x(LD(hpow[0], 0)));                        /* H^32 x^-1 */
	ST(hpow[CT_GHASH_XDIV_ROW + 1], 0, gf_div_x(LD(hpow[CT_GHASH_POWERS - 16], 0))); /* H^16 x^-1 */
}

CT_TARGET_XMM static void ghash(const uint8_t hpow[CT_GHASH_KEY_ROWS][16], uint8_t xi[16], const uint8_t *in,
				size_t nblocks)
{
	ST(xi, 0, bswap128(ghash_tail(hpow, bswap128(LD(xi, 0)), in, nblocks)));
}

const struct ct_aes_kernels ct_aes_kernels_xmm = {
	.ecb_enc = ecb_enc,
	.ecb_dec = ecb_dec,
	.cbc_enc = ct_aes_xmm_cbc_enc,
	.cbc_dec = cbc_dec,
	.ctr = ctr_blocks,
	.cfb_enc = ct_aes_xmm_cfb_enc,
	.cfb_dec = cfb_dec,
	.ofb = ct_aes_xmm_ofb,
	.xts_enc = xts_enc,
	.xts_dec = xts_dec,
	.ghash = ghash,
};
