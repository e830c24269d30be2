/* SPDX-License-Identifier: MIT */
/*
 * route.c - applying the route table to EVP contexts at init time (see route.h).
 *
 * The cryptrace provider lives in a private OSSL_LIB_CTX, not in the program's default one: the
 * program's own fetches never see it (with two providers offering AES-128-CBC in one context, an
 * unqualified fetch could land on either), and loading it cannot stop OpenSSL from auto-loading
 * the default provider in the program's context. An EVP_CIPHER from any library context works
 * with any EVP_CIPHER_CTX, so the hook only swaps the cipher pointer.
 * Every libcrypto function is bound at run time (CT_REAL): the preload never links libcrypto.
 */
#include <ctype.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <openssl/provider.h>

#include "aesni.h"
#include "core.h"
#include "kernel_backend.h"
#include "provider.h"
#include "route.h"

static pthread_once_t table_once = PTHREAD_ONCE_INIT;
static struct ct_route_table table;
static bool table_active;

static void load_table(void)
{
	const struct ct_config *cfg = ct_config();
	const char *spec = cfg ? cfg->route_spec : NULL;
	if (!spec)
		return;
	char err[256];
	if (ct_route_parse(spec, &table, err, sizeof(err)) != 0) {
		/* The one message the preload puts on the program's stderr, once: the user asked for
		 * routing by setting CRYPTRACE_ROUTE, and a silent no-op would pass for a route that
		 * works (the route spec contract; `cryptrace run` refuses a bad spec before running
		 * anything). The trace gets the same line as an event. */
		char line[320];
		int n = snprintf(line, sizeof(line), "cryptrace: CRYPTRACE_ROUTE: %s; routing nothing\n",
				 err);
		if (n > 0) {
			ssize_t w = write(STDERR_FILENO, line,
					  (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1);
			(void)w;
		}
		ct_event(CT_EV_TRACE_WARNING, "CRYPTRACE_ROUTE", 0, -1, CT_NO_PATH, false, "%s", err);
		return;
	}
	table_active = table.count > 0;
}

void ct_route_init(void)
{
	pthread_once(&table_once, load_table);
}

/* `cryptrace attach` (the tracer parsed the spec): every other thread of the process is stopped
 * and no hook is reachable yet, so the table can be replaced in place. Contexts an earlier
 * attach routed keep their cipher: they never look at the table again. */
void ct_route_reload(void)
{
	pthread_once(&table_once, load_table);
	table_active = false;
	memset(&table, 0, sizeof(table));
	load_table();
}

const struct ct_route_table *ct_route_active(void)
{
	ct_route_init();
	return table_active ? &table : NULL;
}

/* ---- the provider, registered once in a private library context ---------------------------- */

static pthread_mutex_t prov_lock = PTHREAD_MUTEX_INITIALIZER;
static int prov_state; /* 0 not tried, 1 loaded, -1 failed (with prov_error) */
static const char *prov_error;
static OSSL_LIB_CTX *route_libctx;
static EVP_CIPHER *fetched[CT_PROVIDER_ALGS];
/* the kernel routes' provider (ECB, CBC, CTR: the first KERNEL_ALGS of the table) */
#define KERNEL_ALGS CT_PROVIDER_KERNEL_ALGS
static int kprov_state; /* 0 not tried, 1 loaded, -1 failed */
static EVP_CIPHER *kfetched[KERNEL_ALGS];
/* "route:afalg:cbc-aes-aesni" per kernel cipher, set before kfetched[i] is published */
static char kimpl[KERNEL_ALGS][80];
static uint8_t ktarget[KERNEL_ALGS];

/* Caller holds prov_lock. */
static bool provider_load_locked(void)
{
	if (prov_state)
		return prov_state > 0;
	prov_state = -1;
	if (!CT_REAL(OSSL_LIB_CTX_new) || !CT_REAL(OSSL_PROVIDER_add_builtin) ||
	    !CT_REAL(OSSL_PROVIDER_load) || !CT_REAL(EVP_CIPHER_fetch)) {
		/* BoringSSL says so in its version; an OpenSSL without providers is 1.x */
		const char *(*ver)(int) = (const char *(*)(int))ct_resolve("OpenSSL_version");
		const char *v = ver ? ver(0 /* OPENSSL_VERSION */) : NULL;
		prov_error = v && strncmp(v, "BoringSSL", 9) == 0
				     ? "libcrypto has no providers (BoringSSL)"
				     : "libcrypto has no providers (OpenSSL 1.x)";
		return false;
	}
	route_libctx = CT_REAL(OSSL_LIB_CTX_new)();
	if (!route_libctx) {
		prov_error = "OSSL_LIB_CTX_new failed";
		return false;
	}
	if (!CT_REAL(OSSL_PROVIDER_add_builtin)(route_libctx, CT_PROVIDER_NAME, ct_provider_init) ||
	    !CT_REAL(OSSL_PROVIDER_load)(route_libctx, CT_PROVIDER_NAME)) {
		prov_error = "the cryptrace provider did not load";
		return false;
	}
	/* EVP_CIPHER_CTX_rand_key (openssl speed's XTS keys, any program's random keys) draws from
	 * the cipher's provider's library context: give ours a DRBG by loading OpenSSL's default
	 * provider beside it. Private to this context, so the program's own default context (and
	 * its provider auto-loading) is untouched; our fetches ask for provider=cryptrace. */
	if (!CT_REAL(OSSL_PROVIDER_load)(route_libctx, "default"))
		ct_log(1,
		       "route: the default provider did not load beside ours: "
		       "EVP_CIPHER_CTX_rand_key on routed contexts will fail");
	__atomic_store_n(&prov_state, 1, __ATOMIC_RELEASE);
	return true;
}

/* The kernel routes' provider, in the same private library context. Caller holds prov_lock. */
static bool kernel_provider_load_locked(void)
{
	if (kprov_state)
		return kprov_state > 0;
	kprov_state = -1;
	if (!provider_load_locked())
		return false;
	if (!CT_REAL(OSSL_PROVIDER_add_builtin)(route_libctx, CT_PROVIDER_KERNEL_NAME,
						ct_provider_kernel_init) ||
	    !CT_REAL(OSSL_PROVIDER_load)(route_libctx, CT_PROVIDER_KERNEL_NAME))
		return false;
	kprov_state = 1;
	return true;
}

/* The kernel provider's cipher idx (< KERNEL_ALGS), labelled with impl for the trace. A cipher
 * once fetched keeps its first label: the target and driver of a cipher do not change. */
static const EVP_CIPHER *fetch_kernel(int idx, const char *name, unsigned target, const char *impl,
				      const char **why)
{
	pthread_mutex_lock(&prov_lock);
	const EVP_CIPHER *c = NULL;
	if (!kernel_provider_load_locked()) {
		*why = prov_state < 0 && prov_error ? prov_error
						    : "the cryptrace-kernel provider did not load";
	} else {
		if (!kfetched[idx]) {
			snprintf(kimpl[idx], sizeof(kimpl[idx]), "%s", impl);
			ktarget[idx] = (uint8_t)target;
			__atomic_store_n(&kfetched[idx],
					 CT_REAL(EVP_CIPHER_fetch)(route_libctx, name,
								   "provider=" CT_PROVIDER_KERNEL_NAME),
					 __ATOMIC_RELEASE);
		}
		c = kfetched[idx];
		if (!c)
			*why = "EVP_CIPHER_fetch from the cryptrace-kernel provider failed";
	}
	pthread_mutex_unlock(&prov_lock);
	return c;
}

static int kernel_index(const EVP_CIPHER *cipher)
{
	if (!cipher || __atomic_load_n(&prov_state, __ATOMIC_ACQUIRE) <= 0)
		return -1;
	for (int i = 0; i < KERNEL_ALGS; i++) {
		if (__atomic_load_n(&kfetched[i], __ATOMIC_ACQUIRE) == cipher)
			return i;
	}
	return -1;
}

unsigned ct_route_kernel_impl(const EVP_CIPHER *cipher, char *impl, size_t cap)
{
	int i = kernel_index(cipher);
	if (i < 0)
		return CT_ROUTE_NONE;
	if (impl && cap)
		snprintf(impl, cap, "%s", kimpl[i]);
	return ktarget[i];
}

static const EVP_CIPHER *fetch_ours(int idx, const char *name, const char **why)
{
	pthread_mutex_lock(&prov_lock);
	const EVP_CIPHER *c = NULL;
	if (!provider_load_locked()) {
		*why = prov_error;
	} else {
		if (!fetched[idx]) /* ct_route_is_ours reads these without the lock */
			__atomic_store_n(&fetched[idx],
					 CT_REAL(EVP_CIPHER_fetch)(route_libctx, name,
								   "provider=" CT_PROVIDER_NAME),
					 __ATOMIC_RELEASE);
		c = fetched[idx];
		if (!c)
			*why = "EVP_CIPHER_fetch from the cryptrace provider failed";
	}
	pthread_mutex_unlock(&prov_lock);
	return c;
}

int ct_route_is_ours(const EVP_CIPHER *cipher)
{
	if (!cipher || __atomic_load_n(&prov_state, __ATOMIC_ACQUIRE) <= 0)
		return 0;
	for (unsigned i = 0; i < CT_PROVIDER_ALGS; i++) {
		if (__atomic_load_n(&fetched[i], __ATOMIC_ACQUIRE) == cipher)
			return 1;
	}
	return 0;
}

/* ---- the EVP init hook's entry ------------------------------------------------------------- */

/* The cipher's OpenSSL lower-case name, the one route globs are written against: the long name
 * of its NID ("aes-128-gcm"), because the short name of a legacy EVP_aes_128_gcm() is
 * "id-aes128-GCM"; the fetched name for ciphers without a NID. */
static const char *cipher_name(const EVP_CIPHER *c, char *buf, size_t cap)
{
	static int (*get_nid)(const EVP_CIPHER *);
	static const char *(*nid2ln)(int);
	static const char *(*get0_name)(const EVP_CIPHER *);
	if (!get_nid) {
		get_nid = (int (*)(const EVP_CIPHER *))ct_resolve("EVP_CIPHER_get_nid");
		if (!get_nid) /* OpenSSL 1.1 */
			get_nid = (int (*)(const EVP_CIPHER *))ct_resolve("EVP_CIPHER_nid");
		nid2ln = (const char *(*)(int))ct_resolve("OBJ_nid2ln");
		get0_name = (const char *(*)(const EVP_CIPHER *))ct_resolve("EVP_CIPHER_get0_name");
	}
	const char *name = NULL;
	int nid = get_nid ? get_nid(c) : 0;
	if (nid > 0 && nid2ln)
		name = nid2ln(nid);
	if (!name && get0_name)
		name = get0_name(c);
	size_t i = 0;
	for (; name && name[i] && i + 1 < cap; i++)
		buf[i] = (char)tolower((unsigned char)name[i]);
	buf[i] = 0;
	return i ? buf : NULL;
}

static const char *dir_word(int dir)
{
	return dir == CT_DIR_ENCRYPT ? "enc" : dir == CT_DIR_DECRYPT ? "dec" : "any";
}

static void fallback_from(const char *from, const char *to, const char *name, int dir, const char *reason)
{
	ct_event(CT_EV_FALLBACK, "EVP_CipherInit_ex", 0, 0, CT_NO_PATH, false, "route %s -> %s: %s %s: %s",
		 from, to, name, dir_word(dir), reason);
}

static void fallback(const char *name, int dir, const char *reason)
{
	fallback_from(CT_AESNI_TARGET, "native", name, dir, reason);
}

/* Does some rule send (name, dir) to aesni at some request size? Then that is where work the
 * kernel cannot take goes. */
static bool aesni_somewhere(const struct ct_route_table *t, const char *name, int dir)
{
	for (unsigned i = 0; i < t->count; i++) {
		const struct ct_route_rule *r = &t->rules[i];
		if (r->target == CT_ROUTE_AESNI && (r->dir == CT_DIR_UNKNOWN || r->dir == dir) &&
		    ct_route_glob_match(r->glob, name))
			return true;
	}
	return false;
}

/* afalg / cryptodev at init: the kernel provider's cipher when the kernel can take it; else the
 * aesni provider's (when a rule also says aesni for this cipher) or native, with the reason. */
static const EVP_CIPHER *decide_kernel(const struct ct_route_table *t, const char *name, int idx,
				       ENGINE *impl, int dir, unsigned target, unsigned flags,
				       uint32_t *route_out)
{
	const char *tname = target == CT_ROUTE_CRYPTODEV ? "cryptodev" : "afalg";
	const char *why = NULL;
	char driver[64] = "?";
	const EVP_CIPHER *sub = NULL;
	if (impl)
		why = "the program named an ENGINE for this context";
	else if (!ct_kroute_check)
		why = "the kernel routes are not built in";
	else if (!ct_aesni_available())
		why = "no " CT_AESNI_NEEDS
		      " on this CPU (or CRYPTRACE_AESNI_MAX=none): nothing to serve what the "
		      "kernel cannot";
	else if (!(why = ct_kroute_check(target, name, driver, sizeof(driver))) &&
		 (idx < 0 || idx >= KERNEL_ALGS))
		why = "cipher or mode not served by the kernel routes (aes ecb, cbc, ctr)";
	if (!why) {
		char label[80];
		snprintf(label, sizeof(label), "route:%s:%s", tname, driver);
		sub = fetch_kernel(idx, name, target, label, &why);
	}
	if (sub) {
		*route_out = target;
		ct_event(CT_EV_ROUTE, "EVP_CipherInit_ex", 0, 1, CT_NO_PATH, false, "%s %s -> %s (%s%s)",
			 name, dir_word(dir), tname, driver,
			 flags & CT_ROUTE_F_SIZE_DEPENDENT ? ", size condition decided per request" : "");
		return sub;
	}
	/* Only ciphers the kernel routes serve (ECB, CBC, CTR) move to aesni: their small requests
	 * would have run there anyway. Other modes stay as the program asked (tests/route checks). */
	if (!impl && idx >= 0 && idx < KERNEL_ALGS && ct_aesni_available() && aesni_somewhere(t, name, dir)) {
		const char *why2 = NULL;
		sub = fetch_ours(idx, name, &why2);
		if (sub) {
			*route_out = CT_ROUTE_AESNI;
			fallback_from(tname, CT_AESNI_TARGET, name, dir, why ? why : "unknown");
			return sub;
		}
	}
	/* *route_out keeps the kernel target: the program's cipher runs untouched, and the kernel
	 * hooks see whatever it does with the kernel itself */
	*route_out = target;
	fallback_from(tname, "native", name, dir, why ? why : "unknown");
	return NULL;
}

/* The decision for one (cipher, direction): slow (names, globs, the provider's table, events). */
static const EVP_CIPHER *decide(const struct ct_route_table *t, const EVP_CIPHER *requested, ENGINE *impl,
				int enc, uint32_t *route_out)
{
	*route_out = CT_ROUTE_NONE;
	char name[64];
	if (!cipher_name(requested, name, sizeof(name)))
		return NULL;
	int dir = enc == 1 ? CT_DIR_ENCRYPT : enc == 0 ? CT_DIR_DECRYPT : CT_DIR_UNKNOWN;
	unsigned flags;
	enum ct_route_target target = ct_route_lookup_ex(t, name, dir, CT_ROUTE_SIZE_UNKNOWN, &flags);
	if (!(flags & CT_ROUTE_F_MATCHED))
		return NULL;
	*route_out = target;
	int idx = ct_provider_alg_index(name);
	if (target == CT_ROUTE_AFALG || target == CT_ROUTE_CRYPTODEV)
		return decide_kernel(t, name, idx, impl, dir, target, flags, route_out);
	if (target != CT_ROUTE_AESNI)
		return NULL; /* native: untouched */

	const char *why = NULL;
	const EVP_CIPHER *sub = NULL;
	if (impl)
		why = "the program named an ENGINE for this context";
	else if (idx < 0)
		why = "cipher or mode not served by the " CT_AESNI_TARGET " route";
	else if (!ct_aesni_available())
		why = "no " CT_AESNI_NEEDS " on this CPU (or CRYPTRACE_AESNI_MAX=none)";
	else
		sub = fetch_ours(idx, name, &why);
	if (!sub) {
		*route_out = CT_ROUTE_NATIVE;
		fallback(name, dir, why ? why : "unknown");
		return NULL;
	}
	ct_event(CT_EV_ROUTE, "EVP_CipherInit_ex", 0, 1, CT_NO_PATH, false,
		 "%s %s -> " CT_AESNI_TARGET " (%s%s)", name,
		 dir == CT_DIR_ENCRYPT   ? "enc"
		 : dir == CT_DIR_DECRYPT ? "dec"
					 : "any",
		 ct_aesni_level_name(ct_aesni_level()),
		 flags & CT_ROUTE_F_SIZE_DEPENDENT ? ", size condition decided per context" : "");
	return sub;
}

/* Programs that pass the cipher at every message (EVP_EncryptInit_ex(ctx, EVP_aes_128_gcm(), ...)
 * per record) must not pay the decision each time: a small per-thread cache, keyed by the cipher
 * pointer and direction and checked against the cipher's NID (a freed fetched cipher's address
 * may come back as another cipher) and the backend level. Events are therefore recorded once per
 * thread and decision, not per init. */
struct decision {
	const EVP_CIPHER *requested, *result;
	int nid, enc, level;
	uint32_t route;
};
#define DECISION_CACHE 8
static __thread struct decision decisions[DECISION_CACHE];
static __thread unsigned decision_next;

static int nid_of(const EVP_CIPHER *c)
{
	static int (*get_nid)(const EVP_CIPHER *);
	if (!get_nid) {
		get_nid = (int (*)(const EVP_CIPHER *))ct_resolve("EVP_CIPHER_get_nid");
		if (!get_nid)
			get_nid = (int (*)(const EVP_CIPHER *))ct_resolve("EVP_CIPHER_nid");
	}
	return get_nid ? get_nid(c) : 0;
}

const EVP_CIPHER *ct_route_evp_cipher(const EVP_CIPHER *requested, ENGINE *impl, int enc, uint32_t *route_out)
{
	uint32_t route = CT_ROUTE_NONE;
	const EVP_CIPHER *result = NULL;
	const struct ct_route_table *t = ct_route_active();
	if (!t || !requested) {
		/* nothing to do */
	} else if (ct_route_is_ours(requested)) {
		route = CT_ROUTE_AESNI;
	} else if (kernel_index(requested) >= 0) {
		route = ct_route_kernel_impl(requested, NULL, 0);
	} else if (impl) {
		result = decide(t, requested, impl, enc, &route); /* rare: never cached */
	} else {
		int nid = nid_of(requested), level = (int)ct_aesni_level();
		struct decision *hit = NULL;
		for (unsigned i = 0; i < DECISION_CACHE; i++) {
			struct decision *d = &decisions[i];
			if (d->requested == requested && d->enc == enc && d->nid == nid &&
			    d->level == level) {
				hit = d;
				break;
			}
		}
		if (!hit) {
			hit = &decisions[decision_next++ % DECISION_CACHE];
			hit->result = decide(t, requested, impl, enc, &hit->route);
			hit->requested = requested;
			hit->enc = enc;
			hit->nid = nid;
			hit->level = level;
		}
		result = hit->result;
		route = hit->route;
	}
	if (route_out)
		*route_out = route;
	return result;
}
