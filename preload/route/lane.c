/* SPDX-License-Identifier: MIT */
/*
 * lane.c - the direct lane (lane.h): what OpenSSL 3's EVP functions do for a provider cipher on a
 * context already set up, done on our provider's context. Each function serves only the calls in
 * which EVP (evp_enc.c in OpenSSL 3.0 to 3.5) checks nothing we do not check here and keeps no
 * state of its own: a change of direction, a negative or huge length, a missing output length,
 * parameters, and every other ctrl take the real road (CT_LANE_PASS).
 */
#include <limits.h>
#include <string.h>

#include <openssl/evp.h>

#include "core.h"
#include "lane.h"
#include "provider_ctx.h"

static __thread void *lane_seen __attribute__((tls_model("initial-exec")));
bool ct_lane_any;

void ct_lane_capture_begin(void)
{
	lane_seen = NULL;
}

void *ct_lane_capture_end(void)
{
	void *c = lane_seen;
	lane_seen = NULL;
	return c;
}

void ct_lane_seen(void *rctx)
{
	lane_seen = rctx;
	if (!ct_lane_possible() && ct_config()->route_direct)
		__atomic_store_n(&ct_lane_any, true, __ATOMIC_RELAXED);
}

/* A family's five functions the lane calls (provider_ctx.h). */
struct lane_family {
	int (*einit)(void *, const unsigned char *, size_t, const unsigned char *, size_t,
		     const OSSL_PARAM *);
	int (*dinit)(void *, const unsigned char *, size_t, const unsigned char *, size_t,
		     const OSSL_PARAM *);
	int (*update)(void *, unsigned char *, size_t *, size_t, const unsigned char *, size_t);
	int (*final)(void *, unsigned char *, size_t *, size_t);
	int (*cipher)(void *, unsigned char *, size_t *, size_t, const unsigned char *, size_t);
};

#define LANE_FAMILY(fam)                                                                                     \
	{                                                                                                    \
		ct_prov_##fam##_einit, ct_prov_##fam##_dinit, ct_prov_##fam##_update, ct_prov_##fam##_final, \
			ct_prov_##fam##_cipher                                                               \
	}
static const struct lane_family lane_generic = LANE_FAMILY(generic);
static const struct lane_family lane_xts = LANE_FAMILY(xts);
static const struct lane_family lane_gcm = LANE_FAMILY(gcm);

static const struct lane_family *family_of(const struct ct_rctx *c)
{
	switch (c->alg->mode) {
	case MODE_GCM:
		return &lane_gcm;
	case MODE_XTS:
		return &lane_xts;
	default:
		return &lane_generic;
	}
}

/* A context handed to libcrypto's own code (libssl's TLS CBC records, native_ctx.h) keeps its
 * direction there: the lane leaves it alone. */
static bool lane_serves(const struct ct_rctx *c, int dir)
{
	return !c->native && (dir < 0 || (dir != 0) == c->enc);
}

/* EVP passes the key and IV lengths its accessors answer, which are the context's own. */
int ct_lane_init(void *rctx, const unsigned char *key, const unsigned char *iv, int enc)
{
	struct ct_rctx *c = rctx;
	if (!lane_serves(c, enc))
		return CT_LANE_PASS; /* a change of direction is EVP's state too */
	const struct lane_family *f = family_of(c);
	size_t keylen = key ? c->keylen : 0, ivlen = iv ? c->ivlen : 0;
	return c->enc ? f->einit(c, key, keylen, iv, ivlen, NULL) : f->dinit(c, key, keylen, iv, ivlen, NULL);
}

/* EVP offers the provider the input's length plus a block of room (none for a stream mode). */
static size_t out_room(const struct ct_rctx *c, size_t inl)
{
	return inl + (c->alg->blocksize == 1 ? 0 : c->alg->blocksize);
}

int ct_lane_update(void *rctx, int dir, unsigned char *out, int *outl, const unsigned char *in, int inl)
{
	struct ct_rctx *c = rctx;
	/* the room EVP offers must fit its int result: lengths near INT_MAX take the real road */
	if (!outl || inl <= 0 || inl > INT_MAX - 64 || !lane_serves(c, dir))
		return CT_LANE_PASS;
	*outl = 0;
	size_t soutl = 0;
	int r = family_of(c)->update(c, out, &soutl, out_room(c, (size_t)inl), in, (size_t)inl);
	if (r)
		*outl = (int)soutl;
	return r;
}

int ct_lane_final(void *rctx, int dir, unsigned char *out, int *outl)
{
	struct ct_rctx *c = rctx;
	if (!outl || !lane_serves(c, dir))
		return CT_LANE_PASS;
	*outl = 0;
	size_t soutl = 0;
	int r = family_of(c)->final(c, out, &soutl, out_room(c, 0));
	if (r)
		*outl = (int)soutl;
	return r;
}

/* EVP_Cipher on a provider cipher with a one-shot cipher function (ours all have one): OpenSSL
 * 3.0 to 3.5 call it whatever the input (none: a final), with the same room as an update, and
 * answer its output length, or -1 when it fails. The direction is the context's. */
int ct_lane_cipher(void *rctx, unsigned char *out, const unsigned char *in, unsigned int inl)
{
	struct ct_rctx *c = rctx;
	/* the length EVP answers must fit its int result: lengths near INT_MAX take the real road */
	if (inl > INT_MAX - 64 || !lane_serves(c, -1))
		return CT_LANE_PASS;
	size_t outl = 0;
	return family_of(c)->cipher(c, out, &outl, out_room(c, inl), in, inl) ? (int)outl : -1;
}

int ct_lane_ctrl_type(int type)
{
	return type == EVP_CTRL_AEAD_SET_IVLEN || type == EVP_CTRL_AEAD_GET_TAG ||
	       type == EVP_CTRL_AEAD_SET_TAG || type == EVP_CTRL_GCM_IV_GEN || type == EVP_CTRL_AEAD_TLS1_AAD;
}

/* The provider's answers (provider_gcm.c's context parameters) where they succeed; anything
 * else, including what would fail, takes the real road, which raises the same error. */
int ct_lane_ctrl(void *rctx, int type, int arg, void *ptr)
{
	struct ct_rctx *c = rctx;
	if (c->alg->mode != MODE_GCM || c->native)
		return CT_LANE_PASS;
	switch (type) {
	case EVP_CTRL_AEAD_SET_IVLEN:
		/* the same length again (openssl speed sets it per message): nothing changes */
		return arg > 0 && (size_t)arg == c->ivlen ? 1 : CT_LANE_PASS;
	case EVP_CTRL_AEAD_GET_TAG:
		if (!ptr || arg < 1 || arg > GCM_TLS_TAG_LEN || !c->enc || c->taglen == UNSET_SIZE)
			return CT_LANE_PASS;
		memcpy(ptr, c->tag, (size_t)arg);
		return 1;
	case EVP_CTRL_AEAD_SET_TAG:
		if (!ptr || arg < 1 || arg > GCM_TLS_TAG_LEN || c->enc)
			return CT_LANE_PASS;
		memcpy(c->tag, ptr, (size_t)arg);
		c->taglen = (size_t)arg;
		return 1;
	case EVP_CTRL_GCM_IV_GEN:
		/* OpenSSH's per packet: EVP asks for arg bytes (a negative arg: the whole IV) */
		if (!ptr)
			return CT_LANE_PASS;
		return ct_prov_gcm_iv_gen(c, ptr, arg < 0 ? 0 : (size_t)arg) ? 1 : CT_LANE_PASS;
	case EVP_CTRL_AEAD_TLS1_AAD: {
		/* a TLS 1.2 record's: EVP sets the AAD, then answers the padding it reads back */
		if (!ptr || arg != TLS1_AAD_LEN)
			return CT_LANE_PASS;
		const size_t pad = ct_prov_gcm_tls_aad(c, ptr, (size_t)arg);
		return pad ? (int)pad : CT_LANE_PASS;
	}
	default:
		return CT_LANE_PASS;
	}
}
