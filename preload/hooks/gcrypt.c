/* SPDX-License-Identifier: MIT */
/*
 * gcrypt.c - libgcrypt's cipher API (gcry_cipher_open, setkey, setiv, setctr, encrypt, decrypt,
 * authenticate, gettag, checktag, ctl, close): what gpg encrypts with (cryptsetup, though linked
 * to libgcrypt, does its AES in the kernel: AF_ALG, the kernel hooks). A handle is classified at
 * open (api gcrypt, its cipher in OpenSSL's words, the libgcrypt code that serves it:
 * gcrypt_impl.c) on a set-up path whose direction is not known yet; its first encrypt or decrypt
 * moves it to that direction's path (entry CT_ENTRY_GCRYPT), where its data calls are counted and
 * timed as EVP's are (the same fast path, internal.h's ct_hot_enter, then ct_tick and
 * ct_timed_begin/end: probes and spans), and its later set-ups too; the report folds the set-up
 * path's phases into the path that did the work. The preload never links libgcrypt: the real
 * functions and the library's own accessors (its hardware-feature list, its error strings) are
 * found at run time.
 */
#include <gcrypt.h>
#include <stdio.h>

#include "ctxmap.h"
#include "gcrypt_impl.h"
#include "gcrypt_late.h"
#include "internal.h"
#include "once.h"

extern struct ct_ctxmap ct_global_ctxmap;

/* A handle's three paths (its set-up path, its encrypt and decrypt paths), found from any of
 * them: ids + 1, 0 none. Written at open before the handle is mapped (release), never changed
 * after (a path's key decides its peers), so a data call reads them without a lock. */
struct peers {
	_Atomic uint32_t setup, enc, dec;
	_Atomic int algo, mode; /* for a set-key that changes the key size (the same values from any
				 * thread that classifies the path) */
};
static struct peers peers[CT_PATH_CAPACITY];

/* ---- the library's hardware features, read once --------------------------------------------- */

static char hwflist[512];
static _Atomic int hwflist_state; /* ct_once: read (empty: unknown) */

static bool read_hwflist(void *unused)
{
	(void)unused;
	char *(*get)(int, const char *) = (char *(*)(int, const char *))ct_resolve("gcry_get_config");
	void (*release)(void *) = (void (*)(void *))ct_resolve("gcry_free");
	char *v = get ? get(0, "hwflist") : NULL;
	if (v) {
		snprintf(hwflist, sizeof(hwflist), "%s", v);
		if (release)
			release(v);
	}
	return true;
}

/* The features libgcrypt uses ("hwflist:intel-aesni:...:"), or NULL when it cannot say (before
 * 1.8). Asked at the first open that succeeded (the library is initialised by then: asking
 * earlier could initialise it before the program's own GCRYCTL_DISABLE_HWF), with every guard
 * raised by the caller. */
static const char *gcrypt_hwflist(void)
{
	return ct_once(&hwflist_state, read_hwflist, NULL) && hwflist[0] ? hwflist : NULL;
}

/* ---- classification ------------------------------------------------------------------------ */

/* Interns the path of algo/mode with key_bits for dir and entry (set-up: CT_DIR_UNKNOWN,
 * CT_ENTRY_UNKNOWN), its call site the current one. */
static uint32_t intern_one(int algo, int mode, const char *cipher, unsigned key_bits, uint8_t dir,
			   uint8_t entry)
{
	struct ct_path_key k = {
		.api = CT_API_GCRYPT,
		.dir = dir,
		.entry = entry,
		.key_bits = (uint16_t)key_bits,
		.impl = ct_gcrypt_impl(gcrypt_hwflist(), algo, mode, dir == CT_DIR_DECRYPT),
		.cipher = cipher,
	};
	uint32_t id = ct_path_intern_here(&k);
	return id;
}

/* The set-up path of a handle of algo/mode with key_bits, its peers recorded; guards raised. */
static uint32_t classify(int algo, int mode, unsigned key_bits)
{
	const char *(*algo_name)(int) = (const char *(*)(int))ct_resolve("gcry_cipher_algo_name");
	char cipher[48];
	ct_gcrypt_cipher_name(cipher, sizeof(cipher), algo, algo_name ? algo_name(algo) : NULL, mode);
	uint32_t setup = intern_one(algo, mode, cipher, key_bits, CT_DIR_UNKNOWN, CT_ENTRY_UNKNOWN);
	uint32_t enc = intern_one(algo, mode, cipher, key_bits, CT_DIR_ENCRYPT, CT_ENTRY_GCRYPT);
	uint32_t dec = intern_one(algo, mode, cipher, key_bits, CT_DIR_DECRYPT, CT_ENTRY_GCRYPT);
	if (setup == CT_NO_PATH || enc == CT_NO_PATH || dec == CT_NO_PATH)
		return CT_NO_PATH;
	uint32_t ids[3] = { setup, enc, dec };
	for (unsigned i = 0; i < 3; i++) {
		struct peers *p = &peers[ids[i]];
		atomic_store_explicit(&p->algo, algo, memory_order_relaxed);
		atomic_store_explicit(&p->mode, mode, memory_order_relaxed);
		atomic_store_explicit(&p->setup, setup + 1, memory_order_release);
		atomic_store_explicit(&p->enc, enc + 1, memory_order_release);
		atomic_store_explicit(&p->dec, dec + 1, memory_order_release);
	}
	return setup;
}

/* The key bits a handle of algo/mode starts with: the algorithm's key length (an XTS or SIV key
 * is two of them). */
static unsigned default_key_bits(int algo, int mode)
{
	size_t (*keylen)(int) = (size_t(*)(int))ct_resolve("gcry_cipher_get_algo_keylen");
	size_t n = keylen ? keylen(algo) : 0;
	if (mode == GCRY_CIPHER_MODE_XTS || mode == GCRY_CIPHER_MODE_SIV)
		n *= 2;
	return ct_gcrypt_key_bits(mode, n);
}

/* ---- failures ------------------------------------------------------------------------------ */

static unsigned failure_callsites; /* failures with a stack capture so far (bounded: unwinding is slow) */

/* libgcrypt's words for err ("Invalid key length"), its code number beside them. */
static void error_text(gcry_error_t err, char *buf, size_t cap)
{
	const char *(*str)(gcry_error_t) = (const char *(*)(gcry_error_t))ct_resolve("gcry_strerror");
	const char *s = str ? str(err) : NULL;
	snprintf(buf, cap, "%s (code %u)", s ? s : "error", (unsigned)gcry_err_code(err));
}

/* A failed call on a handle of path id (CT_NO_PATH: none yet): an event with its call site, the
 * cipher and what the call asked (never a key, an IV or data: only lengths). Guards raised. */
static void record_failure(const char *call, uint32_t id, gcry_error_t err, const char *what)
{
	char e[128], cipher[64] = "";
	struct ct_path_def def;
	error_text(err, e, sizeof(e));
	if (id != CT_NO_PATH && ct_path_def_get(id, &def))
		snprintf(cipher, sizeof(cipher), "cipher=%.*s ", (int)def.cipher.len, def.cipher.p);
	bool site = __atomic_fetch_add(&failure_callsites, 1, __ATOMIC_RELAXED) < 256;
	/* ret -1: a failure (the report's rule for a call's result); the detail has the error code */
	ct_event(CT_EV_CALL_FAILED, call, 0, -1, id, site, "%s%s error=%s", cipher, what, e);
}

/* ---- open and close ------------------------------------------------------------------------ */

typedef gcry_error_t (*open_fn)(gcry_cipher_hd_t *, int, int, unsigned int);

CT_EXPORT gcry_error_t gcry_cipher_open(gcry_cipher_hd_t *handle, int algo, int mode, unsigned int flags)
{
	open_fn real = CT_REAL(gcry_cipher_open);
	if (CT_UNLIKELY(!real)) {
		errno = ENOSYS;
		return gcry_error(GPG_ERR_NOT_IMPLEMENTED);
	}
	struct ct_thread *t = ct_thread_get();
	if (!t || !ct_enter(t, CT_FAM_GCRYPT))
		return real(handle, algo, mode, flags);
	ct_span_interrupt(t);
	uint64_t t0 = ct_clock_now();
	gcry_error_t r = real(handle, algo, mode, flags);
	uint64_t t1 = ct_clock_now();
	struct ct_quiet q = ct_quiet_begin(t);
	if (!r && handle && *handle) {
		uint32_t id = classify(algo, mode, default_key_bits(algo, mode));
		ct_ctxmap_set(*handle, id);
		if (id != CT_NO_PATH) {
			ct_probe_once(t, id, CT_CELL_PHASE(CT_PHASE_INIT), 0, t0, t1);
			ct_event_at_site(CT_EV_CONTEXT, "gcry_cipher_open", id,
					 (uintptr_t)__builtin_return_address(0), NULL);
		} else {
			atomic_fetch_add_explicit(&ct_g.hooked_calls_slow, 1, memory_order_relaxed);
		}
	} else if (r) {
		const char *(*algo_name)(int) = (const char *(*)(int))ct_resolve("gcry_cipher_algo_name");
		const char *name = algo_name ? algo_name(algo) : NULL;
		char what[128];
		snprintf(what, sizeof(what), "algo=%s(%d) mode=%d flags=0x%x", name ? name : "?", algo, mode,
			 flags);
		record_failure("gcry_cipher_open", CT_NO_PATH, r, what);
	}
	ct_quiet_end(t, q);
	ct_leave(t, CT_FAM_GCRYPT);
	return r;
}

/* A handle's end: its address may next hold another handle, so its mapping goes first. */
CT_EXPORT void gcry_cipher_close(gcry_cipher_hd_t h)
{
	void (*real)(gcry_cipher_hd_t) = CT_REAL(gcry_cipher_close);
	if (h && ct_ready()) {
		int e = errno;
		ct_ctxmap_del(h);
		errno = e;
	}
	if (real)
		real(h);
	else
		errno = ENOSYS;
}

/* ---- the calls on a handle ----------------------------------------------------------------- */

/* A handle opened before `cryptrace attach` loaded us, at its first call after: classified from
 * its algorithm and mode as its open would have been (gcrypt_late.c reads them); CT_NO_PATH when
 * they cannot be read. Its key size is the algorithm's (AES's is in the algorithm). */
static __attribute__((noinline)) uint32_t classify_unseen(struct ct_thread *t, gcry_cipher_hd_t h)
{
	uint32_t g = ct_guard_all(t), id = CT_NO_PATH;
	int algo, mode;
	if (ct_gcrypt_handle_algo_mode(h, &algo, &mode)) {
		id = classify(algo, mode, default_key_bits(algo, mode));
		if (id != CT_NO_PATH)
			ct_ctxmap_set(h, id);
	}
	ct_guard_restore(t, g);
	return id;
}

/* The path of handle h for a call in dir (CT_DIR_UNKNOWN: the handle's current path, a set-up),
 * moving the handle to dir's path when it is on another; CT_NO_PATH for a handle never seen
 * opened (but for one opened before an attach: classify_unseen). */
static uint32_t handle_path(struct ct_thread *t, gcry_cipher_hd_t h, uint8_t dir)
{
	uint32_t id = ct_ctxmap_lookup_inline(&ct_global_ctxmap, h);
	if (CT_UNLIKELY(id == CT_NO_PATH) && ct_attach_late())
		id = classify_unseen(t, h);
	if (CT_UNLIKELY(id >= CT_PATH_CAPACITY) || dir == CT_DIR_UNKNOWN)
		return id;
	const struct peers *p = &peers[id];
	uint32_t want = atomic_load_explicit(dir == CT_DIR_ENCRYPT ? &p->enc : &p->dec, memory_order_acquire);
	if (CT_UNLIKELY(!want))
		return CT_NO_PATH;
	if (CT_UNLIKELY(want - 1 != id)) {
		uint32_t g = ct_guard_all(t);
		ct_ctxmap_set(h, want - 1);
		ct_guard_restore(t, g);
	}
	return want - 1;
}

/* One call on a handle, before the real one runs: counted in cell ci of its path with bytes,
 * and *tm begun when it is due to be timed. Returns the counters (NULL: pass through). */
static struct ct_counters *call_begin(struct ct_thread *t, gcry_cipher_hd_t h, uint8_t dir, unsigned ci,
				      uint64_t bytes, uint32_t *id, struct ct_timed *tm)
{
	tm->what = 0;
	*id = handle_path(t, h, dir);
	if (CT_UNLIKELY(*id == CT_NO_PATH)) {
		atomic_fetch_add_explicit(&ct_g.hooked_calls_slow, 1, memory_order_relaxed);
		return NULL;
	}
	uint32_t g = ct_guard_all(t);
	struct ct_counters *c = ct_counters_of(t, *id);
	ct_guard_restore(t, g);
	if (c && ct_tick(t, c, ci, bytes))
		ct_timed_begin(t, tm, c, *id, ci, bytes);
	return c;
}

/* After the real call: its time, its failure (counted, and an event naming the call site). */
static gcry_error_t call_end(struct ct_thread *t, struct ct_counters *c, uint32_t id, struct ct_timed *tm,
			     const char *call, gcry_error_t r, const char *what)
{
	if (c && tm->what)
		ct_timed_end(t, tm);
	if (CT_UNLIKELY(r)) {
		if (c)
			CT_ADD(c->errors, 1);
		struct ct_quiet q = ct_quiet_begin(t);
		record_failure(call, c ? id : CT_NO_PATH, r, what);
		ct_quiet_end(t, q);
	}
	ct_leave_fast(t, CT_FAM_GCRYPT);
	return r;
}

#define NO_REAL()                                                                                            \
	do {                                                                                                 \
		errno = ENOSYS;                                                                              \
		return gcry_error(GPG_ERR_NOT_IMPLEMENTED);                                                  \
	} while (0)

typedef gcry_error_t (*crypt_fn)(gcry_cipher_hd_t, void *, size_t, const void *, size_t);

/* The fast path's cache key of a data request (internal.h's ct_hot_enter): its bytes and its
 * direction, in bits no EVP key sets (evp_data.c's use up to bit 42), so that neither family's
 * cached request ever matches the other's. */
#define HOT_KEY_ENCRYPT (1ull << 43)
#define HOT_KEY_DECRYPT (1ull << 44)

static inline uint64_t hot_key(uint8_t dir, uint64_t bytes)
{
	return bytes | (dir == CT_DIR_ENCRYPT ? HOT_KEY_ENCRYPT : HOT_KEY_DECRYPT);
}

/* One data call: the real function and the call's arguments. */
struct crypt_call {
	crypt_fn real;
	const char *name;
	uint8_t dir;
	gcry_cipher_hd_t h;
	void *out;
	size_t outsize;
	const void *in;
	size_t inlen;
	uint64_t bytes; /* in place (in NULL): outsize bytes, else inlen */
};

static gcry_error_t crypt_run(const struct crypt_call *k)
{
	return k->real(k->h, k->out, k->outsize, k->in, k->inlen);
}

/* A failed data call: counted on its path, an event with its call site. */
static __attribute__((noinline)) gcry_error_t crypt_failed(struct ct_thread *t, struct ct_counters *c,
							   uint32_t id, const struct crypt_call *k,
							   gcry_error_t r)
{
	char what[64];
	struct ct_timed none = { .what = 0 };
	snprintf(what, sizeof(what), "len=%llu outsize=%llu", (unsigned long long)k->bytes,
		 (unsigned long long)k->outsize);
	return call_end(t, c, id, &none, k->name, r, what);
}

/* A call counted in cell ci of c that is due to be timed (a probe, or a span's end). */
static __attribute__((noinline)) gcry_error_t
crypt_timed(struct ct_thread *t, struct ct_counters *c, uint32_t id, unsigned ci, const struct crypt_call *k)
{
	struct ct_timed tm;
	ct_timed_begin(t, &tm, c, id, ci, k->bytes);
	gcry_error_t r = crypt_run(k);
	ct_timed_end(t, &tm);
	if (CT_UNLIKELY(r))
		return crypt_failed(t, c, id, k, r);
	ct_leave_fast(t, CT_FAM_GCRYPT);
	return r;
}

/* Everything the fast path does not take: another handle, length or direction, the first call,
 * a nested call (passed through), a thread without state yet. Counts the call, caches the handle
 * and the request for the next call. */
static __attribute__((noinline)) gcry_error_t crypt_slow(const struct crypt_call *k)
{
	struct ct_thread *t = ct_thread_fast();
	if (!t || !ct_enter_fast(t, CT_FAM_GCRYPT))
		return crypt_run(k);
	uint32_t gen = atomic_load_explicit(&ct_ctxmap_gen, memory_order_relaxed);
	uint32_t id = handle_path(t, k->h, k->dir);
	if (CT_UNLIKELY(id == CT_NO_PATH)) { /* a handle never seen opened: passed through uncounted */
		atomic_fetch_add_explicit(&ct_g.hooked_calls_slow, 1, memory_order_relaxed);
		gcry_error_t r = crypt_run(k);
		ct_leave_fast(t, CT_FAM_GCRYPT);
		return r;
	}
	uint32_t g = ct_guard_all(t);
	struct ct_counters *c = ct_counters_of(t, id);
	/* handle_path may have moved the handle to this direction: cache under the newest generation */
	if (c && ct_ctxmap_get(k->h) == id)
		gen = atomic_load_explicit(&ct_ctxmap_gen, memory_order_relaxed);
	ct_guard_restore(t, g);
	if (CT_UNLIKELY(!c)) {
		gcry_error_t r = crypt_run(k);
		ct_leave_fast(t, CT_FAM_GCRYPT);
		return r;
	}
	const unsigned ci = ct_cell_of_size(k->bytes);
	ct_hot_cache_ctx(t, k->h, CT_ENTRY_GCRYPT, c, id, gen);
	bool timed = ct_tick(t, c, ci, k->bytes);
	if (k->bytes < ct_sample_all_bytes)
		ct_hot_cache_len(t, hot_key(k->dir, k->bytes), k->bytes, ci);
	if (CT_UNLIKELY(timed))
		return crypt_timed(t, c, id, ci, k);
	gcry_error_t r = crypt_run(k);
	if (CT_UNLIKELY(r))
		return crypt_failed(t, c, id, k, r);
	ct_leave_fast(t, CT_FAM_GCRYPT);
	return r;
}

/* The fast path's way out: to the slow path, or to a sample on the cached cell. */
static __attribute__((noinline)) gcry_error_t crypt_other(enum ct_hot how, const struct crypt_call *k)
{
	if (ct_process_off())
		return crypt_run(k);
	struct ct_thread *t = ct_tls_thread;
	if (how == CT_HOT_SAMPLED)
		return crypt_timed(t, t->hot_c, t->hot_path, t->hot_ci, k);
	return crypt_slow(k);
}

/* encrypt and decrypt: the handle and request this thread used last are counted in their cached
 * cell and run (ct_hot_enter, as EVP's data calls); everything else takes crypt_other. */
static inline __attribute__((always_inline)) gcry_error_t crypt_hook(const struct crypt_call *k)
{
	struct ct_thread *t = ct_tls_thread;
	enum ct_hot how = ct_hot_enter(t, CT_FAM_GCRYPT, k->h, hot_key(k->dir, k->bytes));
	if (CT_UNLIKELY(how != CT_HOT_RUN))
		return crypt_other(how, k);
	gcry_error_t r = crypt_run(k);
	if (CT_UNLIKELY(r))
		return crypt_failed(t, t->hot_c, t->hot_path, k, r);
	ct_leave_fast(t, CT_FAM_GCRYPT);
	return r;
}

CT_EXPORT gcry_error_t gcry_cipher_encrypt(gcry_cipher_hd_t h, void *out, size_t outsize, const void *in,
					   size_t inlen)
{
	struct crypt_call k = { CT_REAL(gcry_cipher_encrypt),
				"gcry_cipher_encrypt",
				CT_DIR_ENCRYPT,
				h,
				out,
				outsize,
				in,
				inlen,
				in ? inlen : outsize };
	if (CT_UNLIKELY(!k.real))
		NO_REAL();
	return crypt_hook(&k);
}

CT_EXPORT gcry_error_t gcry_cipher_decrypt(gcry_cipher_hd_t h, void *out, size_t outsize, const void *in,
					   size_t inlen)
{
	struct crypt_call k = { CT_REAL(gcry_cipher_decrypt),
				"gcry_cipher_decrypt",
				CT_DIR_DECRYPT,
				h,
				out,
				outsize,
				in,
				inlen,
				in ? inlen : outsize };
	if (CT_UNLIKELY(!k.real))
		NO_REAL();
	return crypt_hook(&k);
}

/* A phase call (set-key, IV, counter, AAD, tag, final) on the handle's current path. */
struct phase_call {
	const char *name;
	enum ct_phase phase;
	uint64_t bytes;
};

/* A phase call's state from before the real call to after it. */
struct phase_state {
	struct ct_thread *t;
	struct ct_counters *c;
	struct ct_timed tm;
	uint32_t id;
	bool traced;
};

static void phase_begin(struct phase_state *s, gcry_cipher_hd_t h, const struct phase_call *pc)
{
	s->t = ct_thread_fast();
	s->c = NULL;
	s->id = CT_NO_PATH;
	s->traced = s->t && ct_enter_fast(s->t, CT_FAM_GCRYPT);
	if (s->traced)
		s->c = call_begin(s->t, h, CT_DIR_UNKNOWN, CT_CELL_PHASE(pc->phase), pc->bytes, &s->id,
				  &s->tm);
}

/* len: what the failure's detail says the call was given (a key's or an IV's length, never its
 * bytes). */
static gcry_error_t phase_end(struct phase_state *s, const struct phase_call *pc, size_t len, gcry_error_t r)
{
	if (!s->traced)
		return r;
	char what[48];
	snprintf(what, sizeof(what), "len=%llu", (unsigned long long)len);
	return call_end(s->t, s->c, s->id, &s->tm, pc->name, r, what);
}

/* The phase calls that take a buffer and its length (an IV, a counter, AAD, a tag): counted on
 * the handle's current path, timed when due, a failure an event with the length. gettag's buffer
 * is written, the others' read: the same calling convention. */
typedef gcry_error_t (*buf_fn)(gcry_cipher_hd_t, const void *, size_t);

static gcry_error_t phase_hook(buf_fn real, const struct phase_call *pc, gcry_cipher_hd_t h, const void *buf,
			       size_t len)
{
	if (CT_UNLIKELY(!real))
		NO_REAL();
	struct phase_state s;
	phase_begin(&s, h, pc);
	gcry_error_t r = real(h, buf, len);
	return phase_end(&s, pc, len, r);
}

/* A key of another size than the handle's path says (a cipher of variable key length): the
 * handle moves to the paths of that size. Guards raised. */
static void rekey_size(gcry_cipher_hd_t h, uint32_t id, size_t keylen)
{
	struct ct_path_def def;
	unsigned bits = ct_gcrypt_key_bits(0, keylen);
	if (id >= CT_PATH_CAPACITY || !ct_path_def_get(id, &def) || def.key_bits == bits || !bits)
		return;
	uint32_t setup = classify(atomic_load_explicit(&peers[id].algo, memory_order_relaxed),
				  atomic_load_explicit(&peers[id].mode, memory_order_relaxed), bits);
	if (setup == CT_NO_PATH)
		return;
	uint32_t to = def.dir == CT_DIR_ENCRYPT   ? atomic_load(&peers[setup].enc) - 1
		      : def.dir == CT_DIR_DECRYPT ? atomic_load(&peers[setup].dec) - 1
						  : setup;
	ct_ctxmap_set(h, to);
}

CT_EXPORT gcry_error_t gcry_cipher_setkey(gcry_cipher_hd_t h, const void *key, size_t keylen)
{
	gcry_error_t (*real)(gcry_cipher_hd_t, const void *, size_t) = CT_REAL(gcry_cipher_setkey);
	if (CT_UNLIKELY(!real))
		NO_REAL();
	const struct phase_call pc = { "gcry_cipher_setkey", CT_PHASE_KEY, 0 };
	struct phase_state s;
	phase_begin(&s, h, &pc);
	gcry_error_t r = real(h, key, keylen);
	if (s.traced && !r && s.c) {
		struct ct_quiet q = ct_quiet_begin(s.t);
		rekey_size(h, s.id, keylen);
		ct_quiet_end(s.t, q);
	}
	return phase_end(&s, &pc, keylen, r);
}

CT_EXPORT gcry_error_t gcry_cipher_setiv(gcry_cipher_hd_t h, const void *iv, size_t ivlen)
{
	const struct phase_call pc = { "gcry_cipher_setiv", CT_PHASE_MSG, 0 };
	return phase_hook((buf_fn)CT_REAL(gcry_cipher_setiv), &pc, h, iv, ivlen);
}

CT_EXPORT gpg_error_t gcry_cipher_setctr(gcry_cipher_hd_t h, const void *ctr, size_t ctrlen)
{
	const struct phase_call pc = { "gcry_cipher_setctr", CT_PHASE_MSG, 0 };
	return phase_hook((buf_fn)CT_REAL(gcry_cipher_setctr), &pc, h, ctr, ctrlen);
}

CT_EXPORT gcry_error_t gcry_cipher_authenticate(gcry_cipher_hd_t h, const void *abuf, size_t abuflen)
{
	const struct phase_call pc = { "gcry_cipher_authenticate", CT_PHASE_AAD, abuflen };
	return phase_hook((buf_fn)CT_REAL(gcry_cipher_authenticate), &pc, h, abuf, abuflen);
}

CT_EXPORT gcry_error_t gcry_cipher_gettag(gcry_cipher_hd_t h, void *outtag, size_t taglen)
{
	const struct phase_call pc = { "gcry_cipher_gettag", CT_PHASE_TAG, 0 };
	return phase_hook((buf_fn)CT_REAL(gcry_cipher_gettag), &pc, h, outtag, taglen);
}

CT_EXPORT gcry_error_t gcry_cipher_checktag(gcry_cipher_hd_t h, const void *intag, size_t taglen)
{
	const struct phase_call pc = { "gcry_cipher_checktag", CT_PHASE_TAG, 0 };
	return phase_hook((buf_fn)CT_REAL(gcry_cipher_checktag), &pc, h, intag, taglen);
}

/* gcry_cipher_final (GCRYCTL_FINALIZE: the next data call ends the message), the CCM lengths
 * and GCM-SIV's decryption tag are phases of the message; every other command passes through
 * uncounted (gcry_cipher_reset, CFB sync, CBC-CTS...). */
CT_EXPORT gcry_error_t gcry_cipher_ctl(gcry_cipher_hd_t h, int cmd, void *buffer, size_t buflen)
{
	gcry_error_t (*real)(gcry_cipher_hd_t, int, void *, size_t) = CT_REAL(gcry_cipher_ctl);
	if (CT_UNLIKELY(!real))
		NO_REAL();
	struct phase_call pc = { "gcry_cipher_ctl", CT_PHASE_FINAL, 0 };
	if (cmd == GCRYCTL_FINALIZE)
		pc.name = "gcry_cipher_final";
	else if (cmd == GCRYCTL_SET_CCM_LENGTHS)
		pc.phase = CT_PHASE_MSG;
	else if (cmd == GCRYCTL_SET_DECRYPTION_TAG)
		pc.phase = CT_PHASE_TAG;
	else
		return real(h, cmd, buffer, buflen);
	struct phase_state s;
	phase_begin(&s, h, &pc);
	gcry_error_t r = real(h, cmd, buffer, buflen);
	return phase_end(&s, &pc, buflen, r);
}
