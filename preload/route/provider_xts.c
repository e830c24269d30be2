/* SPDX-License-Identifier: MIT */
/*
 * provider_xts.c - the provider's AES-XTS (cipher_aes_xts.c in OpenSSL 3.0): one data unit per
 * call, equal key halves refused for encryption; its context parameters are the generic modes'.
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/core_dispatch.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>

#include "core.h"
#include "params.h"
#include "provider_ctx.h"

/* ---- XTS ----------------------------------------------------------------------------------- */

int ct_prov_xts_set_ctx_params(void *vctx, const OSSL_PARAM params[])
{
	struct ct_rctx *c = vctx;
	const OSSL_PARAM *p = ct_param_find_const(params, OSSL_CIPHER_PARAM_KEYLEN);
	uint64_t v;
	if (p && (!ct_param_get_uint(p, &v) || v != c->keylen))
		return 0; /* the key length cannot change */
	return 1;
}

static int xts_init(struct ct_rctx *c, const unsigned char *key, size_t keylen, const unsigned char *iv,
		    size_t ivlen, const OSSL_PARAM params[], bool enc)
{
	c->enc = enc;
	if (iv) {
		if (ivlen != c->ivlen || ivlen != sizeof(c->iv))
			return 0;
		c->iv_set = true;
		memcpy(c->iv, iv, sizeof(c->iv)); /* a constant length: no call (per-unit inits) */
		memcpy(c->oiv, iv, sizeof(c->oiv));
	}
	if (key) {
		if (keylen != c->keylen)
			return 0;
		size_t half = keylen / 2;
		/* Rogaway's attack on equal halves: refused for encryption, as OpenSSL does */
		if (enc && memcmp(key, key + half, half) == 0)
			return 0;
		if (ct_aes_set_key(&c->u.k.key, key, (unsigned)half * 8) != 0 ||
		    ct_aes_set_key(&c->u.k.key2, key + half, (unsigned)half * 8) != 0)
			return 0;
		c->key_set = true;
	}
	/* The tweak depends on the key and the IV alone, and each data call encrypts one unit with
	 * both as set: made here, once per init, not in every call (OpenSSL makes it per call; a
	 * program that re-inits per unit pays it here instead, a loop over one IV once). */
	if ((key || iv) && c->key_set && c->iv_set)
		ct_aes_xts_tweak(&c->u.k.key2, c->iv, c->xts_tweak);
	return params ? ct_prov_xts_set_ctx_params(c, params) : 1;
}

int ct_prov_xts_einit(void *vctx, const unsigned char *key, size_t keylen, const unsigned char *iv,
		      size_t ivlen, const OSSL_PARAM params[])
{
	return xts_init(vctx, key, keylen, iv, ivlen, params, true);
}

int ct_prov_xts_dinit(void *vctx, const unsigned char *key, size_t keylen, const unsigned char *iv,
		      size_t ivlen, const OSSL_PARAM params[])
{
	return xts_init(vctx, key, keylen, iv, ivlen, params, false);
}

int ct_prov_xts_cipher(void *vctx, unsigned char *out, size_t *outl, size_t outsize, const unsigned char *in,
		       size_t inl)
{
	struct ct_rctx *c = vctx;
	(void)outsize;
	if (!c->key_set || !c->iv_set || !out || !in || inl < CT_AES_BLOCK)
		return 0;
	if (inl > (size_t)XTS_MAX_BLOCKS_PER_DATA_UNIT * CT_AES_BLOCK)
		return 0;
	if (ct_aes_xts_tweaked(&c->u.k.key, c->xts_tweak, in, out, inl, c->enc) != 0)
		return 0;
	*outl = inl;
	return 1;
}

int ct_prov_xts_update(void *vctx, unsigned char *out, size_t *outl, size_t outsize, const unsigned char *in,
		       size_t inl)
{
	if (outsize < inl)
		return 0;
	return ct_prov_xts_cipher(vctx, out, outl, outsize, in, inl);
}

int ct_prov_xts_final(void *vctx, unsigned char *out, size_t *outl, size_t outsize)
{
	(void)vctx;
	(void)out;
	(void)outsize;
	*outl = 0;
	return 1;
}

int ct_prov_xts_get_ctx_params(void *vctx, OSSL_PARAM params[])
{
	return ct_prov_generic_get_ctx_params(vctx, params);
}

const OSSL_PARAM *ct_prov_xts_gettable_ctx_params(void *cctx, void *provctx)
{
	return ct_prov_generic_gettable_ctx_params(cctx, provctx);
}

static const OSSL_PARAM xts_settable_ctx[] = {
	OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_KEYLEN, NULL),
	OSSL_PARAM_END,
};

CT_PROV_LIST_FN(ct_prov_xts_settable_ctx_params, xts_settable_ctx)
