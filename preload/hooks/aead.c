/* SPDX-License-Identifier: MIT */
/*
 * aead.c - BoringSSL's EVP_AEAD API (EVP_AEAD_CTX_init/new, seal, open and their scatter/gather
 * forms): the one-shot AEAD calls BoringSSL recommends over EVP_CIPHER for AES-GCM, and what its
 * libssl seals TLS records with. A context is classified at init like an EVP one (api evp, the
 * BoringSSL code that serves it, the AEAD's cipher, key bits) and its seals and opens are counted
 * on that path's encrypt and decrypt variants of entry CT_ENTRY_EVP_AEAD: one call per message,
 * its bytes what the call was given (a seal's plaintext plus any extra_in, an open's sealed
 * message with its tag, open_gather's ciphertext without it). OpenSSL has none of these
 * functions: there the real one is missing and a call fails with ENOSYS, as it would without us
 * (nothing linked against OpenSSL calls them). BoringSSL's types are opaque here: the preload is
 * built against OpenSSL's headers, so the prototypes below are copied from BoringSSL's aead.h.
 */
#include <stdint.h>
#include <string.h>

#include "boringssl.h"
#include "ctxmap.h"
#include "internal.h"

extern struct ct_ctxmap ct_global_ctxmap;

typedef struct evp_aead_st EVP_AEAD;
typedef struct evp_aead_ctx_st EVP_AEAD_CTX;
typedef struct engine_st ENGINE;

/* ---- which cipher an EVP_AEAD is --------------------------------------------------------------- */

/* BoringSSL names no AEAD: its getters return fixed objects, compared by address. The TLS and
 * nonce-policy variants run the same cipher as the plain one. */
static const struct {
	const char *getter, *cipher;
} aead_names[] = {
	{ "EVP_aead_aes_128_gcm", "aes-128-gcm" },
	{ "EVP_aead_aes_192_gcm", "aes-192-gcm" },
	{ "EVP_aead_aes_256_gcm", "aes-256-gcm" },
	{ "EVP_aead_aes_128_gcm_tls12", "aes-128-gcm" },
	{ "EVP_aead_aes_256_gcm_tls12", "aes-256-gcm" },
	{ "EVP_aead_aes_128_gcm_tls13", "aes-128-gcm" },
	{ "EVP_aead_aes_256_gcm_tls13", "aes-256-gcm" },
	{ "EVP_aead_aes_128_gcm_randnonce", "aes-128-gcm" },
	{ "EVP_aead_aes_256_gcm_randnonce", "aes-256-gcm" },
	{ "EVP_aead_aes_128_gcm_siv", "aes-128-gcm-siv" },
	{ "EVP_aead_aes_256_gcm_siv", "aes-256-gcm-siv" },
	{ "EVP_aead_aes_128_ctr_hmac_sha256", "aes-128-ctr-hmac-sha256" },
	{ "EVP_aead_aes_256_ctr_hmac_sha256", "aes-256-ctr-hmac-sha256" },
	{ "EVP_aead_aes_128_ccm_bluetooth", "aes-128-ccm" },
	{ "EVP_aead_aes_128_ccm_bluetooth_8", "aes-128-ccm" },
	{ "EVP_aead_aes_128_cbc_sha1_tls", "aes-128-cbc-hmac-sha1" },
	{ "EVP_aead_aes_128_cbc_sha1_tls_implicit_iv", "aes-128-cbc-hmac-sha1" },
	{ "EVP_aead_aes_256_cbc_sha1_tls", "aes-256-cbc-hmac-sha1" },
	{ "EVP_aead_aes_256_cbc_sha1_tls_implicit_iv", "aes-256-cbc-hmac-sha1" },
	{ "EVP_aead_chacha20_poly1305", "chacha20-poly1305" },
	{ "EVP_aead_xchacha20_poly1305", "xchacha20-poly1305" },
	{ "EVP_aead_des_ede3_cbc_sha1_tls", "des-ede3-cbc-hmac-sha1" },
	{ "EVP_aead_null_sha1_tls", "null-hmac-sha1" },
};

/* The getter's name is looked up in the library that holds aead (slow path, guards raised). */
static const char *aead_cipher(const EVP_AEAD *aead)
{
	for (size_t i = 0; aead && i < sizeof(aead_names) / sizeof(aead_names[0]); i++) {
		const EVP_AEAD *(*get)(void) = (const EVP_AEAD *(*)(void))ct_resolve(aead_names[i].getter);
		if (get && get() == aead)
			return aead_names[i].cipher;
	}
	return "aead";
}

/* ---- context set-up ------------------------------------------------------------------------- */

/* The path of a context just set up with aead and a key of key_len bytes, mapped to ctx; ra is
 * where the program called. A context seals and opens: it is set up on its seal path (its open
 * path for init_with_direction(open)), which keeps its key set-up and its CONTEXT event apart from
 * EVP_CIPHER contexts of the same cipher (those are set up on entry unknown). */
static uint32_t aead_classify(struct ct_thread *t, const char *call, const EVP_AEAD_CTX *ctx,
			      const EVP_AEAD *aead, size_t key_len, uint8_t dir, const void *ra)
{
	uint32_t guard = ct_guard_all(t);
	atomic_fetch_add_explicit(&ct_g.hooked_calls_slow, 1, memory_order_relaxed);
	const char *cipher = aead_cipher(aead);
	const char *impl = ct_boringssl_impl(aead, cipher);
	struct ct_path_key k = {
		.api = CT_API_EVP,
		.dir = dir,
		.entry = CT_ENTRY_EVP_AEAD,
		.key_bits = (uint16_t)(key_len > 0 && key_len < 8192 ? key_len * 8 : 0),
		.impl = impl ? impl : "builtin",
		.cipher = cipher,
	};
	uint32_t id = ct_path_intern_here(&k);
	ct_ctxmap_set(ctx, id);
	if (id != CT_NO_PATH)
		ct_event_at_site(CT_EV_CONTEXT, call, id, (uintptr_t)ra, NULL);
	ct_guard_restore(t, guard);
	return id;
}

/* An init's bookkeeping around the real call r: timed alone as the path's key set-up. */
struct aead_init {
	const char *name;
	const EVP_AEAD_CTX *ctx; /* NULL for EVP_AEAD_CTX_new: known after the call */
	const EVP_AEAD *aead;
	size_t key_len;
	uint8_t dir;
};

static struct ct_thread *aead_init_begin(uint64_t *t0)
{
	struct ct_thread *t = ct_thread_get();
	if (!t || !ct_enter_fast(t, CT_FAM_EVP))
		return NULL;
	ct_span_interrupt(t);
	*t0 = ct_clock_now();
	return t;
}

static void aead_init_end(struct ct_thread *t, const struct aead_init *in, bool ok, uint64_t t0,
			  const void *ra)
{
	uint64_t t1 = ct_clock_now();
	struct ct_quiet q = ct_quiet_begin(t);
	if (ok) {
		uint32_t id = aead_classify(t, in->name, in->ctx, in->aead, in->key_len, in->dir, ra);
		if (id != CT_NO_PATH)
			ct_probe_once(t, id, CT_CELL_PHASE(CT_PHASE_KEY), 0, t0, t1);
	} else {
		if (in->ctx)
			ct_ctxmap_del(in->ctx); /* a failed init leaves no usable context */
		ct_event(CT_EV_CALL_FAILED, in->name, 0, 0, CT_NO_PATH, false, NULL);
	}
	ct_quiet_end(t, q);
	ct_leave_fast(t, CT_FAM_EVP);
}

#define RA() __builtin_return_address(0)

/* The two inits into a caller's context: EVP_AEAD_CTX_init (its last argument an ENGINE, always
 * NULL in BoringSSL) and init_with_direction (enum evp_aead_direction_t: open 0, seal 1). */
static int init_hook(void *real, struct aead_init *in, const uint8_t *key, size_t tag_len, ENGINE *impl,
		     bool with_dir, int dir, const void *ra)
{
	typedef int (*init_fn)(EVP_AEAD_CTX *, const EVP_AEAD *, const uint8_t *, size_t, size_t, ENGINE *);
	typedef int (*init_dir_fn)(EVP_AEAD_CTX *, const EVP_AEAD *, const uint8_t *, size_t, size_t, int);
	EVP_AEAD_CTX *ctx = (EVP_AEAD_CTX *)in->ctx;
	if (CT_UNLIKELY(!real)) {
		errno = ENOSYS;
		return 0;
	}
	uint64_t t0;
	struct ct_thread *t = aead_init_begin(&t0);
	int r = with_dir ? ((init_dir_fn)real)(ctx, in->aead, key, in->key_len, tag_len, dir)
			 : ((init_fn)real)(ctx, in->aead, key, in->key_len, tag_len, impl);
	if (t)
		aead_init_end(t, in, r == 1, t0, ra);
	return r;
}

CT_EXPORT int EVP_AEAD_CTX_init(EVP_AEAD_CTX *ctx, const EVP_AEAD *aead, const uint8_t *key, size_t key_len,
				size_t tag_len, ENGINE *impl)
{
	CT_PASS_FOREIGN(EVP_AEAD_CTX_init, ctx, aead, key, key_len, tag_len, impl);
	struct aead_init in = { "EVP_AEAD_CTX_init", ctx, aead, key_len, CT_DIR_ENCRYPT };
	return init_hook(CT_REAL(EVP_AEAD_CTX_init), &in, key, tag_len, impl, false, 0, RA());
}

CT_EXPORT int EVP_AEAD_CTX_init_with_direction(EVP_AEAD_CTX *ctx, const EVP_AEAD *aead, const uint8_t *key,
					       size_t key_len, size_t tag_len, int dir)
{
	CT_PASS_FOREIGN(EVP_AEAD_CTX_init_with_direction, ctx, aead, key, key_len, tag_len, dir);
	struct aead_init in = { "EVP_AEAD_CTX_init_with_direction", ctx, aead, key_len,
				dir == 0 ? CT_DIR_DECRYPT : CT_DIR_ENCRYPT };
	return init_hook(CT_REAL(EVP_AEAD_CTX_init_with_direction), &in, key, tag_len, NULL, true, dir, RA());
}

CT_EXPORT EVP_AEAD_CTX *EVP_AEAD_CTX_new(const EVP_AEAD *aead, const uint8_t *key, size_t key_len,
					 size_t tag_len)
{
	CT_PASS_FOREIGN(EVP_AEAD_CTX_new, aead, key, key_len, tag_len);
	EVP_AEAD_CTX *(*real)(const EVP_AEAD *, const uint8_t *, size_t, size_t) = CT_REAL(EVP_AEAD_CTX_new);
	if (CT_UNLIKELY(!real)) {
		errno = ENOSYS;
		return NULL;
	}
	uint64_t t0;
	struct ct_thread *t = aead_init_begin(&t0);
	if (!t)
		return real(aead, key, key_len, tag_len);
	EVP_AEAD_CTX *ctx = real(aead, key, key_len, tag_len);
	int e = errno;
	struct aead_init in = { "EVP_AEAD_CTX_new", ctx, aead, key_len, CT_DIR_ENCRYPT };
	aead_init_end(t, &in, ctx != NULL, t0, RA());
	errno = e;
	return ctx;
}

/* A context's end (cleanup, and free, which cleans up): its address may next hold another
 * context, a stack one even, so its mapping goes now. */
static void forget(EVP_AEAD_CTX *ctx, void (*real)(EVP_AEAD_CTX *))
{
	if (ctx && ct_ready()) {
		int e = errno;
		ct_ctxmap_del(ctx);
		errno = e;
	}
	if (real)
		real(ctx);
}

CT_EXPORT void EVP_AEAD_CTX_cleanup(EVP_AEAD_CTX *ctx)
{
	CT_PASS_FOREIGN_VOID(EVP_AEAD_CTX_cleanup, ctx);
	forget(ctx, CT_REAL(EVP_AEAD_CTX_cleanup));
}

CT_EXPORT void EVP_AEAD_CTX_free(EVP_AEAD_CTX *ctx)
{
	CT_PASS_FOREIGN_VOID(EVP_AEAD_CTX_free, ctx);
	forget(ctx, CT_REAL(EVP_AEAD_CTX_free));
}

/* ---- seal and open -------------------------------------------------------------------------- */

/* The arguments of a seal or an open, of any of the four forms (those a form lacks are zero). */
struct aead_args {
	const EVP_AEAD_CTX *ctx;
	uint8_t *out, *out_tag;
	size_t *out_len;
	size_t max_out, nonce_len, in_len, extra_len, tag_len, ad_len;
	const uint8_t *nonce, *in, *extra, *tag, *ad;
};

enum aead_op { OP_SEAL, OP_OPEN, OP_SEAL_SCATTER, OP_OPEN_GATHER };

static int aead_run(void *real, enum aead_op op, const struct aead_args *a)
{
	typedef const uint8_t *u8p;
	switch (op) {
	case OP_SEAL_SCATTER:
		return ((int (*)(const EVP_AEAD_CTX *, uint8_t *, uint8_t *, size_t *, size_t, u8p, size_t,
				 u8p, size_t, u8p, size_t, u8p, size_t))real)(
			a->ctx, a->out, a->out_tag, a->out_len, a->max_out, a->nonce, a->nonce_len, a->in,
			a->in_len, a->extra, a->extra_len, a->ad, a->ad_len);
	case OP_OPEN_GATHER:
		return ((int (*)(const EVP_AEAD_CTX *, uint8_t *, u8p, size_t, u8p, size_t, u8p, size_t, u8p,
				 size_t))real)(a->ctx, a->out, a->nonce, a->nonce_len, a->in, a->in_len,
					       a->tag, a->tag_len, a->ad, a->ad_len);
	default: /* seal and open share a signature */
		return ((int (*)(const EVP_AEAD_CTX *, uint8_t *, size_t *, size_t, u8p, size_t, u8p, size_t,
				 u8p, size_t))real)(a->ctx, a->out, a->out_len, a->max_out, a->nonce,
						    a->nonce_len, a->in, a->in_len, a->ad, a->ad_len);
	}
}

/* One seal or open: counted (before the call runs) on the variant of its context's path for its
 * direction, timed when due, its failure counted. Returns the real call's result. */
static int aead_data_hook(void *real, enum aead_op op, const struct aead_args *a)
{
	if (CT_UNLIKELY(!real)) {
		errno = ENOSYS;
		return 0;
	}
	struct ct_thread *t = ct_thread_fast();
	if (!t || !ct_enter_fast(t, CT_FAM_EVP))
		return aead_run(real, op, a); /* seal calling seal_scatter inside BoringSSL: counted once */
	uint32_t id = ct_ctxmap_lookup_inline(&ct_global_ctxmap, a->ctx);
	struct ct_counters *c = NULL;
	if (id != CT_NO_PATH) {
		uint8_t dir = op == OP_SEAL || op == OP_SEAL_SCATTER ? CT_DIR_ENCRYPT : CT_DIR_DECRYPT;
		uint32_t guard = ct_guard_all(t);
		id = ct_path_variant(id, dir, CT_ENTRY_EVP_AEAD);
		c = ct_counters_of(t, id);
		ct_guard_restore(t, guard);
	}
	if (CT_UNLIKELY(!c)) { /* a context we never saw set up: passed through uncounted */
		int r = aead_run(real, op, a);
		ct_leave_fast(t, CT_FAM_EVP);
		return r;
	}
	uint64_t bytes = a->in_len + (op == OP_SEAL_SCATTER ? a->extra_len : 0);
	unsigned ci = ct_cell_of_size(bytes);
	struct ct_timed tm = { .what = 0 };
	if (ct_tick(t, c, ci, bytes))
		ct_timed_begin(t, &tm, c, id, ci, bytes);
	int r = aead_run(real, op, a);
	ct_timed_end(t, &tm);
	if (CT_UNLIKELY(r != 1))
		CT_ADD(c->errors, 1);
	ct_leave_fast(t, CT_FAM_EVP);
	return r;
}

/* Seal and open share a signature: one helper makes either call's arguments. */
static int seal_or_open(void *real, enum aead_op op, const EVP_AEAD_CTX *ctx, uint8_t *out, size_t *out_len,
			size_t max_out_len, const uint8_t *nonce, size_t nonce_len, const uint8_t *in,
			size_t in_len, const uint8_t *ad, size_t ad_len)
{
	struct aead_args a = { .ctx = ctx,
			       .out = out,
			       .out_len = out_len,
			       .max_out = max_out_len,
			       .nonce = nonce,
			       .nonce_len = nonce_len,
			       .in = in,
			       .in_len = in_len,
			       .ad = ad,
			       .ad_len = ad_len };
	return aead_data_hook(real, op, &a);
}

CT_EXPORT int EVP_AEAD_CTX_seal(const EVP_AEAD_CTX *ctx, uint8_t *out, size_t *out_len, size_t max_out_len,
				const uint8_t *nonce, size_t nonce_len, const uint8_t *in, size_t in_len,
				const uint8_t *ad, size_t ad_len)
{
	CT_PASS_FOREIGN(EVP_AEAD_CTX_seal, ctx, out, out_len, max_out_len, nonce, nonce_len, in, in_len, ad,
			ad_len);
	return seal_or_open(CT_REAL(EVP_AEAD_CTX_seal), OP_SEAL, ctx, out, out_len, max_out_len, nonce,
			    nonce_len, in, in_len, ad, ad_len);
}

CT_EXPORT int EVP_AEAD_CTX_open(const EVP_AEAD_CTX *ctx, uint8_t *out, size_t *out_len, size_t max_out_len,
				const uint8_t *nonce, size_t nonce_len, const uint8_t *in, size_t in_len,
				const uint8_t *ad, size_t ad_len)
{
	CT_PASS_FOREIGN(EVP_AEAD_CTX_open, ctx, out, out_len, max_out_len, nonce, nonce_len, in, in_len, ad,
			ad_len);
	return seal_or_open(CT_REAL(EVP_AEAD_CTX_open), OP_OPEN, ctx, out, out_len, max_out_len, nonce,
			    nonce_len, in, in_len, ad, ad_len);
}

CT_EXPORT int EVP_AEAD_CTX_seal_scatter(const EVP_AEAD_CTX *ctx, uint8_t *out, uint8_t *out_tag,
					size_t *out_tag_len, size_t max_out_tag_len, const uint8_t *nonce,
					size_t nonce_len, const uint8_t *in, size_t in_len,
					const uint8_t *extra_in, size_t extra_in_len, const uint8_t *ad,
					size_t ad_len)
{
	CT_PASS_FOREIGN(EVP_AEAD_CTX_seal_scatter, ctx, out, out_tag, out_tag_len, max_out_tag_len, nonce,
			nonce_len, in, in_len, extra_in, extra_in_len, ad, ad_len);
	struct aead_args a = { .ctx = ctx,
			       .out = out,
			       .out_tag = out_tag,
			       .out_len = out_tag_len,
			       .max_out = max_out_tag_len,
			       .nonce = nonce,
			       .nonce_len = nonce_len,
			       .in = in,
			       .in_len = in_len,
			       .extra = extra_in,
			       .extra_len = extra_in_len,
			       .ad = ad,
			       .ad_len = ad_len };
	return aead_data_hook(CT_REAL(EVP_AEAD_CTX_seal_scatter), OP_SEAL_SCATTER, &a);
}

CT_EXPORT int EVP_AEAD_CTX_open_gather(const EVP_AEAD_CTX *ctx, uint8_t *out, const uint8_t *nonce,
				       size_t nonce_len, const uint8_t *in, size_t in_len,
				       const uint8_t *in_tag, size_t in_tag_len, const uint8_t *ad,
				       size_t ad_len)
{
	CT_PASS_FOREIGN(EVP_AEAD_CTX_open_gather, ctx, out, nonce, nonce_len, in, in_len, in_tag, in_tag_len,
			ad, ad_len);
	struct aead_args a = { .ctx = ctx,
			       .out = out,
			       .nonce = nonce,
			       .nonce_len = nonce_len,
			       .in = in,
			       .in_len = in_len,
			       .tag = in_tag,
			       .tag_len = in_tag_len,
			       .ad = ad,
			       .ad_len = ad_len };
	return aead_data_hook(CT_REAL(EVP_AEAD_CTX_open_gather), OP_OPEN_GATHER, &a);
}
