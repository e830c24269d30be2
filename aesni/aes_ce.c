/* SPDX-License-Identifier: MIT */
/*
 * aes_ce.c - ARMv8 Crypto Extensions kernels (AESE/AESMC/AESD/AESIMC, PMULL for GHASH) for
 * aarch64: key expansion, every mode's whole blocks, the one-block XTS unit. The library is built
 * for plain armv8-a; each function here carries the crypto target and dispatch.c calls none of
 * them before HWCAP says AES and PMULL are there. The key layout is the x86 one (FIPS-197 round
 * keys in byte order, the equivalent inverse cipher's keys for decryption): AESE/AESD add the
 * round key before the S-box where AESENC/AESDEC add it after, which only moves the whitening.
 */
#include <string.h>

#include <arm_neon.h>

#include "aes_internal.h"
#include "unroll.h"
#include "key_schedule.h"

/* Expands to m(0) .. m(n-1): every block of a batch in its own register (see aes_xmm.c). */

#define CI static inline __attribute__((always_inline)) CT_TARGET_CE

#define LD(p, i) vld1q_u8((const uint8_t *)(p) + 16 * (i))
#define ST(p, i, v) vst1q_u8((uint8_t *)(p) + 16 * (i), (v))
#define RK(rk, r) vld1q_u8((rk)[r])

/* ---- key expansion (key_schedule.h), SubWord done by AESE ---- */

/* With the word in all four columns, ShiftRows is the identity, so AESE with a zero round key is
 * exactly SubBytes: a constant-time S-box for the schedule, for every key size. */
CI uint32_t sub_word(uint32_t w)
{
	const uint8x16_t v = vaeseq_u8(vreinterpretq_u8_u32(vdupq_n_u32(w)), vdupq_n_u8(0));
	return vgetq_lane_u32(vreinterpretq_u32_u8(v), 0);
}

CT_TARGET_CE void ct_aes_expand_key_ce(struct ct_aes_key *k, const uint8_t *key, unsigned bits)
{
	ct_aes_schedule(k, key, bits, sub_word);
	const unsigned rounds = k->rounds;

	/* Equivalent inverse cipher: reversed order, InvMixColumns on the inner round keys. */
	ST(k->dec[0], 0, LD(k->enc[rounds], 0));
	for (unsigned r = 1; r < rounds; r++)
		ST(k->dec[r], 0, vaesimcq_u8(LD(k->enc[rounds - r], 0)));
	ST(k->dec[rounds], 0, LD(k->enc[0], 0));
}

/* Runs the rounds of 'cipher' (ENC/DEC) over the blocks b0.. named by XN, keys rk: AESE+AESMC
 * (a pair the cores fuse) for all but the last round, AESE alone for it, then the last key's XOR.
 * Fully unrolled, as on x86, so that each block stays in its register. */
/* clang-format off */
#define ROUND(XN, cipher, rk, r)                                                                             \
	k_ = RK(rk, r);                                                                                      \
	XN(cipher##_ROUND)
#define ROUNDS(XN, cipher, rk, rounds)                                                                       \
	do {                                                                                                 \
		uint8x16_t k_;                                                                               \
		ROUND(XN, cipher, rk, 0) ROUND(XN, cipher, rk, 1) ROUND(XN, cipher, rk, 2)                   \
		ROUND(XN, cipher, rk, 3) ROUND(XN, cipher, rk, 4) ROUND(XN, cipher, rk, 5)                   \
		ROUND(XN, cipher, rk, 6) ROUND(XN, cipher, rk, 7) ROUND(XN, cipher, rk, 8)                   \
		if ((rounds) > 10) {                                                                         \
			ROUND(XN, cipher, rk, 9) ROUND(XN, cipher, rk, 10)                                   \
		}                                                                                            \
		if ((rounds) > 12) {                                                                         \
			ROUND(XN, cipher, rk, 11) ROUND(XN, cipher, rk, 12)                                  \
		}                                                                                            \
		k_ = RK(rk, (rounds)-1);                                                                     \
		XN(cipher##_LAST)                                                                            \
		k_ = RK(rk, rounds);                                                                         \
		XN(WHITEN)                                                                                   \
	} while (0)
/* clang-format on */
#define WHITEN(i) b##i = veorq_u8(b##i, k_);
#define ENC_ROUND(i) b##i = vaesmcq_u8(vaeseq_u8(b##i, k_));
#define ENC_LAST(i) b##i = vaeseq_u8(b##i, k_);
#define DEC_ROUND(i) b##i = vaesimcq_u8(vaesdq_u8(b##i, k_));
#define DEC_LAST(i) b##i = vaesdq_u8(b##i, k_);
#define DECL(i) uint8x16_t b##i;
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

CT_TARGET_CE static void ecb_enc(const struct ct_aes_key *k, const uint8_t *in, uint8_t *out, size_t nblocks)
{
	const unsigned rounds = k->rounds;
	ECB_STEP(X8, 8, ENC, k->enc)
	ECB_STEP(X4, 4, ENC, k->enc)
	ECB_STEP(X1, 1, ENC, k->enc)
}

CT_TARGET_CE static void ecb_dec(const struct ct_aes_key *k, const uint8_t *in, uint8_t *out, size_t nblocks)
{
	const unsigned rounds = k->rounds;
	ECB_STEP(X8, 8, DEC, k->dec)
	ECB_STEP(X4, 4, DEC, k->dec)
	ECB_STEP(X1, 1, DEC, k->dec)
}

/* ---- serial modes: CBC and CFB encryption, OFB ----
 * Each block waits for the previous one, so the speed is the latency of the chain. It is kept to
 * the AES instructions and one XOR: the last round key is folded into the value XORed next (the
 * plaintext, or nothing), and the next AESE adds the first round key itself. */

/* Every round but the final key XOR; the caller XORs rk[rounds] (folded with its own data). */
CI uint8x16_t rounds_open(const uint8_t (*rk)[16], unsigned rounds, uint8x16_t b0)
{
	uint8x16_t k_;
	ROUND(X1, ENC, rk, 0) ROUND(X1, ENC, rk, 1) ROUND(X1, ENC, rk, 2);
	ROUND(X1, ENC, rk, 3) ROUND(X1, ENC, rk, 4) ROUND(X1, ENC, rk, 5);
	ROUND(X1, ENC, rk, 6) ROUND(X1, ENC, rk, 7) ROUND(X1, ENC, rk, 8);
	if (rounds > 10) {
		ROUND(X1, ENC, rk, 9) ROUND(X1, ENC, rk, 10);
	}
	if (rounds > 12) {
		ROUND(X1, ENC, rk, 11) ROUND(X1, ENC, rk, 12);
	}
	return vaeseq_u8(b0, RK(rk, rounds - 1));
}

/* C_i = E(P_i ^ C_{i-1}); the state b is P_i ^ C_{i-1}, C_i = open(b) ^ klast. */
CT_TARGET_CE static void cbc_enc(const struct ct_aes_key *k, uint8_t iv[16], const uint8_t *in, uint8_t *out,
				 size_t nblocks)
{
	const unsigned rounds = k->rounds;
	const uint8x16_t klast = RK(k->enc, rounds);
	uint8x16_t c = LD(iv, 0);
	if (nblocks) {
		uint8x16_t b = veorq_u8(c, LD(in, 0));
		for (; nblocks > 1; nblocks--, in += 16, out += 16) {
			const uint8x16_t next = veorq_u8(LD(in, 1), klast); /* P_{i+1} ^ klast */
			const uint8x16_t o = rounds_open(k->enc, rounds, b);
			b = veorq_u8(o, next);
			c = veorq_u8(o, klast);
			ST(out, 0, c);
		}
		c = veorq_u8(rounds_open(k->enc, rounds, b), klast);
		ST(out, 0, c);
	}
	ST(iv, 0, c);
}

/* Every previous ciphertext block is loaded before the first store of a batch, so in-place
 * decryption never overwrites a block that is still needed. */
#define CBC_XOR_PREV(i) b##i = veorq_u8(b##i, (i) ? LD(in, (i)-1) : prev);
#define CBC_DEC_STEP(XN, n)                                                                                  \
	while (nblocks >= (n)) {                                                                             \
		XN(DECL)                                                                                     \
		XN(LOAD_IN)                                                                                  \
		uint8x16_t next_ = LD(in, (n)-1);                                                            \
		ROUNDS(XN, DEC, k->dec, rounds);                                                             \
		XN(CBC_XOR_PREV)                                                                             \
		XN(STORE_OUT)                                                                                \
		prev = next_;                                                                                \
		in += 16 * (n), out += 16 * (n), nblocks -= (n);                                             \
	}

CT_TARGET_CE static void cbc_dec(const struct ct_aes_key *k, uint8_t iv[16], const uint8_t *in, uint8_t *out,
				 size_t nblocks)
{
	const unsigned rounds = k->rounds;
	uint8x16_t prev = LD(iv, 0);
	CBC_DEC_STEP(X8, 8)
	CBC_DEC_STEP(X4, 4)
	CBC_DEC_STEP(X1, 1)
	ST(iv, 0, prev);
}

/* ---- CTR ---- */

/* The counter's high 8 bytes never change here (the caller keeps the low 64 bits from wrapping),
 * so each block is those bytes and the big-endian low half, counted in a scalar register. */
#define CTR_BLOCK(i) b##i = vreinterpretq_u8_u64(vsetq_lane_u64(__builtin_bswap64(lo + (i)), hi, 1));
#define CTR_XOR_IN(i) b##i = veorq_u8(b##i, LD(in, i));
#define CTR_STEP(XN, n)                                                                                      \
	while (nblocks >= (n)) {                                                                             \
		XN(DECL)                                                                                     \
		XN(CTR_BLOCK)                                                                                \
		lo += (n);                                                                                   \
		ROUNDS(XN, ENC, k->enc, rounds);                                                             \
		XN(CTR_XOR_IN)                                                                               \
		XN(STORE_OUT)                                                                                \
		in += 16 * (n), out += 16 * (n), nblocks -= (n);                                             \
	}

CT_TARGET_CE static void ctr_blocks(const struct ct_aes_key *k, uint8_t ctr[16], const uint8_t *in,
				    uint8_t *out, size_t nblocks)
{
	const unsigned rounds = k->rounds;
	const uint64x2_t hi = vreinterpretq_u64_u8(LD(ctr, 0));
	uint64_t lo = __builtin_bswap64(vgetq_lane_u64(hi, 1));
	CTR_STEP(X8, 8)
	CTR_STEP(X4, 4)
	CTR_STEP(X1, 1)
	ST(ctr, 0, vreinterpretq_u8_u64(vsetq_lane_u64(__builtin_bswap64(lo), hi, 1)));
}

/* ---- CFB128, OFB (full blocks; the mode layer handles num) ---- */

/* C_i = E(C_{i-1}) ^ P_i = open(C_{i-1}) ^ (klast ^ P_i): one XOR after the rounds. */
CT_TARGET_CE static void cfb_enc(const struct ct_aes_key *k, uint8_t iv[16], const uint8_t *in, uint8_t *out,
				 size_t nblocks)
{
	const unsigned rounds = k->rounds;
	const uint8x16_t klast = RK(k->enc, rounds);
	uint8x16_t c = LD(iv, 0);
	for (; nblocks; nblocks--, in += 16, out += 16) {
		const uint8x16_t p = veorq_u8(LD(in, 0), klast);
		c = veorq_u8(rounds_open(k->enc, rounds, c), p);
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
		uint8x16_t next_ = LD(in, (n)-1);                                                            \
		ROUNDS(XN, ENC, k->enc, rounds);                                                             \
		XN(CTR_XOR_IN)                                                                               \
		XN(STORE_OUT)                                                                                \
		prev = next_;                                                                                \
		in += 16 * (n), out += 16 * (n), nblocks -= (n);                                             \
	}

CT_TARGET_CE static void cfb_dec(const struct ct_aes_key *k, uint8_t iv[16], const uint8_t *in, uint8_t *out,
				 size_t nblocks)
{
	const unsigned rounds = k->rounds;
	uint8x16_t prev = LD(iv, 0);
	CFB_DEC_STEP(X8, 8)
	CFB_DEC_STEP(X1, 1)
	ST(iv, 0, prev);
}

/* S_i = E(S_{i-1}) = open(S_{i-1}) ^ klast, O_i = P_i ^ S_i. */
CT_TARGET_CE static void ofb(const struct ct_aes_key *k, uint8_t iv[16], const uint8_t *in, uint8_t *out,
			     size_t nblocks)
{
	const unsigned rounds = k->rounds;
	const uint8x16_t klast = RK(k->enc, rounds);
	uint8x16_t s = LD(iv, 0);
	for (; nblocks; nblocks--, in += 16, out += 16) {
		s = veorq_u8(rounds_open(k->enc, rounds, s), klast);
		ST(out, 0, veorq_u8(s, LD(in, 0)));
	}
	ST(iv, 0, s);
}

/* ---- XTS ---- */

/* tweak * x in GF(2^128), little-endian: each 64-bit half shifts left one bit; the low half's
 * top bit carries into the high half and the high half's top bit folds back as 0x87. */
CI uint8x16_t xts_mulx(uint8x16_t t)
{
	static const uint64_t fold[2] = { 0x87, 1 };
	const uint64x2_t v = vreinterpretq_u64_u8(t);
	uint64x2_t m = vreinterpretq_u64_s64(vshrq_n_s64(vreinterpretq_s64_u64(v), 63));
	m = vandq_u64(vextq_u64(m, m, 1), vld1q_u64(fold));
	return vreinterpretq_u8_u64(veorq_u64(vshlq_n_u64(v, 1), m));
}

/* The first tweak: tweak itself, or with tk the IV in tweak encrypted (aes_internal.h). */
CI uint8x16_t xts_tweak(const struct ct_aes_key *tk, const uint8_t tweak[16])
{
	if (!tk)
		return LD(tweak, 0);
	return veorq_u8(rounds_open(tk->enc, tk->rounds, LD(tweak, 0)), RK(tk->enc, tk->rounds));
}

#define XTS_TWEAK(i)                                                                                         \
	uint8x16_t t##i = t;                                                                                 \
	t = xts_mulx(t);
#define XTS_IN(i) b##i = veorq_u8(LD(in, i), t##i);
#define XTS_OUT(i) ST(out, i, veorq_u8(b##i, t##i));
#define XTS_STEP(XN, n, cipher, rk)                                                                          \
	while (nblocks >= (n)) {                                                                             \
		XN(DECL)                                                                                     \
		XN(XTS_TWEAK)                                                                                \
		XN(XTS_IN)                                                                                   \
		ROUNDS(XN, cipher, rk, rounds);                                                              \
		XN(XTS_OUT)                                                                                  \
		in += 16 * (n), out += 16 * (n), nblocks -= (n);                                             \
	}

CT_TARGET_CE static void xts_enc(const struct ct_aes_key *k, const struct ct_aes_key *tk, uint8_t tweak[16],
				 const uint8_t *in, uint8_t *out, size_t nblocks)
{
	const unsigned rounds = k->rounds;
	uint8x16_t t = xts_tweak(tk, tweak);
	XTS_STEP(X8, 8, ENC, k->enc)
	XTS_STEP(X1, 1, ENC, k->enc)
	ST(tweak, 0, t);
}

CT_TARGET_CE static void xts_dec(const struct ct_aes_key *k, const struct ct_aes_key *tk, uint8_t tweak[16],
				 const uint8_t *in, uint8_t *out, size_t nblocks)
{
	const unsigned rounds = k->rounds;
	uint8x16_t t = xts_tweak(tk, tweak);
	XTS_STEP(X8, 8, DEC, k->dec)
	XTS_STEP(X1, 1, DEC, k->dec)
	ST(tweak, 0, t);
}

/* A data unit of exactly one block: the tweak is made and used in registers (see aes_xmm.c). */
CT_TARGET_CE void ct_aes_ce_xts_one(const struct ct_aes_key *data_key, const struct ct_aes_key *tweak_key,
				    const uint8_t iv[16], const uint8_t *in, uint8_t *out, bool encrypt)
{
	const unsigned rounds = data_key->rounds;
	const uint8x16_t t = xts_tweak(tweak_key, iv);
	uint8x16_t b0 = veorq_u8(LD(in, 0), t);
	if (encrypt)
		ROUNDS(X1, ENC, data_key->enc, rounds);
	else
		ROUNDS(X1, DEC, data_key->dec, rounds);
	ST(out, 0, veorq_u8(b0, t));
}

/* The stealing's second block and both stores (aes_xmm.c's steal_second): TBL gives 0 for an
 * index past 15, so the moved bytes need no blend. */
CI void steal_second(const struct ct_aes_key *k, bool encrypt, uint8x16_t first, uint8x16_t ending,
		     uint8x16_t t_second, uint8_t *out, size_t tail)
{
	static const uint8_t iota_bytes[16] = { 0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15 };
	const unsigned rounds = k->rounds;
	const uint8x16_t iota = vld1q_u8(iota_bytes), n = vdupq_n_u8((uint8_t)tail);
	const uint8x16_t tail_bytes = vqtbl1q_u8(ending, vaddq_u8(iota, vdupq_n_u8((uint8_t)(16 - tail))));
	uint8x16_t b0 = veorq_u8(vbslq_u8(vcgtq_u8(n, iota), tail_bytes, first), t_second);
	if (encrypt)
		ROUNDS(X1, ENC, k->enc, rounds);
	else
		ROUNDS(X1, DEC, k->dec, rounds);
	const uint8x16_t second = veorq_u8(b0, t_second);
	const uint8x16_t from_n = vaddq_u8(iota, n);
	ST(out, 0, second);
	vst1q_u8(out + tail,
		 vorrq_u8(vqtbl1q_u8(second, from_n), vqtbl1q_u8(first, vsubq_u8(from_n, vdupq_n_u8(16)))));
}

/* XTS ciphertext stealing's last two blocks in registers (aes_xmm.c's ct_aes_xmm_xts_steal says
 * how). */
CT_TARGET_CE void ct_aes_ce_xts_steal(const struct ct_aes_key *k, const uint8_t t_prev[16], const uint8_t *in,
				      uint8_t *out, size_t tail, bool encrypt)
{
	const uint8x16_t t1 = LD(t_prev, 0), t2 = xts_mulx(t1);
	const uint8x16_t t_first = encrypt ? t1 : t2, t_second = encrypt ? t2 : t1;
	const uint8x16_t ending = vld1q_u8(in + tail);
	const unsigned rounds = k->rounds;
	uint8x16_t b0 = veorq_u8(LD(in, 0), t_first);
	if (encrypt)
		ROUNDS(X1, ENC, k->enc, rounds);
	else
		ROUNDS(X1, DEC, k->dec, rounds);
	steal_second(k, encrypt, veorq_u8(b0, t_first), ending, t_second, out, tail);
}

CT_TARGET_CE void ct_aes_ce_xts_steal_last(const struct ct_aes_key *k, const uint8_t t_second[16],
					   const uint8_t ending[16], uint8_t *out, size_t tail, bool encrypt)
{
	steal_second(k, encrypt, LD(out, 0), LD(ending, 0), LD(t_second, 0), out, tail);
}

/* ---- GHASH ----
 * The same representation and reduction as the PCLMULQDQ code (simd_inline.h): operands are
 * byte-reflected (the wire bytes reversed, read as a little-endian 128-bit integer), the 256-bit
 * product is shifted left one bit and reduced modulo x^128 + x^7 + x^2 + x + 1 (Gueron and
 * Kounavis, algorithm 5), and up to 16 blocks share one reduction through the H powers. */

CI uint8x16_t bswap128(uint8x16_t v)
{
	const uint8x16_t r = vrev64q_u8(v);
	return vextq_u8(r, r, 8);
}

/* Byte shifts of the whole register, as _mm_slli_si128 / _mm_srli_si128. */
#define BSHL(v, n) vextq_u8(vdupq_n_u8(0), (v), 16 - (n))
#define BSHR(v, n) vextq_u8((v), vdupq_n_u8(0), (n))
#define U32(v) vreinterpretq_u32_u8(v)
#define U8(v) vreinterpretq_u8_u32(v)

CI uint8x16_t gf_reduce(uint8x16_t lo, uint8x16_t mid, uint8x16_t hi)
{
	lo = veorq_u8(lo, BSHL(mid, 8));
	hi = veorq_u8(hi, BSHR(mid, 8));

	/* [hi:lo] <<= 1 */
	const uint8x16_t lc = U8(vshrq_n_u32(U32(lo), 31)), hc = U8(vshrq_n_u32(U32(hi), 31));
	const uint8x16_t across = BSHR(lc, 12);
	lo = vorrq_u8(U8(vshlq_n_u32(U32(lo), 1)), BSHL(lc, 4));
	hi = vorrq_u8(vorrq_u8(U8(vshlq_n_u32(U32(hi), 1)), BSHL(hc, 4)), across);

	uint8x16_t a = U8(veorq_u32(vshlq_n_u32(U32(lo), 31), vshlq_n_u32(U32(lo), 30)));
	a = veorq_u8(a, U8(vshlq_n_u32(U32(lo), 25)));
	const uint8x16_t b = BSHR(a, 4);
	lo = veorq_u8(lo, BSHL(a, 12));
	uint8x16_t d = U8(veorq_u32(vshrq_n_u32(U32(lo), 1), vshrq_n_u32(U32(lo), 2)));
	d = veorq_u8(veorq_u8(d, U8(vshrq_n_u32(U32(lo), 7))), b);
	return veorq_u8(hi, veorq_u8(lo, d));
}

/* Carry-less products of 64-bit halves: lo*lo (PMULL) and hi*hi (PMULL2). */
CI uint8x16_t clmul_lo(uint8x16_t a, uint8x16_t b)
{
	return vreinterpretq_u8_p128(vmull_p64(vgetq_lane_p64(vreinterpretq_p64_u8(a), 0),
					       vgetq_lane_p64(vreinterpretq_p64_u8(b), 0)));
}
CI uint8x16_t clmul_hi(uint8x16_t a, uint8x16_t b)
{
	return vreinterpretq_u8_p128(vmull_high_p64(vreinterpretq_p64_u8(a), vreinterpretq_p64_u8(b)));
}

/* Karatsuba: the middle term is (a_lo ^ a_hi)(b_lo ^ b_hi) ^ lo ^ hi, fixed up once. */
CI uint8x16_t ghash_blocks(const uint8_t hpow[CT_GHASH_KEY_ROWS][16], uint8x16_t x, const uint8_t *in,
			   size_t nblocks)
{
	while (nblocks) {
		const size_t n = nblocks < CT_GHASH_POWERS ? nblocks : CT_GHASH_POWERS;
		uint8x16_t lo = vdupq_n_u8(0), mid = lo, hi = lo;
		for (size_t i = 0; i < n; i++) {
			uint8x16_t blk = bswap128(LD(in, i));
			if (i == 0)
				blk = veorq_u8(blk, x);
			const uint8x16_t h = LD(hpow[CT_GHASH_POWERS - n + i], 0);
			const uint8x16_t hk = veorq_u8(h, vextq_u8(h, h, 8));
			const uint8x16_t dk = veorq_u8(blk, vextq_u8(blk, blk, 8));
			lo = veorq_u8(lo, clmul_lo(blk, h));
			hi = veorq_u8(hi, clmul_hi(blk, h));
			mid = veorq_u8(mid, clmul_lo(dk, hk));
		}
		x = gf_reduce(lo, veorq_u8(mid, veorq_u8(lo, hi)), hi);
		in += 16 * n;
		nblocks -= n;
	}
	return x;
}

CI uint8x16_t gf_mul(uint8x16_t a, uint8x16_t b)
{
	const uint8x16_t lo = clmul_lo(a, b), hi = clmul_hi(a, b);
	const uint8x16_t mid = veorq_u8(clmul_lo(a, vextq_u8(b, b, 8)), clmul_lo(vextq_u8(a, a, 8), b));
	return gf_reduce(lo, mid, hi);
}

CT_TARGET_CE void ct_ghash_init_ce(uint8_t hpow[CT_GHASH_KEY_ROWS][16], const uint8_t h[16])
{
	const uint8x16_t h1 = bswap128(LD(h, 0));
	uint8x16_t p = h1;
	ST(hpow[CT_GHASH_POWERS - 1], 0, h1);
	/* As on x86: H^1..H^16 in a chain, the rest as H^(k-16) * H^16, independent multiplies. */
	for (int j = CT_GHASH_POWERS - 2; j >= CT_GHASH_POWERS - 16; j--) {
		p = gf_mul(p, h1);
		ST(hpow[j], 0, p);
	}
	for (int j = CT_GHASH_POWERS - 17; j >= 0; j--)
		ST(hpow[j], 0, gf_mul(LD(hpow[j + 16], 0), p));
}

CT_TARGET_CE static void ghash(const uint8_t hpow[CT_GHASH_KEY_ROWS][16], uint8_t xi[16], const uint8_t *in,
			       size_t nblocks)
{
	ST(xi, 0, bswap128(ghash_blocks(hpow, bswap128(LD(xi, 0)), in, nblocks)));
}

const struct ct_aes_kernels ct_aes_kernels_ce = {
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
