/* SPDX-License-Identifier: MIT */
/*
 * gnutls.c - GnuTLS's cipher API (gnutls_cipher_*) and AEAD API (gnutls_aead_cipher_*): what qpdf,
 * and programs that use GnuTLS as their crypto library, encrypt with. A handle is classified at
 * init like an EVP context (api gnutls, the code GnuTLS runs for it: gnutls_impl.c, the cipher's
 * OpenSSL-style name, key bits) on its encrypt path; its data calls are counted on that path's
 * encrypt and decrypt variants (entry CT_ENTRY_GNUTLS_CIPHER, CT_ENTRY_GNUTLS_AEAD for the one-shot
 * AEAD calls), with the same counting and timing as EVP's (timing.h: ct_tick, ct_timed_begin /
 * ct_timed_end); set_iv, add_auth and tag are the message, AAD and tag phases. A failed call is an
 * event with its call site and GnuTLS's error name; never a key or IV byte. The prototypes are
 * GnuTLS's own header's (compile-time checked); GnuTLS itself is never linked: every real function
 * is found at run time, in the program's libgnutls.
 */
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>

#include "ctxmap.h"
#include "gnutls_internal.h"
#include "internal.h"

extern struct ct_ctxmap ct_global_ctxmap;

#define RA() __builtin_return_address(0)

/* ---- handle set-up -------------------------------------------------------------------------- */

/* The path of a handle just set up for alg with a key of key_size bytes, mapped to handle (guards
 * raised by the caller); ra is where the program called (NULL: not known, no event). */
static uint32_t handle_classify(const char *call, const void *handle, int alg, unsigned key_size,
				uint8_t entry, const void *ra)
{
	char name[48];
	ct_gnutls_cipher_name(alg, name, sizeof(name));
	struct ct_path_key k = {
		.api = CT_API_GNUTLS,
		.dir = CT_DIR_ENCRYPT,
		.entry = entry,
		.key_bits = (uint16_t)(key_size > 0 && key_size < 8192 ? key_size * 8 : 0),
		.impl = ct_gnutls_impl(name),
		.cipher = name,
		.requested = ct_gnutls_overrides(),
	};
	uint32_t id = ct_path_intern_here(&k);
	ct_ctxmap_set(handle, id);
	if (id != CT_NO_PATH && ra)
		ct_event_at_site(CT_EV_CONTEXT, call, id, (uintptr_t)ra, NULL);
	return id;
}

/* An init, timed alone as the path's key set-up (a key schedule: microseconds). */
static struct ct_thread *init_begin(uint64_t *t0)
{
	struct ct_thread *t = ct_thread_get();
	if (!t || !ct_enter_fast(t, CT_FAM_GNUTLS))
		return NULL;
	ct_span_interrupt(t);
	*t0 = ct_clock_now();
	return t;
}

static void init_end(struct ct_thread *t, const char *call, const void *handle, int alg, unsigned key_size,
		     uint8_t entry, int r, uint64_t t0, const void *ra)
{
	uint64_t t1 = ct_clock_now();
	struct ct_quiet q = ct_quiet_begin(t);
	atomic_fetch_add_explicit(&ct_g.hooked_calls_slow, 1, memory_order_relaxed);
	if (r >= 0 && handle) {
		uint32_t id = handle_classify(call, handle, alg, key_size, entry, ra);
		if (id != CT_NO_PATH)
			ct_probe_once(t, id, CT_CELL_PHASE(CT_PHASE_KEY), 0, t0, t1);
	} else {
		ct_gnutls_failed(call, r, CT_NO_PATH);
	}
	ct_quiet_end(t, q);
	ct_leave_fast(t, CT_FAM_GNUTLS);
}

CT_EXPORT int gnutls_cipher_init(gnutls_cipher_hd_t *handle, gnutls_cipher_algorithm_t cipher,
				 const gnutls_datum_t *key, const gnutls_datum_t *iv)
{
	int (*real)(gnutls_cipher_hd_t *, gnutls_cipher_algorithm_t, const gnutls_datum_t *,
		    const gnutls_datum_t *) = CT_REAL(gnutls_cipher_init);
	if (CT_UNLIKELY(!real)) {
		errno = ENOSYS;
		return GNUTLS_E_INTERNAL_ERROR;
	}
	uint64_t t0;
	struct ct_thread *t = init_begin(&t0);
	int r = real(handle, cipher, key, iv);
	if (t)
		init_end(t, "gnutls_cipher_init", r >= 0 && handle ? *handle : NULL, cipher,
			 key ? key->size : 0, CT_ENTRY_GNUTLS_CIPHER, r, t0, RA());
	return r;
}

CT_EXPORT int gnutls_aead_cipher_init(gnutls_aead_cipher_hd_t *handle, gnutls_cipher_algorithm_t cipher,
				      const gnutls_datum_t *key)
{
	int (*real)(gnutls_aead_cipher_hd_t *, gnutls_cipher_algorithm_t, const gnutls_datum_t *) =
		CT_REAL(gnutls_aead_cipher_init);
	if (CT_UNLIKELY(!real)) {
		errno = ENOSYS;
		return GNUTLS_E_INTERNAL_ERROR;
	}
	uint64_t t0;
	struct ct_thread *t = init_begin(&t0);
	int r = real(handle, cipher, key);
	if (t)
		init_end(t, "gnutls_aead_cipher_init", r >= 0 && handle ? *handle : NULL, cipher,
			 key ? key->size : 0, CT_ENTRY_GNUTLS_AEAD, r, t0, RA());
	return r;
}

/* A handle's end: its address may next hold another handle, so its mapping goes now. */
static void forget(const void *handle)
{
	if (handle && ct_ready()) {
		int e = errno;
		ct_ctxmap_del(handle);
		errno = e;
	}
}

CT_EXPORT void gnutls_cipher_deinit(gnutls_cipher_hd_t handle)
{
	void (*real)(gnutls_cipher_hd_t) = CT_REAL(gnutls_cipher_deinit);
	forget(handle);
	if (real)
		real(handle);
}

CT_EXPORT void gnutls_aead_cipher_deinit(gnutls_aead_cipher_hd_t handle)
{
	void (*real)(gnutls_aead_cipher_hd_t) = CT_REAL(gnutls_aead_cipher_deinit);
	forget(handle);
	if (real)
		real(handle);
}

/* ---- counted calls -------------------------------------------------------------------------- */

/* Every counted call's arguments, whichever of the signatures below it has (the rest zero). */
enum op {
	OP_ENCRYPT,    /* (h, text, len) in place */
	OP_DECRYPT,    /* (h, text, len) in place */
	OP_ENCRYPT2,   /* (h, in, inlen, out, outlen) */
	OP_DECRYPT2,   /* the same */
	OP_ENCRYPT3,   /* (h, in, inlen, out, *outlen, flags) */
	OP_DECRYPT3,   /* the same */
	OP_SET_IV,     /* (h, iv, len), void */
	OP_ADD_AUTH,   /* (h, text, len) */
	OP_TAG,        /* (h, tag, len) */
	OP_AEAD_ENC,   /* (h, nonce, nlen, auth, alen, tag_size, in, inlen, out, *outlen) */
	OP_AEAD_DEC,   /* the same */
	OP_AEAD_ENCV,  /* (h, nonce, nlen, auth_iov, n, tag_size, iov, n, out, *outlen) */
	OP_AEAD_ENCV2, /* (h, nonce, nlen, auth_iov, n, iov, n, tag, *tag_size) */
	OP_AEAD_DECV2, /* (h, nonce, nlen, auth_iov, n, iov, n, tag, tag_size) */
};

struct gcall {
	const char *name;
	enum op op;
	void *h;
	const void *in, *nonce, *auth;
	void *out, *tag;
	size_t inlen, outlen, nonce_len, auth_len, tag_size;
	size_t *outlenp, *tag_sizep;
	const giovec_t *auth_iov, *iov;
	int auth_iovcnt, iovcnt;
	unsigned flags;
};

static int run(void *real, const struct gcall *c)
{
	typedef const void *cv;
	switch (c->op) {
	case OP_ENCRYPT:
	case OP_DECRYPT:
	case OP_ADD_AUTH:
	case OP_TAG:
		return ((int (*)(gnutls_cipher_hd_t, void *, size_t))real)(c->h, c->out, c->inlen);
	case OP_ENCRYPT2:
	case OP_DECRYPT2:
		return ((int (*)(gnutls_cipher_hd_t, cv, size_t, void *, size_t))real)(c->h, c->in, c->inlen,
										       c->out, c->outlen);
	case OP_ENCRYPT3:
	case OP_DECRYPT3:
		return ((int (*)(gnutls_cipher_hd_t, cv, size_t, void *, size_t *, unsigned))real)(
			c->h, c->in, c->inlen, c->out, c->outlenp, c->flags);
	case OP_SET_IV:
		((void (*)(gnutls_cipher_hd_t, void *, size_t))real)(c->h, c->out, c->inlen);
		return 0;
	case OP_AEAD_ENC:
	case OP_AEAD_DEC:
		return ((int (*)(gnutls_aead_cipher_hd_t, cv, size_t, cv, size_t, size_t, cv, size_t, void *,
				 size_t *))real)(c->h, c->nonce, c->nonce_len, c->auth, c->auth_len,
						 c->tag_size, c->in, c->inlen, c->out, c->outlenp);
	case OP_AEAD_ENCV:
		return ((int (*)(gnutls_aead_cipher_hd_t, cv, size_t, const giovec_t *, int, size_t,
				 const giovec_t *, int, void *,
				 size_t *))real)(c->h, c->nonce, c->nonce_len, c->auth_iov, c->auth_iovcnt,
						 c->tag_size, c->iov, c->iovcnt, c->out, c->outlenp);
	case OP_AEAD_ENCV2:
		return ((int (*)(gnutls_aead_cipher_hd_t, cv, size_t, const giovec_t *, int, const giovec_t *,
				 int, void *, size_t *))real)(c->h, c->nonce, c->nonce_len, c->auth_iov,
							      c->auth_iovcnt, c->iov, c->iovcnt, c->tag,
							      c->tag_sizep);
	case OP_AEAD_DECV2:
		return ((int (*)(gnutls_aead_cipher_hd_t, cv, size_t, const giovec_t *, int, const giovec_t *,
				 int, void *, size_t))real)(c->h, c->nonce, c->nonce_len, c->auth_iov,
							    c->auth_iovcnt, c->iov, c->iovcnt, c->tag,
							    c->tag_size);
	}
	return GNUTLS_E_INTERNAL_ERROR;
}

static size_t iov_bytes(const giovec_t *iov, int n)
{
	size_t s = 0;
	for (int i = 0; iov && i < n; i++)
		s += iov[i].iov_len;
	return s;
}

/* What a call is: its direction (CT_DIR_UNKNOWN: a phase, counted on the handle's current path),
 * entry, cell and bytes. */
static void call_shape(const struct gcall *c, uint8_t *dir, uint8_t *entry, unsigned *ci, uint64_t *bytes)
{
	*entry = CT_ENTRY_GNUTLS_CIPHER;
	*dir = CT_DIR_UNKNOWN;
	*bytes = c->inlen;
	switch (c->op) {
	case OP_ENCRYPT:
	case OP_ENCRYPT2:
	case OP_ENCRYPT3:
		*dir = CT_DIR_ENCRYPT;
		break;
	case OP_DECRYPT:
	case OP_DECRYPT2:
	case OP_DECRYPT3:
		*dir = CT_DIR_DECRYPT;
		break;
	case OP_SET_IV:
		*bytes = 0;
		*ci = CT_CELL_PHASE(CT_PHASE_MSG);
		return;
	case OP_ADD_AUTH:
		*ci = CT_CELL_PHASE(CT_PHASE_AAD);
		return;
	case OP_TAG:
		*bytes = 0;
		*ci = CT_CELL_PHASE(CT_PHASE_TAG);
		return;
	case OP_AEAD_ENC:
	case OP_AEAD_ENCV:
	case OP_AEAD_ENCV2:
		*entry = CT_ENTRY_GNUTLS_AEAD;
		*dir = CT_DIR_ENCRYPT;
		break;
	case OP_AEAD_DEC:
	case OP_AEAD_DECV2:
		*entry = CT_ENTRY_GNUTLS_AEAD;
		*dir = CT_DIR_DECRYPT;
		break;
	}
	if (c->op == OP_AEAD_ENCV || c->op == OP_AEAD_ENCV2 || c->op == OP_AEAD_DECV2)
		*bytes = iov_bytes(c->iov, c->iovcnt);
	*ci = ct_cell_of_size(*bytes);
}

/* This thread's last handle, the path it maps to and that path's direction and entry, valid while
 * the context map's generation is the one seen (any map change bumps it): a loop of calls on one
 * handle skips the map and the path's variant. */
static __thread struct {
	const void *h;
	uint32_t gen, path;
	uint8_t dir, entry;
} hot __attribute__((tls_model("initial-exec")));

/* A handle made before `cryptrace attach` loaded us, at its first call after: classified from
 * its cipher as its init would have been (gnutls_late.c reads it), its key the cipher's size;
 * CT_NO_PATH when it cannot be read. Its init's call site is not known: no context event. */
static __attribute__((noinline)) uint32_t classify_unseen(struct ct_thread *t, const void *h, uint8_t entry)
{
	uint32_t guard = ct_guard_all(t), id = CT_NO_PATH;
	int alg;
	size_t (*key_size)(gnutls_cipher_algorithm_t) = CT_REAL(gnutls_cipher_get_key_size);
	if (key_size && ct_gnutls_handle_cipher(h, entry == CT_ENTRY_GNUTLS_AEAD, &alg))
		id = handle_classify("(made before the attach)", h, alg,
				     (unsigned)key_size((gnutls_cipher_algorithm_t)alg), entry, NULL);
	ct_guard_restore(t, guard);
	return id;
}

/* The handle's path for a call of dir and entry: a data call moves the handle to its direction's
 * variant (so that the next message's IV and AAD count there); a phase counts where it is. */
static uint32_t handle_path(struct ct_thread *t, const void *h, uint8_t dir, uint8_t entry)
{
	uint32_t gen = atomic_load_explicit(&ct_ctxmap_gen, memory_order_acquire);
	if (hot.h == h && hot.gen == gen && (dir == CT_DIR_UNKNOWN || (hot.dir == dir && hot.entry == entry)))
		return hot.path;
	uint32_t id = ct_ctxmap_lookup_inline(&ct_global_ctxmap, h);
	if (CT_UNLIKELY(id == CT_NO_PATH) && ct_attach_late()) {
		id = classify_unseen(t, h, entry);
		gen = atomic_load_explicit(&ct_ctxmap_gen, memory_order_acquire);
	}
	if (id == CT_NO_PATH)
		return id;
	if (dir != CT_DIR_UNKNOWN && (ct_path_dir(id) != dir || ct_path_entry(id) != entry)) {
		uint32_t guard = ct_guard_all(t);
		id = ct_path_variant(id, dir, entry);
		if (id != CT_NO_PATH)
			ct_ctxmap_set(h, id);
		ct_guard_restore(t, guard);
		if (id == CT_NO_PATH)
			return id;
		gen = atomic_load_explicit(&ct_ctxmap_gen, memory_order_acquire);
	}
	/* cached under the generation read before the lookup (or after our own set): a map change
	 * in between leaves the entry stale at once, never wrong */
	hot.h = h;
	hot.gen = gen;
	hot.path = id;
	hot.dir = ct_path_dir(id);
	hot.entry = ct_path_entry(id);
	return id;
}

/* One call: counted (before it runs) on its handle's path, timed when due; a failure (< 0) is
 * counted and made an event. Returns the real call's result. */
static int counted(void *real, const struct gcall *c)
{
	if (CT_UNLIKELY(!real)) {
		errno = ENOSYS;
		return GNUTLS_E_INTERNAL_ERROR;
	}
	struct ct_thread *t = ct_thread_fast();
	if (!t || !ct_enter_fast(t, CT_FAM_GNUTLS))
		return run(real, c); /* one GnuTLS call inside another: counted once */
	uint8_t dir, entry;
	unsigned ci;
	uint64_t bytes;
	call_shape(c, &dir, &entry, &ci, &bytes);
	uint32_t id = handle_path(t, c->h, dir, entry);
	struct ct_counters *cnt = id == CT_NO_PATH ? NULL : ct_counters_of(t, id);
	if (CT_UNLIKELY(!cnt)) { /* a handle we never saw set up: passed through uncounted */
		int r = run(real, c);
		ct_leave_fast(t, CT_FAM_GNUTLS);
		return r;
	}
	struct ct_timed tm = { .what = 0 };
	if (ct_tick(t, cnt, ci, bytes))
		ct_timed_begin(t, &tm, cnt, id, ci, bytes);
	int r = run(real, c);
	ct_timed_end(t, &tm);
	if (CT_UNLIKELY(r < 0)) {
		CT_ADD(cnt->errors, 1);
		struct ct_quiet q = ct_quiet_begin(t);
		ct_gnutls_failed(c->name, r, id);
		ct_quiet_end(t, q);
	}
	ct_leave_fast(t, CT_FAM_GNUTLS);
	return r;
}

/* ---- gnutls_cipher_* -------------------------------------------------------------------------- */

CT_EXPORT int gnutls_cipher_encrypt(const gnutls_cipher_hd_t handle, void *text, size_t textlen)
{
	struct gcall c = { "gnutls_cipher_encrypt", OP_ENCRYPT, handle, .out = text, .inlen = textlen };
	return counted((void *)CT_REAL(gnutls_cipher_encrypt), &c);
}

CT_EXPORT int gnutls_cipher_decrypt(const gnutls_cipher_hd_t handle, void *ciphertext, size_t ciphertextlen)
{
	struct gcall c = { "gnutls_cipher_decrypt", OP_DECRYPT, handle, .out = ciphertext,
			   .inlen = ciphertextlen };
	return counted((void *)CT_REAL(gnutls_cipher_decrypt), &c);
}

CT_EXPORT int gnutls_cipher_encrypt2(gnutls_cipher_hd_t handle, const void *text, size_t textlen,
				     void *ciphertext, size_t ciphertextlen)
{
	struct gcall c = { "gnutls_cipher_encrypt2",
			   OP_ENCRYPT2,
			   handle,
			   .in = text,
			   .inlen = textlen,
			   .out = ciphertext,
			   .outlen = ciphertextlen };
	return counted((void *)CT_REAL(gnutls_cipher_encrypt2), &c);
}

CT_EXPORT int gnutls_cipher_decrypt2(gnutls_cipher_hd_t handle, const void *ciphertext, size_t ciphertextlen,
				     void *text, size_t textlen)
{
	struct gcall c = { "gnutls_cipher_decrypt2", OP_DECRYPT2, handle,           .in = ciphertext,
			   .inlen = ciphertextlen,   .out = text, .outlen = textlen };
	return counted((void *)CT_REAL(gnutls_cipher_decrypt2), &c);
}

CT_EXPORT int gnutls_cipher_encrypt3(gnutls_cipher_hd_t handle, const void *ptext, size_t ptext_len,
				     void *ctext, size_t *ctext_len, unsigned flags)
{
	struct gcall c = { "gnutls_cipher_encrypt3",
			   OP_ENCRYPT3,
			   handle,
			   .in = ptext,
			   .inlen = ptext_len,
			   .out = ctext,
			   .outlenp = ctext_len,
			   .flags = flags };
	return counted((void *)CT_REAL(gnutls_cipher_encrypt3), &c);
}

CT_EXPORT int gnutls_cipher_decrypt3(gnutls_cipher_hd_t handle, const void *ctext, size_t ctext_len,
				     void *ptext, size_t *ptext_len, unsigned flags)
{
	struct gcall c = { "gnutls_cipher_decrypt3",
			   OP_DECRYPT3,
			   handle,
			   .in = ctext,
			   .inlen = ctext_len,
			   .out = ptext,
			   .outlenp = ptext_len,
			   .flags = flags };
	return counted((void *)CT_REAL(gnutls_cipher_decrypt3), &c);
}

CT_EXPORT void gnutls_cipher_set_iv(gnutls_cipher_hd_t handle, void *iv, size_t ivlen)
{
	void (*real)(gnutls_cipher_hd_t, void *, size_t) = CT_REAL(gnutls_cipher_set_iv);
	struct gcall c = { "gnutls_cipher_set_iv", OP_SET_IV, handle, .out = iv, .inlen = ivlen };
	if (real) /* void: nothing to fail with when it is missing */
		counted((void *)real, &c);
}

CT_EXPORT int gnutls_cipher_add_auth(gnutls_cipher_hd_t handle, const void *text, size_t text_size)
{
	struct gcall c = { "gnutls_cipher_add_auth", OP_ADD_AUTH, handle, .out = (void *)text,
			   .inlen = text_size };
	return counted((void *)CT_REAL(gnutls_cipher_add_auth), &c);
}

CT_EXPORT int gnutls_cipher_tag(gnutls_cipher_hd_t handle, void *tag, size_t tag_size)
{
	struct gcall c = { "gnutls_cipher_tag", OP_TAG, handle, .out = tag, .inlen = tag_size };
	return counted((void *)CT_REAL(gnutls_cipher_tag), &c);
}

/* ---- gnutls_aead_cipher_*: one call per message (its bytes: the text given, a decryption's with
 * its tag, as GnuTLS takes it) ------------------------------------------------------------------ */

CT_EXPORT int gnutls_aead_cipher_encrypt(gnutls_aead_cipher_hd_t handle, const void *nonce, size_t nonce_len,
					 const void *auth, size_t auth_len, size_t tag_size,
					 const void *ptext, size_t ptext_len, void *ctext, size_t *ctext_len)
{
	struct gcall c = { "gnutls_aead_cipher_encrypt",
			   OP_AEAD_ENC,
			   handle,
			   .nonce = nonce,
			   .nonce_len = nonce_len,
			   .auth = auth,
			   .auth_len = auth_len,
			   .tag_size = tag_size,
			   .in = ptext,
			   .inlen = ptext_len,
			   .out = ctext,
			   .outlenp = ctext_len };
	return counted((void *)CT_REAL(gnutls_aead_cipher_encrypt), &c);
}

CT_EXPORT int gnutls_aead_cipher_decrypt(gnutls_aead_cipher_hd_t handle, const void *nonce, size_t nonce_len,
					 const void *auth, size_t auth_len, size_t tag_size,
					 const void *ctext, size_t ctext_len, void *ptext, size_t *ptext_len)
{
	struct gcall c = { "gnutls_aead_cipher_decrypt",
			   OP_AEAD_DEC,
			   handle,
			   .nonce = nonce,
			   .nonce_len = nonce_len,
			   .auth = auth,
			   .auth_len = auth_len,
			   .tag_size = tag_size,
			   .in = ctext,
			   .inlen = ctext_len,
			   .out = ptext,
			   .outlenp = ptext_len };
	return counted((void *)CT_REAL(gnutls_aead_cipher_decrypt), &c);
}

CT_EXPORT int gnutls_aead_cipher_encryptv(gnutls_aead_cipher_hd_t handle, const void *nonce, size_t nonce_len,
					  const giovec_t *auth_iov, int auth_iovcnt, size_t tag_size,
					  const giovec_t *iov, int iovcnt, void *ctext, size_t *ctext_len)
{
	struct gcall c = { "gnutls_aead_cipher_encryptv",
			   OP_AEAD_ENCV,
			   handle,
			   .nonce = nonce,
			   .nonce_len = nonce_len,
			   .auth_iov = auth_iov,
			   .auth_iovcnt = auth_iovcnt,
			   .tag_size = tag_size,
			   .iov = iov,
			   .iovcnt = iovcnt,
			   .out = ctext,
			   .outlenp = ctext_len };
	return counted((void *)CT_REAL(gnutls_aead_cipher_encryptv), &c);
}

CT_EXPORT int gnutls_aead_cipher_encryptv2(gnutls_aead_cipher_hd_t handle, const void *nonce,
					   size_t nonce_len, const giovec_t *auth_iov, int auth_iovcnt,
					   const giovec_t *iov, int iovcnt, void *tag, size_t *tag_size)
{
	struct gcall c = { "gnutls_aead_cipher_encryptv2",
			   OP_AEAD_ENCV2,
			   handle,
			   .nonce = nonce,
			   .nonce_len = nonce_len,
			   .auth_iov = auth_iov,
			   .auth_iovcnt = auth_iovcnt,
			   .iov = iov,
			   .iovcnt = iovcnt,
			   .tag = tag,
			   .tag_sizep = tag_size };
	return counted((void *)CT_REAL(gnutls_aead_cipher_encryptv2), &c);
}

CT_EXPORT int gnutls_aead_cipher_decryptv2(gnutls_aead_cipher_hd_t handle, const void *nonce,
					   size_t nonce_len, const giovec_t *auth_iov, int auth_iovcnt,
					   const giovec_t *iov, int iovcnt, void *tag, size_t tag_size)
{
	struct gcall c = { "gnutls_aead_cipher_decryptv2",
			   OP_AEAD_DECV2,
			   handle,
			   .nonce = nonce,
			   .nonce_len = nonce_len,
			   .auth_iov = auth_iov,
			   .auth_iovcnt = auth_iovcnt,
			   .iov = iov,
			   .iovcnt = iovcnt,
			   .tag = tag,
			   .tag_size = tag_size };
	return counted((void *)CT_REAL(gnutls_aead_cipher_decryptv2), &c);
}
