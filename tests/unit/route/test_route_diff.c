/* SPDX-License-Identifier: MIT */
/*
 * test_route_diff.c - the cryptrace provider against OpenSSL's default provider, through EVP.
 * Each case is a script drawn from a seed (cipher, direction, key, IV and IV length, padding,
 * data length 0..64 KiB, update chunking, in-place buffers, AAD, tag length, tampering, context
 * copies, re-inits, IV/num read-back, raw EVP_Cipher use); the same script runs on both ciphers
 * and every return value, length and output byte goes into a transcript. The transcripts must be
 * identical. Also: cipher constants, OpenSSH-style and TLS-style GCM record flows, and the route
 * decisions of ct_route_evp_cipher (substitution, fallbacks).
 *
 * CT_ROUTE_LANE=1 runs the same cases with our side's calls taking the direct lane (route/lane.h)
 * where the preload's hooks would (lane_shim.h): the lane must answer as EVP does, to the byte
 * and the return value, and must have served calls.
 *
 * CT_ROUTE_CASES (default 100000) and CT_ROUTE_SEED (default 1) pick the run; the first case
 * whose transcripts differ fails the test with the case number and seed needed to replay it
 * alone (CT_ROUTE_ONLY=n; CT_ROUTE_DUMP=1 prints its operations and the bytes around the
 * difference).
 */
#include <inttypes.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <openssl/core_names.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/provider.h>

#include "aesni.h"
#include "core_stub.h"
#include "provider.h"
#include "route.h"
/* last: with CT_ROUTE_LANE=1 the EVP calls below take the direct lane as the hooks do */
#include "lane_shim.h"

static const char *const names[] = {
	"AES-128-ECB", "AES-192-ECB", "AES-256-ECB", "AES-128-CBC", "AES-192-CBC",
	"AES-256-CBC", "AES-128-CTR", "AES-192-CTR", "AES-256-CTR", "AES-128-CFB",
	"AES-192-CFB", "AES-256-CFB", "AES-128-OFB", "AES-192-OFB", "AES-256-OFB",
	"AES-128-XTS", "AES-256-XTS", "AES-128-GCM", "AES-192-GCM", "AES-256-GCM",
};
#define N_CIPHERS (sizeof(names) / sizeof(names[0]))

static EVP_CIPHER *native[N_CIPHERS];
static const EVP_CIPHER *ours[N_CIPHERS];

/* ---- deterministic randomness -------------------------------------------------------------- */

static uint64_t rng_state;

static uint64_t rnd(void)
{
	uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static size_t rnd_below(size_t n)
{
	return n ? (size_t)(rnd() % n) : 0;
}

static void rnd_bytes(uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)rnd();
}

/* Mostly short requests, some up to 64 KiB. */
static size_t rnd_len(void)
{
	switch (rnd_below(10)) {
	case 0:
	case 1:
	case 2:
	case 3:
		return rnd_below(65);
	case 4:
	case 5:
	case 6:
		return rnd_below(1025);
	case 7:
	case 8:
		return rnd_below(8193);
	default:
		return rnd_below(65537);
	}
}

/* ---- transcripts --------------------------------------------------------------------------- */

struct tr {
	uint8_t *buf;
	size_t len, cap;
};

static void tr_put(struct tr *t, const void *p, size_t n)
{
	if (t->len + n > t->cap) {
		t->cap = (t->len + n) * 2 + 4096;
		t->buf = realloc(t->buf, t->cap);
		if (!t->buf)
			abort();
	}
	memcpy(t->buf + t->len, p, n);
	t->len += n;
}

static void tr_int(struct tr *t, int tag, long v)
{
	int64_t rec[2] = { tag, v };
	tr_put(t, rec, sizeof(rec));
}

/* ---- scripts ------------------------------------------------------------------------------- */

enum op_kind {
	OP_DATA,
	OP_AAD,
	OP_COPY,
	OP_REINIT_IV,
	OP_REINIT_NONE,
	OP_REINIT_KEY,
	OP_NEXT_IV,  /* XTS: the next unit's IV alone (derived from the script's and len) */
	OP_NEXT_KEY, /* XTS: a key alone, the script's with one byte changed (at and by len) */
	OP_QUERY,
	OP_SETNUM,
	OP_PROBE
};

struct op {
	enum op_kind kind;
	size_t len;
	int inplace;
};

#define MAX_OPS 96

struct script {
	unsigned alg;
	int mode, enc, pad, raw;
	int keylen, ivlen;
	uint8_t key[64], iv[64];
	uint8_t *in;
	size_t inlen;
	uint8_t aad[512];
	size_t aadlen;
	uint8_t tag[16];
	int taglen;
	int nops;
	struct op ops[MAX_OPS];
};

static void add_op(struct script *s, enum op_kind k, size_t len, int inplace)
{
	if (s->nops < MAX_OPS)
		s->ops[s->nops++] = (struct op){ .kind = k, .len = len, .inplace = inplace };
}

/* Splits total bytes into chunks (multiples of `unit` when unit > 1). */
static void add_chunks(struct script *s, enum op_kind k, size_t total, size_t unit, int *copies)
{
	int style = (int)rnd_below(4);
	size_t left = total;
	while (left > 0 && s->nops < MAX_OPS - 8) {
		size_t n;
		if (style == 0 || s->nops >= MAX_OPS - 12)
			n = left;
		else if (style == 1)
			n = 1 + rnd_below(17);
		else
			n = rnd_below(left + 1);
		if (unit > 1)
			n -= n % unit;
		if (n > left)
			n = left;
		add_op(s, k, n, (int)rnd_below(2));
		left -= n;
		if (rnd_below(8) == 0)
			add_op(s, OP_QUERY, 0, 0);
		if (*copies < 2 && rnd_below(12) == 0) {
			add_op(s, OP_COPY, 0, 0);
			++*copies;
		}
		if (unit > 1 && n == 0)
			break;
	}
	if (left && unit <= 1)
		add_op(s, k, left, 0);
	else if (left)
		add_op(s, k, left - left % unit, 0);
}

static int run_ops(EVP_CIPHER_CTX *ctx, const struct script *s, int from, size_t pos, size_t apos,
		   struct tr *t);

static void one_shot_encrypt(const struct script *s, uint8_t *out, size_t *outlen, uint8_t tag[16])
{
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	int outl = 0, fl = 0;
	EVP_CipherInit_ex(ctx, native[s->alg], NULL, NULL, NULL, 1);
	if (s->mode == EVP_CIPH_GCM_MODE && s->ivlen != 12)
		EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_IVLEN, s->ivlen, NULL);
	EVP_CipherInit_ex(ctx, NULL, NULL, s->key, s->iv, 1);
	EVP_CIPHER_CTX_set_padding(ctx, s->pad);
	if (s->aadlen)
		EVP_CipherUpdate(ctx, NULL, &outl, s->aad, (int)s->aadlen);
	if (!EVP_CipherUpdate(ctx, out, &outl, s->in, (int)s->inlen))
		outl = 0;
	if (!EVP_CipherFinal_ex(ctx, out + outl, &fl))
		fl = 0;
	*outlen = (size_t)(outl + fl);
	if (s->mode == EVP_CIPH_GCM_MODE)
		EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, 16, tag);
	EVP_CIPHER_CTX_free(ctx);
}

static void make_script(struct script *s, unsigned alg)
{
	memset(s, 0, sizeof(*s));
	s->alg = alg;
	s->mode = EVP_CIPHER_get_mode(native[alg]);
	s->keylen = EVP_CIPHER_get_key_length(native[alg]);
	s->ivlen = EVP_CIPHER_get_iv_length(native[alg]);
	s->enc = (int)rnd_below(2);
	s->pad = rnd_below(3) != 0;
	rnd_bytes(s->key, sizeof(s->key));
	if (s->mode == EVP_CIPH_XTS_MODE && rnd_below(50) == 0)
		memcpy(s->key + s->keylen / 2, s->key, (size_t)s->keylen / 2); /* refused for enc */
	rnd_bytes(s->iv, sizeof(s->iv));
	bool block = s->mode == EVP_CIPH_ECB_MODE || s->mode == EVP_CIPH_CBC_MODE;
	bool gcm = s->mode == EVP_CIPH_GCM_MODE;
	bool xts = s->mode == EVP_CIPH_XTS_MODE;
	s->raw = !xts && rnd_below(5) == 0;
	if (gcm && rnd_below(3) == 0)
		s->ivlen = 1 + (int)rnd_below(64);
	if (gcm) {
		s->aadlen = rnd_below(4) ? rnd_below(sizeof(s->aad) + 1) : 0;
		rnd_bytes(s->aad, s->aadlen);
		s->taglen = 1 + (int)rnd_below(16);
		if (rnd_below(2))
			s->taglen = 16;
	}
	s->inlen = rnd_len();
	if (block && s->raw)
		s->inlen -= s->inlen % 16;
	s->in = malloc(s->inlen + 64);
	rnd_bytes(s->in, s->inlen);
	if (!s->enc && (rnd_below(2) || gcm)) {
		/* decrypt real ciphertext (valid padding, right tag) most of the time */
		uint8_t *ct = malloc(s->inlen + 64);
		size_t ctlen;
		struct script tmp = *s;
		if (block && !s->pad)
			tmp.inlen -= tmp.inlen % 16;
		one_shot_encrypt(&tmp, ct, &ctlen, s->tag);
		if (block && s->raw)
			ctlen -= ctlen % 16;
		free(s->in);
		s->in = ct;
		s->inlen = ctlen;
		if (rnd_below(10) == 0) { /* tamper: both must refuse alike */
			if (s->inlen && rnd_below(2))
				s->in[rnd_below(s->inlen)] ^= (uint8_t)(1u << rnd_below(8));
			else
				s->tag[rnd_below((size_t)s->taglen)] ^= 0x80;
		}
	}
	int copies = 0;
	if (gcm) {
		add_chunks(s, OP_AAD, s->aadlen, 1, &copies);
		if (rnd_below(40) == 0)
			add_op(s, OP_REINIT_IV, 0, 0); /* restarts the message: AAD again below */
	}
	if (xts) {
		/* every update is one data unit; a few units per context */
		size_t units = 1 + rnd_below(3), left = s->inlen;
		for (size_t u = 0; u < units && left; u++) {
			size_t n = u + 1 == units ? left : rnd_below(left + 1);
			add_op(s, OP_DATA, n, (int)rnd_below(2));
			left -= n;
			/* the unit after with another IV or another key, set alone: the tweak must
			 * follow whichever of the two an init sets */
			if (rnd_below(3) == 0)
				add_op(s, rnd_below(3) ? OP_NEXT_IV : OP_NEXT_KEY, rnd_below(1u << 20), 0);
			if (rnd_below(3) == 0)
				add_op(s, OP_QUERY, 0, 0);
			if (rnd_below(8) == 0)
				add_op(s, OP_COPY, 0, 0);
		}
	} else {
		size_t first = rnd_below(4) ? s->inlen : rnd_below(s->inlen + 1);
		if (block && s->raw)
			first -= first % 16;
		add_chunks(s, OP_DATA, first, block && s->raw ? 16 : 1, &copies);
		if (first < s->inlen) {
			/* re-init mid-stream: OpenSSL restores the CBC/CFB/OFB IV, continues CTR */
			enum op_kind k = rnd_below(3) == 0 ? OP_REINIT_KEY
					 : rnd_below(2)    ? OP_REINIT_NONE
							   : OP_REINIT_IV;
			if (gcm)
				k = OP_REINIT_NONE;
			add_op(s, k, 0, 0);
			add_chunks(s, OP_DATA, s->inlen - first, block && s->raw ? 16 : 1, &copies);
		}
		if (gcm && rnd_below(30) == 0)
			add_op(s, OP_AAD, 1 + rnd_below(16), 0); /* AAD after data: refused */
	}
	add_op(s, OP_QUERY, 0, 0);
	/* CFB/OFB keep all their state in the feedback register: moving `num` (EVP_CIPHER_CTX_set_num)
	 * must act alike too */
	if ((s->mode == EVP_CIPH_CFB_MODE || s->mode == EVP_CIPH_OFB_MODE) && rnd_below(4) == 0) {
		for (int i = 0; i < s->nops && s->nops < MAX_OPS; i++) {
			if (s->ops[i].kind == OP_DATA && rnd_below(3) == 0) {
				memmove(&s->ops[i + 1], &s->ops[i],
					sizeof(s->ops[0]) * (size_t)(s->nops - i));
				s->ops[i] =
					(struct op){ .kind = OP_SETNUM, .len = rnd_below(16), .inplace = 0 };
				s->nops++;
				i++;
			}
		}
	}
	/* probes: key length changes, IV length and tag queries at odd moments, unknown params */
	for (int k = (int)rnd_below(3); k > 0 && s->nops < MAX_OPS; k--) {
		int at = (int)rnd_below((size_t)s->nops + 1);
		memmove(&s->ops[at + 1], &s->ops[at], sizeof(s->ops[0]) * (size_t)(s->nops - at));
		s->ops[at] = (struct op){ .kind = OP_PROBE, .len = rnd_below(6), .inplace = 0 };
		s->nops++;
	}
	/* EVP_EncryptUpdate(3): in-place is only defined while the context holds no partial block
	 * (and, decrypting with padding, no held-back last block: any data already fed) */
	size_t done = 0;
	for (int i = 0; block && i < s->nops; i++) {
		if (s->ops[i].kind == OP_REINIT_IV || s->ops[i].kind == OP_REINIT_NONE ||
		    s->ops[i].kind == OP_REINIT_KEY)
			done = 0;
		if (s->ops[i].kind != OP_DATA)
			continue;
		if (done % 16 || (done && !s->enc && s->pad))
			s->ops[i].inplace = 0;
		done += s->ops[i].len;
	}
}

static void query(EVP_CIPHER_CTX *ctx, struct tr *t, int i)
{
	uint8_t ivb[128];
	memset(ivb, 0xee, sizeof(ivb));
	int r = EVP_CIPHER_CTX_get_updated_iv(ctx, ivb, sizeof(ivb));
	tr_int(t, 100 + i, r);
	if (r > 0)
		tr_put(t, ivb, (size_t)EVP_CIPHER_CTX_get_iv_length(ctx));
	memset(ivb, 0xee, sizeof(ivb));
	r = EVP_CIPHER_CTX_get_original_iv(ctx, ivb, sizeof(ivb));
	tr_int(t, 200 + i, r);
	if (r > 0)
		tr_put(t, ivb, (size_t)EVP_CIPHER_CTX_get_iv_length(ctx));
	tr_int(t, 300 + i, EVP_CIPHER_CTX_get_num(ctx));
	tr_int(t, 400 + i, EVP_CIPHER_CTX_get_iv_length(ctx));
	tr_int(t, 500 + i, EVP_CIPHER_CTX_get_key_length(ctx));
}

static void probe(EVP_CIPHER_CTX *ctx, const struct script *s, struct tr *t, int i, int which)
{
	uint8_t tag[16];
	int v = -7;
	switch (which) {
	case 0:
		tr_int(t, i, EVP_CIPHER_CTX_set_key_length(ctx, s->keylen));
		tr_int(t, i, EVP_CIPHER_CTX_set_key_length(ctx, s->keylen + 8));
		tr_int(t, i, EVP_CIPHER_CTX_get_key_length(ctx));
		break;
	case 1:
		tr_int(t, i, EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GET_IVLEN, 0, &v));
		tr_int(t, i, v);
		break;
	case 2:
		if (s->mode == EVP_CIPH_GCM_MODE) { /* mid-message: refused alike */
			memset(tag, 0xab, sizeof(tag));
			int r = EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, 16, tag);
			tr_int(t, i, r);
			if (r > 0)
				tr_put(t, tag, sizeof(tag));
		}
		break;
	case 3:
		if (s->mode == EVP_CIPH_GCM_MODE && s->enc) { /* a tag is not set when encrypting */
			memset(tag, 1, sizeof(tag));
			tr_int(t, i, EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, 16, tag));
		}
		break;
	case 4: {
		unsigned u = 77;
		OSSL_PARAM p[3] = { OSSL_PARAM_construct_uint("no-such-param", &u),
				    OSSL_PARAM_construct_int(OSSL_CIPHER_PARAM_AEAD_TAGLEN, &v),
				    OSSL_PARAM_END };
		tr_int(t, i, EVP_CIPHER_CTX_get_params(ctx, p));
		tr_int(t, i, (long)u);
		tr_int(t, i, v);
		tr_int(t, i, EVP_CIPHER_CTX_set_params(ctx, p) == 1);
		break;
	}
	default:
		tr_int(t, i, EVP_CIPHER_CTX_get_tag_length(ctx));
		tr_int(t, i, EVP_CIPHER_CTX_get_block_size(ctx));
		break;
	}
}

static int finish(EVP_CIPHER_CTX *ctx, const struct script *s, struct tr *t)
{
	uint8_t out[64];
	int outl = -1, r;
	memset(out, 0xcc, sizeof(out));
	if (s->raw) {
		r = s->mode == EVP_CIPH_GCM_MODE ? EVP_Cipher(ctx, NULL, NULL, 0) : 0;
		tr_int(t, 900, r);
	} else {
		r = EVP_CipherFinal_ex(ctx, out, &outl);
		tr_int(t, 901, r);
		if (r > 0) {
			tr_int(t, 902, outl);
			tr_put(t, out, (size_t)outl);
		}
	}
	if (s->mode == EVP_CIPH_GCM_MODE && s->enc) {
		uint8_t tag[16];
		memset(tag, 0xdd, sizeof(tag));
		r = EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, s->taglen, tag);
		tr_int(t, 903, r);
		tr_put(t, tag, sizeof(tag));
		tr_int(t, 904, EVP_CIPHER_CTX_get_tag_length(ctx));
	}
	query(ctx, t, 99);
	return 0;
}

static int run_ops(EVP_CIPHER_CTX *ctx, const struct script *s, int from, size_t pos, size_t apos,
		   struct tr *t)
{
	static uint8_t *out;
	static size_t out_cap;
	for (int i = from; i < s->nops; i++) {
		const struct op *o = &s->ops[i];
		int r, outl = -1;
		switch (o->kind) {
		case OP_DATA: {
			size_t n = o->len;
			if (n > s->inlen - pos)
				n = s->inlen - pos;
			if (out_cap < n + 64) {
				out_cap = n + 65536;
				out = realloc(out, out_cap);
			}
			memset(out, 0xcc, n + 64);
			const uint8_t *src = s->in + pos;
			if (o->inplace) {
				memcpy(out, src, n);
				src = out;
			}
			if (s->raw) {
				r = EVP_Cipher(ctx, out, src, (unsigned)n);
				tr_int(t, i, r);
				if (r > 0 || (r == 0 && n == 0) || s->mode == EVP_CIPH_ECB_MODE ||
				    s->mode == EVP_CIPH_CBC_MODE)
					tr_put(t, out, n);
			} else {
				r = EVP_CipherUpdate(ctx, out, &outl, src, (int)n);
				tr_int(t, i, r);
				tr_int(t, i, outl);
				if (r > 0 && outl > 0)
					tr_put(t, out, (size_t)outl);
			}
			pos += n;
			break;
		}
		case OP_AAD: {
			size_t n = o->len;
			const uint8_t *a = s->aad + apos;
			uint8_t extra[16] = { 1, 2, 3 };
			if (apos + n > s->aadlen) { /* AAD after data: any bytes */
				a = extra;
				n = n > sizeof(extra) ? sizeof(extra) : n;
			} else {
				apos += n;
			}
			if (s->raw)
				r = EVP_Cipher(ctx, NULL, a, (unsigned)n);
			else
				r = EVP_CipherUpdate(ctx, NULL, &outl, a, (int)n);
			tr_int(t, i, r);
			tr_int(t, i, outl);
			break;
		}
		case OP_COPY: {
			EVP_CIPHER_CTX *dup = EVP_CIPHER_CTX_new();
			r = EVP_CIPHER_CTX_copy(dup, ctx);
			tr_int(t, i, r);
			if (r == 1) {
				run_ops(dup, s, i + 1, pos, apos, t);
				tr_int(t, 999, 0);
			}
			EVP_CIPHER_CTX_free(dup);
			break;
		}
		case OP_REINIT_IV:
			r = EVP_CipherInit_ex(ctx, NULL, NULL, NULL, s->iv, s->enc);
			tr_int(t, i, r);
			if (s->mode == EVP_CIPH_GCM_MODE) {
				apos = 0; /* a new message: feed the AAD again */
				if (s->aadlen) {
					r = s->raw ? EVP_Cipher(ctx, NULL, s->aad, (unsigned)s->aadlen)
						   : EVP_CipherUpdate(ctx, NULL, &outl, s->aad,
								      (int)s->aadlen);
					tr_int(t, i, r);
					apos = s->aadlen;
				}
			}
			break;
		case OP_NEXT_IV: {
			uint8_t iv[16];
			memcpy(iv, s->iv, sizeof(iv));
			iv[o->len % 16] ^= (uint8_t)(1 + o->len / 16 % 255);
			tr_int(t, i, EVP_CipherInit_ex(ctx, NULL, NULL, NULL, iv, s->enc));
			break;
		}
		case OP_NEXT_KEY: {
			uint8_t key[64];
			memcpy(key, s->key, sizeof(key));
			key[o->len % (size_t)s->keylen] ^= (uint8_t)(1 + o->len / 64 % 255);
			tr_int(t, i, EVP_CipherInit_ex(ctx, NULL, NULL, key, NULL, s->enc));
			break;
		}
		case OP_REINIT_NONE:
			r = EVP_CipherInit_ex(ctx, NULL, NULL, NULL, NULL, s->enc);
			tr_int(t, i, r);
			break;
		case OP_REINIT_KEY:
			r = EVP_CipherInit_ex(ctx, NULL, NULL, s->key, NULL, s->enc);
			tr_int(t, i, r);
			if (s->mode == EVP_CIPH_ECB_MODE || s->mode == EVP_CIPH_CBC_MODE)
				EVP_CIPHER_CTX_set_padding(ctx, s->pad);
			break;
		case OP_QUERY:
			query(ctx, t, i);
			break;
		case OP_SETNUM:
			tr_int(t, i, EVP_CIPHER_CTX_set_num(ctx, (int)o->len));
			break;
		case OP_PROBE:
			probe(ctx, s, t, i, (int)o->len);
			break;
		}
	}
	return finish(ctx, s, t);
}

static void run_script(const struct script *s, const EVP_CIPHER *c, struct tr *t)
{
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	int r;
	if (s->mode == EVP_CIPH_GCM_MODE) {
		r = EVP_CipherInit_ex(ctx, c, NULL, NULL, NULL, s->enc);
		tr_int(t, -1, r);
		if (s->ivlen != 12) {
			r = EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_IVLEN, s->ivlen, NULL);
			tr_int(t, -2, r);
		}
		r = EVP_CipherInit_ex(ctx, NULL, NULL, s->key, s->iv, s->enc);
		tr_int(t, -3, r);
		if (!s->enc) {
			r = EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, s->taglen, (void *)s->tag);
			tr_int(t, -4, r);
		}
	} else {
		r = EVP_CipherInit_ex(ctx, c, NULL, s->key, s->iv, s->enc);
		tr_int(t, -1, r);
		if (s->mode == EVP_CIPH_ECB_MODE || s->mode == EVP_CIPH_CBC_MODE)
			tr_int(t, -5, EVP_CIPHER_CTX_set_padding(ctx, s->pad));
	}
	tr_int(t, -6, EVP_CIPHER_CTX_get_block_size(ctx));
	tr_int(t, -7, EVP_CIPHER_CTX_get_mode(ctx));
	if (r == 1)
		run_ops(ctx, s, 0, 0, 0, t);
	/* reset and reuse the same EVP_CIPHER_CTX: a fresh provider context, one-shot */
	if (EVP_CIPHER_CTX_reset(ctx) == 1 && s->inlen >= 16 && s->mode != EVP_CIPH_GCM_MODE) {
		uint8_t out[64 + 16];
		int ol = 0, fl = 0;
		size_t n = s->inlen < 64 ? s->inlen & ~(size_t)15 : 64;
		r = EVP_CipherInit_ex(ctx, c, NULL, s->key, s->iv, s->enc);
		tr_int(t, 950, r);
		EVP_CIPHER_CTX_set_padding(ctx, 0);
		if (r == 1) {
			tr_int(t, 951, EVP_CipherUpdate(ctx, out, &ol, s->in, (int)n));
			tr_int(t, 952, EVP_CipherFinal_ex(ctx, out + ol, &fl));
			tr_put(t, out, (size_t)(ol + fl));
		}
	}
	EVP_CIPHER_CTX_free(ctx);
	ERR_clear_error();
}

/* ---- checks -------------------------------------------------------------------------------- */

static void test_constants(void **state)
{
	(void)state;
	for (unsigned i = 0; i < N_CIPHERS; i++) {
		const EVP_CIPHER *a = native[i], *b = ours[i];
		if (!(EVP_CIPHER_get_key_length(a) == EVP_CIPHER_get_key_length(b)))
			fail_msg("%s keylen", names[i]);
		if (!(EVP_CIPHER_get_iv_length(a) == EVP_CIPHER_get_iv_length(b)))
			fail_msg("%s ivlen", names[i]);
		if (!(EVP_CIPHER_get_block_size(a) == EVP_CIPHER_get_block_size(b)))
			fail_msg("%s blocksize", names[i]);
		if (!(EVP_CIPHER_get_mode(a) == EVP_CIPHER_get_mode(b)))
			fail_msg("%s mode", names[i]);
		if (!(EVP_CIPHER_get_flags(a) == EVP_CIPHER_get_flags(b)))
			fail_msg("%s flags %lx vs %lx", names[i], (unsigned long)EVP_CIPHER_get_flags(a),
				 (unsigned long)EVP_CIPHER_get_flags(b));
		if (!(EVP_CIPHER_get_nid(a) == EVP_CIPHER_get_nid(b)))
			fail_msg("%s nid", names[i]);
		if (!(strcmp(OSSL_PROVIDER_get0_name(EVP_CIPHER_get0_provider(b)), "cryptrace") == 0))
			fail_msg("%s provider", names[i]);
		/* every parameter the default provider lists, we list too */
		const OSSL_PARAM *(*lists[][2])(const EVP_CIPHER *) = {
			{ EVP_CIPHER_gettable_params, EVP_CIPHER_gettable_params },
			{ EVP_CIPHER_gettable_ctx_params, EVP_CIPHER_gettable_ctx_params },
			{ EVP_CIPHER_settable_ctx_params, EVP_CIPHER_settable_ctx_params },
		};
		for (unsigned l = 0; l < 3; l++) {
			const OSSL_PARAM *pa = lists[l][0](a), *pb = lists[l][1](b);
			for (; pa && pa->key; pa++) {
				const OSSL_PARAM *q = OSSL_PARAM_locate_const(pb, pa->key);
				if (!(q && q->data_type == pa->data_type))
					fail_msg("%s list %u lacks %s", names[i], l, pa->key);
			}
		}
	}
}

/* OpenSSH's AES-GCM: whole IV fixed once, IV_GEN per packet, AAD and data through EVP_Cipher. */
static void gcm_ssh_flow(const EVP_CIPHER *c, unsigned alg, struct tr *t, const uint8_t *key,
			 const uint8_t *iv, int enc, uint8_t (*tags)[16], uint8_t *data, size_t len)
{
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	(void)alg;
	uint8_t lastiv[16];
	tr_int(t, 1, EVP_CipherInit(ctx, c, NULL, iv, enc));
	/* no fixed IV yet: fails (the lane passes it to EVP, which raises the error) */
	tr_int(t, 10, EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_IV_GEN, 1, lastiv));
	tr_int(t, 2, EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IV_FIXED, -1, (void *)iv));
	tr_int(t, 3, EVP_CipherInit(ctx, NULL, key, NULL, -1));
	uint8_t *buf = malloc(len + 16);
	for (int pkt = 0; pkt < 20; pkt++) {
		uint8_t aad[4] = { 0, 0, (uint8_t)(len >> 8), (uint8_t)len };
		/* OpenSSH asks for 1 byte; the others: the whole IV (-1, 0, more than it has) or 8;
		 * the whole buffer compared, so a byte written past the answer shows too */
		static const int gen_len[] = { 1, 1, -1, 0, 8, 12, 13, 1 };
		const int gl = gen_len[pkt % 8];
		if (!enc)
			tr_int(t, 4, EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, 16, tags[pkt]));
		memset(lastiv, 0, sizeof(lastiv));
		tr_int(t, 5, EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_IV_GEN, gl, lastiv));
		tr_put(t, lastiv, sizeof(lastiv));
		tr_int(t, 6, EVP_Cipher(ctx, NULL, aad, sizeof(aad)));
		tr_int(t, 7, EVP_Cipher(ctx, buf, data + pkt * 16, (unsigned)len));
		tr_put(t, buf, len);
		tr_int(t, 8, EVP_Cipher(ctx, NULL, NULL, 0));
		if (enc) {
			tr_int(t, 9, EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, 16, tags[pkt]));
			tr_put(t, tags[pkt], 16);
		}
	}
	free(buf);
	EVP_CIPHER_CTX_free(ctx);
}

/* libssl's TLS 1.2 AES-GCM records (decrypt side; encrypt makes a random explicit IV). */
static int tls_record(const EVP_CIPHER *c, int enc, const uint8_t *key, const uint8_t *fixed, uint8_t *rec,
		      size_t reclen, size_t *outlen)
{
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	int ok = EVP_CipherInit_ex(ctx, c, NULL, key, NULL, enc) == 1 &&
		 EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IV_FIXED, 4, (void *)fixed) == 1;
	uint8_t aad[13] = { 0, 0, 0, 0, 0, 0, 0, 1, 23, 3, 3 };
	size_t payload = enc ? reclen - 24 : reclen - 24;
	size_t field = enc ? payload + 8 : reclen; /* the length libssl writes into the AAD */
	aad[11] = (uint8_t)(field >> 8);
	aad[12] = (uint8_t)field;
	int pad = ok ? EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_TLS1_AAD, 13, aad) : 0;
	int r = ok && pad == 16 ? EVP_Cipher(ctx, rec, rec, (unsigned)reclen) : -1;
	*outlen = r > 0 ? (size_t)r : 0;
	EVP_CIPHER_CTX_free(ctx);
	return r;
}

/* AEAD_TLS1_AAD's answers (the padding, or a failure) for AADs of a wrong size and record lengths
 * too short for the explicit IV (and, opening, the tag), then a good one, on one context. */
static void tls_aad_answers(const EVP_CIPHER *c, int enc, const uint8_t *key, struct tr *t)
{
	static const uint8_t fixed[4] = { 1, 2, 3, 4 };
	static const int lens[] = { 0, 7, 8, 23, 24, 25, 300 };
	uint8_t aad[16] = { 0, 0, 0, 0, 0, 0, 0, 1, 23, 3, 3 };
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	tr_int(t, 1, EVP_CipherInit_ex(ctx, c, NULL, key, NULL, enc));
	tr_int(t, 2, EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IV_FIXED, 4, (void *)fixed));
	tr_int(t, 3, EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_TLS1_AAD, 12, aad));
	tr_int(t, 4, EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_TLS1_AAD, 14, aad));
	for (size_t i = 0; i < sizeof(lens) / sizeof(lens[0]); i++) {
		aad[11] = (uint8_t)(lens[i] >> 8);
		aad[12] = (uint8_t)lens[i];
		tr_int(t, 5, EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_TLS1_AAD, 13, aad));
	}
	EVP_CIPHER_CTX_free(ctx);
}

/* The run: CT_ROUTE_CASES, CT_ROUTE_SEED and CT_ROUTE_ONLY (read by main). */
static long cases = 100000, only = -1;
static uint64_t seed = 1;

static void test_aead_flows(void **state)
{
	(void)state;
	rng_state = seed * 0x1000193;
	for (unsigned i = 17; i < N_CIPHERS; i++) {
		uint8_t key[32], iv[12], data[20 * 16 + 300];
		uint8_t tags_a[20][16], tags_b[20][16];
		rnd_bytes(key, sizeof(key));
		rnd_bytes(iv, sizeof(iv));
		rnd_bytes(data, sizeof(data));
		for (size_t len = 0; len < 300; len += 37) {
			struct tr ta = { 0 }, tb = { 0 };
			gcm_ssh_flow(native[i], i, &ta, key, iv, 1, tags_a, data, len);
			gcm_ssh_flow(ours[i], i, &tb, key, iv, 1, tags_b, data, len);
			if (!(ta.len == tb.len && !memcmp(ta.buf, tb.buf, ta.len)))
				fail_msg("%s ssh enc len %zu", names[i], len);
			ta.len = tb.len = 0;
			if (len == 74)
				tags_b[3][5] ^= 1; /* a forged packet is refused alike */
			gcm_ssh_flow(native[i], i, &ta, key, iv, 0, tags_b, data, len);
			gcm_ssh_flow(ours[i], i, &tb, key, iv, 0, tags_b, data, len);
			if (!(ta.len == tb.len && !memcmp(ta.buf, tb.buf, ta.len)))
				fail_msg("%s ssh dec len %zu", names[i], len);
			free(ta.buf);
			free(tb.buf);
		}
		for (int enc = 0; enc < 2; enc++) {
			struct tr ta = { 0 }, tb = { 0 };
			tls_aad_answers(native[i], enc, key, &ta);
			tls_aad_answers(ours[i], enc, key, &tb);
			if (!(ta.len == tb.len && !memcmp(ta.buf, tb.buf, ta.len)))
				fail_msg("%s tls aad answers (enc %d)", names[i], enc);
			free(ta.buf);
			free(tb.buf);
		}
		/* TLS: records made by one side open on the other, and tampering is refused alike */
		for (size_t len = 0; len < 1200; len += 101) {
			uint8_t fixed[4], plain[1300], rec[1400], rec2[1400];
			size_t outl, outl2;
			rnd_bytes(fixed, sizeof(fixed));
			rnd_bytes(plain, len);
			for (int maker = 0; maker < 2; maker++) {
				const EVP_CIPHER *mk = maker ? ours[i] : native[i];
				const EVP_CIPHER *op = maker ? native[i] : ours[i];
				memcpy(rec + 8, plain, len);
				int r = tls_record(mk, 1, key, fixed, rec, len + 24, &outl);
				if (!(r == (int)(len + 24) && outl == len + 24))
					fail_msg("%s tls enc %zu: %d", names[i], len, r);
				memcpy(rec2, rec, len + 24);
				r = tls_record(op, 0, key, fixed, rec2, len + 24, &outl2);
				/* both providers return the record length from EVP_Cipher, even when opening */
				if (!(r == (int)(len + 24) && !memcmp(rec2 + 8, plain, len)))
					fail_msg("%s tls dec %zu: %d", names[i], len, r);
				rec[8 + len / 2] ^= 4;
				memcpy(rec2, rec, len + 24);
				int ra = tls_record(native[i], 0, key, fixed, rec, len + 24, &outl);
				int rb = tls_record(ours[i], 0, key, fixed, rec2, len + 24, &outl2);
				if (!(ra == -1 && rb == -1))
					fail_msg("%s tls forged %zu: %d %d", names[i], len, ra, rb);
			}
		}
	}
}

static void test_route_decisions(void **state)
{
	(void)state;
	uint32_t route = 99;
	EVP_CIPHER *cbc = EVP_CIPHER_fetch(NULL, "AES-128-CBC", NULL);
	const EVP_CIPHER *sub = ct_route_evp_cipher(cbc, NULL, 1, &route);
	if (!(sub == ours[3] && route == CT_ROUTE_AESNI))
		fail_msg("cbc enc routed to aesni");
	/* legacy static EVP_CIPHERs are routed as well */
	sub = ct_route_evp_cipher(EVP_aes_256_ctr(), NULL, 0, &route);
	if (!(sub == ours[8] && route == CT_ROUTE_AESNI))
		fail_msg("legacy aes-256-ctr routed");
	/* legacy GCM's short name is "id-aes128-GCM": the route must still see "aes-128-gcm" */
	sub = ct_route_evp_cipher(EVP_aes_128_gcm(), NULL, 1, &route);
	if (!(sub == ours[17] && route == CT_ROUTE_AESNI))
		fail_msg("legacy aes-128-gcm routed");
	sub = ct_route_evp_cipher(EVP_aes_256_cfb128(), NULL, 1, &route);
	if (!(sub == ours[11] && route == CT_ROUTE_AESNI))
		fail_msg("legacy aes-256-cfb routed");
	sub = ct_route_evp_cipher(EVP_aes_128_xts(), NULL, 0, &route);
	if (!(sub == ours[15] && route == CT_ROUTE_AESNI))
		fail_msg("legacy aes-128-xts routed");
	sub = ct_route_evp_cipher(cbc, NULL, 0, &route);
	if (!(!sub && route == CT_ROUTE_NATIVE))
		fail_msg("cbc dec stays native by rule");
	sub = ct_route_evp_cipher(native[18], NULL, 1, &route);
	if (!(!sub && route == CT_ROUTE_AFALG))
		fail_msg("gcm goes to the afalg rule, not ours");
	sub = ct_route_evp_cipher(ours[3], NULL, 1, &route);
	if (!(!sub && route == CT_ROUTE_AESNI))
		fail_msg("already ours: untouched");
	sub = ct_route_evp_cipher(EVP_des_ede3_cbc(), NULL, 1, &route);
	if (!(!sub && route == CT_ROUTE_NONE))
		fail_msg("no rule: untouched");
	unsigned fb = ct_stub_events.count[CT_EV_FALLBACK];
	sub = ct_route_evp_cipher(EVP_chacha20(), NULL, 1, &route);
	if (!(!sub && route == CT_ROUTE_NATIVE && ct_stub_events.count[CT_EV_FALLBACK] == fb + 1))
		fail_msg("unsupported cipher falls back with an event: %s", ct_stub_events.last_detail);
	sub = ct_route_evp_cipher(EVP_aes_128_ocb(), NULL, 1, &route);
	if (!(!sub && route == CT_ROUTE_NATIVE && ct_stub_events.count[CT_EV_FALLBACK] == fb + 2))
		fail_msg("unsupported mode falls back: %s", ct_stub_events.last_detail);
	sub = ct_route_evp_cipher(cbc, (ENGINE *)cbc /* any non-NULL engine */, 1, &route);
	if (!(!sub && route == CT_ROUTE_NATIVE && strstr(ct_stub_events.last_detail, "ENGINE")))
		fail_msg("an ENGINE falls back: %s", ct_stub_events.last_detail);
	enum ct_aesni_level was = ct_aesni_level();
	ct_aesni_set_max_level(CT_AESNI_NONE);
	sub = ct_route_evp_cipher(cbc, NULL, 1, &route);
	if (!(!sub && route == CT_ROUTE_NATIVE && strstr(ct_stub_events.last_detail, CT_AESNI_NEEDS)))
		fail_msg("no %s falls back: %s", CT_AESNI_NEEDS, ct_stub_events.last_detail);
	ct_aesni_set_max_level(was);
	/* the program's own unqualified fetches never see our provider */
	EVP_CIPHER *plain = EVP_CIPHER_fetch(NULL, "AES-128-CBC", NULL);
	if (!(plain && strcmp(OSSL_PROVIDER_get0_name(EVP_CIPHER_get0_provider(plain)), "default") == 0))
		fail_msg("default library context untouched");
	EVP_CIPHER_free(plain);
	EVP_CIPHER_free(cbc);
}

/* ---- known answers: SP 800-38A (F.1.1, F.1.5, F.2.1, F.3.13, F.4.1, F.5.1), GCM spec test
 * cases 1-2, IEEE 1619 XTS vectors 1 (decrypt: equal key halves are refused for encryption) and 2 */

struct kat {
	const char *cipher, *key, *iv, *plain, *cipher_text, *tag;
	int dec_only;
};

#define SP_PLAIN                                                                                             \
	"6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51"                                   \
	"30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710"
#define SP_KEY128 "2b7e151628aed2a6abf7158809cf4f3c"
#define SP_IV "000102030405060708090a0b0c0d0e0f"

static const struct kat kats[] = {
	{ "AES-128-ECB", SP_KEY128, NULL, SP_PLAIN,
	  "3ad77bb40d7a3660a89ecaf32466ef97f5d3d58503b9699de785895a96fdbaaf"
	  "43b1cd7f598ece23881b00e3ed0306887b0c785e27e8ad3f8223207104725dd4",
	  NULL, 0 },
	{ "AES-256-ECB", "603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4", NULL, SP_PLAIN,
	  "f3eed1bdb5d2a03c064b5a7e3db181f8591ccb10d410ed26dc5ba74a31362870"
	  "b6ed21b99ca6f4f9f153e7b1beafed1d23304b7a39f9f3ff067d8d8f9e24ecc7",
	  NULL, 0 },
	{ "AES-128-CBC", SP_KEY128, SP_IV, SP_PLAIN,
	  "7649abac8119b246cee98e9b12e9197d5086cb9b507219ee95db113a917678b2"
	  "73bed6b8e3c1743b7116e69e222295163ff1caa1681fac09120eca307586e1a7",
	  NULL, 0 },
	{ "AES-128-CFB", SP_KEY128, SP_IV, SP_PLAIN,
	  "3b3fd92eb72dad20333449f8e83cfb4ac8a64537a0b3a93fcde3cdad9f1ce58b"
	  "26751f67a3cbb140b1808cf187a4f4dfc04b05357c5d1c0eeac4c66f9ff7f2e6",
	  NULL, 0 },
	{ "AES-128-OFB", SP_KEY128, SP_IV, SP_PLAIN,
	  "3b3fd92eb72dad20333449f8e83cfb4a7789508d16918f03f53c52dac54ed825"
	  "9740051e9c5fecf64344f7a82260edcc304c6528f659c77866a510d9c1d6ae5e",
	  NULL, 0 },
	{ "AES-128-CTR", SP_KEY128, "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff", SP_PLAIN,
	  "874d6191b620e3261bef6864990db6ce9806f66b7970fdff8617187bb9fffdff"
	  "5ae4df3edbd5d35e5b4f09020db03eab1e031dda2fbe03d1792170a0f3009cee",
	  NULL, 0 },
	{ "AES-128-GCM", "00000000000000000000000000000000", "000000000000000000000000", "", "",
	  "58e2fccefa7e3061367f1d57a4e7455a", 0 },
	{ "AES-128-GCM", "00000000000000000000000000000000", "000000000000000000000000",
	  "00000000000000000000000000000000", "0388dace60b6a392f328c2b971b2fe78",
	  "ab6e47d42cec13bdf53a67b21257bddf", 0 },
	{ "AES-128-XTS", "0000000000000000000000000000000000000000000000000000000000000000",
	  "00000000000000000000000000000000",
	  "0000000000000000000000000000000000000000000000000000000000000000",
	  "917cf69ebd68b2ec9b9fe9a3eadda692cd43d2f59598ed858c02c2652fbf922e", NULL, 1 },
	{ "AES-128-XTS", "1111111111111111111111111111111122222222222222222222222222222222",
	  "33333333330000000000000000000000",
	  "4444444444444444444444444444444444444444444444444444444444444444",
	  "c454185e6a16936e39334038acef838bfb186fff7480adc4289382ecd6d394f0", NULL, 0 },
};

static size_t unhex(const char *h, uint8_t *out)
{
	size_t n = 0;
	for (; h && h[0] && h[1]; h += 2)
		out[n++] = (uint8_t)strtoul((char[]){ h[0], h[1], 0 }, NULL, 16);
	return n;
}

static int kat_index(const char *name)
{
	for (unsigned i = 0; i < N_CIPHERS; i++) {
		if (!strcmp(names[i], name))
			return (int)i;
	}
	return -1;
}

static void test_kats(void **state)
{
	(void)state;
	for (unsigned k = 0; k < sizeof(kats) / sizeof(kats[0]); k++) {
		const struct kat *v = &kats[k];
		uint8_t key[64], iv[16], pt[64], ct[64], tag[16], out[96];
		unhex(v->key, key);
		unhex(v->iv, iv);
		size_t plen = unhex(v->plain, pt), clen = unhex(v->cipher_text, ct);
		size_t tlen = unhex(v->tag, tag);
		int idx = kat_index(v->cipher);
		for (int impl = 0; impl < 2; impl++) {
			const EVP_CIPHER *c = impl ? ours[idx] : native[idx];
			const char *who = impl ? "cryptrace" : "default";
			for (int enc = v->dec_only ? 0 : 1; enc >= 0; enc--) {
				EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
				int outl = 0, fl = 0;
				int ok = EVP_CipherInit_ex(ctx, c, NULL, key, v->iv ? iv : NULL, enc);
				EVP_CIPHER_CTX_set_padding(ctx, 0);
				if (!enc && tlen)
					ok &= EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, (int)tlen, tag);
				ok &= EVP_CipherUpdate(ctx, out, &outl, enc ? pt : ct, (int)plen);
				ok &= EVP_CipherFinal_ex(ctx, out + outl, &fl);
				if (!(ok == 1 && (size_t)(outl + fl) == clen &&
				      !memcmp(out, enc ? ct : pt, clen)))
					fail_msg("KAT %u %s %s (%s)", k, v->cipher, enc ? "enc" : "dec", who);
				if (enc && tlen) {
					uint8_t got[16];
					EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, 16, got);
					if (!(!memcmp(got, tag, 16)))
						fail_msg("KAT %u %s tag (%s)", k, v->cipher, who);
				}
				EVP_CIPHER_CTX_free(ctx);
			}
		}
	}
}

/* libssl's TLS 1.0-1.2 CBC record layer (tls-version, tls-mac-size, tls-mac): handed over to a
 * native context by our provider; records must come out identical and open on the other side. */
static int tls_cbc_ctx(EVP_CIPHER_CTX *ctx, const EVP_CIPHER *c, int enc, const uint8_t *key,
		       const uint8_t *iv, int version, size_t macsize)
{
	OSSL_PARAM params[3];
	params[0] = OSSL_PARAM_construct_int(OSSL_CIPHER_PARAM_TLS_VERSION, &version);
	params[1] = OSSL_PARAM_construct_size_t(OSSL_CIPHER_PARAM_TLS_MAC_SIZE, &macsize);
	params[2] = OSSL_PARAM_construct_end();
	return EVP_CipherInit_ex(ctx, c, NULL, key, iv, enc) == 1 &&
	       EVP_CIPHER_CTX_set_params(ctx, params) == 1;
}

static void test_tls_cbc(void **state)
{
	(void)state;
	static const unsigned algs_cbc[] = { 3, 5 };
	static const int versions[] = { 0x0301, 0x0303 };
	static const size_t macs[] = { 0, 20, 32 };
	unsigned fb = ct_stub_events.count[CT_EV_FALLBACK];
	for (unsigned a = 0; a < 2; a++) {
		unsigned i = algs_cbc[a];
		for (unsigned v = 0; v < 2; v++) {
			for (unsigned m = 0; m < 3; m++) {
				uint8_t key[32], iv[16];
				rnd_bytes(key, sizeof(key));
				rnd_bytes(iv, sizeof(iv));
				EVP_CIPHER_CTX *ne = EVP_CIPHER_CTX_new(), *oe = EVP_CIPHER_CTX_new();
				EVP_CIPHER_CTX *nd = EVP_CIPHER_CTX_new(), *od = EVP_CIPHER_CTX_new();
				int ok = tls_cbc_ctx(ne, native[i], 1, key, iv, versions[v], macs[m]) &&
					 tls_cbc_ctx(oe, ours[i], 1, key, iv, versions[v], macs[m]) &&
					 tls_cbc_ctx(nd, native[i], 0, key, iv, versions[v], macs[m]) &&
					 tls_cbc_ctx(od, ours[i], 0, key, iv, versions[v], macs[m]);
				if (!(ok))
					fail_msg("%s TLS CBC setup v%x mac %zu", names[i], versions[v],
						 macs[m]);
				for (size_t len = 0; ok && len < 600; len += 1 + len / 3) {
					uint8_t rn[1024], ro[1024], dn[1024], dox[1024];
					size_t in = len + macs[m] + (versions[v] >= 0x0302 ? 16 : 0);
					rnd_bytes(rn, in);
					memcpy(ro, rn, in);
					int on = 0, oo = 0;
					int rn_ok = EVP_CipherUpdate(ne, rn, &on, rn, (int)in);
					int ro_ok = EVP_CipherUpdate(oe, ro, &oo, ro, (int)in);
					if (!(rn_ok == ro_ok && on == oo && !memcmp(rn, ro, (size_t)on)))
						fail_msg("%s TLS CBC record enc v%x mac %zu len %zu",
							 names[i], versions[v], macs[m], len);
					bool damaged = len % 7 == 3 && on > 0;
					if (damaged)
						rn[on - 1 - (int)(len % 16)] ^= 1; /* damage padding or MAC */
					memcpy(dn, rn, (size_t)on);
					memcpy(dox, rn, (size_t)on);
					int dn_l = 0, do_l = 0;
					int a1 = EVP_CipherUpdate(nd, dn, &dn_l, dn, on);
					int a2 = EVP_CipherUpdate(od, dox, &do_l, dox, on);
					if (!(a1 == a2 && dn_l == do_l && !memcmp(dn, dox, (size_t)dn_l)))
						fail_msg(
							"%s TLS CBC record dec v%x mac %zu len %zu: %d/%d %d/%d",
							names[i], versions[v], macs[m], len, a1, a2, dn_l,
							do_l);
					/* (a damaged record yields a random MAC: OpenSSL's constant-time rule) */
					if (macs[m] && a1 == 1 && a2 == 1 && !damaged) {
						void *pn = NULL, *po = NULL;
						OSSL_PARAM gp[2] = { OSSL_PARAM_construct_octet_ptr(
									     OSSL_CIPHER_PARAM_TLS_MAC, &pn,
									     macs[m]),
								     OSSL_PARAM_END };
						EVP_CIPHER_CTX_get_params(nd, gp);
						gp[0] = OSSL_PARAM_construct_octet_ptr(
							OSSL_CIPHER_PARAM_TLS_MAC, &po, macs[m]);
						EVP_CIPHER_CTX_get_params(od, gp);
						if (!(pn && po && !memcmp(pn, po, macs[m])))
							fail_msg("%s TLS CBC mac read-back", names[i]);
					}
				}
				/* a copy of a handed-over context keeps working on its own */
				EVP_CIPHER_CTX *cp = EVP_CIPHER_CTX_new();
				if (!(EVP_CIPHER_CTX_copy(cp, oe) == 1))
					fail_msg("%s TLS CBC ctx copy", names[i]);
				EVP_CIPHER_CTX_free(cp);
				EVP_CIPHER_CTX_free(ne);
				EVP_CIPHER_CTX_free(oe);
				EVP_CIPHER_CTX_free(nd);
				EVP_CIPHER_CTX_free(od);
			}
		}
	}
	if (!(ct_stub_events.count[CT_EV_FALLBACK] > fb && strstr(ct_stub_events.last_detail, "TLS CBC")))
		fail_msg("TLS CBC hand-over recorded as a fallback: %s", ct_stub_events.last_detail);
}

/* Both sides of every case: the default provider's ciphers, and ours through the production
 * entry point (where the route spec routes them to the CPU's AES instructions). */
static int fetch_ciphers(void **state)
{
	(void)state;
	ct_stub_set_route(
		"aes-*-cbc:dec=native,aes-192-gcm=afalg,chacha20=cpu,aes-128-ocb=cpu,"
		"aes-*=cpu");
	uint32_t route;
	for (unsigned i = 0; i < N_CIPHERS; i++) {
		native[i] = EVP_CIPHER_fetch(NULL, names[i], "provider=default");
		if (!native[i]) {
			print_error("the default provider has no %s\n", names[i]);
			return -1;
		}
		ours[i] = ct_route_evp_cipher(native[i], NULL, 1, &route);
	}
	/* aes-192-gcm goes to the afalg rule: fetch ours from a library context of our own */
	OSSL_LIB_CTX *lc = OSSL_LIB_CTX_new();
	if (lc && OSSL_PROVIDER_add_builtin(lc, CT_PROVIDER_NAME, ct_provider_init) &&
	    OSSL_PROVIDER_load(lc, CT_PROVIDER_NAME))
		ours[18] = EVP_CIPHER_fetch(lc, names[18], NULL);
	for (unsigned i = 0; i < N_CIPHERS; i++) {
		if (!ours[i]) {
			print_error("no cryptrace %s\n", names[i]);
			return -1;
		}
	}
	return 0;
}

/* Random scripts, the same on both sides: the transcripts must be identical. */
static void test_random_scripts(void **state)
{
	(void)state;
	enum ct_aesni_level best = ct_aesni_level();
	struct tr ta = { 0 }, tb = { 0 };
	long per_alg[N_CIPHERS] = { 0 };
	uint64_t bytes = 0;
	long ran = 0;
	for (long n = 0; n < cases; n++) {
		if (only >= 0 && n != only)
			continue;
		rng_state = seed * 0x100000001b3ull + (uint64_t)n * 0x9e3779b97f4a7c15ull;
		/* a quarter of the cases on the 128-bit AES-NI path, the rest on the best one */
		ct_aesni_set_max_level(n % 4 == 3 ? CT_AESNI_XMM : best);
		struct script s;
		unsigned alg = (unsigned)rnd_below(N_CIPHERS);
		make_script(&s, alg);
		ta.len = tb.len = 0;
		run_script(&s, native[alg], &ta);
		run_script(&s, ours[alg], &tb);
		per_alg[alg]++;
		ran++;
		bytes += s.inlen;
		if (ta.len != tb.len || memcmp(ta.buf, tb.buf, ta.len)) {
			size_t at = 0;
			while (at < ta.len && at < tb.len && ta.buf[at] == tb.buf[at])
				at++;
			if (getenv("CT_ROUTE_DUMP")) {
				for (int i = 0; i < s.nops; i++)
					print_error("  op %d kind %d len %zu inplace %d\n", i, s.ops[i].kind,
						    s.ops[i].len, s.ops[i].inplace);
				for (size_t k = at & ~(size_t)15; k < at + 64 && k < ta.len; k += 16) {
					print_error("  @%zu native:", k);
					for (size_t j = k; j < k + 16 && j < ta.len; j++)
						print_error(" %02x", ta.buf[j]);
					print_error("\n  @%zu ours:  ", k);
					for (size_t j = k; j < k + 16 && j < tb.len; j++)
						print_error(" %02x", tb.buf[j]);
					print_error("\n");
				}
			}
			const size_t la = ta.len, lb = tb.len;
			free(s.in);
			free(ta.buf);
			free(tb.buf);
			ct_aesni_set_max_level(best);
			fail_msg("case %ld (CT_ROUTE_SEED=%" PRIu64
				 " CT_ROUTE_ONLY=%ld): %s %s len %zu pad %d "
				 "raw %d ivlen %d taglen %d ops %d level %s: transcripts differ at byte %zu "
				 "(%zu vs %zu)",
				 n, seed, n, names[alg], s.enc ? "enc" : "dec", s.inlen, s.pad, s.raw,
				 s.ivlen, s.taglen, s.nops, ct_aesni_level_name(ct_aesni_level()), at, la,
				 lb);
		}
		free(s.in);
	}
	ct_aesni_set_max_level(best);
	print_message("%ld differential cases (seed %" PRIu64 "), %" PRIu64 " bytes of input:", ran, seed,
		      bytes);
	for (unsigned i = 0; i < N_CIPHERS; i++)
		print_message(" %s=%ld", names[i], per_alg[i]);
	print_message("\n");
	if (shim.on) {
		print_message("direct lane: %lu calls served\n", shim.served);
		assert_true(shim.served > (unsigned long)ran); /* more than one call a case */
	}
	free(ta.buf);
	free(tb.buf);
}

int main(void)
{
	if (!ct_aesni_available()) {
		printf("SKIP: no AES-NI on this CPU: the aesni route cannot run here\n");
		return 77;
	}
	const char *e = getenv("CT_ROUTE_CASES");
	if (e)
		cases = atol(e);
	e = getenv("CT_ROUTE_SEED");
	if (e)
		seed = strtoull(e, NULL, 0);
	e = getenv("CT_ROUTE_ONLY");
	if (e)
		only = atol(e);
	shim_setup();
	/* in this order: the TLS CBC test draws from the generator as it starts (0), the AEAD
	 * flows from the seed */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_constants),       cmocka_unit_test(test_kats),
		cmocka_unit_test(test_route_decisions), cmocka_unit_test(test_tls_cbc),
		cmocka_unit_test(test_aead_flows),      cmocka_unit_test(test_random_scripts),
	};
	return cmocka_run_group_tests(tests, fetch_ciphers, NULL);
}
