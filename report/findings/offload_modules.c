/* SPDX-License-Identifier: MIT */
/*
 * offload_modules.c - providers and engines that are not a crypto offload. Programs probe for
 * OpenSSL's FIPS provider at start (stunnel: OSSL_PROVIDER_try_load("fips") to say "FIPS mode
 * disabled") or load the legacy provider for old algorithms; that such a module is absent says
 * nothing about where cipher work runs, so it is neither an engine-failed error nor a reason to
 * call the process's software paths a silent fallback. Everything not named here (afalg,
 * devcrypto, padlock, a vendor engine or provider) is a request for offload.
 */
#include "findings.h"

#include <string.h>

static const struct rp_module_role providers[] = {
	{ "fips",
	  "OpenSSL's FIPS 140 provider, which runs the same software and AES-NI code as the "
	  "default provider under FIPS rules",
	  "Nothing to fix unless this program must run in FIPS mode; then install OpenSSL's FIPS "
	  "provider and configure it (openssl fipsinstall, docs: fips_module(7))." },
	{ "legacy",
	  "OpenSSL's legacy provider (DES, RC4, Blowfish, CAST, IDEA, SEED and other old "
	  "algorithms, not AES)",
	  "Nothing to fix unless the program needs one of those old algorithms; the legacy "
	  "provider comes with OpenSSL (ossl-modules/legacy.so)." },
	{ "base", "OpenSSL's base provider (key encoders and decoders, no ciphers)",
	  "Nothing to fix for cipher work; the base provider comes with OpenSSL." },
	{ "default", "OpenSSL's default provider (its standard software and AES-NI code)",
	  "Check the OpenSSL installation (`openssl list -providers`, `cryptrace doctor`): "
	  "without the default provider most algorithms are missing." },
	{ "null", "OpenSSL's null provider, which has no algorithms at all", "Nothing to fix." },
};

static const struct rp_module_role engines[] = {
	{ "rdrand",
	  "the rdrand engine (random numbers from the CPU's RDRAND instruction, no "
	  "ciphers)",
	  "Nothing to fix for cipher work: the rdrand engine needs a CPU with RDRAND." },
};

/* "fips" of "name=fips retain_fallbacks=1; openssl error: ...", or of "id=rdrand flags=0x1";
 * a provider named by its file ("/usr/lib/.../ossl-modules/fips.so") by its base name. */
struct ct_str rp_requested_module(const struct ct_event *e)
{
	const char *key = e->kind == CT_EV_PROVIDER_LOAD ? "name=" : "id=";
	size_t klen = strlen(key);
	struct ct_str d = e->detail, none = { .p = "", .len = 0 };
	if (d.len < klen || memcmp(d.p, key, klen))
		return none;
	struct ct_str v = { .p = d.p + klen, .len = 0 };
	while (klen + v.len < d.len && v.p[v.len] != ' ' && v.p[v.len] != ';')
		v.len++;
	v = rp_str_basename(v);
	if (v.len > 3 && !memcmp(v.p + v.len - 3, ".so", 3))
		v.len -= 3;
	return v;
}

const struct rp_module_role *rp_non_offload_module(const struct ct_event *e)
{
	const struct rp_module_role *t;
	size_t n;
	if (e->kind == CT_EV_PROVIDER_LOAD) {
		t = providers;
		n = sizeof(providers) / sizeof(providers[0]);
	} else if (e->kind == CT_EV_ENGINE_REQUEST) {
		t = engines;
		n = sizeof(engines) / sizeof(engines[0]);
	} else {
		return NULL;
	}
	struct ct_str name = rp_requested_module(e);
	for (size_t i = 0; i < n; i++)
		if (rp_str_is(name, t[i].name))
			return &t[i];
	return NULL;
}

bool rp_offload_module_failed(const struct ct_event *e)
{
	return (e->kind == CT_EV_ENGINE_REQUEST || e->kind == CT_EV_PROVIDER_LOAD) && rp_event_failed(e) &&
	       !rp_non_offload_module(e);
}
