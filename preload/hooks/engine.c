/* SPDX-License-Identifier: MIT */
/*
 * engine.c - engine and provider selection: ENGINE_by_id / init / set_default* / finish and
 * OSSL_PROVIDER_load / try_load pass through untouched; each is recorded as an event (id or name,
 * success, and the call site when it failed) so that the reporter can say "engine afalg was
 * requested, failed to load, and the work ran in software". Changes of engine defaults also
 * invalidate the EVP classification caches.
 */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <stdio.h>
#include <string.h>

#include <openssl/engine.h>
#include <openssl/provider.h>

#include "internal.h"

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
	ENGINE *r = real(id);
	ENGINE_RECORD(remember_engine(id);
		      ct_event(CT_EV_ENGINE_REQUEST, "ENGINE_by_id", 0, r != NULL, CT_NO_PATH, !r, "id=%s",
			       id ? id : "(null)"));
	return r;
}

CT_EXPORT int ENGINE_init(ENGINE *e)
{
	ENGINE_PROLOGUE(ENGINE_init, 0, e)
	int r = real(e);
	ENGINE_RECORD(ct_event(CT_EV_ENGINE_REQUEST, "ENGINE_init", 0, r, CT_NO_PATH, r != 1, "id=%s",
			       engine_name(e)));
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
	int r = real(e, flags);
	ENGINE_RECORD(remember_engine(engine_name(e));
		      ct_event(CT_EV_ENGINE_REQUEST, "ENGINE_set_default", 0, r, CT_NO_PATH, r != 1,
			       "id=%s flags=0x%x", engine_name(e), flags));
	return r;
}

CT_EXPORT int ENGINE_set_default_ciphers(ENGINE *e)
{
	ENGINE_PROLOGUE(ENGINE_set_default_ciphers, 0, e)
	int r = real(e);
	ENGINE_RECORD(remember_engine(engine_name(e));
		      ct_event(CT_EV_ENGINE_REQUEST, "ENGINE_set_default_ciphers", 0, r, CT_NO_PATH, r != 1,
			       "id=%s", engine_name(e)));
	return r;
}

CT_EXPORT int ENGINE_set_default_string(ENGINE *e, const char *def_list)
{
	ENGINE_PROLOGUE(ENGINE_set_default_string, 0, e, def_list)
	int r = real(e, def_list);
	ENGINE_RECORD(remember_engine(engine_name(e));
		      ct_event(CT_EV_ENGINE_REQUEST, "ENGINE_set_default_string", 0, r, CT_NO_PATH, r != 1,
			       "id=%s list=%s", engine_name(e), def_list ? def_list : ""));
	return r;
}

CT_EXPORT OSSL_PROVIDER *OSSL_PROVIDER_load(OSSL_LIB_CTX *libctx, const char *name)
{
	ENGINE_PROLOGUE(OSSL_PROVIDER_load, NULL, libctx, name)
	OSSL_PROVIDER *r = real(libctx, name);
	ENGINE_RECORD(atomic_fetch_add(&ct_g.classify_gen, 1);
		      ct_event(CT_EV_PROVIDER_LOAD, "OSSL_PROVIDER_load", 0, r != NULL, CT_NO_PATH, !r,
			       "name=%s", name ? name : "(null)"));
	return r;
}

CT_EXPORT OSSL_PROVIDER *OSSL_PROVIDER_try_load(OSSL_LIB_CTX *libctx, const char *name, int retain_fallbacks)
{
	ENGINE_PROLOGUE(OSSL_PROVIDER_try_load, NULL, libctx, name, retain_fallbacks)
	OSSL_PROVIDER *r = real(libctx, name, retain_fallbacks);
	ENGINE_RECORD(atomic_fetch_add(&ct_g.classify_gen, 1);
		      ct_event(CT_EV_PROVIDER_LOAD, "OSSL_PROVIDER_try_load", 0, r != NULL, CT_NO_PATH, !r,
			       "name=%s retain_fallbacks=%d", name ? name : "(null)", retain_fallbacks));
	return r;
}
