/* SPDX-License-Identifier: MIT */
/*
 * provider.c - the "cryptrace" OpenSSL 3 provider over aesni/ (see provider.h). In OpenSSL 3 the
 * provider, not EVP, owns block buffering, padding, IV state and the GCM/TLS parameters, so this
 * file reproduces the default provider's rules for each of them (ciphercommon*.c, cipher_aes_xts.c,
 * ciphercommon_gcm.c in OpenSSL 3.0) and hands the block work to the backend. Every difference
 * would be a bug: tests/route/ compares it with the default provider case by case.
 *
 * This file holds the algorithm list, the context life cycle, the algorithm parameters, the
 * dispatch tables generated from the list, and the provider itself; the cipher families are in
 * provider_generic.c, provider_xts.c and provider_gcm.c (provider_ctx.h between them).
 */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <openssl/core_dispatch.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>

#include "aesni.h"
#include "core.h"
#include "native_ctx.h"
#include "kernel_backend.h"
#include "lane.h"
#include "params.h"
#include "provider.h"
#include "provider_ctx.h"

/* ---- the algorithm list: every table below is generated from it ---------------------------- */

/* X(id, name, family, mode, EVP mode, key bytes, IV bytes, block size, aead, custom IV, kernel):
 * kernel marks the ciphers the afalg/cryptodev routes' provider offers too; they come first
 * (route.c indexes its kernel ciphers by their place here, below CT_PROVIDER_KERNEL_ALGS). */
#define CT_PROVIDER_ALG_LIST(X)                                                                              \
	X(AES_128_ECB, "AES-128-ECB", generic, MODE_ECB, EVP_CIPH_ECB_MODE, 16, 0, 16, false, false, 1)      \
	X(AES_192_ECB, "AES-192-ECB", generic, MODE_ECB, EVP_CIPH_ECB_MODE, 24, 0, 16, false, false, 1)      \
	X(AES_256_ECB, "AES-256-ECB", generic, MODE_ECB, EVP_CIPH_ECB_MODE, 32, 0, 16, false, false, 1)      \
	X(AES_128_CBC, "AES-128-CBC", generic, MODE_CBC, EVP_CIPH_CBC_MODE, 16, 16, 16, false, false, 1)     \
	X(AES_192_CBC, "AES-192-CBC", generic, MODE_CBC, EVP_CIPH_CBC_MODE, 24, 16, 16, false, false, 1)     \
	X(AES_256_CBC, "AES-256-CBC", generic, MODE_CBC, EVP_CIPH_CBC_MODE, 32, 16, 16, false, false, 1)     \
	X(AES_128_CTR, "AES-128-CTR", generic, MODE_CTR, EVP_CIPH_CTR_MODE, 16, 16, 1, false, false, 1)      \
	X(AES_192_CTR, "AES-192-CTR", generic, MODE_CTR, EVP_CIPH_CTR_MODE, 24, 16, 1, false, false, 1)      \
	X(AES_256_CTR, "AES-256-CTR", generic, MODE_CTR, EVP_CIPH_CTR_MODE, 32, 16, 1, false, false, 1)      \
	X(AES_128_CFB, "AES-128-CFB", generic, MODE_CFB, EVP_CIPH_CFB_MODE, 16, 16, 1, false, false, 0)      \
	X(AES_192_CFB, "AES-192-CFB", generic, MODE_CFB, EVP_CIPH_CFB_MODE, 24, 16, 1, false, false, 0)      \
	X(AES_256_CFB, "AES-256-CFB", generic, MODE_CFB, EVP_CIPH_CFB_MODE, 32, 16, 1, false, false, 0)      \
	X(AES_128_OFB, "AES-128-OFB", generic, MODE_OFB, EVP_CIPH_OFB_MODE, 16, 16, 1, false, false, 0)      \
	X(AES_192_OFB, "AES-192-OFB", generic, MODE_OFB, EVP_CIPH_OFB_MODE, 24, 16, 1, false, false, 0)      \
	X(AES_256_OFB, "AES-256-OFB", generic, MODE_OFB, EVP_CIPH_OFB_MODE, 32, 16, 1, false, false, 0)      \
	X(AES_128_XTS, "AES-128-XTS", xts, MODE_XTS, EVP_CIPH_XTS_MODE, 32, 16, 1, false, true, 0)           \
	X(AES_256_XTS, "AES-256-XTS", xts, MODE_XTS, EVP_CIPH_XTS_MODE, 64, 16, 1, false, true, 0)           \
	X(AES_128_GCM, "AES-128-GCM", gcm, MODE_GCM, EVP_CIPH_GCM_MODE, 16, 12, 1, true, true, 0)            \
	X(AES_192_GCM, "AES-192-GCM", gcm, MODE_GCM, EVP_CIPH_GCM_MODE, 24, 12, 1, true, true, 0)            \
	X(AES_256_GCM, "AES-256-GCM", gcm, MODE_GCM, EVP_CIPH_GCM_MODE, 32, 12, 1, true, true, 0)

#define ALG_INDEX(id, ...) ALG_##id,
enum { CT_PROVIDER_ALG_LIST(ALG_INDEX) N_ALGS };
_Static_assert(N_ALGS == CT_PROVIDER_ALGS, "provider.h's count is the list's");

#define ALG_KERNEL_COUNT(id, nm, fam, md, em, kl, il, bs, ae, ci, k) +(k)
_Static_assert((0 CT_PROVIDER_ALG_LIST(ALG_KERNEL_COUNT)) == CT_PROVIDER_KERNEL_ALGS,
	       "provider.h's kernel count is the list's");
#define ALG_KERNEL_FIRST(id, nm, fam, md, em, kl, il, bs, ae, ci, k)                                         \
	_Static_assert(!(k) || ALG_##id < CT_PROVIDER_KERNEL_ALGS, nm ": the kernel ciphers come first");
CT_PROVIDER_ALG_LIST(ALG_KERNEL_FIRST)

#define ALG_DESCRIPTION(id, nm, fam, md, em, kl, il, bs, ae, ci, k)                                          \
	[ALG_##id] = { .name = nm,                                                                           \
		       .mode = md,                                                                           \
		       .evp_mode = em,                                                                       \
		       .keylen = kl,                                                                         \
		       .ivlen = il,                                                                          \
		       .blocksize = bs,                                                                      \
		       .aead = ae,                                                                           \
		       .custom_iv = ci },
static const struct ct_alg algs[N_ALGS] = { CT_PROVIDER_ALG_LIST(ALG_DESCRIPTION) };

int ct_provider_alg_index(const char *cipher_name)
{
	for (unsigned i = 0; cipher_name && i < N_ALGS; i++) {
		if (strcasecmp(algs[i].name, cipher_name) == 0)
			return (int)i;
	}
	return -1;
}

bool ct_provider_serves(const char *cipher_name)
{
	return ct_provider_alg_index(cipher_name) >= 0;
}

/* ---- context life cycle -------------------------------------------------------------------- */

static void *rctx_new(const struct ct_alg *alg)
{
	size_t size = (sizeof(struct ct_rctx) + 63) & ~(size_t)63;
	struct ct_rctx *c = aligned_alloc(64, size);
	if (!c)
		return NULL;
	memset(c, 0, sizeof(*c));
	c->alg = alg;
	c->keylen = alg->keylen;
	c->ivlen = alg->ivlen;
	c->pad = true;
	c->taglen = UNSET_SIZE;
	c->tls_aad_len = UNSET_SIZE;
	c->iv_state = IV_UNINITIALISED;
	return c;
}

static void rctx_free(void *vctx)
{
	struct ct_rctx *c = vctx;
	if (!c)
		return;
	ct_route_ctx_freed(); /* a direct lane to it closes (lane.h) */
	ct_native_free(c->native);
	if (c->kroute)
		ct_kroute_free(c->kroute);
	explicit_bzero(c, sizeof(*c)); /* key schedules, raw key, IVs, buffered plaintext */
	free(c);
}

static void *rctx_dup(void *vctx)
{
	struct ct_rctx *src = vctx;
	struct ct_rctx *c = rctx_new(src->alg);
	if (!c)
		return NULL;
	memcpy(c, src, sizeof(*c)); /* self-contained: no pointers into itself */
	/* a copy gets a kernel session of its own (or runs in-process if that fails) */
	c->kroute = src->kroute ? ct_kroute_open(c->alg->name, c->enc, c->rawkey, c->keylen) : NULL;
	if (src->native && !(c->native = ct_native_dup(src->native))) {
		rctx_free(c);
		return NULL;
	}
	return c;
}

/* ---- algorithm parameters ----------------------------------------------------------------- */

static const OSSL_PARAM alg_gettable[] = {
	OSSL_PARAM_uint(OSSL_CIPHER_PARAM_MODE, NULL),
	OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_KEYLEN, NULL),
	OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_IVLEN, NULL),
	OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_BLOCK_SIZE, NULL),
	OSSL_PARAM_int(OSSL_CIPHER_PARAM_AEAD, NULL),
	OSSL_PARAM_int(OSSL_CIPHER_PARAM_CUSTOM_IV, NULL),
	OSSL_PARAM_int(OSSL_CIPHER_PARAM_CTS, NULL),
	OSSL_PARAM_int(OSSL_CIPHER_PARAM_TLS1_MULTIBLOCK, NULL),
	OSSL_PARAM_int(OSSL_CIPHER_PARAM_HAS_RAND_KEY, NULL),
	OSSL_PARAM_END,
};

static const OSSL_PARAM *alg_gettable_params(void *provctx)
{
	(void)provctx;
	return alg_gettable;
}

static int alg_get_params(const struct ct_alg *a, OSSL_PARAM params[])
{
	for (OSSL_PARAM *p = params; p && p->key; p++) {
		int ok = 1;
		if (ct_param_is(p->key, OSSL_CIPHER_PARAM_MODE))
			ok = ct_param_set_uint(p, a->evp_mode);
		else if (ct_param_is(p->key, OSSL_CIPHER_PARAM_KEYLEN))
			ok = ct_param_set_uint(p, a->keylen);
		else if (ct_param_is(p->key, OSSL_CIPHER_PARAM_IVLEN))
			ok = ct_param_set_uint(p, a->ivlen);
		else if (ct_param_is(p->key, OSSL_CIPHER_PARAM_BLOCK_SIZE))
			ok = ct_param_set_uint(p, a->blocksize);
		else if (ct_param_is(p->key, OSSL_CIPHER_PARAM_AEAD))
			ok = ct_param_set_int(p, a->aead);
		else if (ct_param_is(p->key, OSSL_CIPHER_PARAM_CUSTOM_IV))
			ok = ct_param_set_int(p, a->custom_iv);
		else if (ct_param_is(p->key, OSSL_CIPHER_PARAM_CTS) ||
			 ct_param_is(p->key, OSSL_CIPHER_PARAM_TLS1_MULTIBLOCK) ||
			 ct_param_is(p->key, OSSL_CIPHER_PARAM_HAS_RAND_KEY))
			ok = ct_param_set_int(p, 0);
		if (!ok)
			return 0;
	}
	return 1;
}

/* ---- dispatch tables: one per algorithm (newctx and get_params take no algorithm argument) ---- */

#define FN(id, f)                                                                                            \
	{                                                                                                    \
		id, (void (*)(void))(f)                                                                      \
	}

/* The provctx of the "cryptrace-kernel" provider: its contexts go to the kernel routes. */
static const char kernel_provctx = 'k';

static void *rctx_new_for(const struct ct_alg *alg, void *provctx)
{
	struct ct_rctx *c = rctx_new(alg);
	if (c)
		c->kernel = provctx == &kernel_provctx;
	return c;
}

/* Each family's init functions, as the dispatch tables give them: they note the context for the
 * direct lane (lane.h), which learns an EVP context's provider context from a real init. */
#define FAMILY_INITS(fam)                                                                                    \
	static int lane_einit_##fam(void *vctx, const unsigned char *key, size_t keylen,                     \
				    const unsigned char *iv, size_t ivlen, const OSSL_PARAM params[])        \
	{                                                                                                    \
		ct_lane_seen(vctx);                                                                          \
		return ct_prov_##fam##_einit(vctx, key, keylen, iv, ivlen, params);                          \
	}                                                                                                    \
	static int lane_dinit_##fam(void *vctx, const unsigned char *key, size_t keylen,                     \
				    const unsigned char *iv, size_t ivlen, const OSSL_PARAM params[])        \
	{                                                                                                    \
		ct_lane_seen(vctx);                                                                          \
		return ct_prov_##fam##_dinit(vctx, key, keylen, iv, ivlen, params);                          \
	}
FAMILY_INITS(generic)
FAMILY_INITS(xts)
FAMILY_INITS(gcm)

/* A request for CT_LANE_PARAM_RCTX alone (lane.h): answered with the context itself. */
static bool lane_rctx_asked(void *vctx, OSSL_PARAM params[])
{
	if (!params || !params[0].key || params[1].key || !ct_param_is(params[0].key, CT_LANE_PARAM_RCTX))
		return false;
	if (params[0].data_type == OSSL_PARAM_OCTET_PTR && params[0].data) {
		*(void **)params[0].data = vctx;
		params[0].return_size = sizeof(void *);
	}
	return true;
}

/* Each family's context parameters, CT_LANE_PARAM_RCTX first. */
#define FAMILY_GET_CTX_PARAMS(fam)                                                                           \
	static int lane_get_ctx_params_##fam(void *vctx, OSSL_PARAM params[])                                \
	{                                                                                                    \
		return lane_rctx_asked(vctx, params) ? 1 : ct_prov_##fam##_get_ctx_params(vctx, params);     \
	}
FAMILY_GET_CTX_PARAMS(generic)
FAMILY_GET_CTX_PARAMS(xts)
FAMILY_GET_CTX_PARAMS(gcm)

#define ALG_DISPATCH(id, nm, fam, md, em, kl, il, bs, ae, ci, k)                                             \
	static void *newctx_##id(void *provctx)                                                              \
	{                                                                                                    \
		return rctx_new_for(&algs[ALG_##id], provctx);                                               \
	}                                                                                                    \
	static int get_params_##id(OSSL_PARAM params[])                                                      \
	{                                                                                                    \
		return alg_get_params(&algs[ALG_##id], params);                                              \
	}                                                                                                    \
	static const OSSL_DISPATCH dispatch_##id[] = {                                                       \
		FN(OSSL_FUNC_CIPHER_NEWCTX, newctx_##id),                                                    \
		FN(OSSL_FUNC_CIPHER_ENCRYPT_INIT, lane_einit_##fam),                                         \
		FN(OSSL_FUNC_CIPHER_DECRYPT_INIT, lane_dinit_##fam),                                         \
		FN(OSSL_FUNC_CIPHER_UPDATE, ct_prov_##fam##_update),                                         \
		FN(OSSL_FUNC_CIPHER_FINAL, ct_prov_##fam##_final),                                           \
		FN(OSSL_FUNC_CIPHER_CIPHER, ct_prov_##fam##_cipher),                                         \
		FN(OSSL_FUNC_CIPHER_FREECTX, rctx_free),                                                     \
		FN(OSSL_FUNC_CIPHER_DUPCTX, rctx_dup),                                                       \
		FN(OSSL_FUNC_CIPHER_GET_PARAMS, get_params_##id),                                            \
		FN(OSSL_FUNC_CIPHER_GETTABLE_PARAMS, alg_gettable_params),                                   \
		FN(OSSL_FUNC_CIPHER_GET_CTX_PARAMS, lane_get_ctx_params_##fam),                              \
		FN(OSSL_FUNC_CIPHER_GETTABLE_CTX_PARAMS, ct_prov_##fam##_gettable_ctx_params),               \
		FN(OSSL_FUNC_CIPHER_SET_CTX_PARAMS, ct_prov_##fam##_set_ctx_params),                         \
		FN(OSSL_FUNC_CIPHER_SETTABLE_CTX_PARAMS, ct_prov_##fam##_settable_ctx_params),               \
		{ 0, NULL },                                                                                 \
	};
CT_PROVIDER_ALG_LIST(ALG_DISPATCH)

#define ALG_ENTRY(id, nm, fam, md, em, kl, il, bs, ae, ci, k)                                                \
	{ .algorithm_names = nm,                                                                             \
	  .property_definition = "provider=" CT_PROVIDER_NAME,                                               \
	  .implementation = dispatch_##id },
static const OSSL_ALGORITHM cipher_algs[] = {
	CT_PROVIDER_ALG_LIST(ALG_ENTRY){ NULL, NULL, NULL, NULL },
};

/* The kernel routes' provider: the same dispatch tables, for the ciphers marked kernel. */
#define ALG_KERNEL_ENTRY_1(id, nm)                                                                           \
	{ .algorithm_names = nm,                                                                             \
	  .property_definition = "provider=" CT_PROVIDER_KERNEL_NAME,                                        \
	  .implementation = dispatch_##id },
#define ALG_KERNEL_ENTRY_0(id, nm)
#define ALG_KERNEL_ENTRY(id, nm, fam, md, em, kl, il, bs, ae, ci, k) ALG_KERNEL_ENTRY_##k(id, nm)
static const OSSL_ALGORITHM kernel_cipher_algs[] = {
	CT_PROVIDER_ALG_LIST(ALG_KERNEL_ENTRY){ NULL, NULL, NULL, NULL },
};

/* ---- the provider itself ------------------------------------------------------------------- */

static const OSSL_PARAM prov_gettable[] = {
	OSSL_PARAM_utf8_ptr(OSSL_PROV_PARAM_NAME, NULL, 0),
	OSSL_PARAM_utf8_ptr(OSSL_PROV_PARAM_VERSION, NULL, 0),
	OSSL_PARAM_int(OSSL_PROV_PARAM_STATUS, NULL),
	OSSL_PARAM_END,
};

static const OSSL_PARAM *prov_gettable_params(void *provctx)
{
	(void)provctx;
	return prov_gettable;
}

static int set_utf8_ptr(OSSL_PARAM *p, const char *s)
{
	if (p->data_type != OSSL_PARAM_UTF8_PTR)
		return 0;
	p->return_size = strlen(s);
	if (p->data)
		*(const char **)p->data = s;
	return 1;
}

static int prov_get_params(void *provctx, OSSL_PARAM params[])
{
	(void)provctx;
	for (OSSL_PARAM *p = params; p && p->key; p++) {
		int ok = 1;
		if (ct_param_is(p->key, OSSL_PROV_PARAM_NAME))
			ok = set_utf8_ptr(p, "cryptrace in-process AES-NI/VAES route");
		else if (ct_param_is(p->key, OSSL_PROV_PARAM_VERSION))
			ok = set_utf8_ptr(p, "1");
		else if (ct_param_is(p->key, OSSL_PROV_PARAM_STATUS))
			ok = ct_param_set_int(p, 1);
		if (!ok)
			return 0;
	}
	return 1;
}

static const OSSL_ALGORITHM *prov_query(void *provctx, int operation_id, int *no_cache)
{
	*no_cache = 0;
	if (operation_id != OSSL_OP_CIPHER)
		return NULL;
	return provctx == &kernel_provctx ? kernel_cipher_algs : cipher_algs;
}

static void prov_teardown(void *provctx)
{
	(void)provctx;
}

static const OSSL_DISPATCH prov_dispatch[] = {
	FN(OSSL_FUNC_PROVIDER_TEARDOWN, prov_teardown),
	FN(OSSL_FUNC_PROVIDER_GETTABLE_PARAMS, prov_gettable_params),
	FN(OSSL_FUNC_PROVIDER_GET_PARAMS, prov_get_params),
	FN(OSSL_FUNC_PROVIDER_QUERY_OPERATION, prov_query),
	{ 0, NULL },
};

int ct_provider_init(const OSSL_CORE_HANDLE *handle, const OSSL_DISPATCH *in, const OSSL_DISPATCH **out,
		     void **provctx)
{
	(void)in;
	if (!ct_aesni_available())
		return 0;
	*out = prov_dispatch;
	*provctx = (void *)handle; /* no per-provider state: every context is self-contained */
	return 1;
}

int ct_provider_kernel_init(const OSSL_CORE_HANDLE *handle, const OSSL_DISPATCH *in,
			    const OSSL_DISPATCH **out, void **provctx)
{
	(void)handle;
	(void)in;
	if (!ct_aesni_available()) /* the in-process code serves the small and refused requests */
		return 0;
	*out = prov_dispatch;
	*provctx = (void *)&kernel_provctx;
	return 1;
}
