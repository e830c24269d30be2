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

/* The reporter splits an event's detail at "; openssl error: " (report/findings.c). */
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

/* Enter the engine family with every other hook blocked for the bookkeeping after the call. */
#define ENGINE_PROLOGUE(fn, fail_ret, ...)                                                        \
	__typeof__(&fn) real = CT_REAL(fn);                                                       \
	if (CT_UNLIKELY(!real)) {                                                                 \
		errno = ENOSYS;                                                                   \
		return fail_ret;                                                                  \
	}                                                                                         \
	struct ct_thread *t = ct_thread_fast();                                                   \
	if (!t || !ct_enter_fast(t, CT_FAM_ENGINE))                                               \
		return real(__VA_ARGS__);

/* Runs stmt with every hook blocked (the error functions call nothing we hook today, but a
 * future hook must not see our own bookkeeping), errno kept. */
#define ENGINE_GUARDED(stmt)                                                                      \
	do {                                                                                      \
		int ge_ = errno;                                                                  \
		uint32_t gg_ = t->guard;                                                          \
		t->guard = CT_GUARD_ALL;                                                          \
		stmt;                                                                             \
		t->guard = gg_;                                                                   \
		errno = ge_;                                                                      \
	} while (0)

/* Before a call that can fail: the error queue's newest entry, to tell what the call adds. */
#define ENGINE_MARK                                                                               \
	struct ct_err_mark mark_;                                                                 \
	ENGINE_GUARDED(ct_err_mark(&mark_))

/* After it: why_ holds "; openssl error: <what the queue says>" when it failed, else "". */
#define ENGINE_WHY(failed)                                                                        \
	char why_[400] = "";                                                                      \
	if (failed)                                                                               \
		ENGINE_GUARDED(engine_why(&mark_, why_, sizeof(why_)))

#define ENGINE_RECORD(...)                                                                        \
	do {                                                                                      \
		int e_ = errno;                                                                   \
		uint32_t g_ = t->guard;                                                           \
		t->guard = CT_GUARD_ALL;                                                          \
		atomic_fetch_add_explicit(&ct_g.hooked_calls_slow, 1, memory_order_relaxed);      \
		__VA_ARGS__;                                                                      \
		t->guard = g_;                                                                    \
		ct_leave_fast(t, CT_FAM_ENGINE);                                                  \
		errno = e_;                                                                       \
	} while (0)

CT_EXPORT ENGINE *ENGINE_by_id(const char *id)
{
	ENGINE_PROLOGUE(ENGINE_by_id, NULL, id)
	ENGINE_MARK;
	ENGINE *r = real(id);
	ENGINE_WHY(!r);
	ENGINE_RECORD(remember_engine(id);
		      ct_event(CT_EV_ENGINE_REQUEST, "ENGINE_by_id", 0, r != NULL, CT_NO_PATH, !r, "id=%s%s",
			       id ? id : "(null)", why_));
	return r;
}

CT_EXPORT int ENGINE_init(ENGINE *e)
{
	ENGINE_PROLOGUE(ENGINE_init, 0, e)
	ENGINE_MARK;
	int r = real(e);
	ENGINE_WHY(r != 1);
	ENGINE_RECORD(ct_event(CT_EV_ENGINE_REQUEST, "ENGINE_init", 0, r, CT_NO_PATH, r != 1, "id=%s%s",
			       engine_name(e), why_));
	return r;
}

CT_EXPORT int ENGINE_finish(ENGINE *e)
{
	ENGINE_PROLOGUE(ENGINE_finish, 0, e)
	if (!e) { /* a no-op that programs call unconditionally: not worth an event */
		ct_leave_fast(t, CT_FAM_ENGINE);
		return real(e);
	}
	const char *name = engine_name(e); /* before: finish may drop the last reference */
	char id[64];
	snprintf(id, sizeof(id), "%s", name);
	int r = real(e);
	ENGINE_RECORD(ct_event(CT_EV_ENGINE_REQUEST, "ENGINE_finish", 0, r, CT_NO_PATH, false, "id=%s", id));
	return r;
}

CT_EXPORT int ENGINE_set_default(ENGINE *e, unsigned int flags)
{
	ENGINE_PROLOGUE(ENGINE_set_default, 0, e, flags)
	ENGINE_MARK;
	int r = real(e, flags);
	ENGINE_WHY(r != 1);
	ENGINE_RECORD(remember_engine(engine_name(e));
		      ct_event(CT_EV_ENGINE_REQUEST, "ENGINE_set_default", 0, r, CT_NO_PATH, r != 1,
			       "id=%s flags=0x%x%s", engine_name(e), flags, why_));
	return r;
}

CT_EXPORT int ENGINE_set_default_ciphers(ENGINE *e)
{
	ENGINE_PROLOGUE(ENGINE_set_default_ciphers, 0, e)
	ENGINE_MARK;
	int r = real(e);
	ENGINE_WHY(r != 1);
	ENGINE_RECORD(remember_engine(engine_name(e));
		      ct_event(CT_EV_ENGINE_REQUEST, "ENGINE_set_default_ciphers", 0, r, CT_NO_PATH, r != 1,
			       "id=%s%s", engine_name(e), why_));
	return r;
}

CT_EXPORT int ENGINE_set_default_string(ENGINE *e, const char *def_list)
{
	ENGINE_PROLOGUE(ENGINE_set_default_string, 0, e, def_list)
	ENGINE_MARK;
	int r = real(e, def_list);
	ENGINE_WHY(r != 1);
	ENGINE_RECORD(remember_engine(engine_name(e));
		      ct_event(CT_EV_ENGINE_REQUEST, "ENGINE_set_default_string", 0, r, CT_NO_PATH, r != 1,
			       "id=%s list=%s%s", engine_name(e), def_list ? def_list : "", why_));
	return r;
}

CT_EXPORT OSSL_PROVIDER *OSSL_PROVIDER_load(OSSL_LIB_CTX *libctx, const char *name)
{
	ENGINE_PROLOGUE(OSSL_PROVIDER_load, NULL, libctx, name)
	ENGINE_MARK;
	OSSL_PROVIDER *r = real(libctx, name);
	ENGINE_WHY(!r);
	ENGINE_RECORD(atomic_fetch_add(&ct_g.classify_gen, 1);
		      ct_event(CT_EV_PROVIDER_LOAD, "OSSL_PROVIDER_load", 0, r != NULL, CT_NO_PATH, !r,
			       "name=%s%s", name ? name : "(null)", why_));
	return r;
}

CT_EXPORT OSSL_PROVIDER *OSSL_PROVIDER_try_load(OSSL_LIB_CTX *libctx, const char *name, int retain_fallbacks)
{
	ENGINE_PROLOGUE(OSSL_PROVIDER_try_load, NULL, libctx, name, retain_fallbacks)
	ENGINE_MARK;
	OSSL_PROVIDER *r = real(libctx, name, retain_fallbacks);
	ENGINE_WHY(!r);
	ENGINE_RECORD(atomic_fetch_add(&ct_g.classify_gen, 1);
		      ct_event(CT_EV_PROVIDER_LOAD, "OSSL_PROVIDER_try_load", 0, r != NULL, CT_NO_PATH, !r,
			       "name=%s retain_fallbacks=%d%s", name ? name : "(null)", retain_fallbacks,
			       why_));
	return r;
}
