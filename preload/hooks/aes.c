/* SPDX-License-Identifier: MIT */
/*
 * aes.c - the low-level AES_* API (deprecated in OpenSSL 3, still used by old code and by
 * `openssl speed` builds that benchmark it). No context to classify: the key size comes from
 * AES_KEY.rounds (a public field of a public struct), the mode and direction from the function
 * and its enc argument, and path ids are cached in a static table [function][bits][dir].
 * Calls made from inside an EVP call (a provider using AES_encrypt as its block function) belong
 * to that EVP path and pass straight through.
 */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <stdio.h>

#include <openssl/aes.h>

#include "internal.h"

enum aes_fn {
	F_BLOCK, F_ECB, F_CBC, F_CFB128, F_CFB1, F_CFB8, F_OFB, F_IGE, F_BIIGE, F_WRAP, F_CTR, F_COUNT
};
static const char *const mode_name[F_COUNT] = {
	[F_BLOCK] = "ecb", [F_ECB] = "ecb", [F_CBC] = "cbc", [F_CFB128] = "cfb", [F_CFB1] = "cfb1",
	[F_CFB8] = "cfb8", [F_OFB] = "ofb", [F_IGE] = "ige", [F_BIIGE] = "biige", [F_WRAP] = "wrap",
	[F_CTR] = "ctr",
};

/* [fn][bits: 128,192,256,other][dir: unknown,enc,dec] = path id + 1 */
static _Atomic uint32_t path_cache[F_COUNT][4][3];

static unsigned bits_index(const AES_KEY *key)
{
	switch (key ? key->rounds : 0) {
	case 10: return 0;
	case 12: return 1;
	case 14: return 2;
	default: return 3;
	}
}

static uint32_t aes_path(enum aes_fn fn, const AES_KEY *key, uint8_t dir)
{
	unsigned b = bits_index(key);
	uint32_t v = atomic_load_explicit(&path_cache[fn][b][dir], memory_order_relaxed);
	if (CT_LIKELY(v))
		return v - 1;
	static const uint16_t bits[4] = { 128, 192, 256, 0 };
	char cipher[32];
	if (bits[b])
		snprintf(cipher, sizeof(cipher), "aes-%u-%s", bits[b], mode_name[fn]);
	else
		snprintf(cipher, sizeof(cipher), "aes-%s", mode_name[fn]);
	struct ct_path_key k = {
		.api = CT_API_AES,
		.dir = dir,
		.entry = CT_ENTRY_AES_LOWLEVEL,
		.key_bits = bits[b],
		.impl = "lowlevel",
		.cipher = cipher,
	};
	uint32_t id = ct_path_intern(&k);
	if (id == CT_NO_PATH)
		return id;
	if (!ct_path_has_callsite(id)) {
		char site[1024];
		ct_callsite(site, sizeof(site), 0);
		ct_path_set_callsite(id, site);
	}
	atomic_store_explicit(&path_cache[fn][b][dir], id + 1, memory_order_relaxed);
	return id;
}

/* The AES family is outermost, and no EVP call is in progress on this thread. */
static inline bool aes_enter(struct ct_thread *t)
{
	const uint32_t mask = (1u << CT_FAM_AES) | (1u << CT_FAM_EVP);
	if (t->guard & mask)
		return false;
	t->guard |= 1u << CT_FAM_AES;
	return true;
}

static inline uint32_t aes_path_guarded(struct ct_thread *t, enum aes_fn fn, const AES_KEY *key, uint8_t dir)
{
	unsigned b = bits_index(key);
	uint32_t v = atomic_load_explicit(&path_cache[fn][b][dir], memory_order_relaxed);
	if (CT_LIKELY(v))
		return v - 1;
	uint32_t g = t->guard;
	t->guard = CT_GUARD_ALL;
	uint32_t id = aes_path(fn, key, dir);
	t->guard = g;
	return id;
}

static inline uint8_t enc_dir(int enc)
{
	return enc == AES_ENCRYPT ? CT_DIR_ENCRYPT : CT_DIR_DECRYPT;
}

/* void hooks: count `bytes` on the path of (fn, key, dir). */
#define VOID_HOOK(fn, params, args, kind, key, dir, bytes_expr)                                   \
	CT_EXPORT void fn params                                                                  \
	{                                                                                         \
		__typeof__(&fn) real = CT_REAL(fn);                                               \
		if (CT_UNLIKELY(!real))                                                           \
			return;                                                                   \
		struct ct_thread *t = ct_thread_fast();                                           \
		if (CT_UNLIKELY(!t || !aes_enter(t))) {                                           \
			real args;                                                                \
			return;                                                                   \
		}                                                                                 \
		uint32_t path = aes_path_guarded(t, kind, key, dir);                              \
		uint64_t bytes = (bytes_expr);                                                    \
		struct ct_op_timer op;                                                            \
		ct_op_begin_fast(t, &op, bytes);                                                  \
		real args;                                                                        \
		if (CT_LIKELY(path != CT_NO_PATH))                                                \
			ct_op_end_fast(t, &op, path, bytes, true);                                \
		ct_leave_fast(t, CT_FAM_AES);                                                     \
	}

VOID_HOOK(AES_encrypt, (const unsigned char *in, unsigned char *out, const AES_KEY *key), (in, out, key),
	  F_BLOCK, key, CT_DIR_ENCRYPT, AES_BLOCK_SIZE)
VOID_HOOK(AES_decrypt, (const unsigned char *in, unsigned char *out, const AES_KEY *key), (in, out, key),
	  F_BLOCK, key, CT_DIR_DECRYPT, AES_BLOCK_SIZE)
VOID_HOOK(AES_ecb_encrypt, (const unsigned char *in, unsigned char *out, const AES_KEY *key, const int enc),
	  (in, out, key, enc), F_ECB, key, enc_dir(enc), AES_BLOCK_SIZE)
VOID_HOOK(AES_cbc_encrypt, (const unsigned char *in, unsigned char *out, size_t length, const AES_KEY *key,
			    unsigned char *ivec, const int enc),
	  (in, out, length, key, ivec, enc), F_CBC, key, enc_dir(enc), length)
VOID_HOOK(AES_cfb128_encrypt, (const unsigned char *in, unsigned char *out, size_t length, const AES_KEY *key,
			       unsigned char *ivec, int *num, const int enc),
	  (in, out, length, key, ivec, num, enc), F_CFB128, key, enc_dir(enc), length)
/* AES_cfb1_encrypt's length is in bits */
VOID_HOOK(AES_cfb1_encrypt, (const unsigned char *in, unsigned char *out, size_t length, const AES_KEY *key,
			     unsigned char *ivec, int *num, const int enc),
	  (in, out, length, key, ivec, num, enc), F_CFB1, key, enc_dir(enc), (length + 7) / 8)
VOID_HOOK(AES_cfb8_encrypt, (const unsigned char *in, unsigned char *out, size_t length, const AES_KEY *key,
			     unsigned char *ivec, int *num, const int enc),
	  (in, out, length, key, ivec, num, enc), F_CFB8, key, enc_dir(enc), length)
VOID_HOOK(AES_ofb128_encrypt, (const unsigned char *in, unsigned char *out, size_t length, const AES_KEY *key,
			       unsigned char *ivec, int *num),
	  (in, out, length, key, ivec, num), F_OFB, key, CT_DIR_ENCRYPT, length)
VOID_HOOK(AES_ige_encrypt, (const unsigned char *in, unsigned char *out, size_t length, const AES_KEY *key,
			    unsigned char *ivec, const int enc),
	  (in, out, length, key, ivec, enc), F_IGE, key, enc_dir(enc), length)
VOID_HOOK(AES_bi_ige_encrypt, (const unsigned char *in, unsigned char *out, size_t length, const AES_KEY *key,
			       const AES_KEY *key2, const unsigned char *ivec, const int enc),
	  (in, out, length, key, key2, ivec, enc), F_BIIGE, key, enc_dir(enc), length)

/* Key wrap returns the output length, or 0/-1 on failure. */
#define WRAP_HOOK(fn, dir)                                                                        \
	CT_EXPORT int fn(AES_KEY *key, const unsigned char *iv, unsigned char *out, const unsigned char *in, \
			 unsigned int inlen)                                                      \
	{                                                                                         \
		__typeof__(&fn) real = CT_REAL(fn);                                               \
		if (CT_UNLIKELY(!real)) {                                                         \
			errno = ENOSYS;                                                           \
			return -1;                                                                \
		}                                                                                 \
		struct ct_thread *t = ct_thread_fast();                                           \
		if (!t || !aes_enter(t))                                                          \
			return real(key, iv, out, in, inlen);                                     \
		uint32_t path = aes_path_guarded(t, F_WRAP, key, dir);                            \
		struct ct_op_timer op;                                                            \
		ct_op_begin_fast(t, &op, inlen);                                                  \
		int r = real(key, iv, out, in, inlen);                                            \
		if (path != CT_NO_PATH)                                                           \
			ct_op_end_fast(t, &op, path, inlen, r > 0);                               \
		ct_leave_fast(t, CT_FAM_AES);                                                     \
		return r;                                                                         \
	}

WRAP_HOOK(AES_wrap_key, CT_DIR_ENCRYPT)
WRAP_HOOK(AES_unwrap_key, CT_DIR_DECRYPT)

/* OpenSSL 1.0 only: not in today's headers, so declared here; absent symbols stay unresolved
 * (the hook is then never called: nothing links against a function libcrypto lacks). */
void AES_ctr128_encrypt(const unsigned char *in, unsigned char *out, size_t length, const AES_KEY *key,
			unsigned char ivec[AES_BLOCK_SIZE], unsigned char ecount_buf[AES_BLOCK_SIZE],
			unsigned int *num);
VOID_HOOK(AES_ctr128_encrypt, (const unsigned char *in, unsigned char *out, size_t length, const AES_KEY *key,
			       unsigned char ivec[AES_BLOCK_SIZE], unsigned char ecount_buf[AES_BLOCK_SIZE],
			       unsigned int *num),
	  (in, out, length, key, ivec, ecount_buf, num), F_CTR, key, CT_DIR_ENCRYPT, length)

/* Key set-up: passed through; a refused key (bad length) is an event with its call site. */
#define KEY_HOOK(fn)                                                                              \
	CT_EXPORT int fn(const unsigned char *user_key, const int bits, AES_KEY *key)             \
	{                                                                                         \
		__typeof__(&fn) real = CT_REAL(fn);                                               \
		if (CT_UNLIKELY(!real)) {                                                         \
			errno = ENOSYS;                                                           \
			return -1;                                                                \
		}                                                                                 \
		struct ct_thread *t = ct_thread_fast();                                           \
		if (!t || !aes_enter(t))                                                          \
			return real(user_key, bits, key);                                         \
		int r = real(user_key, bits, key);                                                \
		atomic_fetch_add_explicit(&ct_g.hooked_calls_slow, 1, memory_order_relaxed);      \
		if (r != 0) {                                                                     \
			int e = errno;                                                            \
			uint32_t g = t->guard;                                                    \
			t->guard = CT_GUARD_ALL;                                                  \
			ct_event(CT_EV_CALL_FAILED, #fn, 0, r, CT_NO_PATH, true, "bits=%d", bits); \
			t->guard = g;                                                             \
			errno = e;                                                                \
		}                                                                                 \
		ct_leave_fast(t, CT_FAM_AES);                                                     \
		return r;                                                                         \
	}

KEY_HOOK(AES_set_encrypt_key)
KEY_HOOK(AES_set_decrypt_key)
