/* SPDX-License-Identifier: MIT */
/*
 * provider.c - the "cryptrace" OpenSSL 3 provider over aesni/ (see provider.h). In OpenSSL 3 the
 * provider, not EVP, owns block buffering, padding, IV state and the GCM/TLS parameters, so this
 * file reproduces the default provider's rules for each of them (ciphercommon*.c, cipher_aes_xts.c,
 * ciphercommon_gcm.c in OpenSSL 3.0) and hands the block work to the backend. Every difference
 * would be a bug: tests/route/ compares it with the default provider case by case.
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
#include "params.h"
#include "provider.h"

enum ct_mode { MODE_ECB, MODE_CBC, MODE_CTR, MODE_CFB, MODE_OFB, MODE_XTS, MODE_GCM };

struct ct_alg {
	const char *name;
	enum ct_mode mode;
	unsigned evp_mode; /* EVP_CIPH_*_MODE */
	unsigned keylen;   /* bytes (XTS: both halves) */
	unsigned ivlen;    /* bytes (GCM: default) */
	unsigned blocksize;
	bool aead, custom_iv;
};

#define UNSET_SIZE ((size_t)-1)
#define GCM_IV_MAX 128
#define GCM_TAG_MAX 16
#define TLS1_AAD_LEN 13
#define GCM_TLS_FIXED_IV_LEN 4
#define GCM_TLS_EXPLICIT_IV_LEN 8
#define GCM_TLS_TAG_LEN 16
#define XTS_MAX_BLOCKS_PER_DATA_UNIT (1u << 20)

enum gcm_iv_state { IV_UNINITIALISED, IV_BUFFERED, IV_COPIED, IV_FINISHED };

struct ct_rctx {
	union {
		struct {
			struct ct_aes_key key;  /* data key */
			struct ct_aes_key key2; /* XTS tweak key */
		} k;
		struct ct_aes_gcm gcm;
	} u;
	const struct ct_alg *alg;
	size_t keylen, ivlen;
	uint8_t iv[16], oiv[16]; /* current and original IV (CTR: counter) */
	uint8_t buf[16];         /* ECB/CBC: partial block; CTR: keystream of the partial block */
	size_t bufsz;
	unsigned num;
	bool enc, pad, key_set, iv_set;
	/* libssl's TLS CBC record layer is handed to a native context (native_ctx.h): the raw key
	 * is kept for that (wiped with the rest), and once `native` is set every call goes there */
	uint8_t rawkey[32];
	void *native;
	/* the afalg/cryptodev routes (kernel_backend.h): contexts of the "cryptrace-kernel"
	 * provider forward whole blocks to the kernel session in kroute, when it is open */
	bool kernel;
	struct ct_kroute *kroute;
	size_t req_len; /* bytes of the update/cipher call in progress: what a size threshold judges */
	/* GCM */
	uint8_t giv[GCM_IV_MAX];
	enum gcm_iv_state iv_state;
	bool iv_gen, iv_gen_rand;
	size_t taglen;
	uint8_t tag[GCM_TAG_MAX];
	size_t tls_aad_len;
	uint8_t tls_aad[TLS1_AAD_LEN];
	size_t tls_aad_pad_sz;
	uint64_t tls_enc_records;
};

/* ---- algorithm table ----------------------------------------------------------------------- */

#define ALG(nm, md, em, kl, il, bs, ae, ci)                                                        \
	{ .name = nm, .mode = md, .evp_mode = em, .keylen = kl, .ivlen = il, .blocksize = bs,     \
	  .aead = ae, .custom_iv = ci }

static const struct ct_alg algs[] = {
	ALG("AES-128-ECB", MODE_ECB, EVP_CIPH_ECB_MODE, 16, 0, 16, false, false),
	ALG("AES-192-ECB", MODE_ECB, EVP_CIPH_ECB_MODE, 24, 0, 16, false, false),
	ALG("AES-256-ECB", MODE_ECB, EVP_CIPH_ECB_MODE, 32, 0, 16, false, false),
	ALG("AES-128-CBC", MODE_CBC, EVP_CIPH_CBC_MODE, 16, 16, 16, false, false),
	ALG("AES-192-CBC", MODE_CBC, EVP_CIPH_CBC_MODE, 24, 16, 16, false, false),
	ALG("AES-256-CBC", MODE_CBC, EVP_CIPH_CBC_MODE, 32, 16, 16, false, false),
	ALG("AES-128-CTR", MODE_CTR, EVP_CIPH_CTR_MODE, 16, 16, 1, false, false),
	ALG("AES-192-CTR", MODE_CTR, EVP_CIPH_CTR_MODE, 24, 16, 1, false, false),
	ALG("AES-256-CTR", MODE_CTR, EVP_CIPH_CTR_MODE, 32, 16, 1, false, false),
	ALG("AES-128-CFB", MODE_CFB, EVP_CIPH_CFB_MODE, 16, 16, 1, false, false),
	ALG("AES-192-CFB", MODE_CFB, EVP_CIPH_CFB_MODE, 24, 16, 1, false, false),
	ALG("AES-256-CFB", MODE_CFB, EVP_CIPH_CFB_MODE, 32, 16, 1, false, false),
	ALG("AES-128-OFB", MODE_OFB, EVP_CIPH_OFB_MODE, 16, 16, 1, false, false),
	ALG("AES-192-OFB", MODE_OFB, EVP_CIPH_OFB_MODE, 24, 16, 1, false, false),
	ALG("AES-256-OFB", MODE_OFB, EVP_CIPH_OFB_MODE, 32, 16, 1, false, false),
	ALG("AES-128-XTS", MODE_XTS, EVP_CIPH_XTS_MODE, 32, 16, 1, false, true),
	ALG("AES-256-XTS", MODE_XTS, EVP_CIPH_XTS_MODE, 64, 16, 1, false, true),
	ALG("AES-128-GCM", MODE_GCM, EVP_CIPH_GCM_MODE, 16, 12, 1, true, true),
	ALG("AES-192-GCM", MODE_GCM, EVP_CIPH_GCM_MODE, 24, 12, 1, true, true),
	ALG("AES-256-GCM", MODE_GCM, EVP_CIPH_GCM_MODE, 32, 12, 1, true, true),
};
#define N_ALGS (sizeof(algs) / sizeof(algs[0]))

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

static int generic_set_ctx_params(void *vctx, const OSSL_PARAM params[]);

static int generic_init(struct ct_rctx *c, const unsigned char *key, size_t keylen,
			const unsigned char *iv, size_t ivlen, const OSSL_PARAM params[], bool enc)
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
	return generic_set_ctx_params(c, params);
}

static int generic_einit(void *vctx, const unsigned char *key, size_t keylen, const unsigned char *iv,
			 size_t ivlen, const OSSL_PARAM params[])
{
	return generic_init(vctx, key, keylen, iv, ivlen, params, true);
}

static int generic_dinit(void *vctx, const unsigned char *key, size_t keylen, const unsigned char *iv,
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

static int block_update(void *vctx, unsigned char *out, size_t *outl, size_t outsize,
			const unsigned char *in, size_t inl)
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

static __attribute__((noinline)) int generic_update_slow(struct ct_rctx *c, unsigned char *out,
							  size_t *outl, size_t outsize,
							  const unsigned char *in, size_t inl)
{
	if (CT_UNLIKELY(c->native != NULL))
		return ct_native_update(c->native, out, outl, outsize, in, inl);
	c->req_len = inl;
	if (c->alg->blocksize > 1)
		return block_update(c, out, outl, outsize, in, inl);
	return stream_update(c, out, outl, outsize, in, inl);
}

static int generic_update(void *vctx, unsigned char *out, size_t *outl, size_t outsize,
			  const unsigned char *in, size_t inl)
{
	struct ct_rctx *c = vctx;
	/* Whole blocks, nothing buffered, nothing to hold back (encrypting, or decrypting without
	 * padding): what block_update would do, without its bookkeeping; kept small so that the
	 * small requests of openssl speed and of programs that chunk by blocks pay for little
	 * more than the AES itself. */
	if (c->bufsz == 0 && (inl & 15) == 0 && inl != 0 && c->alg->blocksize == 16 &&
	    (c->enc || !c->pad) && c->key_set && outsize >= inl && CT_LIKELY(c->native == NULL)) {
		c->req_len = inl;
		*outl = inl;
		hw_cipher(c, out, in, inl);
		return 1;
	}
	return generic_update_slow(c, out, outl, outsize, in, inl);
}

static int generic_final(void *vctx, unsigned char *out, size_t *outl, size_t outsize)
{
	struct ct_rctx *c = vctx;
	if (CT_UNLIKELY(c->native != NULL))
		return ct_native_final(c->native, out, outl, outsize);
	if (c->alg->blocksize > 1)
		return block_final(vctx, out, outl, outsize);
	return stream_final(vctx, out, outl, outsize);
}

/* EVP_Cipher(): the raw mode, no buffering or padding. */
static int generic_cipher(void *vctx, unsigned char *out, size_t *outl, size_t outsize,
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

static int generic_get_ctx_params(void *vctx, OSSL_PARAM params[])
{
	struct ct_rctx *c = vctx;
	if (c->native)
		return ct_native_get_params(c->native, params);
	for (OSSL_PARAM *p = params; p && p->key; p++) {
		int ok = 1;
		if (!strcmp(p->key, OSSL_CIPHER_PARAM_IVLEN))
			ok = ct_param_set_uint(p, c->ivlen);
		else if (!strcmp(p->key, OSSL_CIPHER_PARAM_PADDING))
			ok = ct_param_set_uint(p, c->pad);
		else if (!strcmp(p->key, OSSL_CIPHER_PARAM_IV))
			ok = ct_param_set_octets(p, c->oiv, c->ivlen);
		else if (!strcmp(p->key, OSSL_CIPHER_PARAM_UPDATED_IV))
			ok = ct_param_set_octets(p, c->iv, c->ivlen);
		else if (!strcmp(p->key, OSSL_CIPHER_PARAM_NUM))
			ok = ct_param_set_uint(p, c->num);
		else if (!strcmp(p->key, OSSL_CIPHER_PARAM_KEYLEN))
			ok = ct_param_set_uint(p, c->keylen);
		else if (!strcmp(p->key, OSSL_CIPHER_PARAM_TLS_MAC))
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
	c->native = ct_native_open(c->alg->name, c->rawkey, c->keylen, c->iv_set ? c->iv : NULL,
				   c->ivlen, c->enc, params);
	if (!c->native)
		return 0;
	ct_event(CT_EV_FALLBACK, "EVP_CIPHER_CTX_set_params", 0, 0, CT_NO_PATH, false,
		 "route aesni -> native: %s: libssl's TLS CBC record layer (tls-version set)",
		 c->alg->name);
	return 1;
}

static int generic_set_ctx_params(void *vctx, const OSSL_PARAM params[])
{
	struct ct_rctx *c = vctx;
	if (c->native)
		return ct_native_set_params(c->native, params);
	for (const OSSL_PARAM *p = params; p && p->key; p++) {
		uint64_t v;
		if (!strcmp(p->key, OSSL_CIPHER_PARAM_PADDING)) {
			if (!ct_param_get_uint(p, &v) || v > UINT32_MAX)
				return 0;
			c->pad = v != 0;
		} else if (!strcmp(p->key, OSSL_CIPHER_PARAM_NUM)) {
			if (!ct_param_get_uint(p, &v) || v > UINT32_MAX)
				return 0;
			/* OpenSSL 3.0 takes any num; newer releases refuse num >= blocksize (1 for
			 * the stream modes). Take what 3.0 takes within the AES block, the only range
			 * that is memory-safe for the backend. */
			if (v >= CT_AES_BLOCK)
				return 0;
			c->num = (unsigned)v;
		} else if (!strcmp(p->key, OSSL_CIPHER_PARAM_USE_BITS)) {
			if (!ct_param_get_uint(p, &v))
				return 0; /* only CFB1 uses it; accepted and ignored like OpenSSL */
		} else if (!strcmp(p->key, OSSL_CIPHER_PARAM_TLS_VERSION)) {
			/* libssl's CBC record layer (constant-time unpadding, MAC extraction) is
			 * OpenSSL's business: hand the whole context over, with all of params */
			if (!ct_param_get_uint(p, &v))
				return 0;
			if (v > 0)
				return hand_over_to_native(c, params);
		} else if (!strcmp(p->key, OSSL_CIPHER_PARAM_TLS_MAC_SIZE)) {
			if (!ct_param_get_uint(p, &v))
				return 0;
		}
	}
	return 1;
}

/* ---- XTS ----------------------------------------------------------------------------------- */

static int xts_set_ctx_params(void *vctx, const OSSL_PARAM params[])
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
		if (ivlen != c->ivlen)
			return 0;
		c->iv_set = true;
		memcpy(c->iv, iv, ivlen);
		memcpy(c->oiv, iv, ivlen);
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
	return xts_set_ctx_params(c, params);
}

static int xts_einit(void *vctx, const unsigned char *key, size_t keylen, const unsigned char *iv,
		     size_t ivlen, const OSSL_PARAM params[])
{
	return xts_init(vctx, key, keylen, iv, ivlen, params, true);
}

static int xts_dinit(void *vctx, const unsigned char *key, size_t keylen, const unsigned char *iv,
		     size_t ivlen, const OSSL_PARAM params[])
{
	return xts_init(vctx, key, keylen, iv, ivlen, params, false);
}

static int xts_cipher(void *vctx, unsigned char *out, size_t *outl, size_t outsize,
		      const unsigned char *in, size_t inl)
{
	struct ct_rctx *c = vctx;
	(void)outsize;
	if (!c->key_set || !c->iv_set || !out || !in || inl < CT_AES_BLOCK)
		return 0;
	if (inl > (size_t)XTS_MAX_BLOCKS_PER_DATA_UNIT * CT_AES_BLOCK)
		return 0;
	if (ct_aes_xts(&c->u.k.key, &c->u.k.key2, c->iv, in, out, inl, c->enc) != 0)
		return 0;
	*outl = inl;
	return 1;
}

static int xts_update(void *vctx, unsigned char *out, size_t *outl, size_t outsize,
		      const unsigned char *in, size_t inl)
{
	if (outsize < inl)
		return 0;
	return xts_cipher(vctx, out, outl, outsize, in, inl);
}

static int xts_final(void *vctx, unsigned char *out, size_t *outl, size_t outsize)
{
	(void)vctx;
	(void)out;
	(void)outsize;
	*outl = 0;
	return 1;
}

/* ---- GCM ----------------------------------------------------------------------------------- */

static int gcm_set_ctx_params(void *vctx, const OSSL_PARAM params[]);

static int random_bytes(uint8_t *buf, size_t len)
{
	static int (*rand_bytes)(unsigned char *, int);
	if (!rand_bytes)
		rand_bytes = (int (*)(unsigned char *, int))ct_resolve("RAND_bytes");
	return rand_bytes && len <= INT32_MAX && rand_bytes(buf, (int)len) == 1;
}

/* Key equality without an early exit (the time says nothing about where two keys differ). */
static bool same_key(const uint8_t *a, const uint8_t *b, size_t len)
{
	uint8_t diff = 0;
	for (size_t i = 0; i < len; i++)
		diff |= a[i] ^ b[i];
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
	return gcm_set_ctx_params(c, params);
}

static int gcm_einit(void *vctx, const unsigned char *key, size_t keylen, const unsigned char *iv,
		     size_t ivlen, const OSSL_PARAM params[])
{
	return gcm_init(vctx, key, keylen, iv, ivlen, params, true);
}

static int gcm_dinit(void *vctx, const unsigned char *key, size_t keylen, const unsigned char *iv,
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

static int gcm_cipher_internal(struct ct_rctx *c, uint8_t *out, size_t *padlen, const uint8_t *in,
			       size_t len)
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

static int gcm_update(void *vctx, unsigned char *out, size_t *outl, size_t outsize,
		      const unsigned char *in, size_t inl)
{
	if (inl == 0) {
		*outl = 0;
		return 1;
	}
	if (outsize < inl)
		return 0;
	return gcm_cipher_internal(vctx, out, outl, in, inl) > 0;
}

static int gcm_final(void *vctx, unsigned char *out, size_t *outl, size_t outsize)
{
	(void)outsize;
	if (gcm_cipher_internal(vctx, out, outl, NULL, 0) <= 0)
		return 0;
	*outl = 0;
	return 1;
}

static int gcm_cipher(void *vctx, unsigned char *out, size_t *outl, size_t outsize,
		      const unsigned char *in, size_t inl)
{
	if (outsize < inl)
		return 0;
	if (gcm_cipher_internal(vctx, out, outl, in, inl) <= 0)
		return 0;
	*outl = inl;
	return 1;
}

static int gcm_get_ctx_params(void *vctx, OSSL_PARAM params[])
{
	struct ct_rctx *c = vctx;
	for (OSSL_PARAM *p = params; p && p->key; p++) {
		int ok = 1;
		if (!strcmp(p->key, OSSL_CIPHER_PARAM_IVLEN)) {
			ok = ct_param_set_uint(p, c->ivlen);
		} else if (!strcmp(p->key, OSSL_CIPHER_PARAM_KEYLEN)) {
			ok = ct_param_set_uint(p, c->keylen);
		} else if (!strcmp(p->key, OSSL_CIPHER_PARAM_AEAD_TAGLEN)) {
			ok = ct_param_set_uint(p, c->taglen != UNSET_SIZE ? c->taglen : GCM_TAG_MAX);
		} else if (!strcmp(p->key, OSSL_CIPHER_PARAM_IV) ||
			   !strcmp(p->key, OSSL_CIPHER_PARAM_UPDATED_IV)) {
			if (c->iv_state == IV_UNINITIALISED &&
			    (c->tls_aad_len != UNSET_SIZE || !c->enc || !gcm_iv_generate(c)))
				return 0;
			if (p->data && c->ivlen > p->data_size)
				return 0;
			ok = ct_param_set_octets(p, c->giv, c->ivlen);
		} else if (!strcmp(p->key, OSSL_CIPHER_PARAM_AEAD_TLS1_AAD_PAD)) {
			ok = ct_param_set_uint(p, c->tls_aad_pad_sz);
		} else if (!strcmp(p->key, OSSL_CIPHER_PARAM_AEAD_TAG)) {
			size_t sz = p->data_size;
			if (sz == 0 || sz > GCM_TLS_TAG_LEN || !c->enc || c->taglen == UNSET_SIZE)
				return 0;
			ok = ct_param_set_octets(p, c->tag, sz);
		} else if (!strcmp(p->key, OSSL_CIPHER_PARAM_AEAD_TLS1_GET_IV_GEN)) {
			if (!p->data || p->data_type != OSSL_PARAM_OCTET_STRING ||
			    !gcm_getivgen(c, p->data, p->data_size))
				return 0;
		}
		if (!ok)
			return 0;
	}
	return 1;
}

static int gcm_set_ctx_params(void *vctx, const OSSL_PARAM params[])
{
	struct ct_rctx *c = vctx;
	for (const OSSL_PARAM *p = params; p && p->key; p++) {
		if (!strcmp(p->key, OSSL_CIPHER_PARAM_AEAD_TAG)) {
			size_t sz;
			if (!ct_param_get_octets(p, c->tag, GCM_TLS_TAG_LEN, &sz))
				return 0;
			if (sz == 0 || c->enc)
				return 0;
			c->taglen = sz;
		} else if (!strcmp(p->key, OSSL_CIPHER_PARAM_AEAD_IVLEN)) {
			uint64_t sz;
			if (!ct_param_get_uint(p, &sz) || sz == 0 || sz > sizeof(c->giv))
				return 0;
			if (c->ivlen != sz) {
				/* an IV already set or generated for the old length is void */
				if (c->iv_state != IV_UNINITIALISED)
					c->iv_state = IV_FINISHED;
				c->ivlen = (size_t)sz;
			}
		} else if (!strcmp(p->key, OSSL_CIPHER_PARAM_AEAD_TLS1_AAD)) {
			if (p->data_type != OSSL_PARAM_OCTET_STRING)
				return 0;
			size_t sz = gcm_tls_init(c, p->data, p->data_size);
			if (sz == 0)
				return 0;
			c->tls_aad_pad_sz = sz;
		} else if (!strcmp(p->key, OSSL_CIPHER_PARAM_AEAD_TLS1_IV_FIXED)) {
			if (p->data_type != OSSL_PARAM_OCTET_STRING ||
			    !gcm_tls_iv_set_fixed(c, p->data, p->data_size))
				return 0;
		} else if (!strcmp(p->key, OSSL_CIPHER_PARAM_AEAD_TLS1_SET_IV_INV)) {
			if (!p->data || p->data_type != OSSL_PARAM_OCTET_STRING ||
			    !gcm_setivinv(c, p->data, p->data_size))
				return 0;
		}
	}
	return 1;
}

/* ---- parameter lists (what EVP_CIPHER_gettable_* and settable_* report) ---------------------- */

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

static const OSSL_PARAM xts_settable_ctx[] = {
	OSSL_PARAM_size_t(OSSL_CIPHER_PARAM_KEYLEN, NULL),
	OSSL_PARAM_END,
};

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

static const OSSL_PARAM *alg_gettable_params(void *provctx)
{
	(void)provctx;
	return alg_gettable;
}

#define CTX_LIST_FN(fn, list)                                                                      \
	static const OSSL_PARAM *fn(void *cctx, void *provctx)                                     \
	{                                                                                          \
		(void)cctx;                                                                        \
		(void)provctx;                                                                     \
		return list;                                                                       \
	}
CTX_LIST_FN(generic_gettable_ctx_params, generic_gettable_ctx)
CTX_LIST_FN(generic_settable_ctx_params, generic_settable_ctx)
CTX_LIST_FN(xts_settable_ctx_params, xts_settable_ctx)
CTX_LIST_FN(gcm_gettable_ctx_params, gcm_gettable_ctx)
CTX_LIST_FN(gcm_settable_ctx_params, gcm_settable_ctx)

static int alg_get_params(const struct ct_alg *a, OSSL_PARAM params[])
{
	for (OSSL_PARAM *p = params; p && p->key; p++) {
		int ok = 1;
		if (!strcmp(p->key, OSSL_CIPHER_PARAM_MODE))
			ok = ct_param_set_uint(p, a->evp_mode);
		else if (!strcmp(p->key, OSSL_CIPHER_PARAM_KEYLEN))
			ok = ct_param_set_uint(p, a->keylen);
		else if (!strcmp(p->key, OSSL_CIPHER_PARAM_IVLEN))
			ok = ct_param_set_uint(p, a->ivlen);
		else if (!strcmp(p->key, OSSL_CIPHER_PARAM_BLOCK_SIZE))
			ok = ct_param_set_uint(p, a->blocksize);
		else if (!strcmp(p->key, OSSL_CIPHER_PARAM_AEAD))
			ok = ct_param_set_int(p, a->aead);
		else if (!strcmp(p->key, OSSL_CIPHER_PARAM_CUSTOM_IV))
			ok = ct_param_set_int(p, a->custom_iv);
		else if (!strcmp(p->key, OSSL_CIPHER_PARAM_CTS) ||
			 !strcmp(p->key, OSSL_CIPHER_PARAM_TLS1_MULTIBLOCK) ||
			 !strcmp(p->key, OSSL_CIPHER_PARAM_HAS_RAND_KEY))
			ok = ct_param_set_int(p, 0);
		if (!ok)
			return 0;
	}
	return 1;
}

/* ---- dispatch tables: one per algorithm (newctx and get_params take no algorithm argument) ---- */

#define FN(id, f) { id, (void (*)(void))(f) }

/* The provctx of the "cryptrace-kernel" provider: its contexts go to the kernel routes. */
static const char kernel_provctx = 'k';

#define ALG_FUNCS(i)                                                                               \
	static void *newctx_##i(void *provctx)                                                     \
	{                                                                                          \
		struct ct_rctx *c = rctx_new(&algs[i]);                                            \
		if (c)                                                                             \
			c->kernel = provctx == &kernel_provctx;                                    \
		return c;                                                                          \
	}                                                                                          \
	static int get_params_##i(OSSL_PARAM params[])                                             \
	{                                                                                          \
		return alg_get_params(&algs[i], params);                                           \
	}

#define GENERIC_DISPATCH(i)                                                                        \
	ALG_FUNCS(i)                                                                               \
	static const OSSL_DISPATCH dispatch_##i[] = {                                              \
		FN(OSSL_FUNC_CIPHER_NEWCTX, newctx_##i),                                           \
		FN(OSSL_FUNC_CIPHER_ENCRYPT_INIT, generic_einit),                                  \
		FN(OSSL_FUNC_CIPHER_DECRYPT_INIT, generic_dinit),                                  \
		FN(OSSL_FUNC_CIPHER_UPDATE, generic_update),                                       \
		FN(OSSL_FUNC_CIPHER_FINAL, generic_final),                                         \
		FN(OSSL_FUNC_CIPHER_CIPHER, generic_cipher),                                       \
		FN(OSSL_FUNC_CIPHER_FREECTX, rctx_free),                                           \
		FN(OSSL_FUNC_CIPHER_DUPCTX, rctx_dup),                                             \
		FN(OSSL_FUNC_CIPHER_GET_PARAMS, get_params_##i),                                   \
		FN(OSSL_FUNC_CIPHER_GETTABLE_PARAMS, alg_gettable_params),                         \
		FN(OSSL_FUNC_CIPHER_GET_CTX_PARAMS, generic_get_ctx_params),                       \
		FN(OSSL_FUNC_CIPHER_GETTABLE_CTX_PARAMS, generic_gettable_ctx_params),             \
		FN(OSSL_FUNC_CIPHER_SET_CTX_PARAMS, generic_set_ctx_params),                       \
		FN(OSSL_FUNC_CIPHER_SETTABLE_CTX_PARAMS, generic_settable_ctx_params),             \
		{ 0, NULL },                                                                       \
	};

#define XTS_DISPATCH(i)                                                                            \
	ALG_FUNCS(i)                                                                               \
	static const OSSL_DISPATCH dispatch_##i[] = {                                              \
		FN(OSSL_FUNC_CIPHER_NEWCTX, newctx_##i),                                           \
		FN(OSSL_FUNC_CIPHER_ENCRYPT_INIT, xts_einit),                                      \
		FN(OSSL_FUNC_CIPHER_DECRYPT_INIT, xts_dinit),                                      \
		FN(OSSL_FUNC_CIPHER_UPDATE, xts_update),                                           \
		FN(OSSL_FUNC_CIPHER_FINAL, xts_final),                                             \
		FN(OSSL_FUNC_CIPHER_CIPHER, xts_cipher),                                           \
		FN(OSSL_FUNC_CIPHER_FREECTX, rctx_free),                                           \
		FN(OSSL_FUNC_CIPHER_DUPCTX, rctx_dup),                                             \
		FN(OSSL_FUNC_CIPHER_GET_PARAMS, get_params_##i),                                   \
		FN(OSSL_FUNC_CIPHER_GETTABLE_PARAMS, alg_gettable_params),                         \
		FN(OSSL_FUNC_CIPHER_GET_CTX_PARAMS, generic_get_ctx_params),                       \
		FN(OSSL_FUNC_CIPHER_GETTABLE_CTX_PARAMS, generic_gettable_ctx_params),             \
		FN(OSSL_FUNC_CIPHER_SET_CTX_PARAMS, xts_set_ctx_params),                           \
		FN(OSSL_FUNC_CIPHER_SETTABLE_CTX_PARAMS, xts_settable_ctx_params),                 \
		{ 0, NULL },                                                                       \
	};

#define GCM_DISPATCH(i)                                                                            \
	ALG_FUNCS(i)                                                                               \
	static const OSSL_DISPATCH dispatch_##i[] = {                                              \
		FN(OSSL_FUNC_CIPHER_NEWCTX, newctx_##i),                                           \
		FN(OSSL_FUNC_CIPHER_ENCRYPT_INIT, gcm_einit),                                      \
		FN(OSSL_FUNC_CIPHER_DECRYPT_INIT, gcm_dinit),                                      \
		FN(OSSL_FUNC_CIPHER_UPDATE, gcm_update),                                           \
		FN(OSSL_FUNC_CIPHER_FINAL, gcm_final),                                             \
		FN(OSSL_FUNC_CIPHER_CIPHER, gcm_cipher),                                           \
		FN(OSSL_FUNC_CIPHER_FREECTX, rctx_free),                                           \
		FN(OSSL_FUNC_CIPHER_DUPCTX, rctx_dup),                                             \
		FN(OSSL_FUNC_CIPHER_GET_PARAMS, get_params_##i),                                   \
		FN(OSSL_FUNC_CIPHER_GETTABLE_PARAMS, alg_gettable_params),                         \
		FN(OSSL_FUNC_CIPHER_GET_CTX_PARAMS, gcm_get_ctx_params),                           \
		FN(OSSL_FUNC_CIPHER_GETTABLE_CTX_PARAMS, gcm_gettable_ctx_params),                 \
		FN(OSSL_FUNC_CIPHER_SET_CTX_PARAMS, gcm_set_ctx_params),                           \
		FN(OSSL_FUNC_CIPHER_SETTABLE_CTX_PARAMS, gcm_settable_ctx_params),                 \
		{ 0, NULL },                                                                       \
	};

GENERIC_DISPATCH(0)
GENERIC_DISPATCH(1)
GENERIC_DISPATCH(2)
GENERIC_DISPATCH(3)
GENERIC_DISPATCH(4)
GENERIC_DISPATCH(5)
GENERIC_DISPATCH(6)
GENERIC_DISPATCH(7)
GENERIC_DISPATCH(8)
GENERIC_DISPATCH(9)
GENERIC_DISPATCH(10)
GENERIC_DISPATCH(11)
GENERIC_DISPATCH(12)
GENERIC_DISPATCH(13)
GENERIC_DISPATCH(14)
XTS_DISPATCH(15)
XTS_DISPATCH(16)
GCM_DISPATCH(17)
GCM_DISPATCH(18)
GCM_DISPATCH(19)

_Static_assert(N_ALGS == 20 && N_ALGS == CT_PROVIDER_ALGS, "one dispatch table per algorithm");

#define PROPS "provider=" CT_PROVIDER_NAME
#define ENTRY(i) { .algorithm_names = NULL, .property_definition = PROPS, .implementation = dispatch_##i }

static OSSL_ALGORITHM cipher_algs[N_ALGS + 1] = {
	ENTRY(0),  ENTRY(1),  ENTRY(2),  ENTRY(3),  ENTRY(4),  ENTRY(5),  ENTRY(6),
	ENTRY(7),  ENTRY(8),  ENTRY(9),  ENTRY(10), ENTRY(11), ENTRY(12), ENTRY(13),
	ENTRY(14), ENTRY(15), ENTRY(16), ENTRY(17), ENTRY(18), ENTRY(19), { NULL, NULL, NULL, NULL },
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
		if (!strcmp(p->key, OSSL_PROV_PARAM_NAME))
			ok = set_utf8_ptr(p, "cryptrace in-process AES-NI/VAES route");
		else if (!strcmp(p->key, OSSL_PROV_PARAM_VERSION))
			ok = set_utf8_ptr(p, "1");
		else if (!strcmp(p->key, OSSL_PROV_PARAM_STATUS))
			ok = ct_param_set_int(p, 1);
		if (!ok)
			return 0;
	}
	return 1;
}

/* The kernel routes' provider: the same dispatch tables, for the modes the kernel offers. */
#define KPROPS "provider=" CT_PROVIDER_KERNEL_NAME
#define KENTRY(i) { .algorithm_names = NULL, .property_definition = KPROPS, .implementation = dispatch_##i }
static OSSL_ALGORITHM kernel_cipher_algs[] = {
	KENTRY(0), KENTRY(1), KENTRY(2), KENTRY(3), KENTRY(4), KENTRY(5), KENTRY(6), KENTRY(7), KENTRY(8),
	{ NULL, NULL, NULL, NULL },
};

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

int ct_provider_init(const OSSL_CORE_HANDLE *handle, const OSSL_DISPATCH *in,
		     const OSSL_DISPATCH **out, void **provctx)
{
	(void)in;
	if (!ct_aesni_available())
		return 0;
	for (unsigned i = 0; i < N_ALGS; i++)
		cipher_algs[i].algorithm_names = algs[i].name;
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
	for (unsigned i = 0; i < N_ALGS; i++)
		cipher_algs[i].algorithm_names = algs[i].name;
	for (unsigned i = 0; kernel_cipher_algs[i].implementation; i++)
		kernel_cipher_algs[i].algorithm_names = algs[i].name;
	*out = prov_dispatch;
	*provctx = (void *)&kernel_provctx;
	return 1;
}
