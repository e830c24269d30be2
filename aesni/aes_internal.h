/* SPDX-License-Identifier: MIT */
/*
 * aes_internal.h - the block kernels behind the modes. A kernel works on whole blocks only and
 * keeps no state of its own: the mode layer (aes_modes.c, aes_gcm.c) owns partial blocks, num
 * state and counter carries, then calls the table of the level in use (dispatch.c). One table per
 * instruction set: aes_xmm.c (AES-NI on 128-bit registers), aes_vaes.c (VAES on 256-bit ones),
 * aes_vaes512.c (VAES on 512-bit ones), aes_ce.c (the ARMv8 Crypto Extensions on aarch64).
 */
#ifndef CT_AES_INTERNAL_H
#define CT_AES_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "aesni.h"

/* The kernel tables and helpers live in this library: hidden, so that the mode layer reaches
 * them directly, not through the GOT (the definitions are hidden already). */
#pragma GCC visibility push(hidden)

/* Per-function targets: the library is built with the default flags and only ever calls a
 * function whose instructions the CPU has (dispatch.c checks CPUID first). */
#define CT_TARGET_XMM __attribute__((target("aes,pclmul,ssse3,sse4.1")))
#define CT_TARGET_YMM __attribute__((target("aes,pclmul,ssse3,sse4.1,avx,avx2,vaes,vpclmulqdq")))
#define CT_TARGET_ZMM                                                                                        \
	__attribute__((target("aes,pclmul,ssse3,sse4.1,avx,avx2,vaes,vpclmulqdq,avx512f,avx512vl,avx512bw")))
/* AESE/AESD/AESMC/AESIMC and PMULL (the "aes" extension, part of "crypto" in GCC's spelling). */
#ifdef __clang__
#define CT_TARGET_CE __attribute__((target("aes")))
#else
#define CT_TARGET_CE __attribute__((target("+crypto")))
#endif

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
	/* tweak is the encrypted tweak (little-endian GF(2^128) element), or with tk (not NULL) the
	 * unit's IV, encrypted with tk first, in the kernel's registers (the 512-bit level's 1 KiB
	 * units 3-5 % faster than with the tweak encrypted before the call, stored and loaded
	 * again: aes_modes.c says from what length); it ends as T*x^n. */
	void (*xts_enc)(const struct ct_aes_key *k, const struct ct_aes_key *tk, uint8_t tweak[16],
			const uint8_t *in, uint8_t *out, size_t nblocks);
	void (*xts_dec)(const struct ct_aes_key *k, const struct ct_aes_key *tk, uint8_t tweak[16],
			const uint8_t *in, uint8_t *out, size_t nblocks);
	/* xts_dec whose last block takes the next tweak (T_m: ciphertext stealing's last whole
	 * block), the tweak left as that block's own (T_{m-1}); NULL where the level has none. */
	void (*xts_dec_steal)(const struct ct_aes_key *k, const struct ct_aes_key *tk, uint8_t tweak[16],
			      const uint8_t *in, uint8_t *out, size_t nblocks);
	/* xi = (xi ^ block) * H for each block; hpow[j] = H^(CT_GHASH_POWERS-j), byte-reflected. */
	void (*ghash)(const uint8_t hpow[CT_GHASH_KEY_ROWS][16], uint8_t xi[16], const uint8_t *in,
		      size_t nblocks);
	/* GCM's CTR and GHASH in one pass (NULL: the level has none, aes_gcm.c runs the two above;
	 * only the 512-bit level has one): out = in ^ E(ctr..), xi absorbs the ciphertext (out when
	 * encrypting, in when decrypting), ctr as for ctr (the caller keeps the run, and with ks
	 * the block after it, inside one 32-bit wrap). Returns how many blocks it did: none under
	 * CT_GCM_STITCH_MIN_BLOCKS, else every one. Encrypting with ks (not NULL) and every block
	 * done, ks receives the keystream of the block after them, E(ctr + nblocks), ctr still left
	 * past nblocks only: a partial last block's, made in the kernel's last step. (Decryption
	 * makes its own before the blocks: from the kernel it measured 2-5 % slower.) */
	size_t (*gcm_enc)(const struct ct_aes_key *k, uint8_t ctr[16],
			  const uint8_t hpow[CT_GHASH_KEY_ROWS][16], uint8_t xi[16], const uint8_t *in,
			  uint8_t *out, size_t nblocks, uint8_t ks[16]);
	size_t (*gcm_dec)(const struct ct_aes_key *k, uint8_t ctr[16],
			  const uint8_t hpow[CT_GHASH_KEY_ROWS][16], uint8_t xi[16], const uint8_t *in,
			  uint8_t *out, size_t nblocks);
};

/* Which kernel tables this build has: x86 has the AES-NI and the two VAES ones (aes_xmm.c,
 * aes_vaes.c, aes_vaes512.c),
 * little-endian aarch64 the Crypto Extensions one (aes_ce.c; the lane order of its code assumes
 * little-endian); elsewhere none, and the backend reports CT_AESNI_NONE (callers use native
 * code). aesni/meson.build compiles the same files under the same conditions. */
#if defined(__x86_64__) || defined(__i386__)
#define CT_AES_HAVE_X86_KERNELS 1
extern const struct ct_aes_kernels ct_aes_kernels_xmm;
extern const struct ct_aes_kernels ct_aes_kernels_vaes;
extern const struct ct_aes_kernels ct_aes_kernels_vaes512;
/* The 512-bit GHASH's multiply form (aes_vaes512.c): 0 Karatsuba, 1 schoolbook, as measured on
 * this CPU at first use; set_ghash_form forces one (-1: as measured), for the differential test
 * and the benchmark. */
int ct_aes_vaes512_ghash_form(void);
void ct_aes_vaes512_set_ghash_form(int form);
/* The 512-bit XTS batch loop's round keys (aes_vaes512.c): 0 held in registers, 1 broadcast from
 * the key schedule in every batch, by the CPU (where the measured GHASH form is schoolbook:
 * broadcast); set_xts_keys forces one (-1: by the CPU), for the differential test and the
 * benchmark. */
int ct_aes_vaes512_xts_keys(void);
void ct_aes_vaes512_set_xts_keys(int broadcast);
#else
#define CT_AES_HAVE_X86_KERNELS 0
#endif
#if defined(__aarch64__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define CT_AES_HAVE_CE_KERNELS 1
extern const struct ct_aes_kernels ct_aes_kernels_ce;
#else
#define CT_AES_HAVE_CE_KERNELS 0
#endif

/* The table of the level in use (NULL when AES-NI is unavailable). Every mode call asks, so
 * the answer is one load: dispatch.c publishes it once the level is known (and on a new cap). */
extern const struct ct_aes_kernels *ct_aes_active_table;
const struct ct_aes_kernels *ct_aes_active_kernels_slow(void);
static inline const struct ct_aes_kernels *ct_aes_active_kernels(void)
{
	const struct ct_aes_kernels *kt = __atomic_load_n(&ct_aes_active_table, __ATOMIC_ACQUIRE);
	return __builtin_expect(kt != NULL, 1) ? kt : ct_aes_active_kernels_slow();
}

/* The batches: 16 blocks at the 256-bit level, 32 at the 512-bit one. ct_aes_kernels_for hands
 * inputs under a batch down a level (under 16 blocks to the 128-bit kernels), for the callers
 * that ask: CFB and OFB, GCM's short path (ct_aes_kernels_for_loaded below: CFB decryption from
 * 3 blocks on the 256-bit level). ECB, CBC decryption, CTR, XTS and GHASH call the level's own
 * kernel at any length, since the 512- and 256-bit ones take short inputs in one pass
 * themselves (aes_modes.c). */
#define CT_AES_WIDE_MIN_BLOCKS 16
#define CT_AES_ZMM_MIN_BLOCKS 32
/* The stitched GCM kernels work in steps of this many blocks (the table's own level: not handed
 * down by ct_aes_kernels_for). */
#define CT_GCM_STITCH_MIN_BLOCKS 16
static inline const struct ct_aes_kernels *ct_aes_kernels_for(size_t nblocks)
{
	const struct ct_aes_kernels *kt = ct_aes_active_kernels();
#if CT_AES_HAVE_X86_KERNELS
	if (kt == &ct_aes_kernels_vaes512 && nblocks < CT_AES_ZMM_MIN_BLOCKS)
		kt = &ct_aes_kernels_vaes;
	return nblocks < CT_AES_WIDE_MIN_BLOCKS && kt == &ct_aes_kernels_vaes ? &ct_aes_kernels_xmm : kt;
#else
	(void)nblocks;
	return kt;
#endif
}
/* The same for input the caller loaded from its own buffer (CFB decryption): the 256-bit kernels
 * take 3-15 blocks in one short pass, 1.07-1.26x the 128-bit ones at 48-144 bytes. Not for blocks
 * built by 16-byte stores just before (GCM's short path: its counter blocks), which the pass's
 * 32-byte loads cannot take from the store buffer: 48-64-byte messages ran 0.74-0.92x so. */
#define CT_AES_YMM_SHORT_MIN_BLOCKS 3
static inline const struct ct_aes_kernels *ct_aes_kernels_for_loaded(size_t nblocks)
{
	const struct ct_aes_kernels *kt = ct_aes_kernels_for(nblocks);
#if CT_AES_HAVE_X86_KERNELS
	if (kt == &ct_aes_kernels_xmm && nblocks >= CT_AES_YMM_SHORT_MIN_BLOCKS &&
	    ct_aes_active_kernels() != &ct_aes_kernels_xmm)
		kt = &ct_aes_kernels_vaes;
#endif
	return kt;
}

/* aes_xmm.c: key expansion and GHASH key powers (AES-NI and PCLMULQDQ are enough for both). */
void ct_aes_expand_key_xmm(struct ct_aes_key *k, const uint8_t *key, unsigned bits);
void ct_ghash_init_xmm(uint8_t hpow[CT_GHASH_KEY_ROWS][16], const uint8_t h[16]);
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
/* XTS ciphertext stealing's last two blocks, in registers (both levels: two dependent blocks):
 * in holds the last whole block, then tail (1..15) bytes; t_prev is the whole block's tweak. */
void ct_aes_xmm_xts_steal(const struct ct_aes_key *k, const uint8_t t_prev[16], const uint8_t *in,
			  uint8_t *out, size_t tail, bool encrypt);
/* The stealing's second block where a kernel made the first one's result already (at out, the
 * last whole block's place: CC encrypting, PP decrypting), with t_second (T_m encrypting,
 * T_{m-1} decrypting), from ending (the unit's last 16 bytes, copied before the kernel). */
void ct_aes_xmm_xts_steal_last(const struct ct_aes_key *k, const uint8_t t_second[16],
			       const uint8_t ending[16], uint8_t *out, size_t tail, bool encrypt);

/* aes_ce.c: key expansion, GHASH key powers (byte-reflected, as the x86 code keeps them) and the
 * one-block XTS unit and stealing. */
void ct_aes_expand_key_ce(struct ct_aes_key *k, const uint8_t *key, unsigned bits);
void ct_ghash_init_ce(uint8_t hpow[CT_GHASH_KEY_ROWS][16], const uint8_t h[16]);
void ct_aes_ce_xts_one(const struct ct_aes_key *data_key, const struct ct_aes_key *tweak_key,
		       const uint8_t iv[16], const uint8_t *in, uint8_t *out, bool encrypt);
void ct_aes_ce_xts_steal(const struct ct_aes_key *k, const uint8_t t_prev[16], const uint8_t *in,
			 uint8_t *out, size_t tail, bool encrypt);
void ct_aes_ce_xts_steal_last(const struct ct_aes_key *k, const uint8_t t_second[16],
			      const uint8_t ending[16], uint8_t *out, size_t tail, bool encrypt);

/* The base level of this architecture: key expansion, GHASH key powers, single blocks, the
 * one-block XTS unit and XTS stealing's two blocks, called directly (no indirect call) by the
 * mode layer. Every wider table of the same architecture uses the same key and H-power layout.
 * Where this build has no kernels the mode layer is unreachable (ct_aes_set_key refuses every
 * key) and these are never called. */
#if CT_AES_HAVE_X86_KERNELS
#define ct_aes_base_kernels ct_aes_kernels_xmm
#define ct_aes_expand_key_base ct_aes_expand_key_xmm
#define ct_ghash_init_base ct_ghash_init_xmm
#define ct_aes_xts_one_base ct_aes_xmm_xts_one
#define ct_aes_xts_steal_base ct_aes_xmm_xts_steal
#define ct_aes_xts_steal_last_base ct_aes_xmm_xts_steal_last
#elif CT_AES_HAVE_CE_KERNELS
#define ct_aes_base_kernels ct_aes_kernels_ce
#define ct_aes_expand_key_base ct_aes_expand_key_ce
#define ct_ghash_init_base ct_ghash_init_ce
#define ct_aes_xts_one_base ct_aes_ce_xts_one
#define ct_aes_xts_steal_base ct_aes_ce_xts_steal
#define ct_aes_xts_steal_last_base ct_aes_ce_xts_steal_last
#else
#define ct_aes_base_kernels (*ct_aes_active_kernels())
static inline void ct_aes_expand_key_base(struct ct_aes_key *k, const uint8_t *key, unsigned bits)
{
	(void)k, (void)key, (void)bits;
}
static inline void ct_ghash_init_base(uint8_t hpow[CT_GHASH_KEY_ROWS][16], const uint8_t h[16])
{
	(void)hpow, (void)h;
}
static inline void ct_aes_xts_one_base(const struct ct_aes_key *data_key, const struct ct_aes_key *tweak_key,
				       const uint8_t iv[16], const uint8_t *in, uint8_t *out, bool encrypt)
{
	(void)data_key, (void)tweak_key, (void)iv, (void)in, (void)out, (void)encrypt;
}
static inline void ct_aes_xts_steal_base(const struct ct_aes_key *k, const uint8_t t_prev[16],
					 const uint8_t *in, uint8_t *out, size_t tail, bool encrypt)
{
	(void)k, (void)t_prev, (void)in, (void)out, (void)tail, (void)encrypt;
}
static inline void ct_aes_xts_steal_last_base(const struct ct_aes_key *k, const uint8_t t_second[16],
					      const uint8_t ending[16], uint8_t *out, size_t tail,
					      bool encrypt)
{
	(void)k, (void)t_second, (void)ending, (void)out, (void)tail, (void)encrypt;
}
#endif

/* Zeroes n bytes of secrets in a way the compiler keeps (the barrier says the asm reads them):
 * for the per-call wipes of a tweak or a keystream block. explicit_bzero is a call into libc
 * (~40 instructions with its PLT stub) where a fixed n is one or two vector stores. */
static inline void ct_wipe(void *p, size_t n)
{
	memset(p, 0, n);
	__asm__ __volatile__("" : : "r"(p) : "memory");
}

#pragma GCC visibility pop

#endif
