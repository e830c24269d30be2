/* SPDX-License-Identifier: MIT */
/*
 * aes.c - the low-level AES_* API (deprecated in OpenSSL 3, still used by old code and by
 * `openssl speed` builds that benchmark it). No context to classify: the key size comes from
 * AES_KEY.rounds (a public field of a public struct), the mode and direction from the function
 * and its enc argument, and path ids are cached in a static table [function][bits][dir].
 * Calls made from inside an EVP call (a provider using AES_encrypt as its block function) belong
 * to that EVP path and pass straight through.
 *
 * CRYPTRACE_ROUTE: when the table sends a (mode, key size, direction) to aesni, the block, ECB,
 * CBC, CFB128 and OFB calls are served by the in-process backend from the side table that the
 * set-key hooks fill (preload/route/lowlevel.h), on a path of their own with impl route:aesni.
 * A call whose key the side table does not know runs natively, and a fallback event says so.
 */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <stdio.h>

#include <openssl/aes.h>

#include "aesni.h"
#include "internal.h"
#include "lowlevel.h"
#include "route.h"

enum aes_fn {
	F_BLOCK,
	F_ECB,
	F_CBC,
	F_CFB128,
	F_CFB1,
	F_CFB8,
	F_OFB,
	F_IGE,
	F_BIIGE,
	F_WRAP,
	F_CTR,
	F_COUNT
};
static const char *const mode_name[F_COUNT] = {
	[F_BLOCK] = "ecb",   [F_ECB] = "ecb",   [F_CBC] = "cbc", [F_CFB128] = "cfb",
	[F_CFB1] = "cfb1",   [F_CFB8] = "cfb8", [F_OFB] = "ofb", [F_IGE] = "ige",
	[F_BIIGE] = "biige", [F_WRAP] = "wrap", [F_CTR] = "ctr",
};

/* [fn][bits: 128,192,256,other][dir: unknown,enc,dec] = path id + 1 */
static _Atomic uint32_t path_cache[F_COUNT][4][3];

/* AES_KEY.rounds: 10, 12, 14 from OpenSSL's schedules; 9, 11, 13 from an AES-NI schedule
 * (BoringSSL's AES_set_encrypt_key uses AES-NI where the CPU has it, and its AES-NI code counts
 * the rounds before the last one, as OpenSSL's own aesni_set_encrypt_key does). */
static unsigned bits_index(const AES_KEY *key)
{
	switch (key ? key->rounds : 0) {
	case 9:
	case 10:
		return 0;
	case 11:
	case 12:
		return 1;
	case 13:
	case 14:
		return 2;
	default:
		return 3;
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
	uint32_t id = ct_path_intern_here(&k);
	if (id == CT_NO_PATH)
		return id;
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
	uint32_t g = ct_guard_all(t);
	uint32_t id = aes_path(fn, key, dir);
	ct_guard_restore(t, g);
	return id;
}

/* ---- routes -------------------------------------------------------------------------------- */

enum { RT_UNKNOWN = 0, RT_NATIVE, RT_AESNI, RT_BY_SIZE };
/* [fn][bits][dir]: the route decision (RT_*), the routed path id + 1, "fallback reported" */
static _Atomic uint8_t route_cache[F_COUNT][4][3];
static _Atomic uint32_t routed_cache[F_COUNT][4][3];
static _Atomic uint8_t fallback_said[F_COUNT][4][3];

static bool servable(enum aes_fn fn)
{
	return fn == F_BLOCK || fn == F_ECB || fn == F_CBC || fn == F_CFB128 || fn == F_OFB;
}

static void cipher_of(enum aes_fn fn, unsigned b, char *buf, size_t cap)
{
	static const uint16_t bits[4] = { 128, 192, 256, 0 };
	snprintf(buf, cap, "aes-%u-%s", bits[b], mode_name[fn]);
}

static const char *dir_word(uint8_t dir)
{
	return dir == CT_DIR_ENCRYPT ? "enc" : dir == CT_DIR_DECRYPT ? "dec" : "any";
}

/* Slow path of the decision: the table's answer for this function, key size and direction. */
static uint8_t route_decide(enum aes_fn fn, unsigned b, uint8_t dir)
{
	const struct ct_route_table *t = ct_route_active();
	if (!t || b > 2)
		return RT_NATIVE;
	char cipher[32];
	cipher_of(fn, b, cipher, sizeof(cipher));
	unsigned flags = 0;
	enum ct_route_target target = ct_route_lookup_ex(t, cipher, dir, CT_ROUTE_SIZE_UNKNOWN, &flags);
	if (!(flags & CT_ROUTE_F_MATCHED) ||
	    (target != CT_ROUTE_AESNI && !(flags & CT_ROUTE_F_SIZE_DEPENDENT)))
		return RT_NATIVE;
	if (!servable(fn)) {
		/* asked for, but not a mode the route serves: said once (this answer is cached) */
		ct_event(CT_EV_FALLBACK, "AES_*", 0, 0, CT_NO_PATH, false,
			 "route " CT_AESNI_TARGET
			 " -> native: %s %s: the low-level route serves AES_encrypt/decrypt, "
			 "ECB, CBC, CFB-128 and OFB; this mode runs in libcrypto",
			 cipher, dir_word(dir));
		return RT_NATIVE;
	}
	if (!ct_aesni_available()) {
		ct_event(CT_EV_FALLBACK, "AES_set_encrypt_key", 0, 0, CT_NO_PATH, false,
			 "route " CT_AESNI_TARGET " -> native: %s %s: no " CT_AESNI_NEEDS
			 " on this CPU (or CRYPTRACE_AESNI_MAX=none)",
			 cipher, dir_word(dir));
		return RT_NATIVE;
	}
	ct_event(CT_EV_ROUTE, "AES_*", 0, 1, CT_NO_PATH, false,
		 "%s %s -> " CT_AESNI_TARGET " (%s, low-level AES_*%s)", cipher, dir_word(dir),
		 ct_aesni_level_name(ct_aesni_level()),
		 flags & CT_ROUTE_F_SIZE_DEPENDENT ? ", size condition decided per call" : "");
	return flags & CT_ROUTE_F_SIZE_DEPENDENT ? RT_BY_SIZE : RT_AESNI;
}

/* Should this call go to aesni? Cached per (fn, bits, dir); per call only for size conditions. */
static bool route_wanted(struct ct_thread *t, enum aes_fn fn, const AES_KEY *key, uint8_t dir, uint64_t bytes)
{
	unsigned b = bits_index(key);
	uint8_t r = atomic_load_explicit(&route_cache[fn][b][dir], memory_order_relaxed);
	if (CT_LIKELY(r == RT_NATIVE))
		return false;
	uint32_t g = ct_guard_all(t);
	if (r == RT_UNKNOWN) {
		r = route_decide(fn, b, dir);
		atomic_store_explicit(&route_cache[fn][b][dir], r, memory_order_relaxed);
	}
	bool want = r == RT_AESNI;
	if (r == RT_BY_SIZE) {
		char cipher[32];
		cipher_of(fn, b, cipher, sizeof(cipher));
		want = ct_route_lookup(ct_route_active(), cipher, dir, bytes) == CT_ROUTE_AESNI;
	}
	ct_guard_restore(t, g);
	return want;
}

static uint32_t routed_path(struct ct_thread *t, enum aes_fn fn, const AES_KEY *key, uint8_t dir)
{
	unsigned b = bits_index(key);
	uint32_t v = atomic_load_explicit(&routed_cache[fn][b][dir], memory_order_relaxed);
	if (CT_LIKELY(v))
		return v - 1;
	uint32_t g = ct_guard_all(t);
	static const uint16_t bits[4] = { 128, 192, 256, 0 };
	char cipher[32];
	cipher_of(fn, b, cipher, sizeof(cipher));
	struct ct_path_key k = {
		.api = CT_API_AES,
		.dir = dir,
		.entry = CT_ENTRY_AES_LOWLEVEL,
		.route = CT_ROUTE_AESNI,
		.flags = CT_PATH_ROUTED,
		.key_bits = bits[b],
		.impl = CT_ROUTE_IMPL_AESNI,
		.cipher = cipher,
	};
	uint32_t id = ct_path_intern_here(&k);
	if (id != CT_NO_PATH)
		atomic_store_explicit(&routed_cache[fn][b][dir], id + 1, memory_order_relaxed);
	ct_guard_restore(t, g);
	return id;
}

/* The route wanted this call but the side table could not serve it: once per (fn, bits, dir). */
static void route_missed(struct ct_thread *t, enum aes_fn fn, const AES_KEY *key, uint8_t dir)
{
	unsigned b = bits_index(key);
	if (atomic_exchange_explicit(&fallback_said[fn][b][dir], 1, memory_order_relaxed))
		return;
	uint32_t g = ct_guard_all(t);
	char cipher[32];
	cipher_of(fn, b, cipher, sizeof(cipher));
	ct_event(CT_EV_FALLBACK, "AES_*", 0, 0, CT_NO_PATH, true,
		 "route " CT_AESNI_TARGET
		 " -> native: %s %s: AES_KEY not set up by AES_set_%s_key under the preload, "
		 "changed since, or of the other direction",
		 cipher, dir_word(dir),
		 fn == F_CFB128 || fn == F_OFB || dir == CT_DIR_ENCRYPT ? "encrypt" : "decrypt");
	ct_guard_restore(t, g);
}

/* A routed call the route could not serve after all: its count moves from the routed path's
 * cell to the native path's (the timing, if it was sampled, stays with the routed attempt). */
static void route_recount(struct ct_thread *t, struct ct_counters *from, unsigned ci, uint32_t native,
			  uint64_t bytes)
{
	if (from) {
		CT_ADD(from->cell[ci].calls, (uint64_t)-1);
		CT_ADD(from->cell[ci].bytes, (uint64_t)0 - bytes);
	}
	struct ct_counters *to = native != CT_NO_PATH ? ct_counters_of(t, native) : NULL;
	if (to) {
		CT_ADD(to->cell[ci].calls, 1);
		CT_ADD(to->cell[ci].bytes, bytes);
		to->cell_mask |= 1ull << ci;
	}
}

static inline uint8_t enc_dir(int enc)
{
	return enc == AES_ENCRYPT ? CT_DIR_ENCRYPT : CT_DIR_DECRYPT;
}

/* One low-level call on its way through: its path's counters, its cell and its timing. */
struct aes_op {
	struct ct_thread *t; /* NULL: the call passes straight through */
	enum aes_fn fn;
	const AES_KEY *key;
	uint8_t dir;
	bool routed; /* the route wants the backend to serve it */
	uint64_t bytes;
	unsigned ci;
	struct ct_counters *c;
	struct ct_timed tm;
};

/* Starts a call (before the real or routed work): counted on its path, the routed one when the
 * route wants it (asked of every function: one that cannot be routed is said so once, then never
 * again), and timed when a sample or a span's end falls on it. op->t is NULL when the call passes
 * straight through: no state yet, or inside an EVP or AES call of ours. */
static void aes_begin(struct aes_op *op, enum aes_fn fn, const AES_KEY *key, uint8_t dir, uint64_t bytes)
{
	*op = (struct aes_op){ .fn = fn, .key = key, .dir = dir, .bytes = bytes };
	struct ct_thread *t = ct_thread_get();
	if (CT_UNLIKELY(!t || !aes_enter(t)))
		return;
	op->t = t;
	op->routed = route_wanted(t, fn, key, dir, bytes);
	uint32_t path = op->routed ? routed_path(t, fn, key, dir) : aes_path_guarded(t, fn, key, dir);
	op->c = path != CT_NO_PATH ? ct_counters_of(t, path) : NULL;
	op->ci = ct_cell_of_size(bytes);
	if (op->c && ct_tick(t, op->c, op->ci, bytes))
		ct_timed_begin(t, &op->tm, op->c, path, op->ci, bytes);
}

/* The route wanted the call but the backend could not serve it (logged once): native runs it,
 * and it is counted there. Nothing for a call that was not routed. */
static void aes_route_missed(struct aes_op *op)
{
	if (!op->routed)
		return;
	route_missed(op->t, op->fn, op->key, op->dir);
	route_recount(op->t, op->c, op->ci, aes_path_guarded(op->t, op->fn, op->key, op->dir), op->bytes);
	op->routed = false;
}

static void aes_end(struct aes_op *op, bool ok)
{
	if (!op->t)
		return;
	ct_timed_end(op->t, &op->tm);
	if (op->c && !ok)
		CT_ADD(op->c->errors, 1);
	ct_leave_fast(op->t, CT_FAM_AES);
}

/* The real function with these arguments, when libcrypto has it. */
#define AES_REAL(fn, ...)                                                                                    \
	do {                                                                                                 \
		__typeof__(&fn) real_ = CT_REAL(fn);                                                         \
		if (real_)                                                                                   \
			real_(__VA_ARGS__);                                                                  \
	} while (0)

/* The hooks. `served` is what the backend did when the route asked it to (false: run natively). */

CT_EXPORT void AES_encrypt(const unsigned char *in, unsigned char *out, const AES_KEY *key)
{
	CT_PASS_FOREIGN_VOID(AES_encrypt, in, out, key);
	struct aes_op op;
	aes_begin(&op, F_BLOCK, key, CT_DIR_ENCRYPT, AES_BLOCK_SIZE);
	if (!(op.routed && ct_lowlevel_block(key, in, out, true))) {
		aes_route_missed(&op);
		AES_REAL(AES_encrypt, in, out, key);
	}
	aes_end(&op, true);
}

CT_EXPORT void AES_decrypt(const unsigned char *in, unsigned char *out, const AES_KEY *key)
{
	CT_PASS_FOREIGN_VOID(AES_decrypt, in, out, key);
	struct aes_op op;
	aes_begin(&op, F_BLOCK, key, CT_DIR_DECRYPT, AES_BLOCK_SIZE);
	if (!(op.routed && ct_lowlevel_block(key, in, out, false))) {
		aes_route_missed(&op);
		AES_REAL(AES_decrypt, in, out, key);
	}
	aes_end(&op, true);
}

CT_EXPORT void AES_ecb_encrypt(const unsigned char *in, unsigned char *out, const AES_KEY *key, const int enc)
{
	CT_PASS_FOREIGN_VOID(AES_ecb_encrypt, in, out, key, enc);
	struct aes_op op;
	aes_begin(&op, F_ECB, key, enc_dir(enc), AES_BLOCK_SIZE);
	if (!(op.routed && ct_lowlevel_block(key, in, out, enc == AES_ENCRYPT))) {
		aes_route_missed(&op);
		AES_REAL(AES_ecb_encrypt, in, out, key, enc);
	}
	aes_end(&op, true);
}

CT_EXPORT void AES_cbc_encrypt(const unsigned char *in, unsigned char *out, size_t length, const AES_KEY *key,
			       unsigned char *ivec, const int enc)
{
	CT_PASS_FOREIGN_VOID(AES_cbc_encrypt, in, out, length, key, ivec, enc);
	struct aes_op op;
	aes_begin(&op, F_CBC, key, enc_dir(enc), length);
	if (!(op.routed && ct_lowlevel_cbc(key, in, out, length, ivec, enc == AES_ENCRYPT))) {
		aes_route_missed(&op);
		AES_REAL(AES_cbc_encrypt, in, out, length, key, ivec, enc);
	}
	aes_end(&op, true);
}

CT_EXPORT void AES_cfb128_encrypt(const unsigned char *in, unsigned char *out, size_t length,
				  const AES_KEY *key, unsigned char *ivec, int *num, const int enc)
{
	CT_PASS_FOREIGN_VOID(AES_cfb128_encrypt, in, out, length, key, ivec, num, enc);
	struct aes_op op;
	aes_begin(&op, F_CFB128, key, enc_dir(enc), length);
	if (!(op.routed && ct_lowlevel_cfb128(key, in, out, length, ivec, num, enc == AES_ENCRYPT))) {
		aes_route_missed(&op);
		AES_REAL(AES_cfb128_encrypt, in, out, length, key, ivec, num, enc);
	}
	aes_end(&op, true);
}

CT_EXPORT void AES_ofb128_encrypt(const unsigned char *in, unsigned char *out, size_t length,
				  const AES_KEY *key, unsigned char *ivec, int *num)
{
	CT_PASS_FOREIGN_VOID(AES_ofb128_encrypt, in, out, length, key, ivec, num);
	struct aes_op op;
	aes_begin(&op, F_OFB, key, CT_DIR_ENCRYPT, length);
	if (!(op.routed && ct_lowlevel_ofb128(key, in, out, length, ivec, num))) {
		aes_route_missed(&op);
		AES_REAL(AES_ofb128_encrypt, in, out, length, key, ivec, num);
	}
	aes_end(&op, true);
}

/* The modes the route does not serve: counted and timed, run natively. */

CT_EXPORT void AES_cfb1_encrypt(const unsigned char *in, unsigned char *out, size_t length,
				const AES_KEY *key, unsigned char *ivec, int *num, const int enc)
{
	CT_PASS_FOREIGN_VOID(AES_cfb1_encrypt, in, out, length, key, ivec, num, enc);
	struct aes_op op;
	aes_begin(&op, F_CFB1, key, enc_dir(enc), (length + 7) / 8); /* its length is in bits */
	AES_REAL(AES_cfb1_encrypt, in, out, length, key, ivec, num, enc);
	aes_end(&op, true);
}

CT_EXPORT void AES_cfb8_encrypt(const unsigned char *in, unsigned char *out, size_t length,
				const AES_KEY *key, unsigned char *ivec, int *num, const int enc)
{
	CT_PASS_FOREIGN_VOID(AES_cfb8_encrypt, in, out, length, key, ivec, num, enc);
	struct aes_op op;
	aes_begin(&op, F_CFB8, key, enc_dir(enc), length);
	AES_REAL(AES_cfb8_encrypt, in, out, length, key, ivec, num, enc);
	aes_end(&op, true);
}

CT_EXPORT void AES_ige_encrypt(const unsigned char *in, unsigned char *out, size_t length, const AES_KEY *key,
			       unsigned char *ivec, const int enc)
{
	CT_PASS_FOREIGN_VOID(AES_ige_encrypt, in, out, length, key, ivec, enc);
	struct aes_op op;
	aes_begin(&op, F_IGE, key, enc_dir(enc), length);
	AES_REAL(AES_ige_encrypt, in, out, length, key, ivec, enc);
	aes_end(&op, true);
}

CT_EXPORT void AES_bi_ige_encrypt(const unsigned char *in, unsigned char *out, size_t length,
				  const AES_KEY *key, const AES_KEY *key2, const unsigned char *ivec,
				  const int enc)
{
	CT_PASS_FOREIGN_VOID(AES_bi_ige_encrypt, in, out, length, key, key2, ivec, enc);
	struct aes_op op;
	aes_begin(&op, F_BIIGE, key, enc_dir(enc), length);
	AES_REAL(AES_bi_ige_encrypt, in, out, length, key, key2, ivec, enc);
	aes_end(&op, true);
}

/* OpenSSL 1.0 only: not in today's headers, so declared here; absent symbols stay unresolved
 * (the hook is then never called: nothing links against a function libcrypto lacks). */
void AES_ctr128_encrypt(const unsigned char *in, unsigned char *out, size_t length, const AES_KEY *key,
			unsigned char ivec[AES_BLOCK_SIZE], unsigned char ecount_buf[AES_BLOCK_SIZE],
			unsigned int *num);
CT_EXPORT void AES_ctr128_encrypt(const unsigned char *in, unsigned char *out, size_t length,
				  const AES_KEY *key, unsigned char ivec[AES_BLOCK_SIZE],
				  unsigned char ecount_buf[AES_BLOCK_SIZE], unsigned int *num)
{
	CT_PASS_FOREIGN_VOID(AES_ctr128_encrypt, in, out, length, key, ivec, ecount_buf, num);
	struct aes_op op;
	aes_begin(&op, F_CTR, key, CT_DIR_ENCRYPT, length);
	AES_REAL(AES_ctr128_encrypt, in, out, length, key, ivec, ecount_buf, num);
	aes_end(&op, true);
}

/* Key wrap returns the output length, or 0/-1 on failure. */
static int wrap_hook(int (*real)(AES_KEY *, const unsigned char *, unsigned char *, const unsigned char *,
				 unsigned int),
		     uint8_t dir, AES_KEY *key, const unsigned char *iv, unsigned char *out,
		     const unsigned char *in, unsigned int inlen)
{
	if (CT_UNLIKELY(!real)) {
		errno = ENOSYS;
		return -1;
	}
	struct aes_op op;
	aes_begin(&op, F_WRAP, key, dir, inlen);
	int r = real(key, iv, out, in, inlen);
	aes_end(&op, r > 0);
	return r;
}

CT_EXPORT int AES_wrap_key(AES_KEY *key, const unsigned char *iv, unsigned char *out, const unsigned char *in,
			   unsigned int inlen)
{
	CT_PASS_FOREIGN(AES_wrap_key, key, iv, out, in, inlen);
	return wrap_hook(CT_REAL(AES_wrap_key), CT_DIR_ENCRYPT, key, iv, out, in, inlen);
}

CT_EXPORT int AES_unwrap_key(AES_KEY *key, const unsigned char *iv, unsigned char *out,
			     const unsigned char *in, unsigned int inlen)
{
	CT_PASS_FOREIGN(AES_unwrap_key, key, iv, out, in, inlen);
	return wrap_hook(CT_REAL(AES_unwrap_key), CT_DIR_DECRYPT, key, iv, out, in, inlen);
}

/* Key set-up: passed through; a refused key (bad length) is an event with its call site. When a
 * route may serve low-level AES, our own schedule goes into the side table beside it. */
static int key_hook(const char *name, int (*real)(const unsigned char *, const int, AES_KEY *), bool enc,
		    const unsigned char *user_key, const int bits, AES_KEY *key)
{
	if (CT_UNLIKELY(!real)) {
		errno = ENOSYS;
		return -1;
	}
	struct ct_thread *t = ct_thread_get();
	if (!t || !aes_enter(t))
		return real(user_key, bits, key);
	int r = real(user_key, bits, key);
	atomic_fetch_add_explicit(&ct_g.hooked_calls_slow, 1, memory_order_relaxed);
	if (r != 0 || ct_lowlevel_enabled()) {
		struct ct_quiet q = ct_quiet_begin(t);
		if (r != 0)
			ct_event(CT_EV_CALL_FAILED, name, 0, r, CT_NO_PATH, true, "bits=%d", bits);
		else
			ct_lowlevel_key_set(key, user_key, bits, enc);
		ct_quiet_end(t, q);
	}
	ct_leave_fast(t, CT_FAM_AES);
	return r;
}

CT_EXPORT int AES_set_encrypt_key(const unsigned char *user_key, const int bits, AES_KEY *key)
{
	CT_PASS_FOREIGN(AES_set_encrypt_key, user_key, bits, key);
	return key_hook("AES_set_encrypt_key", CT_REAL(AES_set_encrypt_key), true, user_key, bits, key);
}

CT_EXPORT int AES_set_decrypt_key(const unsigned char *user_key, const int bits, AES_KEY *key)
{
	CT_PASS_FOREIGN(AES_set_decrypt_key, user_key, bits, key);
	return key_hook("AES_set_decrypt_key", CT_REAL(AES_set_decrypt_key), false, user_key, bits, key);
}
