/* SPDX-License-Identifier: MIT */
/*
 * provider_gcm.c - the provider's AES-GCM (ciphercommon_gcm.c in OpenSSL 3.0): IV buffering and
 * generation, tags, and the TLS 1.2 record parameters (fixed IV, explicit IV, AAD), over
 * aesni/'s GCM.
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/core_dispatch.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>

#include "core.h"
#include "params.h"
#include "provider_ctx.h"

/* ---- GCM ----------------------------------------------------------------------------------- */

static int random_bytes(uint8_t *buf, size_t len)
{
	static int (*rand_bytes)(unsigned char *, int);
	if (!rand_bytes)
		rand_bytes = (int (*)(unsigned char *, int))ct_resolve("RAND_bytes");
	return rand_bytes && len <= INT32_MAX && rand_bytes(buf, (int)len) == 1;
}

/* Key equality without an early exit (the time says nothing about where two keys differ), a
 * word at a time: openssl speed and some AEAD users re-key per message. */
static bool same_key(const uint8_t *a, const uint8_t *b, size_t len)
{
	uint64_t diff = 0;
	size_t i = 0;
	for (; i + 8 <= len; i += 8) {
		uint64_t x, y;
		memcpy(&x, a + i, 8);
		memcpy(&y, b + i, 8);
		diff |= x ^ y;
	}
	for (; i < len; i++)
		diff |= (uint64_t)(a[i] ^ b[i]);
	return diff == 0;
}

static int gcm_setiv(struct ct_rctx *c)
{
	return ct_aes_gcm_setiv(&c->u.gcm, c->giv, c->ivlen) == 0;
}

/* The default provider makes a random IV when encryption starts without one. */
static int gcm_iv_generate(struct ct_rctx *c)
{
	if (c->ivlen < 12 || !random_bytes(c->giv, c->ivlen))
		return 0;
	c->iv_state = IV_BUFFERED;
	c->iv_gen_rand = true;
	return 1;
}

static int gcm_init(struct ct_rctx *c, const unsigned char *key, size_t keylen, const unsigned char *iv,
		    size_t ivlen, const OSSL_PARAM params[], bool enc)
{
	c->enc = enc;
	if (iv) {
		if (ivlen == 0 || ivlen > sizeof(c->giv))
			return 0;
		c->iv_gen_rand = false;
		c->ivlen = ivlen;
		memcpy(c->giv, iv, ivlen);
		c->iv_state = IV_BUFFERED;
	}
	if (key) {
		if (keylen != c->keylen || keylen > sizeof(c->rawkey))
			return 0;
		/* The same key again (openssl speed and some AEAD users re-key per message): the
		 * key schedule and H powers stand; only the message state starts afresh. */
		if (c->key_set && same_key(c->rawkey, key, keylen)) {
			ct_aes_gcm_reset(&c->u.gcm);
		} else {
			c->key_set = false;
			if (ct_aes_gcm_init(&c->u.gcm, key, (unsigned)keylen * 8) != 0)
				return 0;
			memcpy(c->rawkey, key, keylen);
		}
		c->key_set = true;
		c->tls_enc_records = 0;
	}
	return ct_prov_gcm_set_ctx_params(c, params);
}

int ct_prov_gcm_einit(void *vctx, const unsigned char *key, size_t keylen, const unsigned char *iv,
		      size_t ivlen, const OSSL_PARAM params[])
{
	return gcm_init(vctx, key, keylen, iv, ivlen, params, true);
}

int ct_prov_gcm_dinit(void *vctx, const unsigned char *key, size_t keylen, const unsigned char *iv,
		      size_t ivlen, const OSSL_PARAM params[])
{
	return gcm_init(vctx, key, keylen, iv, ivlen, params, false);
}

static void ctr64_inc(uint8_t *counter)
{
	for (int n = 7; n >= 0; n--) {
		if (++counter[n] != 0)
			return;
	}
}

static int gcm_getivgen(struct ct_rctx *c, uint8_t *out, size_t olen)
{
	if (!c->iv_gen || !c->key_set || !gcm_setiv(c))
		return 0;
	if (olen == 0 || olen > c->ivlen)
		olen = c->ivlen;
	memcpy(out, c->giv + c->ivlen - olen, olen);
	ctr64_inc(c->giv + c->ivlen - 8); /* the invocation field is at least 8 bytes */
	c->iv_state = IV_COPIED;
	return 1;
}

int ct_prov_gcm_iv_gen(void *vctx, unsigned char *out, size_t olen)
{
	return gcm_getivgen(vctx, out, olen);
}

static int gcm_setivinv(struct ct_rctx *c, const uint8_t *in, size_t inl)
{
	if (!c->iv_gen || !c->key_set || c->enc || inl > c->ivlen)
		return 0;
	memcpy(c->giv + c->ivlen - inl, in, inl);
	if (!gcm_setiv(c))
		return 0;
	c->iv_state = IV_COPIED;
	return 1;
}

static size_t gcm_tls_init(struct ct_rctx *c, const uint8_t *aad, size_t aad_len)
{
	if (aad_len != TLS1_AAD_LEN)
		return 0;
	memcpy(c->tls_aad, aad, aad_len);
	c->tls_aad_len = aad_len;
	size_t len = (size_t)c->tls_aad[aad_len - 2] << 8 | c->tls_aad[aad_len - 1];
	if (len < GCM_TLS_EXPLICIT_IV_LEN)
		return 0;
	len -= GCM_TLS_EXPLICIT_IV_LEN;
	if (!c->enc) {
		if (len < GCM_TLS_TAG_LEN)
			return 0;
		len -= GCM_TLS_TAG_LEN;
	}
	c->tls_aad[aad_len - 2] = (uint8_t)(len >> 8);
	c->tls_aad[aad_len - 1] = (uint8_t)(len & 0xff);
	return GCM_TLS_TAG_LEN;
}

size_t ct_prov_gcm_tls_aad(void *vctx, const unsigned char *aad, size_t len)
{
	struct ct_rctx *c = vctx;
	const size_t pad = gcm_tls_init(c, aad, len);
	if (pad)
		c->tls_aad_pad_sz = pad;
	return pad;
}

static int gcm_tls_iv_set_fixed(struct ct_rctx *c, const uint8_t *iv, size_t len)
{
	if (len == (size_t)-1) { /* the whole IV (OpenSSH) */
		memcpy(c->giv, iv, c->ivlen);
		c->iv_gen = true;
		c->iv_state = IV_BUFFERED;
		return 1;
	}
	if (len < GCM_TLS_FIXED_IV_LEN || len > c->ivlen || c->ivlen - len < GCM_TLS_EXPLICIT_IV_LEN)
		return 0;
	if (len > 0)
		memcpy(c->giv, iv, len);
	if (c->enc) {
		if (!random_bytes(c->giv + len, c->ivlen - len))
			return 0;
		c->iv_gen_rand = true;
	}
	c->iv_gen = true;
	c->iv_state = IV_BUFFERED;
	return 1;
}

/* One TLS record, in place: explicit IV || payload || tag. */
static int gcm_tls_cipher(struct ct_rctx *c, uint8_t *out, size_t *padlen, const uint8_t *in, size_t len)
{
	int rv = 0;
	size_t plen = 0;
	if (!c->key_set || out != in || len < GCM_TLS_EXPLICIT_IV_LEN + GCM_TLS_TAG_LEN)
		goto err;
	if (c->enc && ++c->tls_enc_records == 0)
		goto err;
	if (c->enc ? !gcm_getivgen(c, out, GCM_TLS_EXPLICIT_IV_LEN)
		   : !gcm_setivinv(c, out, GCM_TLS_EXPLICIT_IV_LEN))
		goto err;
	in += GCM_TLS_EXPLICIT_IV_LEN;
	out += GCM_TLS_EXPLICIT_IV_LEN;
	len -= GCM_TLS_EXPLICIT_IV_LEN + GCM_TLS_TAG_LEN;
	if (ct_aes_gcm_aad(&c->u.gcm, c->tls_aad, c->tls_aad_len) != 0)
		goto err;
	if (c->enc) {
		uint8_t tag[16];
		if (ct_aes_gcm_encrypt(&c->u.gcm, in, out, len) != 0)
			goto err;
		ct_aes_gcm_tag(&c->u.gcm, tag);
		memcpy(out + len, tag, GCM_TLS_TAG_LEN);
		plen = len + GCM_TLS_EXPLICIT_IV_LEN + GCM_TLS_TAG_LEN;
	} else {
		if (ct_aes_gcm_decrypt(&c->u.gcm, in, out, len) != 0 ||
		    ct_aes_gcm_verify(&c->u.gcm, in + len, GCM_TLS_TAG_LEN) != 0) {
			explicit_bzero(out, len);
			goto err;
		}
		plen = len;
	}
	rv = 1;
err:
	c->iv_state = IV_FINISHED;
	c->tls_aad_len = UNSET_SIZE;
	*padlen = plen;
	return rv;
}

static int gcm_cipher_internal(struct ct_rctx *c, uint8_t *out, size_t *padlen, const uint8_t *in, size_t len)
{
	size_t olen = 0;
	int rv = 0;
	if (c->tls_aad_len != UNSET_SIZE)
		return gcm_tls_cipher(c, out, padlen, in, len);
	if (!c->key_set || c->iv_state == IV_FINISHED)
		goto err;
	if (c->iv_state == IV_UNINITIALISED && (!c->enc || !gcm_iv_generate(c)))
		goto err;
	if (c->iv_state == IV_BUFFERED) {
		if (!gcm_setiv(c))
			goto err;
		c->iv_state = IV_COPIED;
	}
	if (in) {
		if (!out) { /* AAD */
			if (ct_aes_gcm_aad(&c->u.gcm, in, len) != 0)
				goto err;
		} else if (c->enc) {
			if (ct_aes_gcm_encrypt(&c->u.gcm, in, out, len) != 0)
				goto err;
		} else {
			if (ct_aes_gcm_decrypt(&c->u.gcm, in, out, len) != 0)
				goto err;
		}
		olen = len;
	} else {
		if (c->enc) {
			ct_aes_gcm_tag(&c->u.gcm, c->tag);
			c->taglen = GCM_TAG_MAX;
		} else {
			if (c->taglen == UNSET_SIZE || ct_aes_gcm_verify(&c->u.gcm, c->tag, c->taglen) != 0)
				goto err;
		}
		c->iv_state = IV_FINISHED; /* never reuse an IV */
	}
	rv = 1;
err:
	*padlen = olen;
	return rv;
}

int ct_prov_gcm_update(void *vctx, unsigned char *out, size_t *outl, size_t outsize, const unsigned char *in,
		       size_t inl)
{
	if (inl == 0) {
		*outl = 0;
		return 1;
	}
	if (outsize < inl)
		return 0;
	return gcm_cipher_internal(vctx, out, outl, in, inl) > 0;
}

int ct_prov_gcm_final(void *vctx, unsigned char *out, size_t *outl, size_t outsize)
{
	(void)outsize;
	if (gcm_cipher_internal(vctx, out, outl, NULL, 0) <= 0)
		return 0;
	*outl = 0;
	return 1;
}

int ct_prov_gcm_cipher(void *vctx, unsigned char *out, size_t *outl, size_t outsize, const unsigned char *in,
		       size_t inl)
{
	if (outsize < inl)
		return 0;
	if (gcm_cipher_internal(vctx, out, outl, in, inl) <= 0)
		return 0;
	*outl = inl;
	return 1;
}

int ct_prov_gcm_get_ctx_params(void *vctx, OSSL_PARAM params[])
{
	struct ct_rctx *c = vctx;
	for (OSSL_PARAM *p = params; p && p->key; p++) {
		int ok = 1;
		if (ct_param_is(p->key, OSSL_CIPHER_PARAM_IVLEN)) {
			ok = ct_param_set_uint(p, c->ivlen);
		} else if (ct_param_is(p->key, OSSL_CIPHER_PARAM_KEYLEN)) {
			ok = ct_param_set_uint(p, c->keylen);
		} else if (ct_param_is(p->key, OSSL_CIPHER_PARAM_AEAD_TAGLEN)) {
			ok = ct_param_set_uint(p, c->taglen != UNSET_SIZE ? c->taglen : GCM_TAG_MAX);
		} else if (ct_param_is(p->key, OSSL_CIPHER_PARAM_IV) ||
			   ct_param_is(p->key, OSSL_CIPHER_PARAM_UPDATED_IV)) {
			if (c->iv_state == IV_UNINITIALISED &&
			    (c->tls_aad_len != UNSET_SIZE || !c->enc || !gcm_iv_generate(c)))
				return 0;
			if (p->data && c->ivlen > p->data_size)
				return 0;
			ok = ct_param_set_octets(p, c->giv, c->ivlen);
		} else if (ct_param_is(p->key, OSSL_CIPHER_PARAM_AEAD_TLS1_AAD_PAD)) {
			ok = ct_param_set_uint(p, c->tls_aad_pad_sz);
		} else if (ct_param_is(p->key, OSSL_CIPHER_PARAM_AEAD_TAG)) {
			size_t sz = p->data_size;
			if (sz == 0 || sz > GCM_TLS_TAG_LEN || !c->enc || c->taglen == UNSET_SIZE)
				return 0;
			ok = ct_param_set_octets(p, c->tag, sz);
		} else if (ct_param_is(p->key, OSSL_CIPHER_PARAM_AEAD_TLS1_GET_IV_GEN)) {
			if (!p->data || p->data_type != OSSL_PARAM_OCTET_STRING ||
			    !gcm_getivgen(c, p->data, p->data_size))
				return 0;
		}
		if (!ok)
			return 0;
	}
	return 1;
}

int ct_prov_gcm_set_ctx_params(void *vctx, const OSSL_PARAM params[])
{
	struct ct_rctx *c = vctx;
	for (const OSSL_PARAM *p = params; p && p->key; p++) {
		if (ct_param_is(p->key, OSSL_CIPHER_PARAM_AEAD_TAG)) {
			size_t sz;
			if (!ct_param_get_octets(p, c->tag, GCM_TLS_TAG_LEN, &sz))
				return 0;
			if (sz == 0 || c->enc)
				return 0;
			c->taglen = sz;
		} else if (ct_param_is(p->key, OSSL_CIPHER_PARAM_AEAD_IVLEN)) {
			uint64_t sz;
			if (!ct_param_get_uint(p, &sz) || sz == 0 || sz > sizeof(c->giv))
				return 0;
			if (c->ivlen != sz) {
				/* an IV already set or generated for the old length is void */
				if (c->iv_state != IV_UNINITIALISED)
					c->iv_state = IV_FINISHED;
				c->ivlen = (size_t)sz;
			}
		} else if (ct_param_is(p->key, OSSL_CIPHER_PARAM_AEAD_TLS1_AAD)) {
			if (p->data_type != OSSL_PARAM_OCTET_STRING ||
			    ct_prov_gcm_tls_aad(c, p->data, p->data_size) == 0)
				return 0;
		} else if (ct_param_is(p->key, OSSL_CIPHER_PARAM_AEAD_TLS1_IV_FIXED)) {
			if (p->data_type != OSSL_PARAM_OCTET_STRING ||
			    !gcm_tls_iv_set_fixed(c, p->data, p->data_size))
				return 0;
		} else if (ct_param_is(p->key, OSSL_CIPHER_PARAM_AEAD_TLS1_SET_IV_INV)) {
			if (!p->data || p->data_type != OSSL_PARAM_OCTET_STRING ||
			    !gcm_setivinv(c, p->data, p->data_size))
				return 0;
		}
	}
	return 1;
}

static const OSSL_PARAM gcm_gettable_ctx[] = {
	OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_KEYLEN, NULL),
	OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_IVLEN, NULL),
	OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_AEAD_TAGLEN, NULL),
	OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_IV, NULL, 0),
	OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_UPDATED_IV, NULL, 0),
	OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, NULL, 0),
	OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_AEAD_TLS1_AAD_PAD, NULL),
	OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TLS1_GET_IV_GEN, NULL, 0),
	OSSL_PARAM_END,
};

static const OSSL_PARAM gcm_settable_ctx[] = {
	OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_AEAD_IVLEN, NULL),
	OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TAG, NULL, 0),
	OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TLS1_AAD, NULL, 0),
	OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TLS1_IV_FIXED, NULL, 0),
	OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_AEAD_TLS1_SET_IV_INV, NULL, 0),
	OSSL_PARAM_END,
};

CT_PROV_LIST_FN(ct_prov_gcm_gettable_ctx_params, gcm_gettable_ctx)
CT_PROV_LIST_FN(ct_prov_gcm_settable_ctx_params, gcm_settable_ctx)
