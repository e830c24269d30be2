/* SPDX-License-Identifier: MIT */
/*
 * native_ctx.c - see native_ctx.h. Calls the real libcrypto functions (CT_REAL: never our own
 * hooks, so the work is not counted twice) on a cipher fetched from the program's default
 * library context, exactly as the program would have had it without the route.
 */
#include <limits.h>
#include <stdatomic.h>

#include <openssl/core_names.h>

#include <openssl/evp.h>

#include "core.h"
#include "native_ctx.h"

void *ct_native_open(const char *name, const uint8_t *key, size_t keylen, const uint8_t *iv, size_t ivlen,
		     int enc, const OSSL_PARAM params[])
{
	(void)ivlen;
	if (!CT_REAL(EVP_CIPHER_fetch) || !CT_REAL(EVP_CIPHER_CTX_new) || !CT_REAL(EVP_CipherInit_ex) ||
	    !CT_REAL(EVP_CIPHER_CTX_set_params) || !CT_REAL(EVP_CIPHER_free) || !CT_REAL(EVP_CIPHER_CTX_free))
		return NULL;
	EVP_CIPHER *c = CT_REAL(EVP_CIPHER_fetch)(NULL, name, NULL);
	EVP_CIPHER_CTX *ctx = c ? CT_REAL(EVP_CIPHER_CTX_new)() : NULL;
	(void)keylen; /* same cipher name: the same key length as ours */
	bool ok = ctx && CT_REAL(EVP_CipherInit_ex)(ctx, c, NULL, NULL, NULL, enc) == 1 &&
		  CT_REAL(EVP_CipherInit_ex)(ctx, NULL, NULL, key, iv, enc) == 1 &&
		  (!params || CT_REAL(EVP_CIPHER_CTX_set_params)(ctx, params) == 1);
	if (c)
		CT_REAL(EVP_CIPHER_free)(c); /* the context keeps its own reference */
	if (!ok && ctx) {
		CT_REAL(EVP_CIPHER_CTX_free)(ctx);
		ctx = NULL;
	}
	return ctx;
}

int ct_native_reinit(void *n, const uint8_t *key, const uint8_t *iv, int enc, const OSSL_PARAM params[])
{
	if (CT_REAL(EVP_CipherInit_ex)(n, NULL, NULL, key, iv, enc) != 1)
		return 0;
	return !params || CT_REAL(EVP_CIPHER_CTX_set_params)(n, params) == 1;
}

int ct_native_update(void *n, uint8_t *out, size_t *outl, size_t outsize, const uint8_t *in, size_t inl)
{
	(void)outsize;
	int o = 0;
	if (inl > INT_MAX || !CT_REAL(EVP_CipherUpdate) ||
	    CT_REAL(EVP_CipherUpdate)(n, out, &o, in, (int)inl) != 1)
		return 0;
	*outl = (size_t)o;
	return 1;
}

int ct_native_final(void *n, uint8_t *out, size_t *outl, size_t outsize)
{
	(void)outsize;
	int o = 0;
	if (!CT_REAL(EVP_CipherFinal_ex) || CT_REAL(EVP_CipherFinal_ex)(n, out, &o) != 1)
		return 0;
	*outl = (size_t)o;
	return 1;
}

int ct_native_cipher(void *n, uint8_t *out, size_t *outl, size_t outsize, const uint8_t *in, size_t inl)
{
	(void)outsize;
	if (inl > UINT_MAX || !CT_REAL(EVP_Cipher))
		return 0;
	int r = CT_REAL(EVP_Cipher)(n, out, in, (unsigned)inl);
	if (r < 0)
		return 0;
	*outl = (size_t)r;
	return 1;
}

int ct_native_get_params(void *n, OSSL_PARAM params[])
{
	return CT_REAL(EVP_CIPHER_CTX_get_params) && CT_REAL(EVP_CIPHER_CTX_get_params)(n, params) == 1;
}

int ct_native_set_params(void *n, const OSSL_PARAM params[])
{
	return CT_REAL(EVP_CIPHER_CTX_set_params)(n, params) == 1;
}

void *ct_native_dup(void *n)
{
	if (!CT_REAL(EVP_CIPHER_CTX_copy))
		return NULL;
	EVP_CIPHER_CTX *d = CT_REAL(EVP_CIPHER_CTX_new)();
	if (d && CT_REAL(EVP_CIPHER_CTX_copy)(d, n) != 1) {
		CT_REAL(EVP_CIPHER_CTX_free)(d);
		d = NULL;
	}
	return d;
}

void ct_native_free(void *n)
{
	if (n)
		CT_REAL(EVP_CIPHER_CTX_free)(n);
}

enum ct_native_num_rule ct_native_num_rule(void)
{
	static _Atomic int rule = -1; /* -1: not asked yet */
	int r = atomic_load_explicit(&rule, memory_order_relaxed);
	if (r >= 0)
		return (enum ct_native_num_rule)r;
	r = CT_NUM_UNKNOWN;
	/* no key: setting num needs none, and no key material is touched */
	void *n = ct_native_open("AES-128-OFB", NULL, 16, NULL, 16, 1, NULL);
	if (n) {
		unsigned one = 1;
		OSSL_PARAM p[2] = {
			{ OSSL_CIPHER_PARAM_NUM, OSSL_PARAM_UNSIGNED_INTEGER, &one, sizeof(one),
			  OSSL_PARAM_UNMODIFIED },
			{ NULL, 0, NULL, 0, 0 },
		};
		r = ct_native_set_params(n, p) ? CT_NUM_ANY : CT_NUM_BELOW_BLOCK;
		ct_native_free(n);
	}
	atomic_store_explicit(&rule, r, memory_order_relaxed);
	return (enum ct_native_num_rule)r;
}
