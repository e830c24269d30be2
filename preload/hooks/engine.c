/* SPDX-License-Identifier: MIT */
/*
 * engine.c - engine and provider selection: ENGINE_by_id / init / set_default* / finish and
 * OSSL_PROVIDER_load / try_load pass through untouched; each is recorded as an event (id or name,
 * success, and the call site when it failed) so that the reporter can say "engine afalg was
 * requested, failed to load, and the work ran in software". A failure's event also carries what
 * OpenSSL's error queue says about it (peeked, never popped: ossl_err.c), such as the engine
 * module that could not be loaded. Changes of engine defaults also invalidate the EVP
 * classification caches.
 */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <openssl/engine.h>
#include <openssl/provider.h>

#include "internal.h"
#include "ossl_err.h"

static const char *engine_name(const ENGINE *e)
{
	static const char *(*get_id)(const ENGINE *);
	if (!e)
		return "(null)";
	if (!get_id)
		get_id = (const char *(*)(const ENGINE *))ct_resolve("ENGINE_get_id");
	const char *id = get_id ? get_id(e) : NULL;
	return id ? id : "?";
}

/* The reporter splits an event's detail at "; openssl error: " (report/findings/offload_failed.c). */
static void engine_why(const struct ct_err_mark *mark, char *buf, size_t cap)
{
	static const char sep[] = "; openssl error: ";
	char reason[360];

	if (ct_err_reason(mark, reason, sizeof(reason)))
		snprintf(buf, cap, "%s%s", sep, reason);
}

static void remember_engine(const char *id)
{
	/* "dynamic" is the loader apps fall back to for the engine they really want: keep that one */
	if (!id || !strcmp(id, "dynamic") || !strcmp(id, "(null)"))
		return;
	snprintf(ct_g.requested_engine, sizeof(ct_g.requested_engine), "%s", id);
	atomic_fetch_add(&ct_g.classify_gen, 1);
}

/* The engine family's prologue: the real function, and the thread state with the family entered;
 * a nested or stateless call passes straight through. */
#define ENGINE_PROLOGUE(fn, fail_ret, ...)                                                                   \
	__typeof__(&fn) real = CT_REAL(fn);                                                                  \
	if (CT_UNLIKELY(!real)) {                                                                            \
		errno = ENOSYS;                                                                              \
		return fail_ret;                                                                             \
	}                                                                                                    \
	struct ct_thread *t = ct_thread_fast();                                                              \
	if (!t || !ct_enter_fast(t, CT_FAM_ENGINE))                                                          \
		return real(__VA_ARGS__);

/* One hooked call's bookkeeping: the error queue's newest entry before the call (to tell what
 * the call adds when it fails). Every other hook is blocked meanwhile and errno is kept. */
struct engine_call {
	struct ct_thread *t;
	struct ct_err_mark mark;
	bool marked;
};

static struct engine_call engine_begin(struct ct_thread *t, bool may_fail)
{
	struct engine_call c = { .t = t, .marked = may_fail };
	if (may_fail) {
		struct ct_quiet q = ct_quiet_begin(t);
		ct_err_mark(&c.mark);
		ct_quiet_end(t, q);
	}
	return c;
}

/* After the call: remembers the engine the program asked for (remember_id, may be NULL), records
 * the event (detail, then what OpenSSL's error queue says when it failed) and leaves the family. */
static void engine_end(struct engine_call *c, enum ct_event_kind kind, const char *call, int64_t ret,
		       bool failed, const char *remember_id, const char *detail_fmt, ...)
	__attribute__((format(printf, 7, 8)));
static void engine_end(struct engine_call *c, enum ct_event_kind kind, const char *call, int64_t ret,
		       bool failed, const char *remember_id, const char *detail_fmt, ...)
{
	struct ct_quiet q = ct_quiet_begin(c->t);
	atomic_fetch_add_explicit(&ct_g.hooked_calls_slow, 1, memory_order_relaxed);
	if (remember_id)
		remember_engine(remember_id);
	char detail[256], why[400] = "";
	va_list ap;
	va_start(ap, detail_fmt);
	vsnprintf(detail, sizeof(detail), detail_fmt, ap);
	va_end(ap);
	if (failed && c->marked)
		engine_why(&c->mark, why, sizeof(why));
	ct_event(kind, call, 0, ret, CT_NO_PATH, failed, "%s%s", detail, why);
	ct_quiet_end(c->t, q);
	ct_leave_fast(c->t, CT_FAM_ENGINE);
}

CT_EXPORT ENGINE *ENGINE_by_id(const char *id)
{
	CT_PASS_FOREIGN(ENGINE_by_id, id);
	ENGINE_PROLOGUE(ENGINE_by_id, NULL, id)
	struct engine_call c = engine_begin(t, true);
	ENGINE *r = real(id);
	engine_end(&c, CT_EV_ENGINE_REQUEST, "ENGINE_by_id", r != NULL, !r, id, "id=%s", id ? id : "(null)");
	return r;
}

CT_EXPORT int ENGINE_init(ENGINE *e)
{
	CT_PASS_FOREIGN(ENGINE_init, e);
	ENGINE_PROLOGUE(ENGINE_init, 0, e)
	struct engine_call c = engine_begin(t, true);
	int r = real(e);
	engine_end(&c, CT_EV_ENGINE_REQUEST, "ENGINE_init", r, r != 1, NULL, "id=%s", engine_name(e));
	return r;
}

CT_EXPORT int ENGINE_finish(ENGINE *e)
{
	CT_PASS_FOREIGN(ENGINE_finish, e);
	ENGINE_PROLOGUE(ENGINE_finish, 0, e)
	if (!e) { /* a no-op that programs call unconditionally: not worth an event */
		ct_leave_fast(t, CT_FAM_ENGINE);
		return real(e);
	}
	struct engine_call c = engine_begin(t, false);
	const char *name = engine_name(e); /* before: finish may drop the last reference */
	char id[64];
	snprintf(id, sizeof(id), "%s", name);
	int r = real(e);
	engine_end(&c, CT_EV_ENGINE_REQUEST, "ENGINE_finish", r, false, NULL, "id=%s", id);
	return r;
}

CT_EXPORT int ENGINE_set_default(ENGINE *e, unsigned int flags)
{
	CT_PASS_FOREIGN(ENGINE_set_default, e, flags);
	ENGINE_PROLOGUE(ENGINE_set_default, 0, e, flags)
	struct engine_call c = engine_begin(t, true);
	int r = real(e, flags);
	engine_end(&c, CT_EV_ENGINE_REQUEST, "ENGINE_set_default", r, r != 1, engine_name(e),
		   "id=%s flags=0x%x", engine_name(e), flags);
	return r;
}

CT_EXPORT int ENGINE_set_default_ciphers(ENGINE *e)
{
	CT_PASS_FOREIGN(ENGINE_set_default_ciphers, e);
	ENGINE_PROLOGUE(ENGINE_set_default_ciphers, 0, e)
	struct engine_call c = engine_begin(t, true);
	int r = real(e);
	engine_end(&c, CT_EV_ENGINE_REQUEST, "ENGINE_set_default_ciphers", r, r != 1, engine_name(e), "id=%s",
		   engine_name(e));
	return r;
}

CT_EXPORT int ENGINE_set_default_string(ENGINE *e, const char *def_list)
{
	CT_PASS_FOREIGN(ENGINE_set_default_string, e, def_list);
	ENGINE_PROLOGUE(ENGINE_set_default_string, 0, e, def_list)
	struct engine_call c = engine_begin(t, true);
	int r = real(e, def_list);
	engine_end(&c, CT_EV_ENGINE_REQUEST, "ENGINE_set_default_string", r, r != 1, engine_name(e),
		   "id=%s list=%s", engine_name(e), def_list ? def_list : "");
	return r;
}

/* A provider loaded (or not) changes what the EVP classification caches hold. */
CT_EXPORT OSSL_PROVIDER *OSSL_PROVIDER_load(OSSL_LIB_CTX *libctx, const char *name)
{
	CT_PASS_FOREIGN(OSSL_PROVIDER_load, libctx, name);
	ENGINE_PROLOGUE(OSSL_PROVIDER_load, NULL, libctx, name)
	struct engine_call c = engine_begin(t, true);
	OSSL_PROVIDER *r = real(libctx, name);
	atomic_fetch_add(&ct_g.classify_gen, 1);
	engine_end(&c, CT_EV_PROVIDER_LOAD, "OSSL_PROVIDER_load", r != NULL, !r, NULL, "name=%s",
		   name ? name : "(null)");
	return r;
}

CT_EXPORT OSSL_PROVIDER *OSSL_PROVIDER_try_load(OSSL_LIB_CTX *libctx, const char *name, int retain_fallbacks)
{
	CT_PASS_FOREIGN(OSSL_PROVIDER_try_load, libctx, name, retain_fallbacks);
	ENGINE_PROLOGUE(OSSL_PROVIDER_try_load, NULL, libctx, name, retain_fallbacks)
	struct engine_call c = engine_begin(t, true);
	OSSL_PROVIDER *r = real(libctx, name, retain_fallbacks);
	atomic_fetch_add(&ct_g.classify_gen, 1);
	engine_end(&c, CT_EV_PROVIDER_LOAD, "OSSL_PROVIDER_try_load", r != NULL, !r, NULL,
		   "name=%s retain_fallbacks=%d", name ? name : "(null)", retain_fallbacks);
	return r;
}
