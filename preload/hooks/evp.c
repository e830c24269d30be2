/* SPDX-License-Identifier: MIT */
/*
 * evp.c - the EVP cipher life cycle. A context is classified once, at init, into a path (api evp,
 * the provider or engine that serves it, cipher, key bits, direction); its data calls then cost a
 * ctxmap lookup and a few counter bumps. The entry the program uses for data (EVP_*Update or the
 * raw EVP_Cipher) is part of the path: it is attached at the first data call as a path variant.
 * Every libcrypto accessor is resolved at run time (OpenSSL 3 names first, then 1.1 names).
 */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <stdio.h>
#include <string.h>

#include <openssl/engine.h>
#include <openssl/evp.h>

#include "classify.h"
#include "ctxmap.h"
#include "internal.h"
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
	const char *(*nid2sn)(int);
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
	a->nid2sn = resolve2("OBJ_nid2sn", NULL);
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
static uint32_t classify_uncached(const struct evp_accessors *acc, const EVP_CIPHER *c,
				  ENGINE *engine, int key_len, uint8_t dir)
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
	if (!f.cipher_name && acc->nid2sn && nid)
		f.cipher_name = acc->nid2sn(nid);
	struct ct_evp_class cls;
	ct_evp_classify(&f, &cls);
	if (e && acc->engine_finish)
		acc->engine_finish(e); /* ENGINE_get_cipher_engine took a reference */
	uint32_t id = ct_path_intern(&cls.key);
	if (id != CT_NO_PATH && !ct_path_has_callsite(id)) {
		char site[1024];
		ct_callsite(site, sizeof(site), 0);
		ct_path_set_callsite(id, site);
	}
	return id;
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
static uint32_t classify(struct ct_thread *t, EVP_CIPHER_CTX *ctx, const EVP_CIPHER *arg, ENGINE *engine, int enc)
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

static unsigned failure_callsites; /* failures with a stack capture so far (bounded: unwinding is slow) */

static void record_failure(const char *call, uint32_t path, int64_t ret)
{
	bool site = __atomic_fetch_add(&failure_callsites, 1, __ATOMIC_RELAXED) < 256;
	ct_event(CT_EV_CALL_FAILED, call, 0, ret, path, site, NULL);
}

/* Usage patterns of a path's contexts (ct_path_mark_usage), each recorded once per path as a
 * CT_EV_CTX_USAGE event: what the report needs to say which protocol drives a path. */
#define USAGE_IV_REINIT (1u << 0) /* IV-only re-inits: a nonce per message (TLS 1.3 records) */
#define USAGE_TLS1_AAD (1u << 1)  /* EVP_CTRL_AEAD_TLS1_AAD: TLS 1.0-1.2 AEAD records */
#define USAGE_IV_FIXED (1u << 2)  /* EVP_CTRL_GCM_SET_IV_FIXED: TLS 1.2 GCM key block */
#define USAGE_SET_IVLEN (1u << 3) /* EVP_CTRL_AEAD_SET_IVLEN */
#define USAGE_MAC_KEY (1u << 4)   /* EVP_CTRL_AEAD_SET_MAC_KEY: a TLS CBC-HMAC composite */
#define USAGE_MULTIBLOCK (1u << 5) /* EVP_CTRL_TLS1_1_MULTIBLOCK_ENCRYPT: libssl's multi-block writes */

static void note_usage(uint32_t path, uint32_t bit, const char *call, const char *what)
{
	if (path != CT_NO_PATH && ct_path_mark_usage(path, bit))
		ct_event(CT_EV_CTX_USAGE, call, 0, 1, path, false, "%s", what);
}

/* After a real init returned: map ctx to its path, and count a set-up (an init naming a cipher)
 * at its call site, ra being where the program called the init. The guard is fully raised
 * meanwhile so that libcrypto functions we call cannot re-enter our hooks. Returns ctx's path. */
static uint32_t after_init(struct ct_thread *t, const char *call, EVP_CIPHER_CTX *ctx, const EVP_CIPHER *cipher,
			   ENGINE *engine, int enc, int ret, bool key_given, bool iv_given, const void *ra)
{
	uint32_t guard = t->guard;
	uint32_t id;
	t->guard = CT_GUARD_ALL;
	atomic_fetch_add_explicit(&ct_g.hooked_calls_slow, 1, memory_order_relaxed);
	if (ret != 1) {
		record_failure(call, id = ct_ctxmap_get(ctx), ret);
	} else if (!cipher && !engine) {
		/* key/IV (re)set on an initialised ctx: keep its path, follow a direction change */
		id = ct_ctxmap_get(ctx);
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
	t->guard = guard;
	return id;
}

/* The counters of ctx's path on this thread (through the data calls' one-entry cache), and the
 * path; NULL for a ctx we never saw initialised. */
static struct ct_counters *ctx_counters(struct ct_thread *t, const EVP_CIPHER_CTX *ctx, uint32_t *path)
{
	if (ctx == t->hot_ctx && t->hot_gen == atomic_load_explicit(&ct_ctxmap_gen, memory_order_relaxed)) {
		*path = t->hot_path;
		return t->hot_c;
	}
	*path = ct_ctxmap_get(ctx);
	return *path == CT_NO_PATH ? NULL : ct_counters_of(t, *path);
}

/* A phase call on ctx (enum ct_phase): counted on ctx's path, then the real call `call`, timed
 * when a sample or a span's end falls on it. `r` receives the real result. */
#define PHASE_CALL(t, ctx, phase, bytes, r, call)                                                 \
	do {                                                                                      \
		uint32_t path_;                                                                   \
		struct ct_counters *c_ = ctx_counters((t), (ctx), &path_);                        \
		const unsigned ci_ = CT_CELL_PHASE(phase);                                        \
		if (c_ && ct_tick((t), c_, ci_, (bytes))) {                                      \
			struct ct_timed tm_;                                                      \
			ct_timed_begin((t), &tm_, c_, path_, ci_, (bytes));                       \
			(r) = (call);                                                             \
			ct_timed_end((t), &tm_);                                                  \
		} else {                                                                          \
			(r) = (call);                                                             \
		}                                                                                 \
	} while (0)

/*
 * Inits. One naming a cipher (or an engine) sets a context up: classified, routed, and timed alone
 * (microseconds: a fetch, the provider's context, the key schedule), as a key set-up when a key is
 * given; our classification must not fall inside a span, so the span ends here. One on a context
 * already set up is a phase of the path's work: a key set (a key schedule) or a message's IV.
 */
#define INIT_HOOK(fn, params, args, cipher, engine, enc)                                          \
	CT_EXPORT int fn params                                                                   \
	{                                                                                         \
		const void *ra_ = __builtin_return_address(0);                                    \
		__typeof__(&fn) real = CT_REAL(fn);                                               \
		if (CT_UNLIKELY(!real)) {                                                         \
			errno = ENOSYS;                                                           \
			return 0;                                                                 \
		}                                                                                 \
		struct ct_thread *t = ct_thread_fast();                                           \
		if (!t || !ct_enter_fast(t, CT_FAM_EVP))                                          \
			return real args;                                                         \
		int r;                                                                            \
		if (cipher || engine) {                                                           \
			if (cipher) { /* CRYPTRACE_ROUTE: swap in the provider's cipher */        \
				uint32_t route_;                                                  \
				uint32_t guard_ = t->guard;                                       \
				t->guard = CT_GUARD_ALL;                                          \
				const EVP_CIPHER *sub_ = ct_route_evp_cipher(cipher, engine, enc, &route_); \
				t->guard = guard_;                                                \
				if (sub_)                                                         \
					cipher = sub_;                                            \
			}                                                                         \
			ct_span_interrupt(t);                                                     \
			uint64_t t0_ = ct_clock_now();                                            \
			r = real args;                                                            \
			uint64_t t1_ = ct_clock_now();                                            \
			int e = errno;                                                            \
			uint32_t id_ = after_init(t, #fn, ctx, cipher, engine, enc, r, key != NULL, \
						  iv != NULL, ra_);                               \
			if (r == 1 && id_ != CT_NO_PATH)                                          \
				ct_probe_once(t, id_, CT_CELL_PHASE(key ? CT_PHASE_KEY : CT_PHASE_INIT), \
					      0, t0_, t1_);                                       \
			ct_leave_fast(t, CT_FAM_EVP);                                             \
			errno = e;                                                                \
			return r;                                                                 \
		}                                                                                 \
		if (key || iv)                                                                    \
			PHASE_CALL(t, ctx, key ? CT_PHASE_KEY : CT_PHASE_MSG, 0, r, real args);   \
		else                                                                              \
			r = real args;                                                            \
		int e = errno;                                                                    \
		after_init(t, #fn, ctx, cipher, engine, enc, r, key != NULL, iv != NULL, ra_);    \
		ct_leave_fast(t, CT_FAM_EVP);                                                     \
		errno = e;                                                                        \
		return r;                                                                         \
	}

INIT_HOOK(EVP_CipherInit, (EVP_CIPHER_CTX * ctx, const EVP_CIPHER *cipher, const unsigned char *key,
			   const unsigned char *iv, int enc),
	  (ctx, cipher, key, iv, enc), cipher, NULL, enc)
INIT_HOOK(EVP_CipherInit_ex, (EVP_CIPHER_CTX * ctx, const EVP_CIPHER *cipher, ENGINE *impl,
			      const unsigned char *key, const unsigned char *iv, int enc),
	  (ctx, cipher, impl, key, iv, enc), cipher, impl, enc)
INIT_HOOK(EVP_CipherInit_ex2, (EVP_CIPHER_CTX * ctx, const EVP_CIPHER *cipher, const unsigned char *key,
			       const unsigned char *iv, int enc, const OSSL_PARAM params[]),
	  (ctx, cipher, key, iv, enc, params), cipher, NULL, enc)
INIT_HOOK(EVP_EncryptInit, (EVP_CIPHER_CTX * ctx, const EVP_CIPHER *cipher, const unsigned char *key,
			    const unsigned char *iv),
	  (ctx, cipher, key, iv), cipher, NULL, 1)
INIT_HOOK(EVP_EncryptInit_ex, (EVP_CIPHER_CTX * ctx, const EVP_CIPHER *cipher, ENGINE *impl,
			       const unsigned char *key, const unsigned char *iv),
	  (ctx, cipher, impl, key, iv), cipher, impl, 1)
INIT_HOOK(EVP_EncryptInit_ex2, (EVP_CIPHER_CTX * ctx, const EVP_CIPHER *cipher, const unsigned char *key,
				const unsigned char *iv, const OSSL_PARAM params[]),
	  (ctx, cipher, key, iv, params), cipher, NULL, 1)
INIT_HOOK(EVP_DecryptInit, (EVP_CIPHER_CTX * ctx, const EVP_CIPHER *cipher, const unsigned char *key,
			    const unsigned char *iv),
	  (ctx, cipher, key, iv), cipher, NULL, 0)
INIT_HOOK(EVP_DecryptInit_ex, (EVP_CIPHER_CTX * ctx, const EVP_CIPHER *cipher, ENGINE *impl,
			       const unsigned char *key, const unsigned char *iv),
	  (ctx, cipher, impl, key, iv), cipher, impl, 0)
INIT_HOOK(EVP_DecryptInit_ex2, (EVP_CIPHER_CTX * ctx, const EVP_CIPHER *cipher, const unsigned char *key,
				const unsigned char *iv, const OSSL_PARAM params[]),
	  (ctx, cipher, key, iv, params), cipher, NULL, 0)

/* ---- data calls (the hot path) ------------------------------------------------------------ */

/* The ctx's path for this entry; switches the ctx to the entry's variant on its first data call. */
static uint32_t data_path(const EVP_CIPHER_CTX *ctx, uint8_t entry)
{
	uint32_t id = ct_ctxmap_lookup_inline(&ct_global_ctxmap, ctx);
	if (CT_UNLIKELY(id == CT_NO_PATH))
		return id;
	if (CT_UNLIKELY(ct_path_entry(id) != entry)) {
		id = ct_path_variant(id, ct_path_dir(id), entry);
		ct_ctxmap_set(ctx, id);
	}
	return id;
}

static bool data_reals_ready(void);

/* The counters of ctx's path on this thread, through the thread's one-entry cache, and the path.
 * NULL: a ctx we never saw initialised (made before the preload could see it): passed through
 * uncounted. */
static __attribute__((noinline)) struct ct_counters *data_counters_slow(struct ct_thread *t, const EVP_CIPHER_CTX *ctx,
									uint8_t entry, uint32_t *path_out)
{
	uint32_t gen = atomic_load_explicit(&ct_ctxmap_gen, memory_order_relaxed);
	uint32_t path = data_path(ctx, entry);
	struct ct_counters *c = path == CT_NO_PATH ? NULL : ct_counters_of(t, path);
	*path_out = path;
	if (!c) {
		atomic_fetch_add_explicit(&ct_g.hooked_calls_slow, 1, memory_order_relaxed);
		return NULL;
	}
	/* The fast paths do not check their real pointers: a cached ctx means all four are known. */
	if (CT_UNLIKELY(!data_reals_ready()))
		return c;
	/* data_path may have re-mapped ctx (bumping the generation): cache under the newest one */
	if (path != CT_NO_PATH && ct_ctxmap_get(ctx) == path)
		gen = atomic_load_explicit(&ct_ctxmap_gen, memory_order_relaxed);
	t->hot_ctx = ctx;
	t->hot_c = c;
	t->hot_path = path;
	t->hot_entry = entry;
	t->hot_gen = gen;
	t->hot_len = CT_HOT_NO_LEN;
	return c;
}

/*
 * The fast path's cache key of a request: its length, its data entry and whether it has an output
 * buffer. An update's is its int length, sign-extended (negative lengths: bits 31-63 set);
 * EVP_Cipher's is its unsigned length with HOT_KEY_CIPHER set, or all ones without input. A call
 * without output (AAD) has HOT_KEY_NO_OUT set, and no cached key ever does: only data requests
 * are cached. So the keys of the two entries never meet, and none is CT_HOT_NO_LEN (bit 40 alone).
 */
#define HOT_KEY_CIPHER (1ull << 41)
#define HOT_KEY_NO_OUT (1ull << 42)
#define HOT_KEY_ENTRY(entry) ((entry) == CT_ENTRY_EVP_CIPHER ? HOT_KEY_CIPHER : 0)

/* Remember the request just counted, when the fast path may count the next one with that key on
 * its own: the key says its byte count (a data request), and a request of that size is not
 * always sampled. */
static inline void hot_remember_len(struct ct_thread *t, uint64_t key, uint64_t entry_bits,
				    uint64_t bytes, unsigned ci)
{
	if (CT_LIKELY(key == (bytes | entry_bits) && bytes < ct_sample_all_bytes)) {
		t->hot_len = key;
		t->hot_bytes = bytes;
		t->hot_ci = (uint8_t)ci;
		t->hot_sb = &t->hot_c->cell[ci];
	} else {
		t->hot_len = CT_HOT_NO_LEN;
	}
}

/* What an update does, from its arguments: data (the size bucket of its length), AAD (no output
 * buffer), or CCM's length-only call (neither buffer: the message's length, no data). */
static inline unsigned update_cell(const void *out, const void *in, int inl)
{
	if (CT_LIKELY(out != NULL))
		return ct_cell_of_size(inl > 0 ? (uint64_t)inl : 0);
	return CT_CELL_PHASE(in ? CT_PHASE_AAD : CT_PHASE_MSG);
}

/* EVP_Cipher's: a custom cipher (GCM, CCM, OCB in OpenSSH and TLS 1.2) takes its AAD with no
 * output buffer and computes its tag with no input. */
static inline unsigned cipher_cell(const void *out, const void *in, unsigned inl)
{
	if (!in)
		return CT_CELL_PHASE(CT_PHASE_FINAL);
	return out ? ct_cell_of_size(inl) : CT_CELL_PHASE(CT_PHASE_AAD);
}

/* A failed data call: counted, then the call ends (out of line and returning r, so that only t
 * lives across the real call on the fast path). */
static __attribute__((noinline)) int data_error_leave(struct ct_thread *t, struct ct_counters *c, int r)
{
	CT_ADD(c->errors, 1);
	ct_leave_fast(t, CT_FAM_EVP);
	return r;
}

/* A data function's real pointer is written once, from NULL (a thread that resolved it too late
 * writes nothing), with release: the fast path's plain read of it, ordered after
 * data_reals_ready()'s acquire loads, then never races with a write. */
static void publish_real(void **slot, void *real)
{
	void *expected = NULL;
	if (real)
		__atomic_compare_exchange_n(slot, &expected, real, false, __ATOMIC_RELEASE,
					    __ATOMIC_RELAXED);
}

/* Shared body. The exported hook is the fast path only: this thread's state exists, no EVP call
 * is in progress, ctx is the one this thread used last and the request has the length of the
 * last one (its counters and cell cached). It counts the call exactly (before it runs) and calls
 * the real function with nothing but the thread pointer kept across the call. Everything else
 * (first call, another ctx or length, AAD, nested call, a sample or a span's end: timing.h) is a
 * tail call to an out-of-line path. len_key is the request's key as the cache knows it (above);
 * cell_expr says what the call does (update_cell / cipher_cell). */
#define DATA_HOOK(fn, ret_t, params, args, entry, bytes_expr, len_key, ok_expr, cell_expr)        \
	static __typeof__(&fn) fn##_real;                                                         \
	static ret_t fn##_slow(CT_UNPAREN params);                                                \
	/* a call counted on c (cell ci) that ends a span or is a sample */                        \
	static __attribute__((noinline)) ret_t fn##_timed(struct ct_thread *t, struct ct_counters *c, \
							  uint32_t path, unsigned ci, uint64_t bytes,  \
							  CT_UNPAREN params)                       \
	{                                                                                         \
		__typeof__(&fn) real = __atomic_load_n(&fn##_real, __ATOMIC_RELAXED);             \
		struct ct_timed tm;                                                               \
		ct_timed_begin(t, &tm, c, path, ci, bytes);                                       \
		ret_t r = real args;                                                              \
		ct_timed_end(t, &tm);                                                             \
		if (CT_UNLIKELY(!(ok_expr)))                                                      \
			CT_ADD(c->errors, 1);                                                     \
		ct_leave_fast(t, CT_FAM_EVP);                                                     \
		return r;                                                                         \
	}                                                                                         \
	/* a call on c, counted in its cell, then run (timed when ct_tick says so) */             \
	static inline ret_t fn##_counted(struct ct_thread *t, struct ct_counters *c, uint32_t path, \
					 __typeof__(&fn) real, bool cache, CT_UNPAREN params)     \
	{                                                                                         \
		const uint64_t bytes = (bytes_expr);                                              \
		const unsigned ci = (cell_expr);                                                  \
		bool timed = ct_tick(t, c, ci, bytes);                                            \
		if (cache)                                                                        \
			hot_remember_len(t, (len_key), HOT_KEY_ENTRY(entry), bytes, ci);          \
		if (CT_UNLIKELY(timed))                                                           \
			return fn##_timed(t, c, path, ci, bytes, CT_UNPAREN args);                \
		ret_t r = real args;                                                              \
		if (CT_UNLIKELY(!(ok_expr)))                                                      \
			return data_error_leave(t, c, r);                                         \
		ct_leave_fast(t, CT_FAM_EVP);                                                     \
		return r;                                                                         \
	}                                                                                         \
	/* the cached ctx with another length (or entry, or an AAD call): count it, cache it */   \
	static __attribute__((noinline)) ret_t fn##_len_miss(struct ct_thread *t,                 \
							     CT_UNPAREN params)                   \
	{                                                                                         \
		if (CT_UNLIKELY(t->hot_entry != (entry))) {                                       \
			ct_leave_fast(t, CT_FAM_EVP);                                             \
			return fn##_slow args;                                                    \
		}                                                                                 \
		return fn##_counted(t, t->hot_c, t->hot_path,                                     \
				    __atomic_load_n(&fn##_real, __ATOMIC_RELAXED), true,          \
				    CT_UNPAREN args);                                             \
	}                                                                                         \
	static __attribute__((noinline)) ret_t fn##_slow(CT_UNPAREN params)                       \
	{                                                                                         \
		__typeof__(&fn) real = __atomic_load_n(&fn##_real, __ATOMIC_ACQUIRE);             \
		if (CT_UNLIKELY(!real)) {                                                         \
			real = (__typeof__(&fn))ct_resolve(#fn);                                  \
			if (!real) {                                                              \
				errno = ENOSYS;                                                   \
				return 0;                                                         \
			}                                                                         \
			publish_real((void **)&fn##_real, (void *)real);                          \
		}                                                                                 \
		struct ct_thread *t = ct_thread_fast();                                           \
		if (!t || !ct_enter_fast(t, CT_FAM_EVP))                                          \
			return real args;                                                         \
		uint32_t path;                                                                    \
		struct ct_counters *c = data_counters_slow(t, ctx, entry, &path);                 \
		if (CT_UNLIKELY(!c)) {                                                            \
			ret_t r_ = real args;                                                     \
			ct_leave_fast(t, CT_FAM_EVP);                                             \
			return r_;                                                                \
		}                                                                                 \
		return fn##_counted(t, c, path, real, t->hot_ctx == ctx, CT_UNPAREN args);        \
	}                                                                                         \
	CT_EXPORT ret_t fn params                                                                 \
	{                                                                                         \
		/* no state yet: ct_thread_none, whose guard bits are all set */                 \
		struct ct_thread *t = ct_tls_thread;                                              \
		if (CT_UNLIKELY(t->guard & (1u << CT_FAM_EVP)))                                   \
			return fn##_slow args;                                                    \
		t->guard |= 1u << CT_FAM_EVP;                                                     \
		__atomic_signal_fence(__ATOMIC_SEQ_CST);                                          \
		if (CT_UNLIKELY(ctx != t->hot_ctx || t->hot_gen != ct_hot_load32(&ct_ctxmap_gen))) { \
			t->guard &= ~(1u << CT_FAM_EVP);                                          \
			__atomic_signal_fence(__ATOMIC_SEQ_CST);                                  \
			return fn##_slow args;                                                    \
		}                                                                                 \
		if (CT_UNLIKELY((uint64_t)(len_key) != t->hot_len))                               \
			return fn##_len_miss(t, CT_UNPAREN args);                                 \
		/* a cached key: this entry, this byte count, below the always-timed size */     \
		struct ct_size_bucket *sb = t->hot_sb;                                            \
		CT_HOT_ADD(sb->calls, 1);                                                         \
		CT_HOT_ADD(sb->bytes, t->hot_bytes);                                              \
		if (CT_UNLIKELY(--t->countdown == 0))                                             \
			return fn##_timed(t, t->hot_c, t->hot_path, t->hot_ci, t->hot_bytes,      \
					  CT_UNPAREN args);                                       \
		/* a plain read: the hot cache is only filled after data_reals_ready() saw all four \
		 * pointers set (acquire), and they never change after that */                   \
		ret_t r = CT_HOT_LOAD_PTR(fn##_real) args;                                        \
		if (CT_UNLIKELY(!(ok_expr)))                                                      \
			return data_error_leave(t, t->hot_c, r);                                  \
		ct_leave_fast(t, CT_FAM_EVP);                                                     \
		return r;                                                                         \
	}

/* CT_UNPAREN (a, b) -> a, b: a parenthesised parameter or argument list spliced into another */
#define CT_UNPAREN(...) __VA_ARGS__

/* An update's bytes: its input (data or AAD); CCM's length-only call carries none. */
#define UPDATE_BYTES (in && inl > 0 ? (uint64_t)inl : 0)
#define UPDATE_KEY ((uint64_t)(int64_t)inl | (out ? 0 : HOT_KEY_NO_OUT))

DATA_HOOK(EVP_EncryptUpdate, int, (EVP_CIPHER_CTX * ctx, unsigned char *out, int *outl, const unsigned char *in,
			      int inl),
	  (ctx, out, outl, in, inl), CT_ENTRY_EVP_UPDATE, UPDATE_BYTES, UPDATE_KEY, r == 1,
	  update_cell(out, in, inl))
DATA_HOOK(EVP_DecryptUpdate, int, (EVP_CIPHER_CTX * ctx, unsigned char *out, int *outl, const unsigned char *in,
			      int inl),
	  (ctx, out, outl, in, inl), CT_ENTRY_EVP_UPDATE, UPDATE_BYTES, UPDATE_KEY, r == 1,
	  update_cell(out, in, inl))
DATA_HOOK(EVP_CipherUpdate, int, (EVP_CIPHER_CTX * ctx, unsigned char *out, int *outl, const unsigned char *in,
			     int inl),
	  (ctx, out, outl, in, inl), CT_ENTRY_EVP_UPDATE, UPDATE_BYTES, UPDATE_KEY, r == 1,
	  update_cell(out, in, inl))
/* EVP_Cipher returns 1/0, or a byte count / -1 for ciphers with their own framing (GCM in TLS) */
DATA_HOOK(EVP_Cipher, int, (EVP_CIPHER_CTX * ctx, unsigned char *out, const unsigned char *in, unsigned int inl),
	  (ctx, out, in, inl), CT_ENTRY_EVP_CIPHER, in ? (uint64_t)inl : 0,
	  in ? (uint64_t)inl | HOT_KEY_CIPHER | (out ? 0 : HOT_KEY_NO_OUT) : UINT64_MAX,
	  r > 0 || (r == 0 && !in), cipher_cell(out, in, inl))

/* Resolves the four data functions' real pointers together (once); until all four are known no
 * ctx is cached, so every call takes the slow path, which checks its own. */
static bool data_reals_ready(void)
{
	static _Atomic bool ready;
	if (CT_LIKELY(atomic_load_explicit(&ready, memory_order_acquire)))
		return true;
	bool all = true;
#define RESOLVE_REAL(fn)                                                                          \
	if (!__atomic_load_n(&fn##_real, __ATOMIC_ACQUIRE))                                       \
		publish_real((void **)&fn##_real, ct_resolve(#fn));                               \
	all = all && __atomic_load_n(&fn##_real, __ATOMIC_ACQUIRE);
	RESOLVE_REAL(EVP_EncryptUpdate)
	RESOLVE_REAL(EVP_DecryptUpdate)
	RESOLVE_REAL(EVP_CipherUpdate)
	RESOLVE_REAL(EVP_Cipher)
#undef RESOLVE_REAL
	if (!all)
		return false;
	atomic_store_explicit(&ready, true, memory_order_release);
	return true;
}

/* ---- final, context life cycle, fetch ----------------------------------------------------- */

/* A final: a phase of the operation (CBC's padding block, an AEAD's tag), and the end of a
 * message; failures noted (a bad decrypt is the usual one). */
#define FINAL_HOOK(fn)                                                                            \
	CT_EXPORT int fn(EVP_CIPHER_CTX *ctx, unsigned char *out, int *outl)                      \
	{                                                                                         \
		__typeof__(&fn) real = CT_REAL(fn);                                               \
		if (CT_UNLIKELY(!real)) {                                                         \
			errno = ENOSYS;                                                           \
			return 0;                                                                 \
		}                                                                                 \
		struct ct_thread *t = ct_thread_fast();                                           \
		if (!t || !ct_enter_fast(t, CT_FAM_EVP))                                          \
			return real(ctx, out, outl);                                              \
		int r;                                                                            \
		PHASE_CALL(t, ctx, CT_PHASE_FINAL, 0, r, real(ctx, out, outl));                   \
		if (CT_UNLIKELY(r != 1)) {                                                        \
			int e = errno;                                                            \
			uint32_t g = t->guard;                                                    \
			t->guard = CT_GUARD_ALL;                                                  \
			record_failure(#fn, ct_ctxmap_get(ctx), r);                               \
			t->guard = g;                                                             \
			errno = e;                                                                \
		}                                                                                 \
		ct_leave_fast(t, CT_FAM_EVP);                                                     \
		return r;                                                                         \
	}

FINAL_HOOK(EVP_EncryptFinal)
FINAL_HOOK(EVP_EncryptFinal_ex)
FINAL_HOOK(EVP_DecryptFinal)
FINAL_HOOK(EVP_DecryptFinal_ex)
FINAL_HOOK(EVP_CipherFinal)
FINAL_HOOK(EVP_CipherFinal_ex)

CT_EXPORT EVP_CIPHER_CTX *EVP_CIPHER_CTX_new(void)
{
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
	uint32_t guard = t->guard;
	t->guard = CT_GUARD_ALL;
	uint32_t path = ct_path_variant(id, ct_path_dir(id), CT_ENTRY_EVP_MULTIBLOCK);
	t->guard = guard;
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

CT_EXPORT int EVP_CIPHER_CTX_ctrl(EVP_CIPHER_CTX *ctx, int type, int arg, void *ptr)
{
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
		PHASE_CALL(t, ctx, phase, bytes, r, real(ctx, type, arg, ptr));
		if (type == EVP_CTRL_AEAD_TLS1_AAD) {
			uint32_t path;
			struct ct_counters *c = ctx_counters(t, ctx, &path);
			if (c)
				CT_ADD(c->tls_records, 1);
		}
	} else {
		r = real(ctx, type, arg, ptr);
	}
	/* the ctrls that tell a TLS record layer apart (which version, which construction) */
	static const struct { int type; uint32_t bit; const char *what; } marks[] = {
		{ EVP_CTRL_AEAD_TLS1_AAD, USAGE_TLS1_AAD, "ctrl=AEAD_TLS1_AAD: TLS 1.0-1.2 AEAD records" },
		{ EVP_CTRL_GCM_SET_IV_FIXED, USAGE_IV_FIXED, "ctrl=GCM_SET_IV_FIXED: TLS 1.2 GCM key block" },
		{ EVP_CTRL_AEAD_SET_IVLEN, USAGE_SET_IVLEN, "ctrl=AEAD_SET_IVLEN" },
		{ EVP_CTRL_AEAD_SET_MAC_KEY, USAGE_MAC_KEY, "ctrl=AEAD_SET_MAC_KEY: TLS CBC-HMAC composite" },
		{ EVP_CTRL_TLS1_1_MULTIBLOCK_ENCRYPT, USAGE_MULTIBLOCK,
		  "ctrl=TLS1_1_MULTIBLOCK_ENCRYPT: TLS 1.2 multi-block writes (stitched CBC-HMAC)" },
	};
	for (size_t i = 0; r > 0 && i < sizeof(marks) / sizeof(marks[0]); i++) {
		if (marks[i].type != type || !ct_ready())
			continue;
		int e = errno;
		uint32_t guard = t->guard;
		t->guard = CT_GUARD_ALL;
		note_usage(ct_ctxmap_get(ctx), marks[i].bit, "EVP_CIPHER_CTX_ctrl", marks[i].what);
		t->guard = guard;
		errno = e;
	}
	ct_leave_fast(t, CT_FAM_EVP);
	return r;
}

CT_EXPORT EVP_CIPHER *EVP_CIPHER_fetch(OSSL_LIB_CTX *libctx, const char *algorithm, const char *properties)
{
	__typeof__(&EVP_CIPHER_fetch) real = CT_REAL(EVP_CIPHER_fetch);
	if (CT_UNLIKELY(!real)) {
		errno = ENOSYS;
		return NULL;
	}
	struct ct_thread *t = ct_thread_fast();
	if (!t || !ct_enter_fast(t, CT_FAM_EVP))
		return real(libctx, algorithm, properties);
	EVP_CIPHER *c = real(libctx, algorithm, properties);
	int e = errno;
	uint32_t guard = t->guard;
	t->guard = CT_GUARD_ALL;
	struct evp_accessors scratch;
	const struct evp_accessors *acc = evp_accessors(&scratch);
	const void *prov = c && acc->cipher_provider ? acc->cipher_provider(c) : NULL;
	const char *pname = prov && acc->provider_name ? acc->provider_name(prov) : NULL;
	atomic_fetch_add_explicit(&ct_g.hooked_calls_slow, 1, memory_order_relaxed);
	ct_event(CT_EV_CIPHER_FETCH, "EVP_CIPHER_fetch", 0, c != NULL, CT_NO_PATH, !c,
		 "name=%s props=%s provider=%s", algorithm ? algorithm : "", properties ? properties : "",
		 pname ? pname : "-");
	t->guard = guard;
	ct_leave_fast(t, CT_FAM_EVP);
	errno = e;
	return c;
}
