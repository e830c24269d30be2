/* SPDX-License-Identifier: MIT */
/*
 * aes_vaes512.c - VAES + VPCLMULQDQ kernels on 512-bit registers (AVX-512F/VL/BW): four blocks
 * per register, eight registers (32 blocks) in flight, 32 vector registers so nothing spills,
 * and three-way XORs in one VPTERNLOGQ. Where they pay (docs/aesni.md "512-bit kernels"): XTS,
 * whose tweak update runs on the carry-less multiply port beside the AES one, and GCM, whose
 * GHASH is stitched into the CTR rounds (its 1-15 blocks after the whole steps too). Inputs
 * under 32 blocks, and the tails, go to the 256-bit kernels, except in ECB, CBC decryption, CTR,
 * XTS and GHASH, whose short inputs and tails run here in one short pass of as many registers as
 * they need (XTS decryption's with stealing: xts_dec_steal); the serial modes stay on the
 * AES-NI ones.
 */
#include <string.h>
#include <x86intrin.h>

#include "aes_internal.h"
#include "unroll.h"

#define CT_SIMD_TARGET CT_TARGET_ZMM
#include "simd_inline.h"
#define ZI SI

#define LD4(p, i) _mm512_loadu_si512((const void *)((const __m512i *)(p) + (i)))
#define ST4(p, i, v) _mm512_storeu_si512((void *)((__m512i *)(p) + (i)), (v))
#define ST4_PAGE(p, i, v) st4_page((uint8_t *)(p) + 64 * (i), (v))
#define XOR3(a, b, c) _mm512_ternarylogic_epi64((a), (b), (c), 0x96)

/* A 512-bit store, as four 16-byte ones where it would cross a 4 KiB boundary. Such a store (a
 * program's buffer off a cache line: openssl speed's lands 16 bytes past one, routed) is slow to
 * complete, and the route's next call waited on it: 4 KiB ECB and CTR updates in place, 16 bytes
 * past a page's start, ran 11-12 % slower than at other offsets (bench/align_cost.sh). A kernel
 * of ours alone in a loop did not show it; the route's calls, back to back on the direct lane,
 * did. The batch loops test once a batch (ZSTORE_BATCH; a test at every store cost CTR 2 % at 1
 * KiB, and GCM's stitched steps, whose registers are all taken, 7 %: they store plainly, and the
 * route's GCM lost 1-3 % at those offsets), the short passes at each of their few stores. */
ZI void st4_page(uint8_t *p, __m512i v)
{
	if (__builtin_expect(((uintptr_t)p & 4095) > 4096 - 64, 0)) {
		ST(p, 0, _mm512_castsi512_si128(v));
		ST(p, 1, _mm512_extracti32x4_epi32(v, 1));
		ST(p, 2, _mm512_extracti32x4_epi32(v, 2));
		ST(p, 3, _mm512_extracti32x4_epi32(v, 3));
	} else {
		_mm512_storeu_si512((void *)p, v);
	}
}

/* Whether a batch's 512 bytes at p cross a 4 KiB boundary with a store astride it. */
ZI bool batch_splits_page(const uint8_t *p)
{
	const uintptr_t a = (uintptr_t)p;
	return (a & 63) && (a & 4095) > 4096 - 512;
}

/* A batch's 8 stores: PAGE (ST4_PAGE) where one of them would cross a 4 KiB boundary, else
 * PLAIN. */
#define ZSTORE_BATCH(PLAIN, PAGE)                                                                            \
	do {                                                                                                 \
		if (__builtin_expect(batch_splits_page(out), 0)) {                                           \
			X8(PAGE)                                                                             \
		} else {                                                                                     \
			X8(PLAIN)                                                                            \
		}                                                                                            \
	} while (0)

/* One batch: 8 registers of 4 blocks (the mode layer sends shorter inputs to the 256-bit kernels
 * itself: aes_internal.h). */
#define BATCH CT_AES_ZMM_MIN_BLOCKS

static const struct ct_aes_kernels *const ymm = &ct_aes_kernels_vaes;

ZI __m512i bcast(const uint8_t rk[16])
{
	return _mm512_broadcast_i32x4(_mm_loadu_si128((const __m128i *)rk));
}

ZI __m512i bswap512(__m512i v)
{
	return _mm512_shuffle_epi8(v, _mm512_broadcast_i32x4(_mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10,
									  11, 12, 13, 14, 15)));
}

/* The round keys broadcast once per call, not once per batch: `out` is a byte pointer, so the
 * compiler must assume every store may change the key schedule, and it reloaded and
 * re-broadcast each key in every batch (on Zen 5 a broadcast from memory takes an AES pipe's
 * slot). Held in registers: CTR 4-9 % faster on Zen 5, ECB, CBC-decrypt and XTS within 1-3 %
 * (docs/aesni.md). GCM, whose registers are full, keeps broadcasting from the schedule: held
 * keys spill there and cost a 1 KiB message 9-14 %. */
struct zkeys {
	__m512i k[CT_AES_MAX_ROUNDS], last;
};

/* Every key by a constant index, the last one apart: a loop to a variable bound, or the last
 * key read as k[rounds], kept the array in memory, and each call stored and reloaded it (in
 * aesni_bench some runs of 1 KiB CTR and XTS were then a quarter slower). */
ZI struct zkeys zkeys_load(const uint8_t rk[][16], unsigned rounds)
{
	struct zkeys z;
	z.k[0] = bcast(rk[0]), z.k[1] = bcast(rk[1]), z.k[2] = bcast(rk[2]), z.k[3] = bcast(rk[3]);
	z.k[4] = bcast(rk[4]), z.k[5] = bcast(rk[5]), z.k[6] = bcast(rk[6]), z.k[7] = bcast(rk[7]);
	z.k[8] = bcast(rk[8]), z.k[9] = bcast(rk[9]);
	z.k[10] = z.k[11] = z.k[12] = z.k[13] = z.k[0];
	if (rounds > 10)
		z.k[10] = bcast(rk[10]), z.k[11] = bcast(rk[11]);
	if (rounds > 12)
		z.k[12] = bcast(rk[12]), z.k[13] = bcast(rk[13]);
	z.last = bcast(rk[rounds]);
	return z;
}

/* clang-format off */
/* Round r on the registers XA names (X8: b0..b7, X4: b0..b3); the rounds from 10 on. KEY reads
 * round key r of rk: HELD from a struct zkeys, SCHED by broadcasting the key schedule's row. */
#define HELD(rk, r) (rk).k[r]
#define HELD_LAST(rk, rounds) (rk).last
#define SCHED(rk, r) bcast((rk)[r])
#define SCHED_LAST(rk, rounds) bcast((rk)[rounds])
#define ZROUND_N(XA, cipher, KEY, rk, r)                                                                     \
	k_ = KEY(rk, r);                                                                                     \
	XA(cipher##_ZROUND)
#define ZROUNDS_TAIL_N(XA, cipher, KEY, rk, rounds)                                                          \
	if ((rounds) > 10) {                                                                                 \
		ZROUND_N(XA, cipher, KEY, rk, 10) ZROUND_N(XA, cipher, KEY, rk, 11)                          \
	}                                                                                                    \
	if ((rounds) > 12) {                                                                                 \
		ZROUND_N(XA, cipher, KEY, rk, 12) ZROUND_N(XA, cipher, KEY, rk, 13)                          \
	}                                                                                                    \
	k_ = KEY##_LAST(rk, rounds);                                                                         \
	XA(cipher##_ZLAST)
/* Rounds 1 .. the last on XA's registers (their whitening done by the caller). */
#define ZROUNDS_FROM1_N(XA, cipher, KEY, rk, rounds)                                                         \
	ZROUND_N(XA, cipher, KEY, rk, 1) ZROUND_N(XA, cipher, KEY, rk, 2) ZROUND_N(XA, cipher, KEY, rk, 3)  \
	ZROUND_N(XA, cipher, KEY, rk, 4) ZROUND_N(XA, cipher, KEY, rk, 5) ZROUND_N(XA, cipher, KEY, rk, 6)  \
	ZROUND_N(XA, cipher, KEY, rk, 7) ZROUND_N(XA, cipher, KEY, rk, 8) ZROUND_N(XA, cipher, KEY, rk, 9)  \
	ZROUNDS_TAIL_N(XA, cipher, KEY, rk, rounds)
#define ZROUND(cipher, rk, r) ZROUND_N(X8, cipher, HELD, rk, r)
#define ZROUNDS_TAIL(cipher, rk, rounds) ZROUNDS_TAIL_N(X8, cipher, HELD, rk, rounds)
#define ZROUNDS(cipher, rk, rounds)                                                                          \
	do {                                                                                                 \
		__m512i k_ = HELD(rk, 0);                                                                    \
		X8(ZWHITEN)                                                                                  \
		ZROUND(cipher, rk, 1) ZROUND(cipher, rk, 2) ZROUND(cipher, rk, 3)                            \
		ZROUND(cipher, rk, 4) ZROUND(cipher, rk, 5) ZROUND(cipher, rk, 6)                            \
		ZROUND(cipher, rk, 7) ZROUND(cipher, rk, 8) ZROUND(cipher, rk, 9)                            \
		ZROUNDS_TAIL(cipher, rk, rounds)                                                             \
	} while (0)
/* clang-format on */
#define ZWHITEN(i) b##i = _mm512_xor_si512(b##i, k_);
#define ENC_ZROUND(i) b##i = _mm512_aesenc_epi128(b##i, k_);
#define ENC_ZLAST(i) b##i = _mm512_aesenclast_epi128(b##i, k_);
#define DEC_ZROUND(i) b##i = _mm512_aesdec_epi128(b##i, k_);
#define DEC_ZLAST(i) b##i = _mm512_aesdeclast_epi128(b##i, k_);
#define ZDECL(i) __m512i b##i;
#define ZLOAD_IN(i) b##i = LD4(in, i);
#define ZSTORE_OUT(i) ST4(out, i, b##i);
#define ZSTORE_OUT_PAGE(i) ST4_PAGE(out, i, b##i);
#define ZXOR_IN(i) b##i = _mm512_xor_si512(b##i, LD4(in, i));

/* The first n (1..4) blocks of a register from p, and to p, in 16- and 32-byte pieces: the
 * last register of a short pass (ECB, CBC decryption, CTR, XTS, GHASH below). Not masked loads and stores: a load cannot
 * take its bytes from an earlier masked store, nor a masked load from narrower stores, and with
 * them a 40-byte XTS unit (its stealing passes blocks through the stack) ran at 0.6 GB/s. */
ZI __m512i ld_blocks(const uint8_t *p, unsigned n)
{
	switch (n) {
	case 0: /* GCM's rest step's register for a partial block's keystream alone */
		return _mm512_setzero_si512();
	case 1:
		return _mm512_zextsi128_si512(LD(p, 0));
	case 2:
		return _mm512_zextsi256_si512(_mm256_loadu_si256((const __m256i *)p));
	case 3:
		return _mm512_inserti32x4(_mm512_zextsi256_si512(_mm256_loadu_si256((const __m256i *)p)),
					  LD(p, 2), 2);
	default:
		return LD4(p, 0);
	}
}

ZI void st_blocks(uint8_t *p, __m512i v, unsigned n)
{
	switch (n) {
	case 0:
		break;
	case 1:
		ST(p, 0, _mm512_castsi512_si128(v));
		break;
	case 2:
		_mm256_storeu_si256((__m256i *)p, _mm512_castsi512_si256(v));
		break;
	case 3:
		_mm256_storeu_si256((__m256i *)p, _mm512_castsi512_si256(v));
		ST(p, 2, _mm512_extracti32x4_epi32(v, 2));
		break;
	default:
		ST4_PAGE(p, 0, v);
	}
}

/* A short pass (1..32 blocks in ceil(n/4) registers, one function per register count:
 * unroll.h) names its last register last_ and that register's blocks nlast_. */
#define ZLOAD_SHORT(i) b##i = (i) == last_ ? ld_blocks(in + 64 * (i), nlast_) : LD4(in, i);
#define ZXOR_IN_SHORT(i)                                                                                     \
	b##i = _mm512_xor_si512(b##i, (i) == last_ ? ld_blocks(in + 64 * (i), nlast_) : LD4(in, i));
#define ZSTORE_SHORT(i)                                                                                      \
	if ((i) == last_)                                                                                    \
		st_blocks(out + 64 * (i), b##i, nlast_);                                                     \
	else                                                                                                 \
		ST4_PAGE(out, i, b##i);

/* ---- ECB ---- */

/* ECB on 1..31 blocks (a short input, or the rest after the batches) in one short pass; before,
 * the 256-bit kernel and under 16 blocks the 128-bit one took them: 992 bytes ran at 14 GB/s,
 * 1024 at 20. */
/* clang-format off */
#define ECB_SHORT_REGS(name, regs, cipher, keys)                                                             \
	CT_TARGET_ZMM static void name##_##regs(const struct ct_aes_key *k, const uint8_t *in, uint8_t *out, \
						size_t nblocks)                                              \
	{                                                                                                    \
		const unsigned rounds = k->rounds, last_ = (regs) - 1;                                       \
		const unsigned nlast_ = (unsigned)nblocks - 4 * last_;                                       \
		const uint8_t(*const rk)[16] = k->keys;                                                      \
		X##regs(ZDECL) X##regs(ZLOAD_SHORT)                                                          \
		__m512i k_ = SCHED(rk, 0);                                                                   \
		X##regs(ZWHITEN)                                                                             \
		ZROUNDS_FROM1_N(X##regs, cipher, SCHED, rk, rounds)                                          \
		X##regs(ZSTORE_SHORT)                                                                        \
	}
/* clang-format on */
#define ECB_SHORT_KERNEL(name, cipher, keys)                                                                 \
	FOR_REGS_1_8(ECB_SHORT_REGS, name, cipher, keys)                                                     \
	CT_TARGET_ZMM static void name(const struct ct_aes_key *k, const uint8_t *in, uint8_t *out,          \
				       size_t nblocks)                                                       \
	{                                                                                                    \
		REGS_1_8_BY_COUNT(name, const struct ct_aes_key *, const uint8_t *, uint8_t *, size_t)       \
		by_regs[(nblocks - 1) / 4](k, in, out, nblocks);                                             \
	}
ECB_SHORT_KERNEL(ecb_enc_short, ENC, enc)
ECB_SHORT_KERNEL(ecb_dec_short, DEC, dec)

#define ECB_KERNEL(name, cipher, keys)                                                                       \
	CT_TARGET_ZMM static void name(const struct ct_aes_key *k, const uint8_t *in, uint8_t *out,          \
				       size_t nblocks)                                                       \
	{                                                                                                    \
		const unsigned rounds = k->rounds;                                                           \
		const struct zkeys kz = zkeys_load(k->keys, rounds);                                         \
		for (; nblocks >= BATCH; in += 16 * BATCH, out += 16 * BATCH, nblocks -= BATCH) {            \
			X8(ZDECL)                                                                            \
			X8(ZLOAD_IN)                                                                         \
			ZROUNDS(cipher, kz, rounds);                                                         \
			ZSTORE_BATCH(ZSTORE_OUT, ZSTORE_OUT_PAGE);                                           \
		}                                                                                            \
		if (nblocks)                                                                                 \
			name##_short(k, in, out, nblocks);                                                   \
	}

ECB_KERNEL(ecb_enc, ENC, enc)
ECB_KERNEL(ecb_dec, DEC, dec)

/* ---- CBC decryption, CFB decryption ---- */

/* Register i holds blocks 4i..4i+3; its chaining input is blocks 4i-1..4i+2: one unaligned load
 * 16 bytes back, except register 0, whose first lane is the previous batch's last block (held
 * broadcast in prevz; VALIGNQ takes its top lane and the first three blocks of the batch). Every
 * chaining load precedes the first store, so in-place operation is safe. */
#define ZCHAIN(i) ((i) ? LD4(in - 16, i) : _mm512_alignr_epi64(LD4(in, 0), prevz, 6))
#define ZPREV(i) __m512i p##i = ZCHAIN(i);
#define ZXOR_PREV(i) b##i = _mm512_xor_si512(b##i, p##i);
#define ZPREV_IN(i) b##i = ZCHAIN(i);

/* CBC decryption of 1..31 blocks in one short pass: the chaining inputs as in the batches
 * (the last register's in pieces, 16 bytes back), all loaded, and the next IV read, before the
 * first store. */
#define ZCHAIN_SHORT(i)                                                                                      \
	((i) == 0       ? _mm512_alignr_epi64(0 == last_ ? ld_blocks(in, nlast_) : LD4(in, 0), prevz, 6)     \
	 : (i) == last_ ? ld_blocks(in - 16 + 64 * (i), nlast_)                                              \
			: LD4(in - 16, i))
#define ZPREV_SHORT(i) __m512i p##i = ZCHAIN_SHORT(i);
/* clang-format off */
#define CBC_DEC_SHORT_REGS(name, regs, cipher)                                                               \
	CT_TARGET_ZMM static void name##_##regs(const struct ct_aes_key *k, uint8_t iv[16], const uint8_t *in, \
						uint8_t *out, size_t nblocks)                                \
	{                                                                                                    \
		const unsigned rounds = k->rounds, last_ = (regs) - 1;                                       \
		const unsigned nlast_ = (unsigned)nblocks - 4 * last_;                                       \
		const uint8_t(*const rk)[16] = k->dec;                                                       \
		const __m512i prevz = bcast(iv);                                                             \
		X##regs(ZDECL) X##regs(ZLOAD_SHORT)                                                          \
		__m512i k_ = SCHED(rk, 0);                                                                   \
		X##regs(ZWHITEN)                                                                             \
		ZROUNDS_FROM1_N(X##regs, cipher, SCHED, rk, rounds)                                          \
		X##regs(ZPREV_SHORT)                                                                         \
		const __m128i next_iv = LD(in, nblocks - 1);                                                 \
		X##regs(ZXOR_PREV)                                                                           \
		X##regs(ZSTORE_SHORT)                                                                        \
		ST(iv, 0, next_iv);                                                                          \
	}
/* clang-format on */
FOR_REGS_1_8(CBC_DEC_SHORT_REGS, cbc_dec_short, DEC)

CT_TARGET_ZMM static void cbc_dec_short(const struct ct_aes_key *k, uint8_t iv[16], const uint8_t *in,
					uint8_t *out, size_t nblocks)
{
	REGS_1_8_BY_COUNT(cbc_dec_short, const struct ct_aes_key *, uint8_t *, const uint8_t *, uint8_t *,
			  size_t)
	by_regs[(nblocks - 1) / 4](k, iv, in, out, nblocks);
}

CT_TARGET_ZMM static void cbc_dec(const struct ct_aes_key *k, uint8_t iv[16], const uint8_t *in, uint8_t *out,
				  size_t nblocks)
{
	const unsigned rounds = k->rounds;
	__m512i prevz = bcast(iv);
	const struct zkeys kz = zkeys_load(k->dec, rounds);
	for (; nblocks >= BATCH; in += 16 * BATCH, out += 16 * BATCH, nblocks -= BATCH) {
		X8(ZDECL)
		X8(ZLOAD_IN)
		ZROUNDS(DEC, kz, rounds);
		X8(ZPREV)
		prevz = bcast(in + 16 * (BATCH - 1));
		X8(ZXOR_PREV)
		ZSTORE_BATCH(ZSTORE_OUT, ZSTORE_OUT_PAGE);
	}
	ST(iv, 0, _mm512_castsi512_si128(prevz));
	if (nblocks)
		cbc_dec_short(k, iv, in, out, nblocks);
}

/* P_i = C_i ^ E(C_{i-1}): the chaining blocks are the cipher input here. */
CT_TARGET_ZMM static void cfb_dec(const struct ct_aes_key *k, uint8_t iv[16], const uint8_t *in, uint8_t *out,
				  size_t nblocks)
{
	const unsigned rounds = k->rounds;
	__m512i prevz = bcast(iv);
	const struct zkeys kz = zkeys_load(k->enc, rounds);
	for (; nblocks >= BATCH; in += 16 * BATCH, out += 16 * BATCH, nblocks -= BATCH) {
		X8(ZDECL)
		X8(ZPREV_IN)
		ZROUNDS(ENC, kz, rounds);
		prevz = bcast(in + 16 * (BATCH - 1));
		X8(ZXOR_IN)
		ZSTORE_BATCH(ZSTORE_OUT, ZSTORE_OUT_PAGE);
	}
	ST(iv, 0, _mm512_castsi512_si128(prevz));
	if (nblocks)
		ymm->cfb_dec(k, iv, in, out, nblocks);
}

/* ---- counter blocks (CTR and GCM) ----
 * As in aes_vaes.c: c holds the counter as a little-endian integer per lane (lane l of the batch's
 * first register counts c + l; only the low qword moves, the caller guarantees it does not wrap).
 * While the counter's last byte is at most 224, no block of a batch carries out of it, and the
 * blocks are made in big-endian form directly from cbe (the batch's first counter, broadcast):
 * lane l of register i adds 4i + l to byte 15. After that byte wraps (once per 8 batches) cbe is
 * rebuilt from c. */
struct zctr {
	__m512i c, cbe;
	/* the counter's last byte: a byte, so that the step's wrap is the type's own. As `unsigned`
	 * with `& 0xff`, GCC (its vector registers all taken in a GCM step) computed it by a store
	 * and a byte load through the stack in every step, and the stitched GCM kernel ran at 18.6
	 * or 23.9 GB/s by process, as the stack's address fell (Zen 5, 2026-12-04). */
	uint8_t low;
};

ZI struct zctr zctr_start(const uint8_t ctr[16])
{
	struct zctr z;
	z.c = _mm512_add_epi64(_mm512_broadcast_i32x4(bswap128(LD(ctr, 0))),
			       _mm512_set_epi64(0, 3, 0, 2, 0, 1, 0, 0));
	z.cbe = bcast(ctr);
	z.low = ctr[15];
	return z;
}

ZI void zctr_end(const struct zctr *z, uint8_t ctr[16])
{
	ST(ctr, 0, bswap128(_mm512_castsi512_si128(z->c)));
}

#define ZCTR_BE(i)                                                                                           \
	b##i = _mm512_add_epi32(z.cbe,                                                                       \
				_mm512_set_epi32((4 * i + 3) << 24, 0, 0, 0, (4 * i + 2) << 24, 0, 0, 0,     \
						 (4 * i + 1) << 24, 0, 0, 0, (4 * i) << 24, 0, 0, 0));
#define ZCTR_LE(i)                                                                                           \
	b##i = bswap512(_mm512_add_epi64(z.c, _mm512_set_epi64(0, 4 * i, 0, 4 * i, 0, 4 * i, 0, 4 * i)));
/* b0.. = the step's counter blocks (XA: X8 or X4, w blocks); z advanced by w. While the counter's
 * last byte is at most 256 - w, no block carries out of it (zctr above). */
#define ZCOUNTERS_W(XA, w)                                                                                   \
	do {                                                                                                 \
		if (z.low <= 256 - (w)) {                                                                    \
			XA(ZCTR_BE)                                                                          \
			z.cbe = _mm512_add_epi32(z.cbe,                                                      \
						 _mm512_broadcast_i32x4(_mm_set_epi32((w) << 24, 0, 0, 0))); \
		} else {                                                                                     \
			XA(ZCTR_LE)                                                                          \
		}                                                                                            \
		z.c = _mm512_add_epi64(z.c, _mm512_broadcast_i32x4(_mm_set_epi64x(0, (w))));                 \
		z.low = (uint8_t)(z.low + (w));                                                              \
		if (z.low < (w))                                                                             \
			z.cbe = bswap512(_mm512_shuffle_i64x2(z.c, z.c, 0x00));                              \
	} while (0)

/* b0..b7 = a batch's counter blocks; z advanced by one batch. */
#define ZCOUNTERS() ZCOUNTERS_W(X8, BATCH)

/* CTR on 1..31 blocks (a short input, or the rest after the batches) in one pass of ceil(n/4)
 * registers, the last one's input and output in pieces (ld_blocks). Before, the rest went to the
 * 256-bit kernel and its last 15 blocks to the 128-bit one: a 992-byte call took 86 ns, a
 * 1024-byte one 54. One instance per register count (unroll.h). */
/* clang-format off */
#define CTR_SHORT_REGS(name, regs, cipher)                                                                   \
	CT_TARGET_ZMM static void name##_##regs(const struct ct_aes_key *k, const uint8_t ctr[16],           \
						const uint8_t *in, uint8_t *out, size_t nblocks)             \
	{                                                                                                    \
		const unsigned rounds = k->rounds, last_ = (regs) - 1;                                       \
		const unsigned nlast_ = (unsigned)nblocks - 4 * last_;                                       \
		const uint8_t(*const rk)[16] = k->enc;                                                       \
		struct zctr z = zctr_start(ctr);                                                             \
		X##regs(ZDECL)                                                                               \
		ZCOUNTERS_W(X##regs, 4 * (regs));                                                            \
		__m512i k_ = SCHED(rk, 0);                                                                   \
		X##regs(ZWHITEN)                                                                             \
		ZROUNDS_FROM1_N(X##regs, cipher, SCHED, rk, rounds)                                          \
		X##regs(ZXOR_IN_SHORT)                                                                       \
		X##regs(ZSTORE_SHORT)                                                                        \
	}
/* clang-format on */
FOR_REGS_1_8(CTR_SHORT_REGS, ctr_short, ENC)

CT_TARGET_ZMM static void ctr_short(const struct ct_aes_key *k, uint8_t ctr[16], const uint8_t *in,
				    uint8_t *out, size_t nblocks)
{
	REGS_1_8_BY_COUNT(ctr_short, const struct ct_aes_key *, const uint8_t *, const uint8_t *, uint8_t *,
			  size_t)
	by_regs[(nblocks - 1) / 4](k, ctr, in, out, nblocks);
	ST(ctr, 0, bswap128(_mm_add_epi64(bswap128(LD(ctr, 0)), _mm_set_epi64x(0, (long long)nblocks))));
}

CT_TARGET_ZMM static void ctr_blocks(const struct ct_aes_key *k, uint8_t ctr[16], const uint8_t *in,
				     uint8_t *out, size_t nblocks)
{
	const unsigned rounds = k->rounds;
	if (nblocks >= BATCH) {
		struct zctr z = zctr_start(ctr);
		const struct zkeys kz = zkeys_load(k->enc, rounds);
		for (; nblocks >= BATCH; in += 16 * BATCH, out += 16 * BATCH, nblocks -= BATCH) {
			X8(ZDECL)
			ZCOUNTERS();
			ZROUNDS(ENC, kz, rounds);
			X8(ZXOR_IN)
			ZSTORE_BATCH(ZSTORE_OUT, ZSTORE_OUT_PAGE);
		}
		zctr_end(&z, ctr);
	}
	if (nblocks)
		ctr_short(k, ctr, in, out, nblocks);
}

/* ---- XTS ---- */

/* Each lane times x^k for a k of at most 56: the 128-bit left shift by k bits, the k bits shifted
 * out of the top folded back with a carry-less multiply by 0x87 (x^128 = x^7 + x^2 + x + 1; the
 * product has at most k + 8 bits, so it lands in the low qword with nothing left to reduce). kv
 * holds k in every qword, or a per-lane k. */
ZI __m512i xts_mul_xk(__m512i t, __m512i kv)
{
	const __m512i poly = _mm512_broadcast_i32x4(_mm_set_epi64x(0, 0x87));
	const __m512i out = _mm512_sllv_epi64(t, kv);
	/* per qword: its top k bits (a shift by 64 - 0 = 64 gives 0) */
	const __m512i spill = _mm512_srlv_epi64(t, _mm512_sub_epi64(_mm512_set1_epi64(64), kv));
	return XOR3(out, _mm512_bslli_epi128(spill, 8),
		    _mm512_clmulepi64_epi128(_mm512_bsrli_epi128(spill, 8), poly, 0x00));
}

/* Each lane times x^k (k < 64) as xts_mul_xk, from kpow, x^k in the low qword of each lane, by
 * carry-less multiplies and byte shifts only: none on the port VAESENC takes (the variable shifts
 * are), so a unit's first tweaks need not wait for the last rounds of the unit before. Its chain
 * of two multiplies is the longer, though, where nothing else is queued: the short pass keeps
 * the shifts (docs/aesni.md, "512-bit kernels"). */
ZI __m512i xts_mul_xpow(__m512i t, __m512i kpow)
{
	const __m512i poly = _mm512_broadcast_i32x4(_mm_set_epi64x(0, 0x87));
	const __m512i lo = _mm512_clmulepi64_epi128(t, kpow, 0x00);
	const __m512i hi = _mm512_clmulepi64_epi128(t, kpow, 0x01);
	return XOR3(lo, _mm512_bslli_epi128(hi, 8),
		    _mm512_clmulepi64_epi128(_mm512_bsrli_epi128(hi, 8), poly, 0x00));
}

/* T in every lane: tweak itself, or with tk the IV in tweak encrypted, in this register (no store
 * and load between the tweak's last round and the first tweak multiply: aes_internal.h). */
ZI __m512i xts_tweak_all_lanes(const struct ct_aes_key *tk, const uint8_t tweak[16])
{
	if (!tk)
		return bcast(tweak);
	__m512i t = _mm512_xor_si512(bcast(tweak), bcast(tk->enc[0]));
	for (unsigned r = 1; r < tk->rounds; r++)
		t = _mm512_aesenc_epi128(t, bcast(tk->enc[r]));
	return _mm512_aesenclast_epi128(t, bcast(tk->enc[tk->rounds]));
}

/* x^32 per batch: a four-byte shift within each lane and the 32 bits shifted out folded back. */
ZI __m512i xts_mul_x32(__m512i t)
{
	const __m512i poly = _mm512_broadcast_i32x4(_mm_set_epi64x(0, 0x87));
	return _mm512_xor_si512(_mm512_bslli_epi128(t, 4),
				_mm512_clmulepi64_epi128(_mm512_bsrli_epi128(t, 12), poly, 0x00));
}

/* Register i lane l gets T x^(4i+l): register 0 from T by per-lane shifts of 0..3 bits, the
 * others from register 0 by x^(4i), all independent of each other. */
#define ZTWEAK_INIT(i) __m512i t##i = (i) ? xts_mul_xk(t0_, _mm512_set1_epi64(4 * (i))) : t0_;
/* The same for the batch loop, by multiplies (xts_mul_xpow: 1 KiB units 2-3 % faster), each
 * register straight from T in every lane (tall_), lane l by x^(4i+l): one multiply deep, not two
 * as from register 0 (1 KiB units 1-2 % faster on the Intel Xeon). */
#define XPOW_LANES(e)                                                                                        \
	_mm512_set_epi64(0, 1ll << ((e) + 3), 0, 1ll << ((e) + 2), 0, 1ll << ((e) + 1), 0, 1ll << (e))
#define ZTWEAK_INIT_BATCH(i) __m512i t##i = xts_mul_xpow(tall_, XPOW_LANES(4 * (i)));
/* The tweak XOR and the whitening key in one ternary-logic instruction. */
#define ZXTS_IN(i) b##i = XOR3(LD4(in, i), t##i, k0_);
#define ZXTS_OUT(i) ST4(out, i, _mm512_xor_si512(b##i, t##i));
#define ZXTS_OUT_PAGE(i) ST4_PAGE(out, i, _mm512_xor_si512(b##i, t##i));
#define ZTWEAK_NEXT(i) n##i = xts_mul_x32(t##i);
#define ZTWEAK_TAKE(i) t##i = n##i;
#define ZNEXT_DECL(i) __m512i n##i;

/* The rounds from 1 on (the whitening is in ZXTS_IN), with the next batch's tweaks n_i = t_i x^32
 * computed between the first eight: early in program order, so the next batch's inputs never wait
 * on them. With the update after the batch, XTS ran at 65-69 % of the AES limit on Zen 5 (AES at
 * two 512-bit instructions per cycle, no slack for a late input); here at 81-87 % (docs/aesni.md). */
/* clang-format off */
#define ZXR(cipher, KEY, rk, r) ZROUND_N(X8, cipher, KEY, rk, r)
#define ZROUNDS_WHITENED_NEXT_TWEAKS(cipher, KEY, rk, rounds)                                                \
	do {                                                                                                 \
		__m512i k_;                                                                                  \
		ZXR(cipher, KEY, rk, 1) ZTWEAK_NEXT(0) ZXR(cipher, KEY, rk, 2) ZTWEAK_NEXT(1)                \
		ZXR(cipher, KEY, rk, 3) ZTWEAK_NEXT(2) ZXR(cipher, KEY, rk, 4) ZTWEAK_NEXT(3)                \
		ZXR(cipher, KEY, rk, 5) ZTWEAK_NEXT(4) ZXR(cipher, KEY, rk, 6) ZTWEAK_NEXT(5)                \
		ZXR(cipher, KEY, rk, 7) ZTWEAK_NEXT(6) ZXR(cipher, KEY, rk, 8) ZTWEAK_NEXT(7)                \
		ZXR(cipher, KEY, rk, 9)                                                                      \
		ZROUNDS_TAIL_N(X8, cipher, KEY, rk, rounds)                                                  \
	} while (0)
/* clang-format on */

/* XTS on 1..32 blocks (a short data unit, or the rest after the batches) in one pass of
 * ceil(n/4) registers: every tweak from T by its own shift (no serial chain of x-multiplies), the
 * last register loaded and stored in pieces (ld_blocks). The 256-bit kernels this replaced
 * multiplied the tweaks one by one and left the last 15 blocks to the 128-bit ones: a 256-byte
 * unit ran at 0.75x OpenSSL 3.5's speed (bench/README.md). */
#define ZLD_SHORT(i) ((i) == last_ ? ld_blocks(in + 64 * (i), nlast_) : LD4(in, i))
#define ZXTS_IN_SHORT(i) b##i = XOR3(ZLD_SHORT(i), t##i, k0_);
#define ZXTS_OUT_SHORT(i)                                                                                    \
	if ((i) == last_)                                                                                    \
		st_blocks(out + 64 * (i), _mm512_xor_si512(b##i, t##i), nlast_);                             \
	else                                                                                                 \
		ST4_PAGE(out, i, _mm512_xor_si512(b##i, t##i));
/* next_last: the last block takes the tweak after its own, x^n where its place gives x^(n-1)
 * (a decryption's ciphertext stealing: its last whole block is decrypted with T_m, in a lane of
 * this pass, instead of after it; xts_dec_steal). */
#define ZTWEAK_NEXT_LAST(i)                                                                                  \
	if ((i) == last_ && next_last)                                                                       \
		t##i = xts_mul_xk(t##i, _mm512_maskz_set1_epi64((__mmask8)(3u << (2 * (nlast_ - 1))), 1));
/* clang-format off */
#define XTS_SHORT_REGS(name, regs, cipher, keys)                                                             \
	CT_TARGET_ZMM static void name##_##regs(const struct ct_aes_key *k, const __m512i t0_,               \
						const uint8_t *in, uint8_t *out, size_t nblocks,             \
						bool next_last)                                              \
	{                                                                                                    \
		const unsigned rounds = k->rounds, last_ = (regs) - 1;                                       \
		const uint8_t(*const rk)[16] = k->keys;                                                      \
		const unsigned nlast_ = (unsigned)nblocks - 4 * last_;                                       \
		const __m512i k0_ = bcast(rk[0]);                                                            \
		__m512i k_;                                                                                  \
		X##regs(ZTWEAK_INIT) X##regs(ZTWEAK_NEXT_LAST) X##regs(ZDECL) X##regs(ZXTS_IN_SHORT)         \
		ZROUNDS_FROM1_N(X##regs, cipher, SCHED, rk, rounds)                                          \
		X##regs(ZXTS_OUT_SHORT)                                                                      \
	}
/* clang-format on */
/* tweak = the tweak of the block after n blocks, from t0's lane 0 (next_last: of the last block
 * itself, which took the next one), for the unit's ciphertext stealing and the next call. */
ZI void xts_store_tweak_after(uint8_t tweak[16], __m512i t0, size_t n, bool next_last)
{
	const long long steps = (long long)n - (next_last ? 1 : 0);
	ST(tweak, 0, _mm512_castsi512_si128(xts_mul_xk(t0, _mm512_set1_epi64(steps))));
}

/* name##_from(k, t0, tweak, in, out, nblocks, next_last): the pass in as many registers as it
 * takes, t0 the first register's tweaks (T x^0..3, T in its lane 0); tweak (T in memory) goes on
 * to the block after the last (next_last: to the last block's own). The batch loop gives it t0
 * from its registers: through memory and its x-multiplies made again, the 1-31 blocks after a
 * batch cost ~11 ns more than a whole batch (1008 bytes 89 ns, 1024 bytes 78). Inline only: a
 * function taking a 512-bit argument ends without VZEROUPPER, and the SSE code it returned to
 * (ct_aes_xts) ran a 512-byte unit in 209 ns instead of 50. */
#define XTS_SHORT_KERNEL(name, cipher, keys)                                                                 \
	FOR_REGS_1_8(XTS_SHORT_REGS, name, cipher, keys)                                                     \
	ZI void name##_from(const struct ct_aes_key *k, const __m512i t0, uint8_t tweak[16],                 \
			    const uint8_t *in, uint8_t *out, size_t nblocks, bool next_last)                 \
	{                                                                                                    \
		REGS_1_8_BY_COUNT(name, const struct ct_aes_key *, const __m512i, const uint8_t *,           \
				  uint8_t *, size_t, bool)                                                   \
		by_regs[(nblocks - 1) / 4](k, t0, in, out, nblocks, next_last);                              \
		xts_store_tweak_after(tweak, t0, nblocks, next_last);                                        \
	}

XTS_SHORT_KERNEL(xts_enc_short, ENC, enc)
XTS_SHORT_KERNEL(xts_dec_short, DEC, dec)

/* The batch loop's round keys (xts_keys_broadcast below), from the schedule `keys` (enc, dec):
 * HELD in registers, loaded once per call, or SCHED, broadcast from the schedule in every
 * batch. Each declares kz (ZROUND_N's rk) and k0_ (the whitening key). */
#define XTS_KEYS_HELD(keys)                                                                                  \
	const struct zkeys kz = zkeys_load(k->keys, rounds);                                                 \
	const __m512i k0_ = kz.k[0];
#define XTS_KEYS_SCHED(keys)                                                                                 \
	const uint8_t(*const kz)[16] = k->keys;                                                              \
	const __m512i k0_ = bcast(kz[0]);
/* The rest after the batches, from XTS_PAD_MIN_BLOCKS blocks on, as one more batch with the
 * loop's tweaks, its registers past the data idle (not loaded, not stored; next_last as for the
 * short pass). A short pass of 21-31 blocks there cost 4-11 ns more than this whole batch
 * (1008-byte units 1.14x faster so, 1520 bytes 1.10x); up to 20 it is the cheaper. */
#define XTS_PAD_MIN_BLOCKS 21
#define ZXTS_IN_PAD(i) b##i = XOR3((i) < nregs_ ? ZLD_SHORT(i) : _mm512_setzero_si512(), t##i, k0_);
#define ZXTS_OUT_PAD(i)                                                                                      \
	if ((i) < nregs_) {                                                                                  \
		ZXTS_OUT_SHORT(i)                                                                            \
	}
#define XTS_PADDED_BATCH(cipher, KEY, keep_next)                                                             \
	do {                                                                                                 \
		const bool next_last = (keep_next);                                                          \
		const unsigned nregs_ = (unsigned)(nblocks + 3) / 4, last_ = nregs_ - 1;                     \
		const unsigned nlast_ = (unsigned)nblocks - 4 * last_;                                       \
		xts_store_tweak_after(tweak, t0, nblocks, next_last);                                        \
		__m512i k_;                                                                                  \
		X8(ZTWEAK_NEXT_LAST)                                                                         \
		X8(ZDECL)                                                                                    \
		X8(ZXTS_IN_PAD)                                                                              \
		ZROUNDS_FROM1_N(X8, cipher, KEY, kz, rounds)                                                 \
		X8(ZXTS_OUT_PAD)                                                                             \
	} while (0)
/* Data off a 64-byte line: every 512-bit load and store of it splits two lines. In place 16
 * bytes off (where openssl speed's buffer lands routed) XTS units of 16 KiB ran 8 % slower than
 * aligned ones and 4 KiB 12 % (Intel Xeon, 2026-12-05). From its threshold on, the XTS kernel
 * takes out's blocks up to the next line first (the lead: 1-3), in one register whose lanes
 * before out are masked (neither loaded nor stored; masking suppresses their faults), and runs
 * its batches on whole lines after it. A misaligned unit then takes one more register than an
 * aligned one (17 for 1 KiB, not 16), which below the threshold costs more than the splits. ECB
 * and CTR lose nothing to the line splits themselves, only to a store astride a page (st4_page
 * above), and the same lead measured 0.90-1.10x by offset and size for them; GCM's (its GHASH
 * taking the lead's blocks first) was within the noise at 2-16 KiB: neither is taken. */
/* The blocks of out's line before out (1-3), or 0: aligned, not on a block boundary (its loads
 * and stores split lines whatever is done first), or under min_blocks. */
ZI unsigned line_skip(const uint8_t *out, size_t nblocks, size_t min_blocks)
{
	const unsigned off = (unsigned)(uintptr_t)out & 63;
	return nblocks >= min_blocks && !(off & 15) ? off / 16 : 0;
}
/* The lead's lanes (those from skip on) as a mask of qwords. */
ZI __mmask8 lead_lanes(unsigned skip)
{
	return (__mmask8)(0xFFu << (2 * skip));
}
/* XTS's lead: out's first 4 - skip blocks, their lanes given T x^(lane - skip) (the lanes before
 * out a negative shift: 0, unused); tweak goes on to T x^lead, where the batches start. With it,
 * 2 KiB units measured 1-3 % slower, 3 KiB even, 4-16 KiB 1.01-1.09x faster (8 KiB 459 ns
 * against 499; aligned: 453). Out of line: inline, its code cost the kernels' 1 KiB units, which
 * never take it, 2-3 % 16 bytes off a line. */
#define XTS_ALIGN_MIN_BLOCKS 192
/* clang-format off */
#define XTS_LEAD_KERNEL(name, cipher, keys)                                                                  \
	CT_TARGET_ZMM __attribute__((noinline)) static void name(const struct ct_aes_key *k,                 \
								 uint8_t tweak[16], const uint8_t *in,       \
								 uint8_t *out, unsigned skip)                \
	{                                                                                                    \
		const unsigned rounds = k->rounds;                                                           \
		const __mmask8 m = lead_lanes(skip);                                                         \
		const uint8_t(*const rk)[16] = k->keys;                                                      \
		const __m512i t = bcast(tweak);                                                              \
		const __m512i tl = xts_mul_xk(t, _mm512_sub_epi64(_mm512_set_epi64(3, 3, 2, 2, 1, 1, 0, 0), \
								   _mm512_set1_epi64(skip)));                \
		__m512i k_, b0 = XOR3(_mm512_maskz_loadu_epi64(m, in - 16 * skip), tl, bcast(rk[0]));        \
		ZROUNDS_FROM1_N(X1, cipher, SCHED, rk, rounds)                                               \
		_mm512_mask_storeu_epi64(out - 16 * skip, m, _mm512_xor_si512(b0, tl));                      \
		ST(tweak, 0, _mm512_castsi512_si128(xts_mul_xk(t, _mm512_set1_epi64(4 - skip))));            \
	}
/* clang-format on */
XTS_LEAD_KERNEL(xts_enc_lead, ENC, enc)
XTS_LEAD_KERNEL(xts_dec_lead, DEC, dec)
#define ENC_LEAD xts_enc_lead
#define DEC_LEAD xts_dec_lead
/* keep: the blocks at the end that the batches leave to the short pass whatever the count (1 for
 * xts_dec_steal, whose last block takes the next tweak there); KEY: HELD or SCHED. */
/* clang-format off */
#define XTS_KERNEL(name, cipher, keys, KEY, keep)                                                            \
	CT_TARGET_ZMM static void name(const struct ct_aes_key *k, const struct ct_aes_key *tk,             \
				       uint8_t tweak[16], const uint8_t *in, uint8_t *out, size_t nblocks)   \
	{                                                                                                    \
		const unsigned rounds = k->rounds;                                                           \
		const unsigned skip = line_skip(out, nblocks, XTS_ALIGN_MIN_BLOCKS);                         \
		const bool batches_ = nblocks - (keep) > BATCH || ((keep) && nblocks - (keep) == BATCH);     \
		if (tk && (skip || !batches_)) { /* the lead and the short pass read T from memory */        \
			ST(tweak, 0, _mm512_castsi512_si128(xts_tweak_all_lanes(tk, tweak)));                \
			tk = NULL;                                                                           \
		}                                                                                            \
		if (skip) {                                                                                  \
			cipher##_LEAD(k, tweak, in, out, skip);                                              \
			in += 16 * (4 - skip), out += 16 * (4 - skip), nblocks -= 4 - skip;                  \
		}                                                                                            \
		/* one batch or less: the batch loop would also make the next batch's tweaks (with a         \
		 * block kept: a batch and that block are more than the short pass takes) */                 \
		if (batches_) {                                                                              \
			const __m512i tall_ = xts_tweak_all_lanes(tk, tweak);                                \
			X8(ZTWEAK_INIT_BATCH)                                                                \
			XTS_KEYS_##KEY(keys)                                                                 \
			for (; nblocks - (keep) >= BATCH;                                                    \
			     in += 16 * BATCH, out += 16 * BATCH, nblocks -= BATCH) {                        \
				X8(ZDECL)                                                                    \
				X8(ZNEXT_DECL)                                                               \
				X8(ZXTS_IN)                                                                  \
				ZROUNDS_WHITENED_NEXT_TWEAKS(cipher, KEY, kz, rounds);                       \
				ZSTORE_BATCH(ZXTS_OUT, ZXTS_OUT_PAGE);                                       \
				X8(ZTWEAK_TAKE)                                                              \
			}                                                                                    \
			if (nblocks >= XTS_PAD_MIN_BLOCKS) {                                                 \
				XTS_PADDED_BATCH(cipher, KEY, (keep) != 0);                                  \
			} else if (nblocks) {                                                                \
				cipher##_SHORT_FROM(k, t0, tweak, in, out, nblocks, (keep) != 0);            \
			} else {                                                                             \
				ST(tweak, 0, _mm512_castsi512_si128(t0));                                    \
			}                                                                                    \
		} else if (nblocks) {                                                                        \
			const __m512i t0_ = xts_mul_xk(bcast(tweak), _mm512_set_epi64(3, 3, 2, 2, 1, 1, 0, 0)); \
			cipher##_SHORT_FROM(k, t0_, tweak, in, out, nblocks, (keep) != 0);                   \
		}                                                                                            \
	}
/* clang-format on */
#define ENC_SHORT_FROM xts_enc_short_from
#define DEC_SHORT_FROM xts_dec_short_from

XTS_KERNEL(xts_enc_held, ENC, enc, HELD, 0)
XTS_KERNEL(xts_dec_held, DEC, dec, HELD, 0)
XTS_KERNEL(xts_enc_sched, ENC, enc, SCHED, 0)
XTS_KERNEL(xts_dec_sched, DEC, dec, SCHED, 0)
/* A decryption with ciphertext stealing (aes_internal.h): nblocks whole blocks, the last one
 * decrypted with the tweak after its own, T_m, in the short pass's last lane, so that only the
 * final block's AES follows (a 1032-byte unit took two AES latencies after the batch); the
 * tweak ends as the last block's own, T_{m-1}. */
XTS_KERNEL(xts_dec_steal_held, DEC, dec, HELD, 1)
XTS_KERNEL(xts_dec_steal_sched, DEC, dec, SCHED, 1)

/* ---- GHASH ----
 * Thirty-two blocks per reduction: register j (0..7) of a group holds blocks 4j..4j+3,
 * multiplied lane by lane with H^(32-4j)..H^(29-4j) (hpow's layout, so one load per register).
 * The running x is not mixed into the data: (x ^ B0) H^32 = x H^32 ^ B0 H^32, so the 32 products
 * are summed and their lanes folded with no dependency on x, and only x H^32 (four 128-bit
 * multiplies), a few XORs and the reduction (two multiplies, gh_close) stay on the serial chain
 * from one group to the next. */
/* Registers j and j + 1 of a group at p, multiplied by hpow registers hj and hj + 1, in one of
 * two forms (f, a constant where the kernels are instantiated):
 *  - GH_KARATSUBA: lo = a0 b0, hi = a1 b1, and (a0 ^ a1)(b0 ^ b1) with the key's half-sums
 *    precomputed (hpow's Karatsuba rows): three multiplies a register, plus a dword shuffle and
 *    an XOR for the data's half-sums; the middle term is corrected once per group (gh_close);
 *  - GH_SCHOOLBOOK: the middle term as a0 b1 ^ a1 b0, four multiplies and nothing else.
 * The products are summed two registers at a time, one VPTERNLOGQ per sum. Which form is faster
 * is the multiplier's 512-bit rate (ghash_form_of_cpu): on AMD Zen 5 it issues every other cycle
 * and the vector ALU slots bound a stitched step, so the fourth multiply costs more than the
 * shuffle and XOR it saves; on Intel it issues every cycle, on the port beside the AES one,
 * where the shuffle goes too, and the fourth multiply is the cheaper. */
enum gh_form { GH_KARATSUBA, GH_SCHOOLBOOK };
#define ZGH_HALVES(d_) _mm512_xor_si512(d_, _mm512_shuffle_epi32(d_, _MM_PERM_BADC))
#define ZGHW2(f, p, j, hj)                                                                                   \
	{                                                                                                    \
		const __m512i da_ = bswap512(LD4(p, j)), db_ = bswap512(LD4(p, (j) + 1));                    \
		const __m512i ha_ = LD4(hpow, hj), hb_ = LD4(hpow, (hj) + 1);                                \
		const __m512i la_ = _mm512_clmulepi64_epi128(da_, ha_, 0x00);                                \
		const __m512i lb_ = _mm512_clmulepi64_epi128(db_, hb_, 0x00);                                \
		const __m512i xa_ = _mm512_clmulepi64_epi128(da_, ha_, 0x11);                                \
		const __m512i xb_ = _mm512_clmulepi64_epi128(db_, hb_, 0x11);                                \
		if ((j) == 0)                                                                                \
			lo = _mm512_xor_si512(la_, lb_), hi = _mm512_xor_si512(xa_, xb_);                    \
		else                                                                                         \
			lo = XOR3(lo, la_, lb_), hi = XOR3(hi, xa_, xb_);                                    \
		if ((f) == GH_KARATSUBA) {                                                                   \
			const __m512i ma_ = _mm512_clmulepi64_epi128(ZGH_HALVES(da_), LD4(hmid, hj), 0x00);  \
			const __m512i mb_ =                                                                  \
				_mm512_clmulepi64_epi128(ZGH_HALVES(db_), LD4(hmid, (hj) + 1), 0x00);        \
			mid = (j) == 0 ? _mm512_xor_si512(ma_, mb_) : XOR3(mid, ma_, mb_);                   \
		} else {                                                                                     \
			const __m512i ma_ = _mm512_clmulepi64_epi128(da_, ha_, 0x01);                        \
			const __m512i mb_ = _mm512_clmulepi64_epi128(db_, hb_, 0x01);                        \
			mid = (j) == 0 ? _mm512_xor_si512(ma_, mb_) : XOR3(mid, ma_, mb_);                   \
			mid = XOR3(mid, _mm512_clmulepi64_epi128(da_, ha_, 0x10),                            \
				   _mm512_clmulepi64_epi128(db_, hb_, 0x10));                                \
		}                                                                                            \
	}
/* A group of n registers (8: 32 blocks, 4: 16; 0: none) takes the last 4n powers, hpow
 * registers 8 - n .. 7; registers j and j + 1 of it are hashed by ZGH_SLOT(f, n, p, j) (j even),
 * a no-op for j >= n, and ZGH_CLOSE(f, n) adds x times H^(4n), the group's first power
 * (hpow[32 - 4n]), and reduces. */
/* clang-format off */
#define ZGH_SLOT(f, n, p, j)                                                                                 \
	if ((j) < (n))                                                                                       \
		ZGHW2(f, p, j, (j) + 8 - (n))
#define ZGH_CLOSE(f, n)                                                                                      \
	if (n)                                                                                               \
		xs = gh_close(lo, (f) == GH_KARATSUBA ? XOR3(mid, lo, hi) : mid, hi, xs,                     \
			      LD(hpow, CT_GHASH_XDIV_ROW + ((n) == 4)));
#define ZGH_GROUP(f, n, p)                                                                                   \
	do {                                                                                                 \
		ZGH_SLOT(f, n, p, 0) ZGH_SLOT(f, n, p, 2) ZGH_SLOT(f, n, p, 4) ZGH_SLOT(f, n, p, 6)          \
		ZGH_CLOSE(f, n)                                                                              \
	} while (0)
/* clang-format on */

ZI __m512i zext(__m128i v)
{
	return _mm512_zextsi128_si512(v);
}

ZI __m128i fold4(__m512i v)
{
	const __m256i y = _mm256_xor_si256(_mm512_castsi512_si256(v), _mm512_extracti64x4_epi64(v, 1));
	return _mm_xor_si128(_mm256_castsi256_si128(y), _mm256_extracti128_si256(y, 1));
}

/* The running hash is kept times x (xs = X x, gf_mul_x on the way in, gf_div_x on the way
 * out): every reduction multiplies by x, which the data's products then carry as xs does, and
 * the group's x term takes H^(4n) x^-1 (hx, the key's XDIV rows): (X x)(H^(4n) x^-1) x =
 * X H^(4n) x. The group's folded products plus that, reduced: the next xs. mid is the middle
 * term a0 b1 ^ a1 b0 (Karatsuba's, corrected by ZGH_CLOSE: (a0 ^ a1)(b0 ^ b1) ^ a0 b0 ^ a1 b1). */
ZI __m128i gh_close(__m512i lo, __m512i mid, __m512i hi, __m128i xs, __m128i hx)
{
	const __m128i l = _mm_xor_si128(fold4(lo), _mm_clmulepi64_si128(xs, hx, 0x00));
	const __m128i h = _mm_xor_si128(fold4(hi), _mm_clmulepi64_si128(xs, hx, 0x11));
	const __m128i m = _mm_ternarylogic_epi64(fold4(mid), _mm_clmulepi64_si128(xs, hx, 0x01),
						 _mm_clmulepi64_si128(xs, hx, 0x10), 0x96);
	return gf_reduce_times_x(l, m, h);
}

/* GHASH of 1..31 blocks in one reduction: register j holds blocks 4j.. (its last in pieces, the
 * empty lanes zero), multiplied lane by lane with H^(n-4j).. (hpow rows from CT_GHASH_POWERS - n:
 * rows past H^1 meet zero lanes only), x mixed into block 0. Before, such a rest went to the
 * 256-bit GHASH and under 16 blocks to the 128-bit one: GCM's two-pass rest after the stitched
 * steps (a 992-byte message took 141 ns against 1024 bytes' 102). */
/* One register of a short GHASH: d's four blocks times the powers at h, lane by lane (four
 * multiplies), added into lo, mid and hi. */
ZI void gh_short_reg(__m512i d, const uint8_t (*h)[16], __m512i *lo, __m512i *mid, __m512i *hi)
{
	const __m512i hv = LD4(h, 0);
	*lo = _mm512_xor_si512(*lo, _mm512_clmulepi64_epi128(d, hv, 0x00));
	*hi = _mm512_xor_si512(*hi, _mm512_clmulepi64_epi128(d, hv, 0x11));
	*mid = XOR3(*mid, _mm512_clmulepi64_epi128(d, hv, 0x01), _mm512_clmulepi64_epi128(d, hv, 0x10));
}

CT_TARGET_ZMM static void ghash_short(const uint8_t hpow[CT_GHASH_KEY_ROWS][16], uint8_t xi[16],
				      const uint8_t *in, size_t nblocks)
{
	const uint8_t(*const h)[16] = hpow + CT_GHASH_POWERS - nblocks;
	const size_t regs = (nblocks + 3) / 4;
	__m512i lo = _mm512_setzero_si512(), mid = lo, hi = lo;
	for (size_t j = 0; j < regs; j++) {
		__m512i d = bswap512(j + 1 < regs ? LD4(in, j)
						  : ld_blocks(in + 64 * j, (unsigned)(nblocks - 4 * j)));
		if (j == 0)
			d = _mm512_xor_si512(d, zext(bswap128(LD(xi, 0))));
		gh_short_reg(d, h + 4 * j, &lo, &mid, &hi);
	}
	ST(xi, 0, bswap128(gf_div_x(gf_reduce_times_x(fold4(lo), fold4(mid), fold4(hi)))));
}

ZI void ghash_in(const uint8_t hpow[CT_GHASH_KEY_ROWS][16], uint8_t xi[16], const uint8_t *in, size_t nblocks,
		 enum gh_form f)
{
	if (nblocks >= BATCH) {
		const uint8_t(*const hmid)[16] = hpow + CT_GHASH_POWERS;
		(void)hmid; /* the schoolbook form reads no half-sums */
		__m128i xs = gf_mul_x(bswap128(LD(xi, 0)));
		__m512i lo, mid, hi;
		for (; nblocks >= BATCH; in += 16 * BATCH, nblocks -= BATCH)
			ZGH_GROUP(f, 8, in);
		ST(xi, 0, bswap128(gf_div_x(xs)));
	}
	if (nblocks)
		ghash_short(hpow, xi, in, nblocks);
}

/* ---- GCM: CTR with GHASH stitched into its rounds ----
 * A step takes 8 registers (32 counter blocks) or 4 (16) through the AES rounds while 8 or 4
 * registers of ciphertext are hashed between them: two registers' multiplies after each of
 * rounds 1, 3, 5 and 7, the reduction after round 9. Decryption hashes the blocks it decrypts (its
 * input), each step its own. Encryption hashes what the step before wrote, so its first step is
 * CTR alone and its last GHASH runs in the rest's rounds, or after the loop. Steps of 32 blocks,
 * one of 16 for a remainder of 16 (stitched too: 256- and 768-byte messages ran it as two
 * passes), and one for the 1..15 blocks after them (and a partial block's keystream: ks);
 * starting and ending with 16 blocks so that less of a message runs unstitched measured no
 * faster on the Intel hosts from 48 blocks (their ports, not the stitching, bound a whole
 * message), and only 16-block steps slower, but at 32 whole blocks two steps of 16 are faster
 * than one of 32. From 16 blocks, every block: returns nblocks (0 under 16). */
/* One step: XA's registers of counter blocks (w blocks) from in to out, and ng registers of
 * blocks at gp hashed into x between the rounds: SLOT(f, ng, gp, j) after rounds 1, 3, 5 and 7
 * (j = 0, 2, 4, 6), CLOSE(f, ng) after round 9. A whole step (GCM_STEP) hashes a group of
 * ZGH_SLOT's; the rest after the whole steps (GCM_REST_STEP below) loads and stores its last
 * register in pieces (ZXOR_IN_SHORT, ZSTORE_SHORT). */
/* clang-format off */
#define GCM_STEP_WITH(f, XA, w, ng, gp, SLOT, CLOSE, XOR_IN, STORE)                                         \
	do {                                                                                                 \
		XA(ZDECL)                                                                                    \
		ZCOUNTERS_W(XA, w);                                                                          \
		__m512i k_ = SCHED(rk, 0);                                                                   \
		XA(ZWHITEN)                                                                                  \
		ZROUND_N(XA, ENC, SCHED, rk, 1) SLOT(f, ng, gp, 0) ZROUND_N(XA, ENC, SCHED, rk, 2)           \
		ZROUND_N(XA, ENC, SCHED, rk, 3) SLOT(f, ng, gp, 2) ZROUND_N(XA, ENC, SCHED, rk, 4)           \
		ZROUND_N(XA, ENC, SCHED, rk, 5) SLOT(f, ng, gp, 4) ZROUND_N(XA, ENC, SCHED, rk, 6)           \
		ZROUND_N(XA, ENC, SCHED, rk, 7) SLOT(f, ng, gp, 6) ZROUND_N(XA, ENC, SCHED, rk, 8)           \
		ZROUND_N(XA, ENC, SCHED, rk, 9)                                                              \
		CLOSE(f, ng)                                                                                 \
		ZROUNDS_TAIL_N(XA, ENC, SCHED, rk, rounds)                                                   \
		XA(XOR_IN)                                                                                   \
		XA(STORE)                                                                                    \
	} while (0)
#define GCM_STEP(f, XA, w, ng, gp) GCM_STEP_WITH(f, XA, w, ng, gp, ZGH_SLOT, ZGH_CLOSE, ZXOR_IN, ZSTORE_OUT)
/* clang-format on */

/* The rest after the whole steps, 1..15 blocks (rest) in regs registers, in one step: before,
 * the mode layer ran it as two passes after the kernel (CTR, then GHASH), and the last whole
 * step's GHASH ran unstitched before them (a 992-byte message took 124 ns against 1024 bytes'
 * 102). Encryption hashes the last whole step's ng registers at gp between its rounds, as a
 * whole step does, and its own blocks afterwards (ZGH_REST_OWN: they are its output); decryption
 * hashes its own input between its rounds, ghash_short's way (ZGH_REST_SLOT: gh_short_reg). The
 * counter blocks past the rest are made and left unused: z goes back by them. With ks (an
 * encryption whose partial block follows the whole ones), the block after the rest is one of
 * them, in one more register where the rest fills its last (ld_blocks' 0 blocks: no data): its
 * keystream goes to ks (ZSTORE_REST), and aes_gcm.c's partial block needs no AES of its own. */
#define ZGH_REST_SLOT(f, n, p, j)                                                                            \
	if ((j) / 2 < nregs_) {                                                                              \
		__m512i d_ = bswap512((j) / 2 == last_ ? ld_blocks((p) + 64 * ((j) / 2), nlast_)             \
						       : LD4(p, (j) / 2));                                   \
		if ((j) == 0)                                                                                \
			d_ = _mm512_xor_si512(d_, zext(gf_div_x(xs)));                                       \
		gh_short_reg(d_, hrest + 2 * (j), &lo, &mid, &hi);                                           \
	}
#define ZGH_REST_CLOSE(f, n) xs = gf_reduce_times_x(fold4(lo), fold4(mid), fold4(hi));
/* Encryption's rest, hashed after its step from what it wrote at p, xs in its register. As a call
 * of ghash_short after the kernel (xi stored, reloaded, converted both ways), it cost a message
 * with a rest ~20 ns: 1008 bytes took 124 ns against 1024 bytes' 103. */
/* clang-format off */
#define ZGH_REST_OWN(f, p)                                                                                   \
	do {                                                                                                 \
		const unsigned nregs_ = (rest + 3) / 4, last_ = nregs_ - 1, nlast_ = rest - 4 * last_;       \
		const uint8_t(*const hrest)[16] = hpow + CT_GHASH_POWERS - rest;                             \
		lo = mid = hi = _mm512_setzero_si512();                                                      \
		ZGH_REST_SLOT(f, 0, p, 0) ZGH_REST_SLOT(f, 0, p, 2)                                          \
		ZGH_REST_SLOT(f, 0, p, 4) ZGH_REST_SLOT(f, 0, p, 6)                                          \
		ZGH_REST_CLOSE(f, 0)                                                                         \
	} while (0)
/* The rest step's stores, and the keystream of block rest (its input lanes are zero: the register
 * holds the keystream itself) to ks where asked. */
#define ZSTORE_REST(i)                                                                                       \
	ZSTORE_SHORT(i)                                                                                      \
	if (ks && (i) == rest / 4)                                                                           \
		ST(ks, 0, _mm512_castsi512_si128(_mm512_maskz_compress_epi64((__mmask8)(3u << 2 * (rest % 4)), \
									     b##i)));
#define GCM_REST_STEP(f, XA, regs, ng, gp, SLOT, CLOSE)                                                      \
	do {                                                                                                 \
		const unsigned nregs_ = (regs), last_ = nregs_ - 1, nlast_ = rest - 4 * last_;              \
		const uint8_t(*const hrest)[16] = hpow + CT_GHASH_POWERS - rest;                             \
		(void)hrest, (void)nregs_;                                                                   \
		GCM_STEP_WITH(f, XA, 4 * (regs), ng, gp, SLOT, CLOSE, ZXOR_IN_SHORT, ZSTORE_REST);           \
		z.c = _mm512_sub_epi64(z.c, _mm512_broadcast_i32x4(_mm_set_epi64x(0, 4 * (regs) - rest)));  \
	} while (0)
/* the rest (and with ks the block after it) in as many registers as it takes; ng, gp, SLOT and
 * CLOSE as for GCM_REST_STEP */
#define GCM_REST(f, ng, gp, SLOT, CLOSE)                                                                     \
	switch ((rest + (ks != NULL) + 3) / 4) {                                                             \
	case 1: GCM_REST_STEP(f, X1, 1, ng, gp, SLOT, CLOSE); break;                                         \
	case 2: GCM_REST_STEP(f, X2, 2, ng, gp, SLOT, CLOSE); break;                                         \
	case 3: GCM_REST_STEP(f, X3, 3, ng, gp, SLOT, CLOSE); break;                                         \
	default: GCM_REST_STEP(f, X4, 4, ng, gp, SLOT, CLOSE); break;                                        \
	}
/* Encryption's end: the last whole step's n registers at p hashed, stitched into the rest's
 * rounds where there is a rest, and then the rest's own blocks (at out); with no rest but ks,
 * into the rounds of the partial block's keystream alone. */
#define GCM_ENC_END(f, n, p)                                                                                 \
	do {                                                                                                 \
		if (rest) {                                                                                  \
			GCM_REST(f, n, p, ZGH_SLOT, ZGH_CLOSE)                                               \
			ZGH_REST_OWN(f, out);                                                                \
		} else if (ks) {                                                                             \
			GCM_REST_STEP(f, X1, 1, n, p, ZGH_SLOT, ZGH_CLOSE);                                  \
		} else {                                                                                     \
			ZGH_GROUP(f, n, p);                                                                  \
		}                                                                                            \
	} while (0)
/* clang-format on */

ZI size_t gcm_stitched(const struct ct_aes_key *k, uint8_t ctr[16], const uint8_t hpow[CT_GHASH_KEY_ROWS][16],
		       uint8_t xi[16], const uint8_t *in, uint8_t *out, size_t nblocks, uint8_t *ks, bool enc,
		       enum gh_form f)
{
	const unsigned rounds = k->rounds;
	const uint8_t(*const rk)[16] = k->enc;
	if (nblocks < 16)
		return 0;
	const size_t all = nblocks;
	const unsigned rest = (unsigned)(nblocks % 16);
	nblocks -= rest;
	const uint8_t(*const hmid)[16] = hpow + CT_GHASH_POWERS;
	(void)hmid; /* the schoolbook form reads no half-sums */
	struct zctr z = zctr_start(ctr);
	__m128i xs = gf_mul_x(bswap128(LD(xi, 0)));
	__m512i lo, mid, hi;
	if (enc) {
		if (nblocks == 32) {
			/* two steps of 16: half as much AES before the first GHASH and GHASH after
			 * the last AES as one step of 32 leaves unstitched (512-767 bytes 1.03-1.09x
			 * on an Intel Xeon model 167: bench/README.md) */
			GCM_STEP(f, X4, 16, 0, out);
			in += 16 * 16, out += 16 * 16;
			GCM_STEP(f, X4, 16, 4, out - 16 * 16);
			in += 16 * 16, out += 16 * 16;
			GCM_ENC_END(f, 4, out - 16 * 16);
		} else if (nblocks > 32) {
			GCM_STEP(f, X8, 32, 0, out);
			in += 16 * 32, out += 16 * 32, nblocks -= 32;
			for (; nblocks >= 32; in += 16 * 32, out += 16 * 32, nblocks -= 32)
				GCM_STEP(f, X8, 32, 8, out - 16 * 32);
			if (nblocks) { /* 16 left */
				GCM_STEP(f, X4, 16, 8, out - 16 * 32);
				in += 16 * 16, out += 16 * 16;
				GCM_ENC_END(f, 4, out - 16 * 16);
			} else {
				GCM_ENC_END(f, 8, out - 16 * 32);
			}
		} else {
			GCM_STEP(f, X4, 16, 0, out);
			in += 16 * 16, out += 16 * 16;
			GCM_ENC_END(f, 4, out - 16 * 16);
		}
	} else {
		for (; nblocks >= 32; in += 16 * 32, out += 16 * 32, nblocks -= 32)
			GCM_STEP(f, X8, 32, 8, in);
		if (nblocks) {
			GCM_STEP(f, X4, 16, 4, in);
			in += 16 * 16, out += 16 * 16;
		}
		if (rest) {
			lo = mid = hi = _mm512_setzero_si512();
			GCM_REST(f, 0, in, ZGH_REST_SLOT, ZGH_REST_CLOSE)
		}
	}
	zctr_end(&z, ctr);
	ST(xi, 0, bswap128(gf_div_x(xs)));
	return all;
}

/* Each form's kernels, instantiated with it as a constant; encryption and decryption each its
 * own function, compiled alone (decryption carries nothing of encryption's ks). */
#define GCM_FORM_KERNELS(f, suffix)                                                                          \
	CT_TARGET_ZMM static void ghash_##suffix(const uint8_t hpow[CT_GHASH_KEY_ROWS][16], uint8_t xi[16],  \
						 const uint8_t *in, size_t nblocks)                          \
	{                                                                                                    \
		ghash_in(hpow, xi, in, nblocks, f);                                                          \
	}                                                                                                    \
	CT_TARGET_ZMM static size_t gcm_enc_##suffix(const struct ct_aes_key *k, uint8_t ctr[16],            \
						     const uint8_t hpow[CT_GHASH_KEY_ROWS][16],              \
						     uint8_t xi[16], const uint8_t *in, uint8_t *out,        \
						     size_t nblocks, uint8_t *ks)                            \
	{                                                                                                    \
		return gcm_stitched(k, ctr, hpow, xi, in, out, nblocks, ks, true, f);                        \
	}                                                                                                    \
	CT_TARGET_ZMM static size_t gcm_dec_##suffix(const struct ct_aes_key *k, uint8_t ctr[16],            \
						     const uint8_t hpow[CT_GHASH_KEY_ROWS][16],              \
						     uint8_t xi[16], const uint8_t *in, uint8_t *out,        \
						     size_t nblocks)                                         \
	{                                                                                                    \
		return gcm_stitched(k, ctr, hpow, xi, in, out, nblocks, NULL, false, f);                     \
	}
GCM_FORM_KERNELS(GH_KARATSUBA, karatsuba)
GCM_FORM_KERNELS(GH_SCHOOLBOOK, schoolbook)

/* The multiplier's 512-bit rate against VAESENC's, each timed over independent chains (best of
 * three): where VPCLMULQDQ keeps up with the AES instruction (Intel: both one a cycle), the
 * fourth multiply is cheaper than the shuffle and XOR it saves (schoolbook 3-6 % faster at
 * 1-16 KiB on an Intel Xeon); where it issues at well under the AES rate (AMD Zen 5: one
 * multiply every other cycle against two AES a cycle), Karatsuba (docs/aesni.md). ~100 us, once. */
#define RATE_CHAINS 12 /* more than latency x rate on the CPUs seen, so the rate is timed */
#define RATE_ROUNDS 512
CT_TARGET_ZMM static uint64_t time_chains(bool clmul)
{
	__m512i v[RATE_CHAINS];
	for (int i = 0; i < RATE_CHAINS; i++)
		v[i] = _mm512_set1_epi64(i + 1);
	const __m512i key = _mm512_set1_epi64(0x9e3779b97f4a7c15ll);
	uint64_t best = UINT64_MAX;
	for (int trial = 0; trial < 3; trial++) {
		const uint64_t t0 = __rdtsc();
		for (int r = 0; r < RATE_ROUNDS; r++)
			for (int i = 0; i < RATE_CHAINS; i++)
				v[i] = clmul ? _mm512_clmulepi64_epi128(v[i], key, 0x00)
					     : _mm512_aesenc_epi128(v[i], key);
		const uint64_t t = __rdtsc() - t0;
		best = t < best ? t : best;
	}
	__m512i sum = v[0];
	for (int i = 1; i < RATE_CHAINS; i++)
		sum = _mm512_xor_si512(sum, v[i]);
	volatile int sink = _mm_cvtsi128_si32(_mm512_castsi512_si128(sum)); /* the chains are used */
	(void)sink;
	return best;
}

static int measured_form = -1; /* enum gh_form once measured */
static int ghash_form = -1;    /* enum gh_form where set, else -1: as measured */

static enum gh_form measured_form_of_cpu(void)
{
	int f = __atomic_load_n(&measured_form, __ATOMIC_RELAXED);
	if (f < 0) { /* racing threads measure alike, and either answer is correct */
		/* the two in turn, six times, the best of each, and a wide margin: on the Intel Xeon
		 * (a VM on a shared host) the multiplies' time came out 0.67-1.49x the AES one's,
		 * from one process to the next and one build's code layout to another's, where Zen 5
		 * is at ~4x; timed once each with a 5/4 margin, a quarter of the processes there
		 * picked Karatsuba */
		uint64_t mul = UINT64_MAX, aes = UINT64_MAX;
		for (int i = 0; i < 6; i++) {
			const uint64_t m = time_chains(true), a = time_chains(false);
			mul = m < mul ? m : mul;
			aes = a < aes ? a : aes;
		}
		f = mul <= 2 * aes ? GH_SCHOOLBOOK : GH_KARATSUBA;
		__atomic_store_n(&measured_form, f, __ATOMIC_RELAXED);
	}
	return (enum gh_form)f;
}

static enum gh_form ghash_form_of_cpu(void)
{
	const int f = __atomic_load_n(&ghash_form, __ATOMIC_RELAXED);
	return f < 0 ? measured_form_of_cpu() : (enum gh_form)f;
}

void ct_aes_vaes512_set_ghash_form(int form)
{
	__atomic_store_n(&ghash_form, form < 0 ? -1 : form ? GH_SCHOOLBOOK : GH_KARATSUBA, __ATOMIC_RELAXED);
}

int ct_aes_vaes512_ghash_form(void)
{
	return ghash_form_of_cpu();
}

/* XTS's round keys. Held in registers, the batch loop's 8 blocks, 8 tweaks, 8 next tweaks and 11
 * keys (AES-128) are more than the 32 registers, and the compiler spills tweaks to the stack in
 * every batch. Broadcast from the key schedule in every batch instead: on the Intel Xeon, where
 * that broadcast is a load and nothing more, 4-5 % faster at 8-16 KiB when the data sits off a
 * cache line (an in-place unit 48 bytes past one, as openssl speed's buffer: the spills' stores
 * and reloads beside its split loads and stores), 3-4 % at 1 KiB, the same aligned. On AMD Zen 5
 * a broadcast from memory takes an AES unit's slot (docs/aesni.md, "512-bit kernels"): held.
 * Which CPU is which: the GHASH form's measurement above, whose Intel answer (the multiplier
 * keeps pace with VAESENC) and Zen 5 answer come from the same difference, the vector units'
 * sharing. A timing of AES chains with keys broadcast from memory was tried as the test itself:
 * on the Intel Xeon it put them 0.84-1.09x a register key's time, from one harness to the next,
 * no margin to tell the two apart by. */
static int xts_keys = -1; /* 0 held, 1 broadcast per batch, once set; -1: by the CPU */

static bool xts_keys_broadcast(void)
{
	const int f = __atomic_load_n(&xts_keys, __ATOMIC_RELAXED);
	return f < 0 ? measured_form_of_cpu() == GH_SCHOOLBOOK : f != 0;
}

void ct_aes_vaes512_set_xts_keys(int broadcast)
{
	__atomic_store_n(&xts_keys, broadcast < 0 ? -1 : broadcast != 0, __ATOMIC_RELAXED);
}

int ct_aes_vaes512_xts_keys(void)
{
	return xts_keys_broadcast();
}

/* The batch loop runs from BATCH + 1 blocks on (XTS_KERNEL, either keep); shorter units, a
 * 512-byte sector among them, run the same short pass in either variant, and do not wait for
 * the GHASH form's measurement (~100 us) at their first call. */
#define XTS_BY_KEYS(name)                                                                                    \
	static void name(const struct ct_aes_key *k, const struct ct_aes_key *tk, uint8_t tweak[16],         \
			 const uint8_t *in, uint8_t *out, size_t nblocks)                                    \
	{                                                                                                    \
		(nblocks > BATCH && xts_keys_broadcast() ? name##_sched : name##_held)(k, tk, tweak, in,     \
										       out, nblocks);        \
	}
XTS_BY_KEYS(xts_enc)
XTS_BY_KEYS(xts_dec)
XTS_BY_KEYS(xts_dec_steal)

static void ghash(const uint8_t hpow[CT_GHASH_KEY_ROWS][16], uint8_t xi[16], const uint8_t *in,
		  size_t nblocks)
{
	(ghash_form_of_cpu() == GH_SCHOOLBOOK ? ghash_schoolbook : ghash_karatsuba)(hpow, xi, in, nblocks);
}

static size_t gcm_enc(const struct ct_aes_key *k, uint8_t ctr[16], const uint8_t hpow[CT_GHASH_KEY_ROWS][16],
		      uint8_t xi[16], const uint8_t *in, uint8_t *out, size_t nblocks, uint8_t ks[16])
{
	return (ghash_form_of_cpu() == GH_SCHOOLBOOK ? gcm_enc_schoolbook : gcm_enc_karatsuba)(
		k, ctr, hpow, xi, in, out, nblocks, ks);
}

static size_t gcm_dec(const struct ct_aes_key *k, uint8_t ctr[16], const uint8_t hpow[CT_GHASH_KEY_ROWS][16],
		      uint8_t xi[16], const uint8_t *in, uint8_t *out, size_t nblocks)
{
	return (ghash_form_of_cpu() == GH_SCHOOLBOOK ? gcm_dec_schoolbook
						     : gcm_dec_karatsuba)(k, ctr, hpow, xi, in, out, nblocks);
}

const struct ct_aes_kernels ct_aes_kernels_vaes512 = {
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
	.xts_dec_steal = xts_dec_steal,
	.ghash = ghash,
	.gcm_enc = gcm_enc,
	.gcm_dec = gcm_dec,
};
