/* SPDX-License-Identifier: MIT */
/*
 * provider_generic.c - the provider's generic modes (ECB, CBC, CTR, CFB128, OFB), with the
 * default provider's buffering and padding rules (ciphercommon.c in OpenSSL 3.0): whole blocks
 * go to aesni/ (or, on a kernel route, to the kernel session first), libssl's TLS CBC record
 * layer to a native context (native_ctx.h).
 */
#include <stdlib.h>
#include <string.h>

#include <openssl/core_dispatch.h>
#include <openssl/core_names.h>
#include <openssl/evp.h>

#include "core.h"
#include "kernel_backend.h"
#include "native_ctx.h"
#include "params.h"
#include "provider_ctx.h"

/* ---- the block work ------------------------------------------------------------------------ */

/* The "hw cipher" of OpenSSL's generic modes: len bytes, IV/num state carried in the ctx. */
static void hw_cipher(struct ct_rctx *c, uint8_t *out, const uint8_t *in, size_t len)
{
	if (CT_UNLIKELY(c->kroute != NULL) && c->num == 0) { /* CTR: only from a block boundary */
		size_t done = ct_kroute_cipher(c->kroute, c->enc, c->iv, in, out, len, c->req_len);
		if (done == len)
			return;
		in += done;
		out += done;
		len -= done;
	}
	switch (c->alg->mode) {
	case MODE_ECB:
		if (c->enc)
			ct_aes_ecb_encrypt(&c->u.k.key, in, out, len);
		else
			ct_aes_ecb_decrypt(&c->u.k.key, in, out, len);
		break;
	case MODE_CBC:
		if (c->enc)
			ct_aes_cbc_encrypt(&c->u.k.key, c->iv, in, out, len);
		else
			ct_aes_cbc_decrypt(&c->u.k.key, c->iv, in, out, len);
		break;
	case MODE_CTR:
		ct_aes_ctr128(&c->u.k.key, c->iv, c->buf, &c->num, in, out, len);
		break;
	case MODE_CFB:
		ct_aes_cfb128(&c->u.k.key, c->iv, &c->num, in, out, len, c->enc);
		break;
	case MODE_OFB:
		ct_aes_ofb128(&c->u.k.key, c->iv, &c->num, in, out, len);
		break;
	default:
		break;
	}
}

/* ---- generic modes (ECB, CBC, CTR, CFB, OFB) ----------------------------------------------- */

static int generic_init(struct ct_rctx *c, const unsigned char *key, size_t keylen, const unsigned char *iv,
			size_t ivlen, const OSSL_PARAM params[], bool enc)
{
	if (c->native)
		return ct_native_reinit(c->native, key, iv, enc, params);
	c->num = 0;
	c->bufsz = 0;
	c->enc = enc;
	enum ct_mode m = c->alg->mode;
	if (iv && m != MODE_ECB) {
		if (ivlen != c->ivlen || ivlen > sizeof(c->iv))
			return 0;
		c->iv_set = true;
		memcpy(c->iv, iv, ivlen);
		memcpy(c->oiv, iv, ivlen);
	}
	/* OpenSSL 3 restores the IV on a key-only re-init for these modes (1.1.1 compatibility) */
	if (!iv && c->iv_set && (m == MODE_CBC || m == MODE_CFB || m == MODE_OFB))
		memcpy(c->iv, c->oiv, c->ivlen);
	if (key) {
		if (keylen != c->keylen)
			return 0;
		/* the same key again (a re-init per message): the kernel session stands */
		bool same_session = c->kroute && c->key_set && memcmp(c->rawkey, key, keylen) == 0;
		if (ct_aes_set_key(&c->u.k.key, key, (unsigned)keylen * 8) != 0)
			return 0;
		memcpy(c->rawkey, key, keylen);
		c->key_set = true;
		if (c->kernel && ct_kroute_open && !same_session) {
			if (c->kroute)
				ct_kroute_free(c->kroute);
			c->kroute = ct_kroute_open(c->alg->name, enc, key, keylen);
		}
	}
	return ct_prov_generic_set_ctx_params(c, params);
}

int ct_prov_generic_einit(void *vctx, const unsigned char *key, size_t keylen, const unsigned char *iv,
			  size_t ivlen, const OSSL_PARAM params[])
{
	return generic_init(vctx, key, keylen, iv, ivlen, params, true);
}

int ct_prov_generic_dinit(void *vctx, const unsigned char *key, size_t keylen, const unsigned char *iv,
			  size_t ivlen, const OSSL_PARAM params[])
{
	return generic_init(vctx, key, keylen, iv, ivlen, params, false);
}

/* Copies input into the partial block; returns the whole-block part of what is left. */
static size_t fill_block(uint8_t *buf, size_t *bufsz, size_t bs, const uint8_t **in, size_t *inl)
{
	size_t take = bs - *bufsz;
	if (*inl < take)
		take = *inl;
	memcpy(buf + *bufsz, *in, take);
	*in += take;
	*inl -= take;
	*bufsz += take;
	return *inl & ~(bs - 1);
}

static int block_update(void *vctx, unsigned char *out, size_t *outl, size_t outsize, const unsigned char *in,
			size_t inl)
{
	struct ct_rctx *c = vctx;
	const size_t bs = c->alg->blocksize;
	size_t produced = 0, whole;
	if (!c->key_set)
		return 0;
	if (c->bufsz != 0)
		whole = fill_block(c->buf, &c->bufsz, bs, &in, &inl);
	else
		whole = inl & ~(bs - 1);
	/* Decrypting with padding, a block that ends the input is held back: it may be the last. */
	if (c->bufsz == bs && (c->enc || inl > 0 || !c->pad)) {
		if (outsize < bs)
			return 0;
		hw_cipher(c, out, c->buf, bs);
		c->bufsz = 0;
		produced = bs;
		out += bs;
	}
	if (whole > 0) {
		if (!c->enc && c->pad && whole == inl)
			whole -= bs;
		produced += whole;
		if (outsize < produced)
			return 0;
	}
	if (whole > 0) {
		hw_cipher(c, out, in, whole);
		in += whole;
		inl -= whole;
	}
	if (inl != 0) {
		if (c->bufsz + inl > bs)
			return 0;
		memcpy(c->buf + c->bufsz, in, inl);
		c->bufsz += inl;
	}
	*outl = produced;
	return 1;
}

static int block_final(void *vctx, unsigned char *out, size_t *outl, size_t outsize)
{
	struct ct_rctx *c = vctx;
	const size_t bs = c->alg->blocksize;
	if (!c->key_set)
		return 0;
	if (c->enc) {
		if (c->pad) {
			uint8_t padv = (uint8_t)(bs - c->bufsz);
			memset(c->buf + c->bufsz, padv, bs - c->bufsz);
			c->bufsz = bs;
		} else if (c->bufsz == 0) {
			*outl = 0;
			return 1;
		} else if (c->bufsz != bs) {
			return 0; /* wrong final block length */
		}
		if (outsize < bs)
			return 0;
		hw_cipher(c, out, c->buf, bs);
		c->bufsz = 0;
		*outl = bs;
		return 1;
	}
	if (c->bufsz != bs) {
		if (c->bufsz == 0 && !c->pad) {
			*outl = 0;
			return 1;
		}
		return 0;
	}
	hw_cipher(c, c->buf, c->buf, bs);
	if (c->pad) {
		size_t padv = c->buf[bs - 1];
		if (padv == 0 || padv > bs)
			return 0; /* bad decrypt */
		for (size_t i = 0; i < padv; i++) {
			if (c->buf[bs - 1 - i] != padv)
				return 0;
		}
		c->bufsz = bs - padv;
	}
	if (outsize < c->bufsz)
		return 0;
	memcpy(out, c->buf, c->bufsz);
	*outl = c->bufsz;
	c->bufsz = 0;
	return 1;
}

static int stream_update(void *vctx, unsigned char *out, size_t *outl, size_t outsize,
			 const unsigned char *in, size_t inl)
{
	struct ct_rctx *c = vctx;
	if (!c->key_set)
		return 0;
	if (inl == 0) {
		*outl = 0;
		return 1;
	}
	if (outsize < inl)
		return 0;
	hw_cipher(c, out, in, inl);
	*outl = inl;
	return 1;
}

static int stream_final(void *vctx, unsigned char *out, size_t *outl, size_t outsize)
{
	struct ct_rctx *c = vctx;
	(void)out;
	(void)outsize;
	if (!c->key_set)
		return 0;
	*outl = 0;
	return 1;
}

static __attribute__((noinline)) int generic_update_slow(struct ct_rctx *c, unsigned char *out, size_t *outl,
							 size_t outsize, const unsigned char *in, size_t inl)
{
	if (CT_UNLIKELY(c->native != NULL))
		return ct_native_update(c->native, out, outl, outsize, in, inl);
	c->req_len = inl;
	if (c->alg->blocksize > 1)
		return block_update(c, out, outl, outsize, in, inl);
	return stream_update(c, out, outl, outsize, in, inl);
}

int ct_prov_generic_update(void *vctx, unsigned char *out, size_t *outl, size_t outsize,
			   const unsigned char *in, size_t inl)
{
	struct ct_rctx *c = vctx;
	/* Whole blocks, nothing buffered, nothing to hold back (encrypting, or decrypting without
	 * padding): what block_update would do, without its bookkeeping; kept small so that the
	 * small requests of openssl speed and of programs that chunk by blocks pay for little
	 * more than the AES itself. */
	if (c->bufsz == 0 && (inl & 15) == 0 && inl != 0 && c->alg->blocksize == 16 && (c->enc || !c->pad) &&
	    c->key_set && outsize >= inl && CT_LIKELY(c->native == NULL)) {
		c->req_len = inl;
		*outl = inl;
		hw_cipher(c, out, in, inl);
		return 1;
	}
	return generic_update_slow(c, out, outl, outsize, in, inl);
}

int ct_prov_generic_final(void *vctx, unsigned char *out, size_t *outl, size_t outsize)
{
	struct ct_rctx *c = vctx;
	if (CT_UNLIKELY(c->native != NULL))
		return ct_native_final(c->native, out, outl, outsize);
	if (c->alg->blocksize > 1)
		return block_final(vctx, out, outl, outsize);
	return stream_final(vctx, out, outl, outsize);
}

/* EVP_Cipher(): the raw mode, no buffering or padding. */
int ct_prov_generic_cipher(void *vctx, unsigned char *out, size_t *outl, size_t outsize,
			   const unsigned char *in, size_t inl)
{
	struct ct_rctx *c = vctx;
	if (CT_UNLIKELY(c->native != NULL))
		return ct_native_cipher(c->native, out, outl, outsize, in, inl);
	if (!c->key_set || outsize < inl)
		return 0;
	c->req_len = inl;
	hw_cipher(c, out, in, inl);
	*outl = inl;
	return 1;
}

int ct_prov_generic_get_ctx_params(void *vctx, OSSL_PARAM params[])
{
	struct ct_rctx *c = vctx;
	if (c->native)
		return ct_native_get_params(c->native, params);
	for (OSSL_PARAM *p = params; p && p->key; p++) {
		int ok = 1;
		if (ct_param_is(p->key, OSSL_CIPHER_PARAM_IVLEN))
			ok = ct_param_set_uint(p, c->ivlen);
		else if (ct_param_is(p->key, OSSL_CIPHER_PARAM_PADDING))
			ok = ct_param_set_uint(p, c->pad);
		else if (ct_param_is(p->key, OSSL_CIPHER_PARAM_IV))
			ok = ct_param_set_octets(p, c->oiv, c->ivlen);
		else if (ct_param_is(p->key, OSSL_CIPHER_PARAM_UPDATED_IV))
			ok = ct_param_set_octets(p, c->iv, c->ivlen);
		else if (ct_param_is(p->key, OSSL_CIPHER_PARAM_NUM))
			ok = ct_param_set_uint(p, c->num);
		else if (ct_param_is(p->key, OSSL_CIPHER_PARAM_KEYLEN))
			ok = ct_param_set_uint(p, c->keylen);
		else if (ct_param_is(p->key, OSSL_CIPHER_PARAM_TLS_MAC))
			ok = ct_param_set_octets(p, NULL, 0);
		if (!ok)
			return 0;
	}
	return 1;
}

/* libssl set `tls-version`: from now on a native context does the work (see native_ctx.h). */
static int hand_over_to_native(struct ct_rctx *c, const OSSL_PARAM params[])
{
	if (!c->key_set)
		return 0;
	c->native = ct_native_open(c->alg->name, c->rawkey, c->keylen, c->iv_set ? c->iv : NULL, c->ivlen,
				   c->enc, params);
	if (!c->native)
		return 0;
	ct_event(CT_EV_FALLBACK, "EVP_CIPHER_CTX_set_params", 0, 0, CT_NO_PATH, false,
		 "route " CT_AESNI_TARGET " -> native: %s: libssl's TLS CBC record layer (tls-version set)",
		 c->alg->name);
	return 1;
}

int ct_prov_generic_set_ctx_params(void *vctx, const OSSL_PARAM params[])
{
	struct ct_rctx *c = vctx;
	if (c->native)
		return ct_native_set_params(c->native, params);
	for (const OSSL_PARAM *p = params; p && p->key; p++) {
		uint64_t v;
		if (ct_param_is(p->key, OSSL_CIPHER_PARAM_PADDING)) {
			if (!ct_param_get_uint(p, &v) || v > UINT32_MAX)
				return 0;
			c->pad = v != 0;
		} else if (ct_param_is(p->key, OSSL_CIPHER_PARAM_NUM)) {
			if (!ct_param_get_uint(p, &v) || v > UINT32_MAX)
				return 0;
			/* As the installed libcrypto does: 3.0.22 refuses num >= the block size (1 for
			 * the stream modes), 3.0.19 took any num; of that, the AES block is the only
			 * range that is memory-safe for the backend. */
			unsigned limit = ct_native_num_rule() == CT_NUM_BELOW_BLOCK ? c->alg->blocksize
										    : CT_AES_BLOCK;
			if (v >= limit)
				return 0;
			c->num = (unsigned)v;
		} else if (ct_param_is(p->key, OSSL_CIPHER_PARAM_USE_BITS)) {
			if (!ct_param_get_uint(p, &v))
				return 0; /* only CFB1 uses it; accepted and ignored like OpenSSL */
		} else if (ct_param_is(p->key, OSSL_CIPHER_PARAM_TLS_VERSION)) {
			/* libssl's CBC record layer (constant-time unpadding, MAC extraction) is
			 * OpenSSL's business: hand the whole context over, with all of params */
			if (!ct_param_get_uint(p, &v))
				return 0;
			if (v > 0)
				return hand_over_to_native(c, params);
		} else if (ct_param_is(p->key, OSSL_CIPHER_PARAM_TLS_MAC_SIZE)) {
			if (!ct_param_get_uint(p, &v))
				return 0;
		}
	}
	return 1;
}

static const OSSL_PARAM generic_gettable_ctx[] = {
	OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_KEYLEN, NULL),
	OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_IVLEN, NULL),
	OSSL_PARAM_uint(OSSL_CIPHER_PARAM_PADDING, NULL),
	OSSL_PARAM_uint(OSSL_CIPHER_PARAM_NUM, NULL),
	OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_IV, NULL, 0),
	OSSL_PARAM_octet_string(OSSL_CIPHER_PARAM_UPDATED_IV, NULL, 0),
	OSSL_PARAM_octet_ptr(OSSL_CIPHER_PARAM_TLS_MAC, NULL, 0),
	OSSL_PARAM_END,
};

static const OSSL_PARAM generic_settable_ctx[] = {
	OSSL_PARAM_uint(OSSL_CIPHER_PARAM_PADDING, NULL),
	OSSL_PARAM_uint(OSSL_CIPHER_PARAM_NUM, NULL),
	OSSL_PARAM_uint(OSSL_CIPHER_PARAM_USE_BITS, NULL),
	OSSL_PARAM_uint(OSSL_CIPHER_PARAM_TLS_VERSION, NULL),
	OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_TLS_MAC_SIZE, NULL),
	OSSL_PARAM_END,
};

CT_PROV_LIST_FN(ct_prov_generic_gettable_ctx_params, generic_gettable_ctx)
CT_PROV_LIST_FN(ct_prov_generic_settable_ctx_params, generic_settable_ctx)
