/* SPDX-License-Identifier: MIT */
/*
 * evp.c - the EVP cipher life cycle: inits, finals, ctrls, context new/free/reset/copy, fetch. A
 * context is classified once, at init, into a path (api evp, the provider or engine that serves
 * it, cipher, key bits, direction); its data calls (evp_data.c) then cost a few counter bumps. The
 * entry the program uses for data (EVP_*Update or the raw EVP_Cipher) is part of the path: it is
 * attached at the first data call as a path variant. Every libcrypto accessor is resolved at run
 * time (OpenSSL 3 names first, then 1.1 names).
 */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <stdio.h>
#include <string.h>

#include <openssl/engine.h>
#include <openssl/evp.h>

#include "boringssl.h"
#include "classify.h"
#include "ctxmap.h"
#include "evp_internal.h"
#include "internal.h"
#include "lane.h"
#include "route.h"

extern struct ct_ctxmap ct_global_ctxmap;

/* ---- accessors, resolved once ------------------------------------------------------------- */

struct evp_accessors {
	const EVP_CIPHER *(*ctx_cipher)(const EVP_CIPHER_CTX *);
	int (*ctx_key_length)(const EVP_CIPHER_CTX *);
	int (*ctx_encrypting)(const EVP_CIPHER_CTX *);
	const char *(*cipher_name)(const EVP_CIPHER *);
	int (*cipher_nid)(const EVP_CIPHER *);
	const void *(*cipher_provider)(const EVP_CIPHER *);
	const char *(*provider_name)(const void *);
	const char *(*nid2ln)(int);
	const char *(*engine_id)(const ENGINE *);
	ENGINE *(*cipher_engine)(int);
	int (*engine_finish)(ENGINE *);
};

/*
 * Published once: the first thread to claim the slot fills it and releases `ready`; a thread
 * that arrives meanwhile resolves into its own scratch copy instead of waiting (no lock, no
 * spin: the claimer may be this very thread, interrupted by a signal handler doing EVP work).
 */
static struct evp_accessors acc_storage;
static bool acc_claimed, acc_ready;

static void *resolve2(const char *a, const char *b)
{
	void *p = ct_resolve(a);
	return p || !b ? p : ct_resolve(b);
}

static void resolve_into(struct evp_accessors *a)
{
	a->ctx_cipher = resolve2("EVP_CIPHER_CTX_get0_cipher", "EVP_CIPHER_CTX_cipher");
	a->ctx_key_length = resolve2("EVP_CIPHER_CTX_get_key_length", "EVP_CIPHER_CTX_key_length");
	a->ctx_encrypting = resolve2("EVP_CIPHER_CTX_is_encrypting", "EVP_CIPHER_CTX_encrypting");
	a->cipher_name = resolve2("EVP_CIPHER_get0_name", NULL);
	a->cipher_nid = resolve2("EVP_CIPHER_get_nid", "EVP_CIPHER_nid");
	a->cipher_provider = resolve2("EVP_CIPHER_get0_provider", NULL);
	a->provider_name = resolve2("OSSL_PROVIDER_get0_name", NULL);
	a->nid2ln = resolve2("OBJ_nid2ln", NULL);
	a->engine_id = resolve2("ENGINE_get_id", NULL);
	a->cipher_engine = resolve2("ENGINE_get_cipher_engine", NULL);
	a->engine_finish = resolve2("ENGINE_finish", NULL);
}

static const struct evp_accessors *evp_accessors(struct evp_accessors *scratch)
{
	if (__atomic_load_n(&acc_ready, __ATOMIC_ACQUIRE))
		return &acc_storage;
	if (__atomic_exchange_n(&acc_claimed, true, __ATOMIC_ACQ_REL)) {
		resolve_into(scratch);
		return scratch;
	}
	resolve_into(&acc_storage);
	__atomic_store_n(&acc_ready, true, __ATOMIC_RELEASE);
	return &acc_storage;
}

/* ---- classification (context init: slow path, guarded) ------------------------------------ */

/* Gathers the facts of a context just initialised (libcrypto's accessors, the routes, the
 * requested engine) and lets classify.c name its path. */
static uint32_t classify_uncached(const struct evp_accessors *acc, const EVP_CIPHER *c, ENGINE *engine,
				  int key_len, uint8_t dir)
{
	char kernel_impl[64] = "";
	int nid = acc->cipher_nid ? acc->cipher_nid(c) : 0;
	const void *prov = acc->cipher_provider ? acc->cipher_provider(c) : NULL;
	struct ct_evp_facts f = {
		.has_engine = engine != NULL,
		.engine_id = engine && acc->engine_id ? acc->engine_id(engine) : NULL,
		.has_provider = prov != NULL,
		.key_len = key_len,
		.dir = dir,
		.requested_engine = ct_g.requested_engine,
	};
	if (!engine && prov) {
		f.route_aesni = ct_route_is_ours(c);
		if (!f.route_aesni)
			f.kernel_route = (uint8_t)ct_route_kernel_impl(c, kernel_impl, sizeof(kernel_impl));
		f.kernel_impl = kernel_impl;
		f.provider_name = acc->provider_name ? acc->provider_name(prov) : NULL;
	}
	ENGINE *e = NULL;
	if (!engine && !prov && acc->cipher_engine && nid) {
		e = acc->cipher_engine(nid);
		f.default_engine = e && acc->engine_id ? acc->engine_id(e) : NULL;
		if (e && !f.default_engine)
			f.default_engine = "?";
	}
	f.cipher_name = acc->cipher_name ? acc->cipher_name(c) : NULL;
	/* OpenSSL 1.1 and BoringSSL have no EVP_CIPHER_get0_name: the NID's long name is the one
	 * 3.x's fetched ciphers carry ("aes-256-gcm"; the short name is "id-aes256-GCM") */
	if (!f.cipher_name && acc->nid2ln && nid)
		f.cipher_name = acc->nid2ln(nid);
	/* ... and where the name came from another accessor as the short one (BoringSSL beside
	 * OpenSSL in one process), the long name too */
	if (f.cipher_name && strncmp(f.cipher_name, "id-", 3) == 0 && acc->nid2ln && nid) {
		const char *ln = acc->nid2ln(nid);
		f.cipher_name = ln && *ln ? ln : f.cipher_name;
	}
	/* no provider, no engine: BoringSSL's own code, named with its AES level */
	if (!engine && !prov && !f.default_engine)
		f.builtin_impl = ct_boringssl_impl(c, f.cipher_name);
	struct ct_evp_class cls;
	ct_evp_classify(&f, &cls);
	if (e && acc->engine_finish)
		acc->engine_finish(e); /* ENGINE_get_cipher_engine took a reference */
	return ct_path_intern_here(&cls.key);
}

static uint8_t dir_of(const struct evp_accessors *acc, EVP_CIPHER_CTX *ctx, int enc)
{
	if (enc == 1)
		return CT_DIR_ENCRYPT;
	if (enc == 0)
		return CT_DIR_DECRYPT;
	int e = acc->ctx_encrypting ? acc->ctx_encrypting(ctx) : -1;
	return e == 1 ? CT_DIR_ENCRYPT : e == 0 ? CT_DIR_DECRYPT : CT_DIR_UNKNOWN;
}

/* The path of a freshly initialised ctx, through the per-thread cache. */
static uint32_t classify(struct ct_thread *t, EVP_CIPHER_CTX *ctx, const EVP_CIPHER *arg, ENGINE *engine,
			 int enc)
{
	struct evp_accessors scratch;
	const struct evp_accessors *acc = evp_accessors(&scratch);
	const EVP_CIPHER *c = acc->ctx_cipher ? acc->ctx_cipher(ctx) : NULL;
	if (!c)
		c = arg;
	if (!c)
		return CT_NO_PATH;
	int key_len = acc->ctx_key_length ? acc->ctx_key_length(ctx) : 0;
	uint8_t dir = dir_of(acc, ctx, enc);
	uint32_t gen = atomic_load_explicit(&ct_g.classify_gen, memory_order_relaxed);
	for (unsigned i = 0; i < sizeof(t->cls) / sizeof(t->cls[0]); i++) {
		if (t->cls[i].cipher == c && t->cls[i].engine == engine && t->cls[i].key_len == key_len &&
		    t->cls[i].dir == dir && t->cls[i].gen == gen && t->cls[i].path != CT_NO_PATH)
			return t->cls[i].path;
	}
	uint32_t id = classify_uncached(acc, c, engine, key_len, dir);
	unsigned slot = t->cls_next++ % (sizeof(t->cls) / sizeof(t->cls[0]));
	t->cls[slot].cipher = c;
	t->cls[slot].engine = engine;
	t->cls[slot].key_len = key_len;
	t->cls[slot].dir = dir;
	t->cls[slot].gen = gen;
	t->cls[slot].path = id;
	return id;
}

uint32_t ct_evp_classify_unseen(EVP_CIPHER_CTX *ctx)
{
	struct ct_thread *t = ct_thread_get();
	if (!t)
		return CT_NO_PATH;
	uint32_t guard = ct_guard_all(t);
	uint32_t id = classify(t, ctx, NULL, NULL, -1);
	if (id != CT_NO_PATH)
		ct_ctxmap_set(ctx, id);
	ct_guard_restore(t, guard);
	return id;
}

static unsigned failure_callsites; /* failures with a stack capture so far (bounded: unwinding is slow) */

static void record_failure(const char *call, uint32_t path, int64_t ret)
{
	bool site = __atomic_fetch_add(&failure_callsites, 1, __ATOMIC_RELAXED) < 256;
	ct_event(CT_EV_CALL_FAILED, call, 0, ret, path, site, NULL);
}

/* Usage patterns of a path's contexts (ct_path_mark_usage), each recorded once per path as a
 * CT_EV_CTX_USAGE event: what the report needs to say which protocol drives a path. */
#define USAGE_IV_REINIT (1u << 0)  /* IV-only re-inits: a nonce per message (TLS 1.3 records) */
#define USAGE_TLS1_AAD (1u << 1)   /* EVP_CTRL_AEAD_TLS1_AAD: TLS 1.0-1.2 AEAD records */
#define USAGE_IV_FIXED (1u << 2)   /* EVP_CTRL_GCM_SET_IV_FIXED: TLS 1.2 GCM key block */
#define USAGE_SET_IVLEN (1u << 3)  /* EVP_CTRL_AEAD_SET_IVLEN */
#define USAGE_MAC_KEY (1u << 4)    /* EVP_CTRL_AEAD_SET_MAC_KEY: a TLS CBC-HMAC composite */
#define USAGE_MULTIBLOCK (1u << 5) /* EVP_CTRL_TLS1_1_MULTIBLOCK_ENCRYPT: libssl's multi-block writes */

static void note_usage(uint32_t path, uint32_t bit, const char *call, const char *what)
{
	if (path != CT_NO_PATH && ct_path_mark_usage(path, bit))
		ct_event(CT_EV_CTX_USAGE, call, 0, 1, path, false, "%s", what);
}

/* After a real init returned: map ctx to its path, and count a set-up (an init naming a cipher)
 * at its call site, ra being where the program called the init. The guard is fully raised
 * meanwhile so that libcrypto functions we call cannot re-enter our hooks. Returns ctx's path. */
static uint32_t after_init(struct ct_thread *t, const char *call, EVP_CIPHER_CTX *ctx,
			   const EVP_CIPHER *cipher, ENGINE *engine, int enc, int ret, bool key_given,
			   bool iv_given, const void *ra)
{
	uint32_t guard = ct_guard_all(t);
	uint32_t id;
	atomic_fetch_add_explicit(&ct_g.hooked_calls_slow, 1, memory_order_relaxed);
	if (ret != 1) {
		record_failure(call, id = ct_ctxmap_get(ctx), ret);
	} else if (!cipher && !engine) {
		/* key/IV (re)set on an initialised ctx: keep its path, follow a direction change */
		id = ct_evp_ctx_path(t, ctx);
		if (id == CT_NO_PATH) {
			ct_ctxmap_set(ctx, id = classify(t, ctx, NULL, NULL, enc));
		} else if (enc == 0 || enc == 1) {
			uint8_t dir = enc ? CT_DIR_ENCRYPT : CT_DIR_DECRYPT;
			if (ct_path_dir(id) != dir)
				ct_ctxmap_set(ctx, id = ct_path_variant(id, dir, ct_path_entry(id)));
		}
		if (iv_given && !key_given)
			note_usage(id, USAGE_IV_REINIT, call, "iv-reinit: a new IV per message, same key");
	} else {
		id = classify(t, ctx, cipher, engine, enc);
		ct_ctxmap_set(ctx, id);
		if (id != CT_NO_PATH)
			ct_event_at_site(CT_EV_CONTEXT, call, id, (uintptr_t)ra, NULL);
	}
	ct_guard_restore(t, guard);
	return id;
}

/* The arguments of the nine init entry points (the ones an entry point lacks are NULL, or enc
 * what the entry point means: 1, 0, or the caller's). */
struct init_call {
	const char *name;
	EVP_CIPHER_CTX *ctx;
	const EVP_CIPHER *cipher;
	ENGINE *impl;
	const unsigned char *key, *iv;
	int enc;
	const OSSL_PARAM *params;
};

/* A re-init (no cipher, no engine) after which after_init would do nothing: it succeeded, on the
 * thread's cached context (its path known), keeping its direction, and an IV-only re-init's
 * usage mark is set already. The common case: a message's re-init with its key or IV. */
static bool reinit_noted(struct ct_thread *t, const struct init_call *c, int ret)
{
	if (ret != 1 || !ct_evp_hot_ctx_is(t, c->ctx))
		return false;
	if ((c->enc == 0 || c->enc == 1) &&
	    ct_path_dir(t->hot_path) != (c->enc ? CT_DIR_ENCRYPT : CT_DIR_DECRYPT))
		return false;
	return !c->iv || c->key || ct_path_usage_seen(t->hot_path, USAGE_IV_REINIT);
}

enum init_form { INIT_PLAIN, INIT_EX, INIT_EX2 }; /* (ctx, cipher, key, iv[, enc]), + impl, + params */

/* The real init, with the signature of its form and direction. */
static int init_run(void *real, enum init_form form, bool has_enc, const struct init_call *c)
{
	typedef const unsigned char *u8p;
	switch (form) {
	case INIT_EX:
		return has_enc ? ((int (*)(EVP_CIPHER_CTX *, const EVP_CIPHER *, ENGINE *, u8p, u8p,
					   int))real)(c->ctx, c->cipher, c->impl, c->key, c->iv, c->enc)
			       : ((int (*)(EVP_CIPHER_CTX *, const EVP_CIPHER *, ENGINE *, u8p, u8p))real)(
					 c->ctx, c->cipher, c->impl, c->key, c->iv);
	case INIT_EX2:
		return has_enc ? ((int (*)(EVP_CIPHER_CTX *, const EVP_CIPHER *, u8p, u8p, int,
					   const OSSL_PARAM *))real)(c->ctx, c->cipher, c->key, c->iv, c->enc,
								     c->params)
			       : ((int (*)(EVP_CIPHER_CTX *, const EVP_CIPHER *, u8p, u8p,
					   const OSSL_PARAM *))real)(c->ctx, c->cipher, c->key, c->iv,
								     c->params);
	default:
		return has_enc ? ((int (*)(EVP_CIPHER_CTX *, const EVP_CIPHER *, u8p, u8p, int))real)(
					 c->ctx, c->cipher, c->key, c->iv, c->enc)
			       : ((int (*)(EVP_CIPHER_CTX *, const EVP_CIPHER *, u8p, u8p))real)(
					 c->ctx, c->cipher, c->key, c->iv);
	}
}

/*
 * Every init. One naming a cipher (or an engine) sets a context up: routed (CRYPTRACE_ROUTE swaps
 * in the provider's cipher), classified, and timed alone (microseconds: a fetch, the provider's
 * context, the key schedule), as a key set-up when a key is given; our classification must not
 * fall inside a span, so the span ends here. One on a context already set up is a phase of the
 * path's work: a key set (a key schedule) or a message's IV. ra: where the program called.
 */
static int init_hook(void *real, enum init_form form, bool has_enc, struct init_call *c, const void *ra)
{
	if (CT_UNLIKELY(!real)) {
		errno = ENOSYS;
		return 0;
	}
	struct ct_thread *t = ct_thread_fast();
	if (!t || !ct_enter_fast(t, CT_FAM_EVP))
		return init_run(real, form, has_enc, c);
	int r, e;
	if (c->cipher || c->impl) {
		if (c->cipher) {
			uint32_t route, guard = ct_guard_all(t);
			const EVP_CIPHER *sub = ct_route_evp_cipher(c->cipher, c->impl, c->enc, &route);
			ct_guard_restore(t, guard);
			if (sub)
				c->cipher = sub;
		}
		ct_span_interrupt(t);
		uint64_t t0 = ct_clock_now();
		const bool lanes = ct_lane_possible();
		if (lanes)
			ct_lane_capture_begin();
		r = init_run(real, form, has_enc, c);
		void *lane = lanes ? ct_lane_capture_end() : NULL;
		uint64_t t1 = ct_clock_now();
		e = errno;
		uint32_t id = after_init(t, c->name, c->ctx, c->cipher, c->impl, c->enc, r, c->key != NULL,
					 c->iv != NULL, ra);
		if (lanes)
			ct_evp_lane_learn(t, c->ctx, r == 1 ? lane : NULL);
		if (r == 1 && id != CT_NO_PATH)
			ct_probe_once(t, id, CT_CELL_PHASE(c->key ? CT_PHASE_KEY : CT_PHASE_INIT), 0, t0, t1);
	} else {
		struct ct_timed tm = { .what = 0 };
		if (c->key || c->iv)
			ct_evp_phase_begin(t, c->ctx, c->key ? CT_PHASE_KEY : CT_PHASE_MSG, 0, &tm);
		/* a routed context's re-init: the provider's init, straight (route/lane.h) */
		const bool lanes = ct_lane_possible();
		void *lane = lanes && !c->params ? ct_evp_ctx_lane(t, c->ctx) : NULL;
		r = lane ? ct_lane_init(lane, c->key, c->iv, c->enc) : CT_LANE_PASS;
		bool learn = lanes && r == CT_LANE_PASS;
		if (r == CT_LANE_PASS) {
			if (learn)
				ct_lane_capture_begin();
			r = init_run(real, form, has_enc, c);
			lane = learn ? ct_lane_capture_end() : NULL;
		} else {
			ct_owned_inc(&t->lane_calls);
		}
		ct_timed_end(t, &tm);
		e = errno;
		if (!reinit_noted(t, c, r))
			after_init(t, c->name, c->ctx, NULL, NULL, c->enc, r, c->key != NULL, c->iv != NULL,
				   ra);
		if (learn)
			ct_evp_lane_learn(t, c->ctx, r == 1 ? lane : NULL);
	}
	ct_leave_fast(t, CT_FAM_EVP);
	errno = e;
	return r;
}

#define RA() __builtin_return_address(0)

CT_EXPORT int EVP_CipherInit(EVP_CIPHER_CTX *ctx, const EVP_CIPHER *cipher, const unsigned char *key,
			     const unsigned char *iv, int enc)
{
	CT_PASS_FOREIGN(EVP_CipherInit, ctx, cipher, key, iv, enc);
	struct init_call c = { "EVP_CipherInit", ctx, cipher, NULL, key, iv, enc, NULL };
	return init_hook(CT_REAL(EVP_CipherInit), INIT_PLAIN, true, &c, RA());
}

CT_EXPORT int EVP_CipherInit_ex(EVP_CIPHER_CTX *ctx, const EVP_CIPHER *cipher, ENGINE *impl,
				const unsigned char *key, const unsigned char *iv, int enc)
{
	CT_PASS_FOREIGN(EVP_CipherInit_ex, ctx, cipher, impl, key, iv, enc);
	struct init_call c = { "EVP_CipherInit_ex", ctx, cipher, impl, key, iv, enc, NULL };
	return init_hook(CT_REAL(EVP_CipherInit_ex), INIT_EX, true, &c, RA());
}

CT_EXPORT int EVP_CipherInit_ex2(EVP_CIPHER_CTX *ctx, const EVP_CIPHER *cipher, const unsigned char *key,
				 const unsigned char *iv, int enc, const OSSL_PARAM params[])
{
	CT_PASS_FOREIGN(EVP_CipherInit_ex2, ctx, cipher, key, iv, enc, params);
	struct init_call c = { "EVP_CipherInit_ex2", ctx, cipher, NULL, key, iv, enc, params };
	return init_hook(CT_REAL(EVP_CipherInit_ex2), INIT_EX2, true, &c, RA());
}

CT_EXPORT int EVP_EncryptInit(EVP_CIPHER_CTX *ctx, const EVP_CIPHER *cipher, const unsigned char *key,
			      const unsigned char *iv)
{
	CT_PASS_FOREIGN(EVP_EncryptInit, ctx, cipher, key, iv);
	struct init_call c = { "EVP_EncryptInit", ctx, cipher, NULL, key, iv, 1, NULL };
	return init_hook(CT_REAL(EVP_EncryptInit), INIT_PLAIN, false, &c, RA());
}

CT_EXPORT int EVP_EncryptInit_ex(EVP_CIPHER_CTX *ctx, const EVP_CIPHER *cipher, ENGINE *impl,
				 const unsigned char *key, const unsigned char *iv)
{
	CT_PASS_FOREIGN(EVP_EncryptInit_ex, ctx, cipher, impl, key, iv);
	struct init_call c = { "EVP_EncryptInit_ex", ctx, cipher, impl, key, iv, 1, NULL };
	return init_hook(CT_REAL(EVP_EncryptInit_ex), INIT_EX, false, &c, RA());
}

CT_EXPORT int EVP_EncryptInit_ex2(EVP_CIPHER_CTX *ctx, const EVP_CIPHER *cipher, const unsigned char *key,
				  const unsigned char *iv, const OSSL_PARAM params[])
{
	CT_PASS_FOREIGN(EVP_EncryptInit_ex2, ctx, cipher, key, iv, params);
	struct init_call c = { "EVP_EncryptInit_ex2", ctx, cipher, NULL, key, iv, 1, params };
	return init_hook(CT_REAL(EVP_EncryptInit_ex2), INIT_EX2, false, &c, RA());
}

CT_EXPORT int EVP_DecryptInit(EVP_CIPHER_CTX *ctx, const EVP_CIPHER *cipher, const unsigned char *key,
			      const unsigned char *iv)
{
	CT_PASS_FOREIGN(EVP_DecryptInit, ctx, cipher, key, iv);
	struct init_call c = { "EVP_DecryptInit", ctx, cipher, NULL, key, iv, 0, NULL };
	return init_hook(CT_REAL(EVP_DecryptInit), INIT_PLAIN, false, &c, RA());
}

CT_EXPORT int EVP_DecryptInit_ex(EVP_CIPHER_CTX *ctx, const EVP_CIPHER *cipher, ENGINE *impl,
				 const unsigned char *key, const unsigned char *iv)
{
	CT_PASS_FOREIGN(EVP_DecryptInit_ex, ctx, cipher, impl, key, iv);
	struct init_call c = { "EVP_DecryptInit_ex", ctx, cipher, impl, key, iv, 0, NULL };
	return init_hook(CT_REAL(EVP_DecryptInit_ex), INIT_EX, false, &c, RA());
}

CT_EXPORT int EVP_DecryptInit_ex2(EVP_CIPHER_CTX *ctx, const EVP_CIPHER *cipher, const unsigned char *key,
				  const unsigned char *iv, const OSSL_PARAM params[])
{
	CT_PASS_FOREIGN(EVP_DecryptInit_ex2, ctx, cipher, key, iv, params);
	struct init_call c = { "EVP_DecryptInit_ex2", ctx, cipher, NULL, key, iv, 0, params };
	return init_hook(CT_REAL(EVP_DecryptInit_ex2), INIT_EX2, false, &c, RA());
}

/* ---- final, context life cycle, fetch ----------------------------------------------------- */

typedef int (*final_fn)(EVP_CIPHER_CTX *, unsigned char *, int *);

/* Which final a hook is: its direction for the direct lane (1 encrypt, 0 decrypt), or a Cipher
 * final, the ctx's (the plain one or the _ex one: its real Encrypt or Decrypt final differs). */
enum final_form { DECRYPT_FINAL = 0, ENCRYPT_FINAL = 1, CIPHER_FINAL, CIPHER_FINAL_EX };

/* The real function a final runs: for a Cipher final the Encrypt or Decrypt one that libcrypto's
 * would pass ctx to, chosen as it chooses (evp_data.c, ct_evp_direction_fn: without the round
 * trip through our hooks), or the Cipher final itself where the direction cannot be asked. Asked
 * only when the real function runs (not where the direct lane serves the final). */
static __attribute__((noinline)) final_fn cipher_final_real(final_fn real, enum final_form form,
							    EVP_CIPHER_CTX *ctx)
{
	const ct_direction_fn encrypting = ct_evp_direction_fn();
	if (!encrypting)
		return real;
	final_fn own;
	if (encrypting(ctx))
		own = form == CIPHER_FINAL_EX ? CT_REAL(EVP_EncryptFinal_ex) : CT_REAL(EVP_EncryptFinal);
	else
		own = form == CIPHER_FINAL_EX ? CT_REAL(EVP_DecryptFinal_ex) : CT_REAL(EVP_DecryptFinal);
	return own ? own : real;
}

static inline final_fn final_real(final_fn real, enum final_form form, EVP_CIPHER_CTX *ctx)
{
	return form >= CIPHER_FINAL ? cipher_final_real(real, form, ctx) : real;
}

/* A final: a phase of the operation (CBC's padding block, an AEAD's tag), and the end of a
 * message; failures noted (a bad decrypt is the usual one). */
static int final_hook(const char *name, final_fn real, enum final_form form, EVP_CIPHER_CTX *ctx,
		      unsigned char *out, int *outl)
{
	if (CT_UNLIKELY(!real)) {
		errno = ENOSYS;
		return 0;
	}
	const int dir = form >= CIPHER_FINAL ? -1 : (int)form;
	struct ct_thread *t = ct_thread_fast();
	if (!t || !ct_enter_fast(t, CT_FAM_EVP))
		return final_real(real, form, ctx)(ctx, out, outl);
	struct ct_timed tm;
	ct_evp_phase_begin(t, ctx, CT_PHASE_FINAL, 0, &tm);
	void *lane = ct_lane_possible() ? ct_evp_ctx_lane(t, ctx) : NULL;
	int r = lane ? ct_lane_final(lane, dir, out, outl) : CT_LANE_PASS;
	if (r == CT_LANE_PASS)
		r = final_real(real, form, ctx)(ctx, out, outl);
	else
		ct_owned_inc(&t->lane_calls);
	ct_timed_end(t, &tm);
	if (CT_UNLIKELY(r != 1)) {
		struct ct_quiet q = ct_quiet_begin(t);
		record_failure(name, ct_ctxmap_get(ctx), r);
		ct_quiet_end(t, q);
	}
	ct_leave_fast(t, CT_FAM_EVP);
	return r;
}

CT_EXPORT int EVP_EncryptFinal(EVP_CIPHER_CTX *ctx, unsigned char *out, int *outl)
{
	CT_PASS_FOREIGN(EVP_EncryptFinal, ctx, out, outl);
	return final_hook("EVP_EncryptFinal", CT_REAL(EVP_EncryptFinal), ENCRYPT_FINAL, ctx, out, outl);
}

CT_EXPORT int EVP_EncryptFinal_ex(EVP_CIPHER_CTX *ctx, unsigned char *out, int *outl)
{
	CT_PASS_FOREIGN(EVP_EncryptFinal_ex, ctx, out, outl);
	return final_hook("EVP_EncryptFinal_ex", CT_REAL(EVP_EncryptFinal_ex), ENCRYPT_FINAL, ctx, out, outl);
}

CT_EXPORT int EVP_DecryptFinal(EVP_CIPHER_CTX *ctx, unsigned char *out, int *outl)
{
	CT_PASS_FOREIGN(EVP_DecryptFinal, ctx, out, outl);
	return final_hook("EVP_DecryptFinal", CT_REAL(EVP_DecryptFinal), DECRYPT_FINAL, ctx, out, outl);
}

CT_EXPORT int EVP_DecryptFinal_ex(EVP_CIPHER_CTX *ctx, unsigned char *out, int *outl)
{
	CT_PASS_FOREIGN(EVP_DecryptFinal_ex, ctx, out, outl);
	return final_hook("EVP_DecryptFinal_ex", CT_REAL(EVP_DecryptFinal_ex), DECRYPT_FINAL, ctx, out, outl);
}

CT_EXPORT int EVP_CipherFinal(EVP_CIPHER_CTX *ctx, unsigned char *out, int *outl)
{
	CT_PASS_FOREIGN(EVP_CipherFinal, ctx, out, outl);
	return final_hook("EVP_CipherFinal", CT_REAL(EVP_CipherFinal), CIPHER_FINAL, ctx, out, outl);
}

CT_EXPORT int EVP_CipherFinal_ex(EVP_CIPHER_CTX *ctx, unsigned char *out, int *outl)
{
	CT_PASS_FOREIGN(EVP_CipherFinal_ex, ctx, out, outl);
	return final_hook("EVP_CipherFinal_ex", CT_REAL(EVP_CipherFinal_ex), CIPHER_FINAL_EX, ctx, out, outl);
}

CT_EXPORT EVP_CIPHER_CTX *EVP_CIPHER_CTX_new(void)
{
	CT_PASS_FOREIGN(EVP_CIPHER_CTX_new);
	__typeof__(&EVP_CIPHER_CTX_new) real = CT_REAL(EVP_CIPHER_CTX_new);
	if (CT_UNLIKELY(!real)) {
		errno = ENOSYS;
		return NULL;
	}
	EVP_CIPHER_CTX *ctx = real();
	int e = errno;
	if (ctx && ct_ready())
		ct_ctxmap_del(ctx); /* an address reused without our seeing the free */
	errno = e;
	return ctx;
}

CT_EXPORT void EVP_CIPHER_CTX_free(EVP_CIPHER_CTX *ctx)
{
	CT_PASS_FOREIGN_VOID(EVP_CIPHER_CTX_free, ctx);
	__typeof__(&EVP_CIPHER_CTX_free) real = CT_REAL(EVP_CIPHER_CTX_free);
	if (ctx && ct_ready()) {
		/* our own bookkeeping follows: a span ends here (unless inside an EVP call of ours) */
		struct ct_thread *t = ct_thread_self();
		if (t && !(t->guard & (1u << CT_FAM_EVP)))
			ct_span_interrupt(t);
		ct_ctxmap_del(ctx);
		/* a burst of work often ends by freeing its contexts, and an idle process makes no
		 * timed call: a snapshot that fell due in the burst is written here, not at exit */
		int e = errno;
		ct_flush_due(ct_clock_now());
		errno = e;
	}
	if (real)
		real(ctx);
}

CT_EXPORT int EVP_CIPHER_CTX_reset(EVP_CIPHER_CTX *ctx)
{
	CT_PASS_FOREIGN(EVP_CIPHER_CTX_reset, ctx);
	__typeof__(&EVP_CIPHER_CTX_reset) real = CT_REAL(EVP_CIPHER_CTX_reset);
	if (CT_UNLIKELY(!real)) {
		errno = ENOSYS;
		return 0;
	}
	struct ct_thread *t = ct_thread_fast();
	/* a reset inside an init (EVP_CipherInit) is followed by the classification of that init */
	if (!t || !ct_enter_fast(t, CT_FAM_EVP))
		return real(ctx);
	ct_ctxmap_del(ctx);
	int r = real(ctx);
	ct_leave_fast(t, CT_FAM_EVP);
	return r;
}

CT_EXPORT int EVP_CIPHER_CTX_copy(EVP_CIPHER_CTX *out, const EVP_CIPHER_CTX *in)
{
	CT_PASS_FOREIGN(EVP_CIPHER_CTX_copy, out, in);
	__typeof__(&EVP_CIPHER_CTX_copy) real = CT_REAL(EVP_CIPHER_CTX_copy);
	if (CT_UNLIKELY(!real)) {
		errno = ENOSYS;
		return 0;
	}
	struct ct_thread *t = ct_thread_fast();
	if (!t || !ct_enter_fast(t, CT_FAM_EVP))
		return real(out, in);
	int r = real(out, in);
	int e = errno;
	if (r == 1)
		ct_ctxmap_set(out, ct_ctxmap_get(in));
	ct_leave_fast(t, CT_FAM_EVP);
	errno = e;
	return r;
}

/* The ctrls that are part of a cipher operation (enum ct_phase), -1 for the others (queries,
 * settings: passed through uncounted). SET_TAG without a tag sets the tag's length (CCM, OCB):
 * a setting. */
static int ctrl_phase(int type, const void *ptr)
{
	switch (type) {
	case EVP_CTRL_AEAD_GET_TAG:
		return CT_PHASE_TAG;
	case EVP_CTRL_AEAD_SET_TAG:
		return ptr ? CT_PHASE_TAG : -1;
	case EVP_CTRL_AEAD_SET_IVLEN:
	case EVP_CTRL_GCM_SET_IV_FIXED:
	case EVP_CTRL_GCM_IV_GEN:
	case EVP_CTRL_GCM_SET_IV_INV:
	case EVP_CTRL_TLS1_1_MULTIBLOCK_AAD:
		return CT_PHASE_MSG;
	case EVP_CTRL_AEAD_TLS1_AAD:
		return CT_PHASE_AAD;
	default:
		return -1;
	}
}

/*
 * libssl's multi-block write (TLS 1.2 with a stitched aes-cbc-hmac-sha cipher, no
 * encrypt-then-MAC, a write of 64 KiB or more): one ctrl seals param->interleave records at once
 * and returns their length on the wire. Counted as one data call of its own entry (EVP ctrl
 * multi-block) on ctx's path, its bytes what EVP_Cipher would have been given for those records
 * one by one (explicit IV, payload, MAC and padding: the wire length without the 5-byte record
 * headers), so that a transfer counts the same whichever way libssl wrote it. Timed alone,
 * every time (tens of microseconds; the count is only known after the call).
 */
static int multiblock_encrypt(struct ct_thread *t, __typeof__(&EVP_CIPHER_CTX_ctrl) real, EVP_CIPHER_CTX *ctx,
			      int type, int arg, void *ptr)
{
	const EVP_CTRL_TLS1_1_MULTIBLOCK_PARAM *mb = ptr;
	uint32_t id = ct_ctxmap_get(ctx);
	if (id == CT_NO_PATH || !mb)
		return real(ctx, type, arg, ptr);
	uint32_t guard = ct_guard_all(t);
	uint32_t path = ct_path_variant(id, ct_path_dir(id), CT_ENTRY_EVP_MULTIBLOCK);
	ct_guard_restore(t, guard);
	if (path == CT_NO_PATH)
		return real(ctx, type, arg, ptr);
	const uint64_t records = mb->interleave;
	ct_span_interrupt(t);
	uint64_t t0 = ct_clock_now();
	int r = real(ctx, type, arg, ptr);
	uint64_t t1 = ct_clock_now();
	int e = errno;
	uint64_t sealed = r > 0 && (uint64_t)r > 5 * records ? (uint64_t)r - 5 * records : 0;
	ct_probe_once(t, path, ct_cell_of_size(sealed), sealed, t0, t1);
	if (r <= 0) {
		struct ct_counters *c = ct_counters_of(t, path);
		if (c)
			CT_ADD(c->errors, 1);
	}
	errno = e;
	return r;
}

/* The real ctrl, or the direct lane's answer for a routed context (route/lane.h). */
static int ctrl_run(struct ct_thread *t, __typeof__(&EVP_CIPHER_CTX_ctrl) real, EVP_CIPHER_CTX *ctx, int type,
		    int arg, void *ptr)
{
	void *lane = ct_lane_possible() && ct_lane_ctrl_type(type) ? ct_evp_ctx_lane(t, ctx) : NULL;
	int r = lane ? ct_lane_ctrl(lane, type, arg, ptr) : CT_LANE_PASS;
	if (r == CT_LANE_PASS)
		return real(ctx, type, arg, ptr);
	ct_owned_inc(&t->lane_calls);
	return r;
}

CT_EXPORT int EVP_CIPHER_CTX_ctrl(EVP_CIPHER_CTX *ctx, int type, int arg, void *ptr)
{
	CT_PASS_FOREIGN(EVP_CIPHER_CTX_ctrl, ctx, type, arg, ptr);
	__typeof__(&EVP_CIPHER_CTX_ctrl) real = CT_REAL(EVP_CIPHER_CTX_ctrl);
	if (CT_UNLIKELY(!real)) {
		errno = ENOSYS;
		return 0;
	}
	struct ct_thread *t = ct_thread_fast();
	if (!t || !ct_enter_fast(t, CT_FAM_EVP))
		return real(ctx, type, arg, ptr);
	int r;
	int phase = ctrl_phase(type, ptr);
	if (type == EVP_CTRL_TLS1_1_MULTIBLOCK_ENCRYPT) {
		r = multiblock_encrypt(t, real, ctx, type, arg, ptr);
	} else if (phase >= 0) {
		/* TLS1_AAD carries the record's 13 AAD bytes (arg) and starts a record */
		uint64_t bytes = phase == CT_PHASE_AAD && arg > 0 ? (uint64_t)arg : 0;
		struct ct_timed tm;
		ct_evp_phase_begin(t, ctx, (enum ct_phase)phase, bytes, &tm);
		r = ctrl_run(t, real, ctx, type, arg, ptr);
		ct_timed_end(t, &tm);
		if (type == EVP_CTRL_AEAD_TLS1_AAD) {
			uint32_t path;
			struct ct_counters *c = ct_evp_ctx_counters(t, ctx, &path);
			if (c)
				CT_ADD(c->tls_records, 1);
		}
	} else {
		r = ctrl_run(t, real, ctx, type, arg, ptr);
	}
	/* the ctrls that tell a TLS record layer apart (which version, which construction) */
	uint32_t bit = 0;
	const char *what = NULL;
	switch (type) {
	case EVP_CTRL_AEAD_TLS1_AAD:
		bit = USAGE_TLS1_AAD, what = "ctrl=AEAD_TLS1_AAD: TLS 1.0-1.2 AEAD records";
		break;
	case EVP_CTRL_GCM_SET_IV_FIXED:
		bit = USAGE_IV_FIXED, what = "ctrl=GCM_SET_IV_FIXED: TLS 1.2 GCM key block";
		break;
	case EVP_CTRL_AEAD_SET_IVLEN:
		bit = USAGE_SET_IVLEN, what = "ctrl=AEAD_SET_IVLEN";
		break;
	case EVP_CTRL_AEAD_SET_MAC_KEY:
		bit = USAGE_MAC_KEY, what = "ctrl=AEAD_SET_MAC_KEY: TLS CBC-HMAC composite";
		break;
	case EVP_CTRL_TLS1_1_MULTIBLOCK_ENCRYPT:
		bit = USAGE_MULTIBLOCK,
		what = "ctrl=TLS1_1_MULTIBLOCK_ENCRYPT: TLS 1.2 multi-block writes (stitched CBC-HMAC)";
		break;
	}
	if (bit && r > 0) {
		const uint32_t path = ct_evp_ctx_path(t, ctx);
		if (!ct_path_usage_seen(path, bit) && ct_ready()) {
			struct ct_quiet q = ct_quiet_begin(t);
			note_usage(path, bit, "EVP_CIPHER_CTX_ctrl", what);
			ct_quiet_end(t, q);
		}
	}
	ct_leave_fast(t, CT_FAM_EVP);
	return r;
}

CT_EXPORT EVP_CIPHER *EVP_CIPHER_fetch(OSSL_LIB_CTX *libctx, const char *algorithm, const char *properties)
{
	CT_PASS_FOREIGN(EVP_CIPHER_fetch, libctx, algorithm, properties);
	__typeof__(&EVP_CIPHER_fetch) real = CT_REAL(EVP_CIPHER_fetch);
	if (CT_UNLIKELY(!real)) {
		errno = ENOSYS;
		return NULL;
	}
	struct ct_thread *t = ct_thread_fast();
	if (!t || !ct_enter_fast(t, CT_FAM_EVP))
		return real(libctx, algorithm, properties);
	EVP_CIPHER *c = real(libctx, algorithm, properties);
	struct ct_quiet q = ct_quiet_begin(t);
	struct evp_accessors scratch;
	const struct evp_accessors *acc = evp_accessors(&scratch);
	const void *prov = c && acc->cipher_provider ? acc->cipher_provider(c) : NULL;
	const char *pname = prov && acc->provider_name ? acc->provider_name(prov) : NULL;
	atomic_fetch_add_explicit(&ct_g.hooked_calls_slow, 1, memory_order_relaxed);
	ct_event(CT_EV_CIPHER_FETCH, "EVP_CIPHER_fetch", 0, c != NULL, CT_NO_PATH, !c,
		 "name=%s props=%s provider=%s", algorithm ? algorithm : "", properties ? properties : "",
		 pname ? pname : "-");
	ct_quiet_end(t, q);
	ct_leave_fast(t, CT_FAM_EVP);
	return c;
}
