/* SPDX-License-Identifier: MIT */
/*
 * simd_inline.h - 128-bit helpers shared by the kernel files: byte reversal, one AES block,
 * XTS tweak doubling and the GHASH multiply/reduce. Each kernel file includes it once with
 * CT_SIMD_TARGET set to its own target attribute, so the helpers inline into its functions
 * (VEX-encoded in the VAES file, legacy SSE in the AES-NI one).
 */
#ifndef CT_SIMD_TARGET
#error "define CT_SIMD_TARGET before including simd_inline.h"
#endif
#include <immintrin.h>

#define SI static inline __attribute__((always_inline)) CT_SIMD_TARGET

#define LD(p, i) _mm_loadu_si128((const __m128i *)(p) + (i))
#define ST(p, i, v) _mm_storeu_si128((__m128i *)(p) + (i), (v))

SI __m128i bswap128(__m128i v)
{
	return _mm_shuffle_epi8(v, _mm_set_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15));
}

SI __m128i enc1(const __m128i *rk, unsigned rounds, __m128i b)
{
	b = _mm_xor_si128(b, _mm_loadu_si128(rk));
	for (unsigned r = 1; r < rounds; r++)
		b = _mm_aesenc_si128(b, _mm_loadu_si128(rk + r));
	return _mm_aesenclast_si128(b, _mm_loadu_si128(rk + rounds));
}

SI __m128i dec1(const __m128i *rk, unsigned rounds, __m128i b)
{
	b = _mm_xor_si128(b, _mm_loadu_si128(rk));
	for (unsigned r = 1; r < rounds; r++)
		b = _mm_aesdec_si128(b, _mm_loadu_si128(rk + r));
	return _mm_aesdeclast_si128(b, _mm_loadu_si128(rk + rounds));
}

/* tweak * x in GF(2^128), little-endian: shift left one bit; bit 63 carries into bit 64 and
 * bit 127 folds back as 0x87. */
SI __m128i xts_mulx(__m128i t)
{
	__m128i m = _mm_shuffle_epi32(_mm_srai_epi32(t, 31), 0x13);
	m = _mm_and_si128(m, _mm_set_epi32(0, 1, 0, 0x87));
	return _mm_xor_si128(_mm_add_epi64(t, t), m);
}

/* Operands are byte-reflected GHASH elements (bswap128 of the wire bytes); the product of two
 * reflected 128-bit values is the reflected 256-bit product shifted right by one bit, so the
 * reduction first shifts [hi:lo] left by one, then reduces modulo x^128 + x^7 + x^2 + x + 1
 * (Gueron and Kounavis, "Intel carry-less multiplication instruction and its usage for
 * computing the GCM mode", algorithm 5). Linear, so several products can share one reduction:
 * lo, mid, hi are the XOR-accumulated partial products a0*b0, a0*b1 + a1*b0, a1*b1. */
SI __m128i gf_reduce(__m128i lo, __m128i mid, __m128i hi)
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

/* x^-1 as a reflected element (x^127 + x^6 + x + 1): bits 127, 126 and 121, and bit 0. gf_div_x
 * adds it, and its high half is gf_reduce_times_x's folding constant. */
#define GF_X_INVERSE _mm_set_epi32((int)0xC2000000, 0, 0, 1)

/* Times x and divided by x, for the same reflected elements: x^k moves one bit down (x^127, bit 0,
 * folding back as x^7 + x^2 + x + 1, 0xE1 << 120) or one bit up (x^0, bit 127, set: g added
 * first, which leaves x^-1 = 0xC2..01). A few ALU instructions, no multiply. */
SI __m128i gf_mul_x(__m128i s)
{
	const __m128i sh = _mm_or_si128(_mm_srli_epi64(s, 1), _mm_slli_epi64(_mm_srli_si128(s, 8), 63));
	const __m128i bit0 = _mm_shuffle_epi32(_mm_srai_epi32(_mm_slli_epi32(s, 31), 31), 0x00);
	return _mm_xor_si128(sh, _mm_and_si128(bit0, _mm_set_epi32((int)0xE1000000, 0, 0, 0)));
}

SI __m128i gf_div_x(__m128i s)
{
	const __m128i sh = _mm_or_si128(_mm_slli_epi64(s, 1), _mm_srli_epi64(_mm_slli_si128(s, 8), 63));
	const __m128i bit127 = _mm_shuffle_epi32(_mm_srai_epi32(s, 31), 0xff);
	return _mm_xor_si128(sh, _mm_and_si128(bit127, GF_X_INVERSE));
}

/* The reduction by carry-less multiplies: the unshifted product of two reflected elements
 * (lo, mid, hi: a0 b0, a0 b1 ^ a1 b0, a1 b1) is their product times x, and lo's low half, then
 * mid's, fold into the next half up by a multiply with x^-1's high half (0xC2 << 56) and a
 * swap of halves. Two multiplies, two dword shuffles and four XORs (two VPTERNLOGQ where the
 * target has them); gf_reduce above takes ~20 ALU instructions, 10-12 % of a stitched 512-bit
 * GCM step on Zen 5 (measured by leaving it out). The callers keep their running hash times
 * x, or divide by x (gf_div_x). */
SI __m128i gf_reduce_times_x(__m128i lo, __m128i mid, __m128i hi)
{
	const __m128i poly = GF_X_INVERSE;
	mid = _mm_xor_si128(_mm_xor_si128(mid, _mm_clmulepi64_si128(lo, poly, 0x10)),
			    _mm_shuffle_epi32(lo, 0x4e));
	return _mm_xor_si128(_mm_xor_si128(hi, _mm_clmulepi64_si128(mid, poly, 0x10)),
			     _mm_shuffle_epi32(mid, 0x4e));
}

SI void clmul_acc(__m128i a, __m128i b, __m128i *lo, __m128i *mid, __m128i *hi)
{
	*lo = _mm_xor_si128(*lo, _mm_clmulepi64_si128(a, b, 0x00));
	*hi = _mm_xor_si128(*hi, _mm_clmulepi64_si128(a, b, 0x11));
	*mid = _mm_xor_si128(*mid, _mm_clmulepi64_si128(a, b, 0x01));
	*mid = _mm_xor_si128(*mid, _mm_clmulepi64_si128(a, b, 0x10));
}

/* Up to CT_GHASH_POWERS blocks with one reduction: block i of n is multiplied by
 * H^(n-i) = hpow[CT_GHASH_POWERS-n+i].
 * Karatsuba: three carry-less multiplies per block (the middle term is
 * (a_lo ^ a_hi)(b_lo ^ b_hi) ^ lo ^ hi, fixed up once per reduction). */
SI __m128i ghash_tail(const uint8_t hpow[CT_GHASH_KEY_ROWS][16], __m128i x, const uint8_t *in, size_t nblocks)
{
	while (nblocks) {
		const size_t n = nblocks < CT_GHASH_POWERS ? nblocks : CT_GHASH_POWERS;
		__m128i lo = _mm_setzero_si128(), mid = lo, hi = lo;
		for (size_t i = 0; i < n; i++) {
			__m128i blk = bswap128(LD(in, i));
			if (i == 0)
				blk = _mm_xor_si128(blk, x);
			const __m128i h = LD(hpow[CT_GHASH_POWERS - n + i], 0);
			const __m128i hk = _mm_xor_si128(h, _mm_shuffle_epi32(h, 0x4e));
			const __m128i dk = _mm_xor_si128(blk, _mm_shuffle_epi32(blk, 0x4e));
			lo = _mm_xor_si128(lo, _mm_clmulepi64_si128(blk, h, 0x00));
			hi = _mm_xor_si128(hi, _mm_clmulepi64_si128(blk, h, 0x11));
			mid = _mm_xor_si128(mid, _mm_clmulepi64_si128(dk, hk, 0x00));
		}
		x = gf_reduce(lo, _mm_xor_si128(mid, _mm_xor_si128(lo, hi)), hi);
		in += 16 * n;
		nblocks -= n;
	}
	return x;
}
