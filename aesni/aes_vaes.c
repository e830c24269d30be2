/* SPDX-License-Identifier: MIT */
/*
 * aes_vaes.c - VAES + VPCLMULQDQ kernels on 256-bit registers for the parallel modes (ECB,
 * CBC-decrypt, CTR, CFB-decrypt, XTS, GHASH). Two blocks per register and eight registers in
 * flight: Zen 3 and Ice Lake issue two VAESENC per cycle with a 4-cycle latency, so 16 blocks
 * keep both units busy. Short inputs and the rest after the batches run in one short pass of as
 * many registers as they need; the serial modes (CBC and CFB encryption, OFB) cannot use the
 * width and stay on the AES-NI kernels.
 */
#include <string.h>

#include "aes_internal.h"
#include "unroll.h"

#define CT_SIMD_TARGET CT_TARGET_YMM
#include "simd_inline.h"
#define YI SI

#define LD2(p, i) _mm256_loadu_si256((const __m256i *)(p) + (i))
#define ST2(p, i, v) _mm256_storeu_si256((__m256i *)(p) + (i), (v))

YI __m256i bcast(const uint8_t rk[16])
{
	return _mm256_broadcastsi128_si256(_mm_loadu_si128((const __m128i *)rk));
}

YI __m256i bswap256(__m256i v)
{
	const __m256i m = _mm256_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 0, 1, 2, 3, 4,
					  5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
	return _mm256_shuffle_epi8(v, m);
}

/* Both halves of a register from two 128-bit values (lo = the first block in memory). */
YI __m256i pair(__m128i lo, __m128i hi)
{
	return _mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1);
}

/* Rounds fully unrolled (1..9 always, 10..13 by key size): a loop over the rounds makes the
 * compiler shuffle the eight registers around at every iteration at -O2. */
/* clang-format off */
#define YROUND(cipher, rk, r)                                                                                \
	k_ = bcast((rk)[r]);                                                                                 \
	X8(cipher##_YROUND)
/* YROUNDS_THEN: after round r (1..8), between(r - 1): other work placed early in program order
 * (XTS computes its next tweaks there). */
#define YROUNDS(cipher, rk, rounds) YROUNDS_THEN(cipher, rk, rounds, YNOTHING)
#define YNOTHING(i)
#define YROUNDS_THEN(cipher, rk, rounds, between)                                                            \
	do {                                                                                                 \
		__m256i k_ = bcast((rk)[0]);                                                                 \
		X8(YWHITEN)                                                                                  \
		YROUND(cipher, rk, 1) between(0) YROUND(cipher, rk, 2) between(1)                            \
		YROUND(cipher, rk, 3) between(2) YROUND(cipher, rk, 4) between(3)                            \
		YROUND(cipher, rk, 5) between(4) YROUND(cipher, rk, 6) between(5)                            \
		YROUND(cipher, rk, 7) between(6) YROUND(cipher, rk, 8) between(7)                            \
		YROUND(cipher, rk, 9)                                                                        \
		if ((rounds) > 10) {                                                                         \
			YROUND(cipher, rk, 10) YROUND(cipher, rk, 11)                                        \
		}                                                                                            \
		if ((rounds) > 12) {                                                                         \
			YROUND(cipher, rk, 12) YROUND(cipher, rk, 13)                                        \
		}                                                                                            \
		k_ = bcast((rk)[rounds]);                                                                    \
		X8(cipher##_YLAST)                                                                           \
	} while (0)
/* clang-format on */
#define YWHITEN(i) b##i = _mm256_xor_si256(b##i, k_);
#define ENC_YROUND(i) b##i = _mm256_aesenc_epi128(b##i, k_);
#define ENC_YLAST(i) b##i = _mm256_aesenclast_epi128(b##i, k_);
#define DEC_YROUND(i) b##i = _mm256_aesdec_epi128(b##i, k_);
#define DEC_YLAST(i) b##i = _mm256_aesdeclast_epi128(b##i, k_);
#define YDECL(i) __m256i b##i;
#define YLOAD_IN(i) b##i = LD2(in, i);
#define YSTORE_OUT(i) ST2(out, i, b##i);
#define YXOR_IN(i) b##i = _mm256_xor_si256(b##i, LD2(in, i));

/* A short pass: 1..16 blocks (a short input, or the rest after the batches) in ceil(n/2)
 * registers, one function per register count (unroll.h); an odd count leaves the high lane of
 * the last register (last_) empty, its block loaded and stored alone (128 bits). Before, the
 * rest after the batches went to the 128-bit kernels: ECB, CTR and CBC decryption of 1008 bytes
 * took 12-13 ns more than 1024 bytes' (Intel Xeon, this level). */
#define YLD_SHORT_AT(p, i) ((i) == last_ && odd_ ? _mm256_zextsi128_si256(LD(p, 2 * (i))) : LD2(p, i))
#define YST_SHORT_AT(p, i, v)                                                                                \
	if ((i) == last_ && odd_)                                                                            \
		ST(p, 2 * (i), _mm256_castsi256_si128(v));                                                   \
	else                                                                                                 \
		ST2(p, i, (v));
#define YLOAD_SHORT(i) b##i = YLD_SHORT_AT(in, i);
#define YSTORE_SHORT(i) YST_SHORT_AT(out, i, b##i)
#define YXOR_IN_SHORT(i) b##i = _mm256_xor_si256(b##i, YLD_SHORT_AT(in, i));
/* Rounds 1 .. the last on XA's registers (their whitening done by the caller), each key
 * broadcast from rk. */
/* clang-format off */
#define YROUND_N(XA, cipher, rk, r)                                                                          \
	k_ = bcast((rk)[r]);                                                                                 \
	XA(cipher##_YROUND)
#define YROUNDS_FROM1_N(XA, cipher, rk, rounds)                                                              \
	YROUND_N(XA, cipher, rk, 1) YROUND_N(XA, cipher, rk, 2) YROUND_N(XA, cipher, rk, 3)                  \
	YROUND_N(XA, cipher, rk, 4) YROUND_N(XA, cipher, rk, 5) YROUND_N(XA, cipher, rk, 6)                  \
	YROUND_N(XA, cipher, rk, 7) YROUND_N(XA, cipher, rk, 8) YROUND_N(XA, cipher, rk, 9)                  \
	if ((rounds) > 10) {                                                                                 \
		YROUND_N(XA, cipher, rk, 10) YROUND_N(XA, cipher, rk, 11)                                    \
	}                                                                                                    \
	if ((rounds) > 12) {                                                                                 \
		YROUND_N(XA, cipher, rk, 12) YROUND_N(XA, cipher, rk, 13)                                    \
	}                                                                                                    \
	k_ = bcast((rk)[rounds]);                                                                            \
	XA(cipher##_YLAST)
/* clang-format on */
/* The table of a short pass's instances, and the call of the one for nblocks (1..16). */
#define YSHORT_CALL(name, args, ...)                                                                         \
	do {                                                                                                 \
		REGS_1_8_BY_COUNT(name, __VA_ARGS__)                                                         \
		by_regs[(nblocks - 1) / 2] args;                                                             \
	} while (0)

/* A batch: 8 registers of 2 blocks. */
#define WIDE_MIN CT_AES_WIDE_MIN_BLOCKS

/* ---- ECB ---- */

/* clang-format off */
#define ECB_SHORT_REGS(name, regs, cipher, keys)                                                             \
	CT_TARGET_YMM static void name##_##regs(const struct ct_aes_key *k, const uint8_t *in, uint8_t *out, \
						size_t nblocks)                                              \
	{                                                                                                    \
		const unsigned rounds = k->rounds, last_ = (regs) - 1;                                       \
		const bool odd_ = nblocks & 1;                                                               \
		const uint8_t(*const rk)[16] = k->keys;                                                      \
		X##regs(YDECL) X##regs(YLOAD_SHORT)                                                          \
		__m256i k_ = bcast(rk[0]);                                                                   \
		X##regs(YWHITEN)                                                                             \
		YROUNDS_FROM1_N(X##regs, cipher, rk, rounds)                                                 \
		X##regs(YSTORE_SHORT)                                                                        \
	}
/* clang-format on */
#define ECB_KERNEL(name, cipher, keys)                                                                       \
	FOR_REGS_1_8(ECB_SHORT_REGS, name##_short, cipher, keys)                                             \
	CT_TARGET_YMM static void name(const struct ct_aes_key *k, const uint8_t *in, uint8_t *out,          \
				       size_t nblocks)                                                       \
	{                                                                                                    \
		const unsigned rounds = k->rounds;                                                           \
		for (; nblocks >= 16; in += 256, out += 256, nblocks -= 16) {                                \
			X8(YDECL)                                                                            \
			X8(YLOAD_IN)                                                                         \
			YROUNDS(cipher, k->keys, rounds);                                                    \
			X8(YSTORE_OUT)                                                                       \
		}                                                                                            \
		if (nblocks)                                                                                 \
			YSHORT_CALL(name##_short, (k, in, out, nblocks), const struct ct_aes_key *,          \
				    const uint8_t *, uint8_t *, size_t);                                     \
	}
ECB_KERNEL(ecb_enc, ENC, enc)
ECB_KERNEL(ecb_dec, DEC, dec)

/* ---- CBC decryption, CFB decryption ---- */

/* Register i holds blocks 2i, 2i+1; its chaining input is blocks 2i-1, 2i: one unaligned load
 * 16 bytes back, except register 0 whose first half is the IV. Every chaining load precedes the
 * first store, so in-place operation is safe. */
#define YPREV(i) __m256i p##i = (i) ? LD2(in - 16, i) : pair(prev, LD(in, 0));
#define YXOR_PREV(i) b##i = _mm256_xor_si256(b##i, p##i);

/* A short pass's chaining inputs: as YPREV's, the last register's alone when it holds one block
 * (block 2i - 1: a whole-register load 16 bytes back would read past the input). */
#define YCHAIN_SHORT(i)                                                                                      \
	((i) == 0               ? pair(prev, LD(in, 0))                                                      \
	 : (i) == last_ && odd_ ? _mm256_zextsi128_si256(LD(in, 2 * (i)-1))                                  \
				: LD2(in - 16, i))
#define YPREV_SHORT(i) __m256i p##i = YCHAIN_SHORT(i);
#define YPREV_IN_SHORT(i) b##i = YCHAIN_SHORT(i);
/* clang-format off */
#define CBC_DEC_SHORT_REGS(name, regs, unused)                                                               \
	CT_TARGET_YMM static void name##_##regs(const struct ct_aes_key *k, const __m128i prev,              \
						const uint8_t *in, uint8_t *out, size_t nblocks)             \
	{                                                                                                    \
		const unsigned rounds = k->rounds, last_ = (regs) - 1;                                       \
		const bool odd_ = nblocks & 1;                                                               \
		const uint8_t(*const rk)[16] = k->dec;                                                       \
		X##regs(YDECL) X##regs(YLOAD_SHORT) X##regs(YPREV_SHORT)                                     \
		__m256i k_ = bcast(rk[0]);                                                                   \
		X##regs(YWHITEN)                                                                             \
		YROUNDS_FROM1_N(X##regs, DEC, rk, rounds)                                                    \
		X##regs(YXOR_PREV)                                                                           \
		X##regs(YSTORE_SHORT)                                                                        \
	}
/* CTR's and CFB decryption's short pass: each register's blocks made by MAKE (counters, or the
 * chaining inputs) from the value `from` (CTR's counter pair, CFB's previous block), encrypted,
 * and XORed into the input. */
#define KEYSTREAM_SHORT_REGS(name, regs, from_type, from, MAKE)                                              \
	CT_TARGET_YMM static void name##_##regs(const struct ct_aes_key *k, const from_type from,            \
						const uint8_t *in, uint8_t *out, size_t nblocks)             \
	{                                                                                                    \
		const unsigned rounds = k->rounds, last_ = (regs) - 1;                                       \
		const bool odd_ = nblocks & 1;                                                               \
		const uint8_t(*const rk)[16] = k->enc;                                                       \
		X##regs(YDECL) X##regs(MAKE)                                                                 \
		__m256i k_ = bcast(rk[0]);                                                                   \
		X##regs(YWHITEN)                                                                             \
		YROUNDS_FROM1_N(X##regs, ENC, rk, rounds)                                                    \
		X##regs(YXOR_IN_SHORT)                                                                       \
		X##regs(YSTORE_SHORT)                                                                        \
	}
/* clang-format on */
FOR_REGS_1_8(CBC_DEC_SHORT_REGS, cbc_dec_short, -)
FOR_REGS_1_8(KEYSTREAM_SHORT_REGS, cfb_dec_short, __m128i, prev, YPREV_IN_SHORT)

/* name(k, prev, in, out, nblocks): the short pass, prev the chaining block before in; returns
 * the last ciphertext block (the next chaining block), read before any store */
#define CHAIN_SHORT_KERNEL(name)                                                                             \
	CT_TARGET_YMM static __m128i name(const struct ct_aes_key *k, const __m128i prev, const uint8_t *in, \
					  uint8_t *out, size_t nblocks)                                      \
	{                                                                                                    \
		const __m128i next = LD(in, nblocks - 1);                                                    \
		YSHORT_CALL(name, (k, prev, in, out, nblocks), const struct ct_aes_key *, const __m128i,     \
			    const uint8_t *, uint8_t *, size_t);                                             \
		return next;                                                                                 \
	}
CHAIN_SHORT_KERNEL(cbc_dec_short)
CHAIN_SHORT_KERNEL(cfb_dec_short)

CT_TARGET_YMM static void cbc_dec(const struct ct_aes_key *k, uint8_t iv[16], const uint8_t *in, uint8_t *out,
				  size_t nblocks)
{
	const unsigned rounds = k->rounds;
	__m128i prev = LD(iv, 0);
	for (; nblocks >= 16; in += 256, out += 256, nblocks -= 16) {
		X8(YDECL)
		X8(YLOAD_IN)
		YROUNDS(DEC, k->dec, rounds);
		X8(YPREV)
		prev = LD(in, 15);
		X8(YXOR_PREV)
		X8(YSTORE_OUT)
	}
	if (nblocks)
		prev = cbc_dec_short(k, prev, in, out, nblocks);
	ST(iv, 0, prev);
}

/* P_i = C_i ^ E(C_{i-1}): the chaining blocks are the cipher input here. */
#define YPREV_IN(i) b##i = (i) ? LD2(in - 16, i) : pair(prev, LD(in, 0));

CT_TARGET_YMM static void cfb_dec(const struct ct_aes_key *k, uint8_t iv[16], const uint8_t *in, uint8_t *out,
				  size_t nblocks)
{
	const unsigned rounds = k->rounds;
	__m128i prev = LD(iv, 0);
	for (; nblocks >= 16; in += 256, out += 256, nblocks -= 16) {
		X8(YDECL)
		X8(YPREV_IN)
		YROUNDS(ENC, k->enc, rounds);
		prev = LD(in, 15);
		X8(YXOR_IN)
		X8(YSTORE_OUT)
	}
	if (nblocks)
		prev = cfb_dec_short(k, prev, in, out, nblocks);
	ST(iv, 0, prev);
}

/* ---- CTR ---- */

/* The counter as a little-endian integer in each lane; only the low qword moves (the caller
 * guarantees it does not wrap). Lane 0 of register i counts c + 2i, lane 1 c + 2i + 1. */
#define YCTR(i) b##i = bswap256(_mm256_add_epi64(c, _mm256_set_epi64x(0, 2 * i, 0, 2 * i)));

/* While the counter's last byte cannot carry within a batch (it is at most 240), the blocks are
 * made in big-endian form directly: lane l of register i adds 2i + l to byte 15 (bits 24-31 of
 * the last 32-bit word), no byte swap per register. cbe is the batch's first counter in that
 * form in both lanes; after the last byte wraps it is rebuilt from c (once per 16 batches). */
#define YCTR_BE(i)                                                                                           \
	b##i = _mm256_add_epi32(cbe, _mm256_set_epi32((2 * i + 1) << 24, 0, 0, 0, (2 * i) << 24, 0, 0, 0));

FOR_REGS_1_8(KEYSTREAM_SHORT_REGS, ctr_short, __m256i, c, YCTR)

/* c: the counter as ctr_blocks keeps it (lanes c, c + 1) */
CT_TARGET_YMM static void ctr_short(const struct ct_aes_key *k, const __m256i c, const uint8_t *in,
				    uint8_t *out, size_t nblocks)
{
	YSHORT_CALL(ctr_short, (k, c, in, out, nblocks), const struct ct_aes_key *, const __m256i,
		    const uint8_t *, uint8_t *, size_t);
}

CT_TARGET_YMM static void ctr_blocks(const struct ct_aes_key *k, uint8_t ctr[16], const uint8_t *in,
				     uint8_t *out, size_t nblocks)
{
	const unsigned rounds = k->rounds;
	const __m128i c0 = bswap128(LD(ctr, 0));
	__m256i c = pair(c0, _mm_add_epi64(c0, _mm_set_epi64x(0, 1)));
	if (nblocks >= WIDE_MIN) {
		const __m256i step = _mm256_set_epi64x(0, 16, 0, 16);
		const __m256i be_step = _mm256_set_epi32(16 << 24, 0, 0, 0, 16 << 24, 0, 0, 0);
		__m256i cbe = _mm256_broadcastsi128_si256(LD(ctr, 0));
		unsigned low = ctr[15];
		for (; nblocks >= 16; in += 256, out += 256, nblocks -= 16) {
			X8(YDECL)
			if (low <= 240) {
				X8(YCTR_BE)
				cbe = _mm256_add_epi32(cbe, be_step);
			} else {
				X8(YCTR)
			}
			c = _mm256_add_epi64(c, step);
			low = (low + 16) & 0xff;
			if (low < 16)
				cbe = bswap256(_mm256_permute2x128_si256(c, c, 0x00));
			YROUNDS(ENC, k->enc, rounds);
			X8(YXOR_IN)
			X8(YSTORE_OUT)
		}
	}
	if (nblocks) {
		ctr_short(k, c, in, out, nblocks);
		c = _mm256_add_epi64(c, _mm256_set_epi64x(0, (long long)nblocks, 0, (long long)nblocks));
	}
	ST(ctr, 0, bswap128(_mm256_castsi256_si128(c)));
}

/* ---- XTS ---- */

/* Each lane times x^16: shift the lane left two bytes and fold the 16 bits shifted out back
 * with carry-less multiplication by 0x87 (x^128 = x^7 + x^2 + x + 1). */
YI __m256i xts_mul_x16(__m256i t)
{
	const __m256i poly = _mm256_set_epi64x(0, 0x87, 0, 0x87);
	const __m256i top = _mm256_srli_si256(t, 14);
	return _mm256_xor_si256(_mm256_slli_si256(t, 2), _mm256_clmulepi64_epi128(top, poly, 0x00));
}

/* Each lane times x^k for a k of at most 56 (k per qword in kv): the 128-bit left shift by k
 * bits, the k bits shifted out of the top folded back by a carry-less multiply with 0x87; the
 * product has at most k + 8 bits, so it lands in the low qword. */
YI __m256i xts_mul_xk(__m256i t, __m256i kv)
{
	const __m256i poly = _mm256_set_epi64x(0, 0x87, 0, 0x87);
	const __m256i out = _mm256_sllv_epi64(t, kv);
	/* per qword: its top k bits (a shift by 64 - 0 = 64 gives 0) */
	const __m256i spill = _mm256_srlv_epi64(t, _mm256_sub_epi64(_mm256_set1_epi64x(64), kv));
	return _mm256_xor_si256(_mm256_xor_si256(out, _mm256_bslli_epi128(spill, 8)),
				_mm256_clmulepi64_epi128(_mm256_bsrli_epi128(spill, 8), poly, 0x00));
}

/* T in both lanes: tweak itself, or with tk the IV in tweak encrypted, in this register
 * (aes_internal.h). */
YI __m256i xts_tweak_both_lanes(const struct ct_aes_key *tk, const uint8_t tweak[16])
{
	if (!tk)
		return bcast(tweak);
	__m256i t = _mm256_xor_si256(bcast(tweak), bcast(tk->enc[0]));
	for (unsigned r = 1; r < tk->rounds; r++)
		t = _mm256_aesenc_epi128(t, bcast(tk->enc[r]));
	return _mm256_aesenclast_epi128(t, bcast(tk->enc[tk->rounds]));
}

/* Register i lane l gets T x^(2i+l), each from T by its own shift: no serial chain of sixteen
 * x-multiplies before the first round (a 256-byte unit paid it whole). */
#define YTWEAK_INIT(i) __m256i t##i = (i) ? xts_mul_xk(t0_, _mm256_set1_epi64x(2 * (i))) : t0_;
#define YXTS_IN(i) b##i = _mm256_xor_si256(LD2(in, i), t##i);
#define YXTS_OUT(i) ST2(out, i, _mm256_xor_si256(b##i, t##i));
/* The next batch's tweaks, computed between the rounds: early in program order, so the next
 * batch's inputs never wait on them (docs/aesni.md). */
#define YTWEAK_NEXT(i) n##i = xts_mul_x16(t##i);
#define YTWEAK_TAKE(i) t##i = n##i;
#define YNEXT_DECL(i) __m256i n##i;

/* XTS on 1..16 blocks (a short data unit, or the rest after the batches) in one pass of
 * ceil(n/2) registers, every tweak from T by its own shift, an odd last block in the low lane of
 * the last register (a 128-bit load and store): the 128-bit kernel this replaced made one tweak
 * after another and ran its blocks one by one past the first eight. One instance per register
 * count (aes_vaes512.c does the same on 512-bit registers). */
#define YXTS_IN_SHORT(i) b##i = _mm256_xor_si256(_mm256_xor_si256(YLD_SHORT_AT(in, i), t##i), k_);
#define YXTS_OUT_SHORT(i) YST_SHORT_AT(out, i, _mm256_xor_si256(b##i, t##i))
/* clang-format off */
#define XTS_SHORT_REGS(name, regs, cipher, keys)                                                             \
	CT_TARGET_YMM static void name##_##regs(const struct ct_aes_key *k, const uint8_t tweak[16],         \
						const uint8_t *in, uint8_t *out, size_t nblocks)             \
	{                                                                                                    \
		const unsigned rounds = k->rounds, last_ = (regs) - 1;                                       \
		const bool odd_ = nblocks & 1;                                                               \
		const __m256i t0_ = xts_mul_xk(bcast(tweak), _mm256_set_epi64x(1, 1, 0, 0));                 \
		const uint8_t(*const rk)[16] = k->keys;                                                      \
		__m256i k_ = bcast(rk[0]);                                                                   \
		X##regs(YTWEAK_INIT) X##regs(YDECL) X##regs(YXTS_IN_SHORT)                                     \
		YROUNDS_FROM1_N(X##regs, cipher, rk, rounds)                                                 \
		X##regs(YXTS_OUT_SHORT)                                                                      \
	}
/* clang-format on */
#define XTS_SHORT_KERNEL(name, cipher, keys)                                                                 \
	FOR_REGS_1_8(XTS_SHORT_REGS, name, cipher, keys)                                                     \
	CT_TARGET_YMM static void name(const struct ct_aes_key *k, uint8_t tweak[16], const uint8_t *in,     \
				       uint8_t *out, size_t nblocks)                                         \
	{                                                                                                    \
		REGS_1_8_BY_COUNT(name, const struct ct_aes_key *, const uint8_t *, const uint8_t *,         \
				  uint8_t *, size_t)                                                         \
		by_regs[(nblocks - 1) / 2](k, tweak, in, out, nblocks);                                      \
		ST(tweak, 0,                                                                                 \
		   _mm256_castsi256_si128(                                                                   \
			   xts_mul_xk(bcast(tweak), _mm256_set1_epi64x((long long)nblocks))));               \
	}

XTS_SHORT_KERNEL(xts_enc_short, ENC, enc)
XTS_SHORT_KERNEL(xts_dec_short, DEC, dec)

/* The rest after the batches, from YXTS_PAD_MIN_BLOCKS blocks on, as one more batch with the
 * loop's tweaks, its registers past the data idle (not loaded, not stored): as a short pass,
 * its tweaks made again from T in memory, 1008 bytes took 11 ns more than 1024 (aes_vaes512.c
 * does the same). */
#define YXTS_PAD_MIN_BLOCKS 11
#define YXTS_IN_PAD(i)                                                                                       \
	b##i = _mm256_xor_si256((i) < nregs_ ? YLD_SHORT_AT(in, i) : _mm256_setzero_si256(), t##i);
#define YXTS_OUT_PAD(i)                                                                                      \
	if ((i) < nregs_) {                                                                                  \
		YXTS_OUT_SHORT(i)                                                                            \
	}
#define YXTS_PADDED_BATCH(cipher, keys)                                                                      \
	do {                                                                                                 \
		const unsigned nregs_ = (unsigned)(nblocks + 1) / 2, last_ = nregs_ - 1;                     \
		const bool odd_ = nblocks & 1;                                                               \
		ST(tweak, 0,                                                                                 \
		   _mm256_castsi256_si128(xts_mul_xk(t0, _mm256_set1_epi64x((long long)nblocks))));          \
		X8(YDECL)                                                                                    \
		X8(YXTS_IN_PAD)                                                                              \
		YROUNDS(cipher, k->keys, rounds);                                                            \
		X8(YXTS_OUT_PAD)                                                                             \
	} while (0)
#define XTS_KERNEL(name, cipher, keys)                                                                       \
	CT_TARGET_YMM static void name(const struct ct_aes_key *k, const struct ct_aes_key *tk,              \
				       uint8_t tweak[16], const uint8_t *in, uint8_t *out, size_t nblocks)   \
	{                                                                                                    \
		const unsigned rounds = k->rounds;                                                           \
		/* one batch or less: the batch loop would also make the next batch's tweaks */              \
		if (nblocks > 16) {                                                                          \
			const __m256i t0_ =                                                                  \
				xts_mul_xk(xts_tweak_both_lanes(tk, tweak), _mm256_set_epi64x(1, 1, 0, 0));  \
			tk = NULL; /* T is in t0_ */                                                         \
			X8(YTWEAK_INIT)                                                                      \
			for (; nblocks >= 16; in += 256, out += 256, nblocks -= 16) {                        \
				X8(YDECL)                                                                    \
				X8(YNEXT_DECL)                                                               \
				X8(YXTS_IN)                                                                  \
				YROUNDS_THEN(cipher, k->keys, rounds, YTWEAK_NEXT);                          \
				X8(YXTS_OUT)                                                                 \
				X8(YTWEAK_TAKE)                                                              \
			}                                                                                    \
			if (nblocks >= YXTS_PAD_MIN_BLOCKS) {                                                \
				YXTS_PADDED_BATCH(cipher, keys);                                             \
				return;                                                                      \
			}                                                                                    \
			ST(tweak, 0, _mm256_castsi256_si128(t0));                                            \
		}                                                                                            \
		if (nblocks) {                                                                               \
			if (tk) /* the short pass reads T from memory */                                     \
				ST(tweak, 0, _mm256_castsi256_si128(xts_tweak_both_lanes(tk, tweak)));       \
			name##_short(k, tweak, in, out, nblocks);                                            \
		}                                                                                            \
	}

XTS_KERNEL(xts_enc, ENC, enc)
XTS_KERNEL(xts_dec, DEC, dec)

/* ---- GHASH ---- */

/* Sixteen blocks per reduction (eight at the end): register j holds blocks 2j, 2j+1 and is
 * multiplied lane by lane with the two matching powers of H; the lanes are folded before the
 * one reduction, so the serial chain through x is paid once per 256 bytes. Karatsuba: three
 * carry-less multiplies per block instead of four (the middle term is
 * (a_lo ^ a_hi)(b_lo ^ b_hi) ^ lo ^ hi, fixed up once per reduction), b_lo ^ b_hi from the key's
 * Karatsuba rows (aesni.h). */
#define YGH(i, base)                                                                                         \
	{                                                                                                    \
		__m256i d_ = bswap256(LD2(in, i));                                                           \
		if (i == 0)                                                                                  \
			d_ = _mm256_xor_si256(d_, _mm256_zextsi128_si256(x));                                \
		const __m256i h_ = LD2(hpow[base], i);                                                       \
		const __m256i hk_ = LD2(hpow[CT_GHASH_POWERS + (base)], i);                                  \
		const __m256i dk_ = _mm256_xor_si256(d_, _mm256_shuffle_epi32(d_, 0x4e));                    \
		lo = _mm256_xor_si256(lo, _mm256_clmulepi64_epi128(d_, h_, 0x00));                           \
		hi = _mm256_xor_si256(hi, _mm256_clmulepi64_epi128(d_, h_, 0x11));                           \
		mid = _mm256_xor_si256(mid, _mm256_clmulepi64_epi128(dk_, hk_, 0x00));                       \
	}
/* H^16.. and H^8.. are the last 16 and 8 of the key's powers. */
#define YGH16(i) YGH(i, CT_GHASH_POWERS - 16)
/* Register 0 carries x, the only input on the serial chain: accumulate it last so the other
 * products are summed while x is still being reduced. */
#define X8_X_LAST(m) m(1) m(2) m(3) m(4) m(5) m(6) m(7) m(0)
#define X4_X_LAST(m) m(1) m(2) m(3) m(0)
#define YGH8(i) YGH(i, CT_GHASH_POWERS - 8)

YI __m128i fold(__m256i v)
{
	return _mm_xor_si128(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
}

/* The reduction by multiplies gives the sum times x (simd_inline.h); x, mixed into the next
 * group's data, is divided by x again on the way: fewer instructions than gf_reduce's shifts. */
YI __m128i reduce_folded(__m256i lo, __m256i mid, __m256i hi)
{
	const __m128i l = fold(lo), h = fold(hi);
	return gf_div_x(gf_reduce_times_x(l, _mm_xor_si128(fold(mid), _mm_xor_si128(l, h)), h));
}

CT_TARGET_YMM static void ghash(const uint8_t hpow[CT_GHASH_KEY_ROWS][16], uint8_t xi[16], const uint8_t *in,
				size_t nblocks)
{
	__m128i x = bswap128(LD(xi, 0));
	for (; nblocks >= 16; in += 256, nblocks -= 16) {
		__m256i lo = _mm256_setzero_si256(), mid = lo, hi = lo;
		X8_X_LAST(YGH16)
		x = reduce_folded(lo, mid, hi);
	}
	if (nblocks >= 8) {
		__m256i lo = _mm256_setzero_si256(), mid = lo, hi = lo;
		X4_X_LAST(YGH8)
		x = reduce_folded(lo, mid, hi);
		in += 128, nblocks -= 8;
	}
	if (nblocks)
		x = ghash_tail(hpow, x, in, nblocks);
	ST(xi, 0, bswap128(x));
}

const struct ct_aes_kernels ct_aes_kernels_vaes = {
	.ecb_enc = ecb_enc,
	.ecb_dec = ecb_dec,
	.cbc_enc = ct_aes_xmm_cbc_enc, /* serial: the width cannot help */
	.cbc_dec = cbc_dec,
	.ctr = ctr_blocks,
	.cfb_enc = ct_aes_xmm_cfb_enc,
	.cfb_dec = cfb_dec,
	.ofb = ct_aes_xmm_ofb,
	.xts_enc = xts_enc,
	.xts_dec = xts_dec,
	.ghash = ghash,
};
