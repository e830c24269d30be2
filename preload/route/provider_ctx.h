/* SPDX-License-Identifier: MIT */
/*
 * provider_ctx.h - what the "cryptrace" provider's files share (provider.h is its interface to
 * the rest of the preload): the algorithm description, the cipher context every family works
 * on, and the nine functions each cipher family (provider_generic.c, provider_xts.c,
 * provider_gcm.c) gives the dispatch tables that provider.c generates from its algorithm list.
 */
#ifndef CT_ROUTE_PROVIDER_CTX_H
#define CT_ROUTE_PROVIDER_CTX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/core.h>

#include "aesni.h"

#pragma GCC visibility push(hidden)

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
	uint8_t xts_tweak[16];   /* XTS: E(key2, iv), made whenever the key or the IV is set */
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

/* One cipher family's provider functions (provider-cipher(7)), named ct_prov_<family>_<fn>. */
#define CT_PROV_FAMILY_DECLARE(fam)                                                                          \
	int ct_prov_##fam##_einit(void *vctx, const unsigned char *key, size_t keylen,                       \
				  const unsigned char *iv, size_t ivlen, const OSSL_PARAM params[]);         \
	int ct_prov_##fam##_dinit(void *vctx, const unsigned char *key, size_t keylen,                       \
				  const unsigned char *iv, size_t ivlen, const OSSL_PARAM params[]);         \
	int ct_prov_##fam##_update(void *vctx, unsigned char *out, size_t *outl, size_t outsize,             \
				   const unsigned char *in, size_t inl);                                     \
	int ct_prov_##fam##_final(void *vctx, unsigned char *out, size_t *outl, size_t outsize);             \
	int ct_prov_##fam##_cipher(void *vctx, unsigned char *out, size_t *outl, size_t outsize,             \
				   const unsigned char *in, size_t inl);                                     \
	int ct_prov_##fam##_get_ctx_params(void *vctx, OSSL_PARAM params[]);                                 \
	const OSSL_PARAM *ct_prov_##fam##_gettable_ctx_params(void *cctx, void *provctx);                    \
	int ct_prov_##fam##_set_ctx_params(void *vctx, const OSSL_PARAM params[]);                           \
	const OSSL_PARAM *ct_prov_##fam##_settable_ctx_params(void *cctx, void *provctx);

CT_PROV_FAMILY_DECLARE(generic) /* ECB, CBC, CTR, CFB128, OFB: provider_generic.c */
CT_PROV_FAMILY_DECLARE(xts)     /* provider_xts.c */
CT_PROV_FAMILY_DECLARE(gcm)     /* provider_gcm.c */

/* GCM's next TLS/SSH IV (the AEAD_TLS1_GET_IV_GEN parameter's work, for the direct lane): its
 * last olen bytes (0: the whole IV) into out, the invocation field counted on; 0 where the
 * parameter would fail. */
int ct_prov_gcm_iv_gen(void *vctx, unsigned char *out, size_t olen);
/* GCM's TLS 1.2 record AAD (the AEAD_TLS1_AAD parameter's work, then AEAD_TLS1_AAD_PAD's
 * answer): the padding a record grows by, or 0 where the parameter would fail. */
size_t ct_prov_gcm_tls_aad(void *vctx, const unsigned char *aad, size_t len);

/* A gettable/settable list function: the list does not depend on the context. */
#define CT_PROV_LIST_FN(fn, list)                                                                            \
	const OSSL_PARAM *fn(void *cctx, void *provctx)                                                      \
	{                                                                                                    \
		(void)cctx;                                                                                  \
		(void)provctx;                                                                               \
		return list;                                                                                 \
	}

#pragma GCC visibility pop

#endif
