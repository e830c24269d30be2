/* SPDX-License-Identifier: MIT */
/*
 * evp_data.c - the EVP data calls (EVP_{Encrypt,Decrypt,Cipher}Update, EVP_Cipher): the hot
 * path. A call on the context this thread used last, of the length it used last, is counted in
 * its cached cell and runs (data_fast, inline in each exported hook: a handful of instructions);
 * another request on that context (AAD, another length) with no timing due is counted by
 * update_quiet or cipher_quiet; everything else (another context, a nested call, a sample or a
 * span's end: timing.h) goes through data_slow. Also the phase calls' counting on a context's path
 * (evp_internal.h), which shares the thread's one-entry context cache.
 */
#include <openssl/evp.h>

#include "ctxmap.h"
#include "evp_internal.h"
#include "internal.h"
#include "lane.h"

extern struct ct_ctxmap ct_global_ctxmap;

/* ---- the four entry points ------------------------------------------------------------------ */

typedef int (*update_fn)(EVP_CIPHER_CTX *, unsigned char *, int *, const unsigned char *, int);
typedef int (*cipher_fn)(EVP_CIPHER_CTX *, unsigned char *, const unsigned char *, unsigned int);

/* What differs between the entry points: the name to resolve, the entry (part of the path), and
 * the real function, published once (data_reals_ready). */
struct data_fn {
	const char *name;
	uint8_t entry;
	int8_t dir; /* an update's direction for the direct lane: 1 encrypt, 0 decrypt, -1 the ctx's */
	void *real;
};
static struct data_fn fn_encrypt_update = { "EVP_EncryptUpdate", CT_ENTRY_EVP_UPDATE, 1, NULL };
static struct data_fn fn_decrypt_update = { "EVP_DecryptUpdate", CT_ENTRY_EVP_UPDATE, 0, NULL };
static struct data_fn fn_cipher_update = { "EVP_CipherUpdate", CT_ENTRY_EVP_UPDATE, -1, NULL };
static struct data_fn fn_cipher = { "EVP_Cipher", CT_ENTRY_EVP_CIPHER, -1, NULL };

/*
 * libcrypto's EVP_CipherUpdate and EVP_CipherFinal(_ex) only pick the Encrypt or Decrypt function
 * by the context's direction (1.1.1, 3.0 and 3.5 alike: a test of ctx->encrypt and a jump through
 * the PLT), and that jump came back through our exported hook as a nested call: ~90 instructions
 * to pass through, three in every TLS 1.3 record libssl makes. A traced EVP_CipherUpdate or
 * EVP_CipherFinal_ex runs the real Encrypt or Decrypt function itself, asking libcrypto for the
 * direction the same way (EVP_CIPHER_CTX_is_encrypting; EVP_CIPHER_CTX_encrypting before 3.0):
 * the same call, without the round trip. NULL where neither is found: the real Cipher function,
 * as before.
 */
static _Atomic(ct_direction_fn) ctx_direction;
static _Atomic int ctx_direction_known; /* 0 not resolved yet, 1 found, 2 none */

ct_direction_fn ct_evp_direction_fn(void)
{
	const int known = atomic_load_explicit(&ctx_direction_known, memory_order_acquire);
	if (CT_LIKELY(known))
		return known == 1 ? atomic_load_explicit(&ctx_direction, memory_order_relaxed) : NULL;
	void *p = ct_resolve("EVP_CIPHER_CTX_is_encrypting");
	if (!p)
		p = ct_resolve("EVP_CIPHER_CTX_encrypting");
	atomic_store_explicit(&ctx_direction, (ct_direction_fn)p, memory_order_relaxed);
	atomic_store_explicit(&ctx_direction_known, p ? 1 : 2, memory_order_release);
	return (ct_direction_fn)p;
}

/* The real function an update of f runs on ctx: EVP_CipherUpdate's choice made here (above), any
 * other entry's own. f is a constant in each exported hook, so only EVP_CipherUpdate's pays. */
static inline __attribute__((always_inline)) void *update_real(const struct data_fn *f, void *real,
							       const EVP_CIPHER_CTX *ctx)
{
	if (f != &fn_cipher_update)
		return real;
	const ct_direction_fn encrypting = ct_evp_direction_fn();
	/* NULL until data_reals_ready has published it: then the Cipher function itself */
	void *own = encrypting ? __atomic_load_n(encrypting(ctx) ? &fn_encrypt_update.real
								 : &fn_decrypt_update.real,
						 __ATOMIC_ACQUIRE)
			       : NULL;
	return own ? own : real;
}

/* One data call, as the slow path sees it: the arguments of either signature, and what the call
 * does (its cell, bytes and cache key). */
struct data_call {
	EVP_CIPHER_CTX *ctx;
	unsigned char *out;
	int *outl; /* updates only */
	const unsigned char *in;
	int64_t inl; /* an update's int, EVP_Cipher's unsigned int */
	uint64_t bytes, key;
	unsigned ci;
	void *lane; /* the ctx's direct lane (route/lane.h), or NULL */
};

static int data_run(const struct data_fn *f, void *real, const struct data_call *c)
{
	const bool cipher = f->entry == CT_ENTRY_EVP_CIPHER;
	if (c->lane) {
		int r = cipher ? ct_lane_cipher(c->lane, c->out, c->in, (unsigned int)c->inl)
			       : ct_lane_update(c->lane, f->dir, c->out, c->outl, c->in, (int)c->inl);
		if (r != CT_LANE_PASS) {
			ct_owned_inc(&ct_tls_thread->lane_calls);
			return r;
		}
	}
	if (cipher)
		return ((cipher_fn)real)(c->ctx, c->out, c->in, (unsigned int)c->inl);
	return ((update_fn)update_real(f, real, c->ctx))(c->ctx, c->out, c->outl, c->in, (int)c->inl);
}

/* EVP_Cipher returns 1/0, or a byte count / -1 for ciphers with their own framing (GCM in TLS);
 * an update 1 or 0. */
static bool data_ok(const struct data_fn *f, const struct data_call *c, int r)
{
	return f->entry == CT_ENTRY_EVP_CIPHER ? r > 0 || (r == 0 && !c->in) : r == 1;
}

/*
 * The fast path's cache key of a request: its length, its data entry and whether it has an output
 * buffer. An update's is its int length, sign-extended (negative lengths: bits 31-63 set; on a
 * 32-bit target bit 31 alone, below); EVP_Cipher's is its unsigned length with HOT_KEY_CIPHER set, or all ones without input. A call
 * without output (AAD) has HOT_KEY_NO_OUT set, and no cached key ever does: only data requests
 * are cached. So the keys of the two entries never meet, and none is CT_HOT_NO_LEN (bit 40 alone).
 */
#define HOT_KEY_CIPHER (1ull << 41)
#if UINTPTR_MAX > UINT32_MAX
#define HOT_KEY_NO_OUT (1ull << 42)

static inline uint64_t update_key(const void *out, int inl)
{
	return (uint64_t)(int64_t)inl | (out ? 0 : HOT_KEY_NO_OUT);
}
#else
/*
 * On a 32-bit target the key's high word is the entry's constant alone and its low word the
 * length, with bit 31 set when there is no output: the fast path then compares a word to a
 * register and a word to a constant, where sign-extending the length and placing the flag in
 * the high word cost a dozen instructions. Still no cached key has bit 31 set (a cached length
 * is below ct_sample_all_bytes, at most 2^30), so a negative length or a missing output never
 * matches one.
 */
#define HOT_KEY_NO_OUT (1ull << 31)

static inline uint64_t update_key(const void *out, int inl)
{
	return (uint32_t)inl | (out ? 0 : (uint32_t)HOT_KEY_NO_OUT);
}
#endif

static inline uint64_t cipher_key(const void *out, const void *in, unsigned inl)
{
	return in ? (uint64_t)inl | HOT_KEY_CIPHER | (out ? 0 : HOT_KEY_NO_OUT) : UINT64_MAX;
}

/* What an update does: data (the size bucket of its length), AAD (no output buffer), or CCM's
 * length-only call (neither buffer: the message's length, no data). */
static struct data_call update_call(EVP_CIPHER_CTX *ctx, unsigned char *out, int *outl,
				    const unsigned char *in, int inl)
{
	struct data_call c = { .ctx = ctx,
			       .out = out,
			       .outl = outl,
			       .in = in,
			       .inl = inl,
			       .bytes = in && inl > 0 ? (uint64_t)inl : 0,
			       .key = update_key(out, inl) };
	c.ci = out ? ct_cell_of_size(inl > 0 ? (uint64_t)inl : 0)
		   : CT_CELL_PHASE(in ? CT_PHASE_AAD : CT_PHASE_MSG);
	return c;
}

/* What EVP_Cipher does: a custom cipher (GCM, CCM, OCB in OpenSSH and TLS 1.2) takes its AAD with
 * no output buffer and computes its tag with no input. */
static struct data_call cipher_call(EVP_CIPHER_CTX *ctx, unsigned char *out, const unsigned char *in,
				    unsigned int inl)
{
	struct data_call c = { .ctx = ctx,
			       .out = out,
			       .in = in,
			       .inl = inl,
			       .bytes = in ? inl : 0,
			       .key = cipher_key(out, in, inl) };
	c.ci = !in ? CT_CELL_PHASE(CT_PHASE_FINAL) : out ? ct_cell_of_size(inl) : CT_CELL_PHASE(CT_PHASE_AAD);
	return c;
}

/* ---- the thread's one-entry context cache ---------------------------------------------------- */

/* The ctx's path for this entry; switches the ctx to the entry's variant on its first data call. */
static uint32_t data_path(const EVP_CIPHER_CTX *ctx, uint8_t entry)
{
	uint32_t id = ct_ctxmap_lookup_inline(&ct_global_ctxmap, ctx);
	if (CT_UNLIKELY(id == CT_NO_PATH) && ct_attach_late())
		id = ct_evp_classify_unseen((EVP_CIPHER_CTX *)ctx);
	if (CT_UNLIKELY(id == CT_NO_PATH))
		return id;
	if (CT_UNLIKELY(ct_path_entry(id) != entry)) {
		id = ct_path_variant(id, ct_path_dir(id), entry);
		ct_ctxmap_set(ctx, id);
	}
	return id;
}

/* A data function's real pointer is written once, from NULL (a thread that resolved it too late
 * writes nothing), with release: the fast path's plain read of it, ordered after
 * data_reals_ready()'s acquire loads, then never races with a write. */
static void publish_real(void **slot, void *real)
{
	void *expected = NULL;
	if (real)
		__atomic_compare_exchange_n(slot, &expected, real, false, __ATOMIC_RELEASE, __ATOMIC_RELAXED);
}

/* Resolves the four data functions' real pointers together (once); until all four are known no
 * ctx is cached, so every call takes the slow path, which checks its own. */
static bool data_reals_ready(void)
{
	static _Atomic bool ready;
	if (CT_LIKELY(atomic_load_explicit(&ready, memory_order_acquire)))
		return true;
	struct data_fn *all[] = { &fn_encrypt_update, &fn_decrypt_update, &fn_cipher_update, &fn_cipher };
	bool have = true;
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++) {
		if (!__atomic_load_n(&all[i]->real, __ATOMIC_ACQUIRE))
			publish_real(&all[i]->real, ct_resolve(all[i]->name));
		have = have && __atomic_load_n(&all[i]->real, __ATOMIC_ACQUIRE);
	}
	if (!have)
		return false;
	atomic_store_explicit(&ready, true, memory_order_release);
	return true;
}

/* Caches ctx (its counters and path, for entry) as this thread's last context, once every data
 * function is known (the fast path does not check its real pointer). */
static void hot_remember_ctx(struct ct_thread *t, const EVP_CIPHER_CTX *ctx, uint8_t entry,
			     struct ct_counters *c, uint32_t path, uint32_t gen)
{
	if (CT_UNLIKELY(!data_reals_ready()))
		return;
	/* data_path may have re-mapped ctx (bumping the generation): cache under the newest one */
	if (ct_ctxmap_get(ctx) == path)
		gen = atomic_load_explicit(&ct_ctxmap_gen, memory_order_relaxed);
	void *lane = ct_lane_possible() ? ct_evp_lane(t, ctx) : NULL;
	/* a routed context whose lane was lost (a provider context freed since its init) */
	if (!lane && ct_lane_possible() && ct_path_route(path) >= CT_ROUTE_AESNI)
		lane = ct_evp_lane_relearn(t, (EVP_CIPHER_CTX *)ctx);
	ct_hot_cache_ctx(t, ctx, entry, c, path, gen);
	t->hot_lane = lane;
}

/* Remember the request just counted, when the fast path may count the next one with that key on
 * its own: the key says its byte count (a data request), and a request of that size is not
 * always sampled. Any other request (AAD, a final, a large one) leaves the cached length as it
 * was: its key never equals a cached one, and a TLS record's AAD call between two records' data
 * calls of one length must not send the next data call down the slow path. */
static void hot_remember_len(struct ct_thread *t, uint64_t key, uint8_t entry, uint64_t bytes, unsigned ci)
{
	uint64_t entry_bits = entry == CT_ENTRY_EVP_CIPHER ? HOT_KEY_CIPHER : 0;
	if (CT_LIKELY(key == (bytes | entry_bits) && bytes < ct_sample_all_bytes))
		ct_hot_cache_len(t, key, bytes, ci);
}

uint32_t ct_evp_ctx_path(struct ct_thread *t, const EVP_CIPHER_CTX *ctx)
{
	return ct_evp_hot_ctx_is(t, ctx) ? t->hot_path : ct_ctxmap_get(ctx);
}

struct ct_counters *ct_evp_ctx_counters(struct ct_thread *t, const EVP_CIPHER_CTX *ctx, uint32_t *path)
{
	if (ct_evp_hot_ctx_is(t, ctx)) {
		*path = t->hot_path;
		return t->hot_c;
	}
	*path = ct_ctxmap_get(ctx);
	if (*path == CT_NO_PATH && ct_attach_late())
		*path = ct_evp_classify_unseen((EVP_CIPHER_CTX *)ctx);
	return *path == CT_NO_PATH ? NULL : ct_counters_of(t, *path);
}

void ct_evp_phase_slow(struct ct_thread *t, const EVP_CIPHER_CTX *ctx, enum ct_phase phase, uint64_t bytes,
		       struct ct_timed *tm)
{
	uint32_t path;
	struct ct_counters *c = ct_evp_ctx_counters(t, ctx, &path);
	const unsigned ci = CT_CELL_PHASE(phase);
	if (c && ct_tick(t, c, ci, bytes))
		ct_timed_begin(t, tm, c, path, ci, bytes);
}

/* ---- the slow path ------------------------------------------------------------------------- */

/* A failed data call: counted, then the call ends (out of line and returning r, so that only t
 * lives across the real call on the fast path). */
static __attribute__((noinline)) int data_error_leave(struct ct_thread *t, struct ct_counters *c, int r)
{
	CT_ADD(c->errors, 1);
	ct_leave_fast(t, CT_FAM_EVP);
	return r;
}

/* A call counted in its cell that ends a span or is a sample: the fast path's cached cell, or the
 * slow path's. */
static __attribute__((noinline)) int data_timed(struct ct_thread *t, const struct data_fn *f,
						struct ct_counters *c, uint32_t path,
						const struct data_call *call)
{
	void *real = __atomic_load_n(&f->real, __ATOMIC_RELAXED);
	struct ct_timed tm;
	ct_timed_begin(t, &tm, c, path, call->ci, call->bytes);
	int r = data_run(f, real, call);
	ct_timed_end(t, &tm);
	if (CT_UNLIKELY(!data_ok(f, call, r)))
		CT_ADD(c->errors, 1);
	ct_leave_fast(t, CT_FAM_EVP);
	return r;
}

/* Everything the fast path does not take: the first call, another ctx, another length or entry, an
 * AAD or length-only call, a nested call (passed through), a thread without state yet. */
static __attribute__((noinline)) int data_slow(struct data_fn *f, const struct data_call *call)
{
	void *real = __atomic_load_n(&f->real, __ATOMIC_ACQUIRE);
	if (CT_UNLIKELY(!real)) {
		real = ct_resolve(f->name);
		if (!real) {
			errno = ENOSYS;
			return 0;
		}
		publish_real(&f->real, real);
	}
	struct ct_thread *t = ct_thread_get();
	if (!t || !ct_enter_fast(t, CT_FAM_EVP))
		return data_run(f, real, call);
	/* the cached ctx with another length or entry, or a ctx to look up (and cache) */
	struct ct_counters *c;
	uint32_t path;
	if (ct_evp_hot_ctx_is(t, call->ctx) && t->hot_entry == f->entry) {
		c = t->hot_c;
		path = t->hot_path;
	} else {
		uint32_t gen = atomic_load_explicit(&ct_ctxmap_gen, memory_order_relaxed);
		path = data_path(call->ctx, f->entry);
		c = path == CT_NO_PATH ? NULL : ct_counters_of(t, path);
		if (CT_UNLIKELY(!c)) { /* a ctx we never saw initialised: passed through uncounted */
			atomic_fetch_add_explicit(&ct_g.hooked_calls_slow, 1, memory_order_relaxed);
			int r = data_run(f, real, call);
			ct_leave_fast(t, CT_FAM_EVP);
			return r;
		}
		hot_remember_ctx(t, call->ctx, f->entry, c, path, gen);
	}
	bool timed = ct_tick(t, c, call->ci, call->bytes);
	if (t->hot_ctx == call->ctx)
		hot_remember_len(t, call->key, f->entry, call->bytes, call->ci);
	struct data_call laned = *call;
	if (ct_lane_possible())
		laned.lane = ct_evp_ctx_lane(t, call->ctx);
	call = &laned;
	if (CT_UNLIKELY(timed))
		return data_timed(t, f, c, path, call);
	int r = data_run(f, real, call);
	if (CT_UNLIKELY(!data_ok(f, call, r)))
		return data_error_leave(t, c, r);
	ct_leave_fast(t, CT_FAM_EVP);
	return r;
}

/*
 * The cached context's other requests, between data_fast and data_slow: an AAD or CCM length call
 * (no output), EVP_Cipher's final, or data of another length, on the context and entry this
 * thread used last, when timing.h's ct_tick_quiet counts it (no sample due, no span ending, a
 * cell used before, under 1 KiB). Counted as data_slow would, without its lookups: every TLS 1.3
 * record's AAD call, an SSH packet's AAD and final, a record of another length. quiet_enter
 * counts the request and raises the guard (NULL: not such a request, nothing done);
 * update_quiet and cipher_quiet then run it as the fast paths do.
 */
static inline __attribute__((always_inline)) struct ct_counters *
quiet_enter(struct ct_thread *t, const struct data_fn *f, const EVP_CIPHER_CTX *ctx, uint64_t key,
	    unsigned ci, uint64_t bytes)
{
	if (!ct_evp_hot_ctx_is(t, ctx) || t->hot_entry != f->entry || !ct_enter_fast(t, CT_FAM_EVP))
		return NULL;
	struct ct_counters *c = t->hot_c;
	if (!ct_tick_quiet(t, c, ci, bytes)) {
		ct_leave_fast(t, CT_FAM_EVP);
		return NULL;
	}
	hot_remember_len(t, key, f->entry, bytes, ci);
	return c;
}

/* A quiet request's end: its lane call counted (laned), a failure counted, the guard lowered. */
static inline __attribute__((always_inline)) void quiet_leave(struct ct_thread *t, struct ct_counters *c,
							      bool laned, bool ok)
{
	if (laned)
		ct_owned_inc(&t->lane_calls);
	if (CT_UNLIKELY(!ok))
		CT_ADD(c->errors, 1);
	ct_leave_fast(t, CT_FAM_EVP);
}

/* An update as update_call sees it (its cell and bytes), counted by quiet_enter and run. */
static inline __attribute__((always_inline)) bool update_quiet(struct ct_thread *t, const struct data_fn *f,
							       void *real, EVP_CIPHER_CTX *ctx,
							       unsigned char *out, int *outl,
							       const unsigned char *in, int inl, int *r)
{
	const uint64_t len = inl > 0 ? (uint64_t)inl : 0;
	const unsigned ci = out ? ct_cell_of_size(len) : CT_CELL_PHASE(in ? CT_PHASE_AAD : CT_PHASE_MSG);
	struct ct_counters *c = quiet_enter(t, f, ctx, update_key(out, inl), ci, in ? len : 0);
	if (!c)
		return false;
	void *lane = t->hot_lane;
	*r = lane ? ct_lane_update(lane, f->dir, out, outl, in, inl) : CT_LANE_PASS;
	const bool laned = *r != CT_LANE_PASS;
	if (!laned)
		*r = ((update_fn)update_real(f, real, ctx))(ctx, out, outl, in, inl);
	quiet_leave(t, c, laned, *r == 1);
	return true;
}

/* EVP_Cipher's, as cipher_call sees it. */
static inline __attribute__((always_inline)) bool cipher_quiet(struct ct_thread *t, void *real,
							       EVP_CIPHER_CTX *ctx, unsigned char *out,
							       const unsigned char *in, unsigned int inl,
							       int *r)
{
	const unsigned ci = !in   ? CT_CELL_PHASE(CT_PHASE_FINAL)
			    : out ? ct_cell_of_size(inl)
				  : CT_CELL_PHASE(CT_PHASE_AAD);
	struct ct_counters *c = quiet_enter(t, &fn_cipher, ctx, cipher_key(out, in, inl), ci, in ? inl : 0);
	if (!c)
		return false;
	void *lane = t->hot_lane;
	*r = lane ? ct_lane_cipher(lane, out, in, inl) : CT_LANE_PASS;
	const bool laned = *r != CT_LANE_PASS;
	if (!laned)
		*r = ((cipher_fn)real)(ctx, out, in, inl);
	quiet_leave(t, c, laned, *r > 0 || (*r == 0 && !in));
	return true;
}

/* ---- the fast path ------------------------------------------------------------------------- */

/* The fast path: internal.h's ct_hot_enter for the EVP family (a handful of instructions). */
static inline __attribute__((always_inline)) enum ct_hot data_fast(struct ct_thread *t,
								   const EVP_CIPHER_CTX *ctx, uint64_t key)
{
	return ct_hot_enter(t, CT_FAM_EVP, ctx, key);
}

/* A fast call's sample: the cached cell's counters and path. */
static __attribute__((noinline)) int data_fast_sampled(struct ct_thread *t, struct data_fn *f,
						       const struct data_call *call)
{
	struct data_call c = *call;
	c.ci = t->hot_ci;
	c.bytes = t->hot_bytes;
	c.lane = t->hot_lane;
	return data_timed(t, f, t->hot_c, t->hot_path, &c);
}

/*
 * On i386 the fast path's way out is a call, not a tail call: a tail call writes the hook's own
 * stack arguments, so GCC copies all five into the frame on entry, on every call, and pushes the
 * copies for the real function; with a plain call it pushes the caller's. (x86-64 passes them in
 * registers: its tail call costs nothing.) The empty asm makes r a value the call did not return.
 */
#if defined(__i386__)
#define NO_TAIL_CALL(r) __asm__("" : "+r"(r))
#else
#define NO_TAIL_CALL(r) ((void)0)
#endif

static inline __attribute__((always_inline)) int data_fast_leave(struct ct_thread *t, int r, bool ok)
{
	if (CT_UNLIKELY(!ok)) {
		r = data_error_leave(t, t->hot_c, r);
		NO_TAIL_CALL(r);
		return r;
	}
	ct_leave_fast(t, CT_FAM_EVP);
	return r;
}

/* The real function's pointer on the fast path: a plain read, the hot cache being filled only
 * after data_reals_ready() saw all four set (acquire), and they never change after that. */
#define FAST_REAL(f, type) ((type)CT_HOT_LOAD_PTR((f).real))

/* The fast path's way out to the slow path or to a sample: out of line and with the caller's own
 * arguments, so that the exported hook needs no stack frame (tail calls). */
static __attribute__((noinline)) int update_other(struct data_fn *f, enum ct_hot how, EVP_CIPHER_CTX *ctx,
						  unsigned char *out, int *outl, const unsigned char *in,
						  int inl)
{
	void *real = __atomic_load_n(&f->real, __ATOMIC_ACQUIRE); /* NULL: data_slow resolves it */
	/* off for good, or a call libcrypto makes inside one of ours (EVP_CipherUpdate calls
	 * EVP_EncryptUpdate through its PLT): straight to the real function. (A sampled call
	 * comes with the guard raised by ct_hot_enter; a thread with no state yet has every guard
	 * bit set, and data_slow makes its state.) */
	const struct ct_thread *t = ct_tls_thread;
	if (real && (ct_process_off() ||
		     (how == CT_HOT_NO && t != &ct_thread_none && (t->guard & (1u << CT_FAM_EVP)))))
		return ((update_fn)real)(ctx, out, outl, in, inl);
	int r;
	if (how == CT_HOT_NO && real && update_quiet(ct_tls_thread, f, real, ctx, out, outl, in, inl, &r))
		return r;
	struct data_call c = update_call(ctx, out, outl, in, inl);
	return how == CT_HOT_SAMPLED ? data_fast_sampled(ct_tls_thread, f, &c) : data_slow(f, &c);
}

static __attribute__((noinline)) int cipher_other(enum ct_hot how, EVP_CIPHER_CTX *ctx, unsigned char *out,
						  const unsigned char *in, unsigned int inl)
{
	void *real = __atomic_load_n(&fn_cipher.real, __ATOMIC_ACQUIRE);
	if (real && ct_process_off())
		return ((cipher_fn)real)(ctx, out, in, inl);
	int r;
	if (how == CT_HOT_NO && real && cipher_quiet(ct_tls_thread, real, ctx, out, in, inl, &r))
		return r;
	struct data_call c = cipher_call(ctx, out, in, inl);
	return how == CT_HOT_SAMPLED ? data_fast_sampled(ct_tls_thread, &fn_cipher, &c)
				     : data_slow(&fn_cipher, &c);
}

static inline __attribute__((always_inline)) int update_hook(struct data_fn *f, EVP_CIPHER_CTX *ctx,
							     unsigned char *out, int *outl,
							     const unsigned char *in, int inl)
{
	struct ct_thread *t = ct_tls_thread;
	enum ct_hot how = data_fast(t, ctx, update_key(out, inl));
	if (CT_UNLIKELY(how != CT_HOT_RUN)) {
		int r = update_other(f, how, ctx, out, outl, in, inl);
		NO_TAIL_CALL(r);
		return r;
	}
	/* a routed context's update: the provider's, straight (route/lane.h) */
	void *lane = t->hot_lane;
	int r = lane ? ct_lane_update(lane, f->dir, out, outl, in, inl) : CT_LANE_PASS;
	if (r == CT_LANE_PASS)
		r = ((update_fn)update_real(f, FAST_REAL(*f, void *), ctx))(ctx, out, outl, in, inl);
	else
		ct_owned_inc(&t->lane_calls);
	return data_fast_leave(t, r, r == 1);
}

CT_EXPORT int EVP_EncryptUpdate(EVP_CIPHER_CTX *ctx, unsigned char *out, int *outl, const unsigned char *in,
				int inl)
{
	CT_PASS_FOREIGN(EVP_EncryptUpdate, ctx, out, outl, in, inl);
	return update_hook(&fn_encrypt_update, ctx, out, outl, in, inl);
}

CT_EXPORT int EVP_DecryptUpdate(EVP_CIPHER_CTX *ctx, unsigned char *out, int *outl, const unsigned char *in,
				int inl)
{
	CT_PASS_FOREIGN(EVP_DecryptUpdate, ctx, out, outl, in, inl);
	return update_hook(&fn_decrypt_update, ctx, out, outl, in, inl);
}

CT_EXPORT int EVP_CipherUpdate(EVP_CIPHER_CTX *ctx, unsigned char *out, int *outl, const unsigned char *in,
			       int inl)
{
	CT_PASS_FOREIGN(EVP_CipherUpdate, ctx, out, outl, in, inl);
	return update_hook(&fn_cipher_update, ctx, out, outl, in, inl);
}

CT_EXPORT int EVP_Cipher(EVP_CIPHER_CTX *ctx, unsigned char *out, const unsigned char *in, unsigned int inl)
{
	CT_PASS_FOREIGN(EVP_Cipher, ctx, out, in, inl);
	struct ct_thread *t = ct_tls_thread;
	enum ct_hot how = data_fast(t, ctx, cipher_key(out, in, inl));
	if (CT_UNLIKELY(how != CT_HOT_RUN)) {
		int r = cipher_other(how, ctx, out, in, inl);
		NO_TAIL_CALL(r);
		return r;
	}
	/* a routed context's EVP_Cipher: the provider's, straight (route/lane.h) */
	void *lane = t->hot_lane;
	int r = lane ? ct_lane_cipher(lane, out, in, inl) : CT_LANE_PASS;
	if (r == CT_LANE_PASS)
		r = FAST_REAL(fn_cipher, cipher_fn)(ctx, out, in, inl);
	else
		ct_owned_inc(&t->lane_calls);
	return data_fast_leave(t, r, r > 0 || (r == 0 && !in));
}
