/* SPDX-License-Identifier: MIT */
/*
 * aes_internal.h - the block kernels behind the modes. A kernel works on whole blocks only and
 * keeps no state of its own: the mode layer (aes_modes.c, aes_gcm.c) owns partial blocks, num
 * state and counter carries, then calls the table of the level in use (dispatch.c). One table per
 * instruction set: aes_xmm.c (AES-NI on 128-bit registers), aes_vaes.c (VAES on 256-bit ones).
 */
#ifndef CT_AES_INTERNAL_H
#define CT_AES_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "aesni.h"

/* The kernel tables and helpers live in this library: hidden, so that the mode layer reaches
 * them directly, not through the GOT (the definitions are hidden already). */
#pragma GCC visibility push(hidden)

/* Per-function targets: the library is built with the default flags and only ever calls a
 * function whose instructions the CPU has (dispatch.c checks CPUID first). */
#define CT_TARGET_XMM __attribute__((target("aes,pclmul,ssse3,sse4.1")))
#define CT_TARGET_YMM __attribute__((target("aes,pclmul,ssse3,sse4.1,avx,avx2,vaes,vpclmulqdq")))

struct ct_aes_kernels {
	void (*ecb_enc)(const struct ct_aes_key *k, const uint8_t *in, uint8_t *out, size_t nblocks);
	void (*ecb_dec)(const struct ct_aes_key *k, const uint8_t *in, uint8_t *out, size_t nblocks);
	void (*cbc_enc)(const struct ct_aes_key *k, uint8_t iv[16], const uint8_t *in, uint8_t *out,
			size_t nblocks);
	void (*cbc_dec)(const struct ct_aes_key *k, uint8_t iv[16], const uint8_t *in, uint8_t *out,
			size_t nblocks);
	/* ctr is big-endian; only its low 64 bits (bytes 8..15) are incremented and the caller
	 * guarantees they do not wrap within the call. ctr ends as ctr + nblocks. */
	void (*ctr)(const struct ct_aes_key *k, uint8_t ctr[16], const uint8_t *in, uint8_t *out,
		    size_t nblocks);
	void (*cfb_enc)(const struct ct_aes_key *k, uint8_t iv[16], const uint8_t *in, uint8_t *out,
			size_t nblocks);
	void (*cfb_dec)(const struct ct_aes_key *k, uint8_t iv[16], const uint8_t *in, uint8_t *out,
			size_t nblocks);
	void (*ofb)(const struct ct_aes_key *k, uint8_t iv[16], const uint8_t *in, uint8_t *out,
		    size_t nblocks);
	/* tweak is the encrypted tweak (little-endian GF(2^128) element); it ends as tweak*x^n. */
	void (*xts_enc)(const struct ct_aes_key *k, uint8_t tweak[16], const uint8_t *in, uint8_t *out,
			size_t nblocks);
	void (*xts_dec)(const struct ct_aes_key *k, uint8_t tweak[16], const uint8_t *in, uint8_t *out,
			size_t nblocks);
	/* xi = (xi ^ block) * H for each block; hpow[j] = H^(16-j) in byte-reflected form. */
	void (*ghash)(const uint8_t hpow[CT_GHASH_POWERS][16], uint8_t xi[16], const uint8_t *in,
		      size_t nblocks);
};

extern const struct ct_aes_kernels ct_aes_kernels_xmm;
extern const struct ct_aes_kernels ct_aes_kernels_vaes;

/* The table of the level in use (NULL when AES-NI is unavailable). Every mode call asks, so
 * the answer is one load: dispatch.c publishes it once the level is known (and on a new cap). */
extern const struct ct_aes_kernels *ct_aes_active_table;
const struct ct_aes_kernels *ct_aes_active_kernels_slow(void);
static inline const struct ct_aes_kernels *ct_aes_active_kernels(void)
{
	const struct ct_aes_kernels *kt = __atomic_load_n(&ct_aes_active_table, __ATOMIC_ACQUIRE);
	return __builtin_expect(kt != NULL, 1) ? kt : ct_aes_active_kernels_slow();
}

/* Below this many blocks the VAES kernels hand the whole input to the 128-bit ones: the mode
 * layer then calls those directly (one indirect call less; same code, same output). */
#define CT_AES_WIDE_MIN_BLOCKS 16
static inline const struct ct_aes_kernels *ct_aes_kernels_for(size_t nblocks)
{
	const struct ct_aes_kernels *kt = ct_aes_active_kernels();
	return nblocks < CT_AES_WIDE_MIN_BLOCKS && kt == &ct_aes_kernels_vaes ? &ct_aes_kernels_xmm : kt;
}

/* aes_xmm.c: key expansion and GHASH key powers (AES-NI and PCLMULQDQ are enough for both). */
void ct_aes_expand_key_xmm(struct ct_aes_key *k, const uint8_t *key, unsigned bits);
void ct_ghash_init_xmm(uint8_t hpow[CT_GHASH_POWERS][16], const uint8_t h[16]);
/* The serial modes, shared by both tables (latency-bound: wider registers cannot help). */
void ct_aes_xmm_cbc_enc(const struct ct_aes_key *k, uint8_t iv[16], const uint8_t *in, uint8_t *out,
			size_t nblocks);
void ct_aes_xmm_cfb_enc(const struct ct_aes_key *k, uint8_t iv[16], const uint8_t *in, uint8_t *out,
			size_t nblocks);
void ct_aes_xmm_ofb(const struct ct_aes_key *k, uint8_t iv[16], const uint8_t *in, uint8_t *out,
		    size_t nblocks);
/* XTS of a one-block data unit, tweak included (both levels: one block cannot use the width). */
void ct_aes_xmm_xts_one(const struct ct_aes_key *data_key, const struct ct_aes_key *tweak_key,
			const uint8_t iv[16], const uint8_t *in, uint8_t *out, bool encrypt);

#pragma GCC visibility pop

#endif
