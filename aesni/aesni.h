/* SPDX-License-Identifier: MIT */
/*
 * aesni.h - the in-process backend on the CPU's AES instructions (AES-NI / VAES on x86, the
 * ARMv8 Crypto Extensions on aarch64): key schedules and the AES modes with OpenSSL's
 * EVP semantics (IV/counter/num state updated in place, arbitrary chunking), so a provider or an
 * emulated kernel interface can wrap each mode 1:1 and stay bit-exact with native OpenSSL.
 *
 * No malloc, no libcrypto, no stdio: this code lives inside libcryptrace.so. The fastest code path
 * the CPU supports is chosen at run time (CPUID, HWCAP), never from the build machine's flags. Every
 * function needs ct_aesni_available(): callers fall back to native OpenSSL when it is false.
 * in == out (in-place) is allowed everywhere; other overlaps are not.
 */
#ifndef CT_AESNI_H
#define CT_AESNI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CT_AES_BLOCK 16
#define CT_AES_MAX_ROUNDS 14
/* GHASH key powers kept per GCM key: at most one reduction per this many blocks (the 512-bit
 * kernels aggregate all 32; the 256-bit ones 16, with the last 16 powers). */
#define CT_GHASH_POWERS 32
/* The GHASH key's rows: the powers (hpow[j] = H^(CT_GHASH_POWERS - j)), then the same powers'
 * halves XORed, in both halves of a row (hpow[CT_GHASH_POWERS + j]: Karatsuba's middle operand,
 * computed once per key rather than in every multiply), then H^32 x^-1 and H^16 x^-1
 * (hpow[CT_GHASH_XDIV_ROW], + 1: the x86 512-bit kernels' running hash, kept times x so that
 * their reduction needs no shift; aes_vaes512.c; filled by the x86 key set-up only). */
#define CT_GHASH_XDIV_ROW (2 * CT_GHASH_POWERS)
#define CT_GHASH_KEY_ROWS (2 * CT_GHASH_POWERS + 2)

/* Expanded key: encryption round keys and the equivalent-inverse-cipher round keys. */
struct ct_aes_key {
	uint8_t enc[CT_AES_MAX_ROUNDS + 1][CT_AES_BLOCK] __attribute__((aligned(16)));
	uint8_t dec[CT_AES_MAX_ROUNDS + 1][CT_AES_BLOCK] __attribute__((aligned(16)));
	uint32_t rounds; /* 10, 12 or 14 */
	uint32_t bits;   /* 128, 192 or 256 */
};

/* Code paths. Each architecture has its own: none < xmm < vaes < vaes512 on x86, none < armv8-ce
 * on aarch64. A cap is read by rank across architectures (none 0; xmm and armv8-ce 1, the base
 * level; vaes 2; vaes512 3), so "aesni" caps aarch64 to its CE code and "armv8-ce" caps x86 to
 * AES-NI. */
enum ct_aesni_level {
	CT_AESNI_NONE = 0,     /* no AES instructions (or no carry-less multiply): use native OpenSSL */
	CT_AESNI_XMM = 1,      /* x86: AES-NI + PCLMULQDQ on 128-bit registers */
	CT_AESNI_VAES = 2,     /* x86: VAES + VPCLMULQDQ + AVX2: two blocks per 256-bit register */
	CT_AESNI_ARMV8_CE = 3, /* aarch64: ARMv8 Crypto Extensions, AESE/AESMC and PMULL */
	CT_AESNI_VAES512 = 4,  /* x86: VAES + VPCLMULQDQ + AVX-512F/VL/BW: four blocks per register */
};

/* True when the CPU (and the level cap) allows at least this architecture's base level: the
 * CPU's AES instructions are in use. */
bool ct_aesni_available(void);
/* The level in use: the best the CPU has, capped by CRYPTRACE_AESNI_MAX
 * (none|aesni|xmm|armv8-ce|vaes|ymm|vaes512|zmm) or by ct_aesni_set_max_level(). */
enum ct_aesni_level ct_aesni_level(void);
/* Caps the level (tests use it to run the AES-NI path on a VAES CPU); returns the level now in
 * use. Not meant to race with running operations of other threads. */
enum ct_aesni_level ct_aesni_set_max_level(enum ct_aesni_level cap);
/* This build's lowest level above none (xmm on x86, armv8-ce on aarch64; none where the build
 * has no kernels), whatever the CPU has: the level a cap of rank 1 selects. */
enum ct_aesni_level ct_aesni_base_level(void);
/* This build's levels above none, lowest first, whatever the CPU has (x86: xmm, vaes, vaes512;
 * aarch64: armv8-ce): the tests and the bench run each one the CPU allows. Returns how many. */
size_t ct_aesni_build_levels(enum ct_aesni_level out[], size_t cap);
/* "none", "aesni", "vaes", "vaes512", "armv8-ce". */
const char *ct_aesni_level_name(enum ct_aesni_level level);

/* What this build's traces and events call the backend: the route target a user writes ("aesni"
 * on x86, where it is also "cpu"; "cpu" elsewhere), the path impl of the work it serves, the
 * driver name an emulated kernel interface reports, and the instructions it needs, in the CPU
 * maker's words. x86 keeps the names its traces always had. */
#if defined(__x86_64__) || defined(__i386__)
#define CT_AESNI_TARGET "aesni"
#define CT_AESNI_IMPL "route:aesni"
#define CT_AESNI_DRIVER "cryptrace-aesni"
#define CT_AESNI_NEEDS "AES-NI"
#define CT_AESNI_INSNS "AES-NI"
#elif defined(__aarch64__)
#define CT_AESNI_TARGET "cpu"
#define CT_AESNI_IMPL "route:armv8-ce"
#define CT_AESNI_DRIVER "cryptrace-armv8-ce"
#define CT_AESNI_NEEDS "ARMv8 AES + PMULL"
#define CT_AESNI_INSNS "ARMv8 CE"
#else
#define CT_AESNI_TARGET "cpu"
#define CT_AESNI_IMPL "route:cpu"
#define CT_AESNI_DRIVER "cryptrace-cpu"
#define CT_AESNI_NEEDS "AES instructions cryptrace has code for"
#define CT_AESNI_INSNS "AES instructions"
#endif

/* Expands a 128/192/256-bit key. Returns 0, or -1 for another size or when !ct_aesni_available(). */
int ct_aes_set_key(struct ct_aes_key *k, const uint8_t *key, unsigned bits);
/* Wipes the schedule (explicit_bzero, not optimised away). */
void ct_aes_key_wipe(struct ct_aes_key *k);

void ct_aes_encrypt_block(const struct ct_aes_key *k, const uint8_t in[16], uint8_t out[16]);
void ct_aes_decrypt_block(const struct ct_aes_key *k, const uint8_t in[16], uint8_t out[16]);

/* ECB and CBC: whole blocks only (len is rounded down to a multiple of 16, as the caller's
 * padding layer guarantees). CBC updates iv to the last ciphertext block, like OpenSSL. */
void ct_aes_ecb_encrypt(const struct ct_aes_key *k, const uint8_t *in, uint8_t *out, size_t len);
void ct_aes_ecb_decrypt(const struct ct_aes_key *k, const uint8_t *in, uint8_t *out, size_t len);
void ct_aes_cbc_encrypt(const struct ct_aes_key *k, uint8_t iv[16], const uint8_t *in, uint8_t *out,
			size_t len);
void ct_aes_cbc_decrypt(const struct ct_aes_key *k, uint8_t iv[16], const uint8_t *in, uint8_t *out,
			size_t len);

/* CTR as OpenSSL's EVP aes-*-ctr: the whole 16-byte counter is one big-endian integer; ecount
 * holds the keystream block of a partial block and *num (0..15) how much of it is used. Start
 * with *num = 0. Encryption and decryption are the same operation. */
void ct_aes_ctr128(const struct ct_aes_key *k, uint8_t ctr[16], uint8_t ecount[16], unsigned *num,
		   const uint8_t *in, uint8_t *out, size_t len);
/* CFB128 and OFB as CRYPTO_cfb128_encrypt / CRYPTO_ofb128_encrypt: iv is the feedback register,
 * *num (0..15) the position in it. */
void ct_aes_cfb128(const struct ct_aes_key *k, uint8_t iv[16], unsigned *num, const uint8_t *in, uint8_t *out,
		   size_t len, bool encrypt);
void ct_aes_ofb128(const struct ct_aes_key *k, uint8_t iv[16], unsigned *num, const uint8_t *in, uint8_t *out,
		   size_t len);

/* XTS (IEEE 1619): one whole data unit per call, tweak = E(tweak_key, iv); a length that is not
 * a multiple of 16 uses ciphertext stealing like OpenSSL. Returns 0, or -1 when len < 16.
 * The key split is OpenSSL's: the first half of the EVP key is data_key, the second tweak_key. */
int ct_aes_xts(const struct ct_aes_key *data_key, const struct ct_aes_key *tweak_key, const uint8_t iv[16],
	       const uint8_t *in, uint8_t *out, size_t len, bool encrypt);
/* The same unit from its encrypted tweak, T = E(tweak_key, iv) (ct_aes_xts_tweak): for callers
 * that set the IV apart from the data, as EVP does, and make T once when they set it. */
void ct_aes_xts_tweak(const struct ct_aes_key *tweak_key, const uint8_t iv[16], uint8_t tweak[16]);
int ct_aes_xts_tweaked(const struct ct_aes_key *data_key, const uint8_t tweak[16], const uint8_t *in,
		       uint8_t *out, size_t len, bool encrypt);

/* A data call of up to this many blocks (128 B) takes aes_gcm.c's short path. */
#define CT_GCM_SHORT_BLOCKS 8

/* GCM. Call order: init (once per key), then per message setiv, aad (any number of calls),
 * encrypt or decrypt (any number of calls, any chunk sizes), then tag or verify. */
struct ct_aes_gcm {
	struct ct_aes_key key;
	/* H^32 .. H^1, byte-reflected: hpow[j] = H^(CT_GHASH_POWERS - j); then their Karatsuba
	 * rows (CT_GHASH_KEY_ROWS) */
	uint8_t hpow[CT_GHASH_KEY_ROWS][16] __attribute__((aligned(32)));
	uint8_t ek0[16]; /* E(K, J0), masks the tag; J0 itself while ek0_due */
	uint8_t ctr[16]; /* next counter block */
	uint8_t xi[16];  /* GHASH accumulator */
	uint8_t ks[16];  /* keystream of the current partial block */
	/* Blocks not yet in xi (aes_gcm.c): an AAD of up to a block given in one call, a short
	 * message's data blocks; the tag hashes them with the lengths block under one reduction. A
	 * partial last block is zero-padded (its bytes are not in xi). */
	uint8_t pend[CT_GCM_SHORT_BLOCKS + 2][16];
	unsigned npend;
	unsigned ek0_due; /* E(J0) not computed yet: it joins the first AES pass that has room */
	uint64_t aad_len; /* bytes */
	uint64_t msg_len; /* bytes */
	unsigned ares;    /* bytes of a partial AAD block: in xi, or before the data in pend[0] */
	unsigned mres;    /* bytes of a partial data block used from ks */
};
/* Returns 0, or -1 (bad key size, no AES-NI). */
int ct_aes_gcm_init(struct ct_aes_gcm *g, const uint8_t *key, unsigned bits);
/* The state ct_aes_gcm_init leaves, for the key g already holds: the key schedule and H powers
 * are kept (a caller that re-keys with the same key per message skips their cost), and so are
 * the stale blocks of pend (read only below npend, which is 0). */
void ct_aes_gcm_reset(struct ct_aes_gcm *g);
/* Any IV length >= 1 (12 bytes is the fast path, others go through GHASH). Resets the message. */
int ct_aes_gcm_setiv(struct ct_aes_gcm *g, const uint8_t *iv, size_t ivlen);
/* -1 after data was processed or when the AAD exceeds 2^61 bytes. */
int ct_aes_gcm_aad(struct ct_aes_gcm *g, const uint8_t *aad, size_t len);
/* -1 when the message would exceed 2^36 - 32 bytes (the GCM limit, as OpenSSL checks it). */
int ct_aes_gcm_encrypt(struct ct_aes_gcm *g, const uint8_t *in, uint8_t *out, size_t len);
int ct_aes_gcm_decrypt(struct ct_aes_gcm *g, const uint8_t *in, uint8_t *out, size_t len);
/* Finishes the message and writes the full 16-byte tag (truncate it as you like). */
void ct_aes_gcm_tag(struct ct_aes_gcm *g, uint8_t tag[16]);
/* Finishes the message and compares the first taglen (1..16) bytes in constant time: 0 if equal. */
int ct_aes_gcm_verify(struct ct_aes_gcm *g, const uint8_t *tag, size_t taglen);
void ct_aes_gcm_wipe(struct ct_aes_gcm *g);

/* Our own AES-128-CTR cost at 8 KiB on this CPU, in TSC cycles per byte, measured once in a few
 * ms and cached (0 when there is no AES-NI or no usable TSC). The launcher stores it in the trace
 * header (aesni_cpb_milli) to judge "software speed on an AES-NI CPU". */
double ct_aesni_cpb_bound(void);
uint32_t ct_aesni_cpb_milli(void);
/* The same measurement, uncached, in a caller's buffer (the preload's static one: no 8 KiB on a
 * traced thread's stack) and with `trials` best-of trials of 4 x 8 KiB (the launcher uses 64). */
#define CT_AESNI_CALIB_BYTES 8192
double ct_aesni_cpb_measure(uint8_t buf[CT_AESNI_CALIB_BYTES], unsigned trials);

/* The doctor's clock, for comparing a libcrypto with the bound on any CPU: the TSC where there
 * is one (unit "cycles"), else CLOCK_MONOTONIC_RAW (unit "ns": aarch64's generic timer ticks
 * at a board's fixed rate, not the CPU's, so nanoseconds say the same more plainly). */
uint64_t ct_aesni_clock(void);
const char *ct_aesni_clock_unit(void);
/* The bound in that clock's unit per byte (ct_aesni_cpb_bound where the clock is the TSC);
 * measured once and cached; 0 without the CPU's AES instructions. */
double ct_aesni_per_byte_bound(void);

#endif
