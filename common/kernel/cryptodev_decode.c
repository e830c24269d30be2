/* SPDX-License-Identifier: MIT */
/*
 * cryptodev_decode.c - detail strings for cryptodev ioctls, one formatter per request kind,
 * dispatched by ioctl number through a table. Lengths only: keys, IVs and data are never read.
 */
#include <string.h>

#include "kbuf.h"
#include "kernel_decode.h"

#define N(tab) (sizeof(tab) / sizeof((tab)[0]))

static void add_alg(struct ct_kbuf *b, const char *label, uint32_t alg)
{
	const char *name = ct_cdev_alg_name(alg);

	if (alg == 0)
		ct_kbuf_add(b, "%s=0", label);
	else if (name)
		ct_kbuf_add(b, "%s=%s", label, name);
	else
		ct_kbuf_add(b, "%s=%u", label, alg);
}

static void add_op(struct ct_kbuf *b, uint32_t op)
{
	const char *name = ct_cdev_op_name(op);

	if (name)
		ct_kbuf_add(b, " dir=%s", name);
	else
		ct_kbuf_add(b, " dir=%u", op);
}

/* value's bits as names from t joined by '|', unknown bits as one hex rest: "WRITE_IV|0x100". */
static void add_bits(struct ct_kbuf *b, const struct ct_kname *t, size_t n, uint32_t value)
{
	uint32_t rest = value;
	bool first = true;

	for (size_t i = 0; i < n; i++) {
		if (!(value & t[i].value))
			continue;
		ct_kbuf_add(b, "%s%s", first ? "" : "|", t[i].name);
		rest &= ~t[i].value;
		first = false;
	}
	if (rest)
		ct_kbuf_add(b, "%s0x%x", first ? "" : "|", rest);
}

static void add_flags(struct ct_kbuf *b, uint32_t flags)
{
	static const struct ct_kname bits[] = {
		{ CT_COP_FLAG_UPDATE, "UPDATE" },
		{ CT_COP_FLAG_FINAL, "FINAL" },
		{ CT_COP_FLAG_WRITE_IV, "WRITE_IV" },
		{ CT_COP_FLAG_NO_ZC, "NO_ZC" },
		{ CT_COP_FLAG_AEAD_TLS_TYPE, "AEAD_TLS" },
		{ CT_COP_FLAG_AEAD_SRTP_TYPE, "AEAD_SRTP" },
		{ CT_COP_FLAG_RESET, "RESET" },
	};

	if (!flags)
		return;
	ct_kbuf_add(b, " flags=");
	add_bits(b, bits, N(bits), flags);
}

size_t ct_cdev_fmt_session(char *buf, size_t cap, const struct ct_cdev_session_op *s, bool with_ses)
{
	struct ct_kbuf b = ct_kbuf_init(buf, cap);
	char ossl[32];

	add_alg(&b, "cipher", s->cipher);
	ct_kbuf_add(&b, " keylen=%u", s->keylen);
	if (s->cipher && ct_cdev_openssl_cipher(s->cipher, s->keylen, ossl, sizeof(ossl)))
		ct_kbuf_add(&b, " (%s)", ossl);
	ct_kbuf_add(&b, " ");
	add_alg(&b, "mac", s->mac);
	if (s->mac)
		ct_kbuf_add(&b, " mackeylen=%u", s->mackeylen);
	if (with_ses)
		ct_kbuf_add(&b, " ses=%u", s->ses);
	return b.len;
}

/* The kernel fills these names; a broken driver could leave them unterminated. */
static void add_name(struct ct_kbuf *b, const char *label, const char *field, size_t size)
{
	size_t n = strnlen(field, size);

	if (n)
		ct_kbuf_add(b, " %s=%.*s", label, (int)n, field);
}

size_t ct_cdev_fmt_sessinfo(char *buf, size_t cap, const struct ct_cdev_session_info_op *si)
{
	struct ct_kbuf b = ct_kbuf_init(buf, cap);

	ct_kbuf_add(&b, "ses=%u", si->ses);
	add_name(&b, "cipher", si->cipher_info.cra_name, sizeof(si->cipher_info.cra_name));
	add_name(&b, "driver", si->cipher_info.cra_driver_name, sizeof(si->cipher_info.cra_driver_name));
	add_name(&b, "hash", si->hash_info.cra_name, sizeof(si->hash_info.cra_name));
	add_name(&b, "hash_driver", si->hash_info.cra_driver_name, sizeof(si->hash_info.cra_driver_name));
	ct_kbuf_add(&b, " alignmask=%u kernel_driver_only=%u", si->alignmask,
		    (si->flags & CT_SIOP_FLAG_KERNEL_DRIVER_ONLY) ? 1u : 0u);
	if (si->flags & ~CT_SIOP_FLAG_KERNEL_DRIVER_ONLY)
		ct_kbuf_add(&b, " flags=0x%x", si->flags);
	return b.len;
}

size_t ct_cdev_fmt_crypt(char *buf, size_t cap, const struct ct_cdev_crypt_op *c)
{
	struct ct_kbuf b = ct_kbuf_init(buf, cap);

	ct_kbuf_add(&b, "ses=%u", c->ses);
	add_op(&b, c->op);
	ct_kbuf_add(&b, " len=%u", c->len);
	add_flags(&b, c->flags);
	if (!c->iv)
		ct_kbuf_add(&b, " iv=none");
	if (c->mac)
		ct_kbuf_add(&b, " mac=yes");
	if (c->src && c->src == c->dst)
		ct_kbuf_add(&b, " inplace");
	return b.len;
}

size_t ct_cdev_fmt_auth(char *buf, size_t cap, const struct ct_cdev_crypt_auth_op *a)
{
	struct ct_kbuf b = ct_kbuf_init(buf, cap);

	ct_kbuf_add(&b, "ses=%u", a->ses);
	add_op(&b, a->op);
	ct_kbuf_add(&b, " len=%u auth_len=%u tag_len=%u iv_len=%u", a->len, a->auth_len, a->tag_len,
		    a->iv_len);
	add_flags(&b, a->flags);
	return b.len;
}

size_t ct_cdev_fmt_kop(char *buf, size_t cap, const struct ct_cdev_crypt_kop *k)
{
	struct ct_kbuf b = ct_kbuf_init(buf, cap);
	const char *name = ct_cdev_crk_name(k->crk_op);

	if (name)
		ct_kbuf_add(&b, "crk_op=%s", name);
	else
		ct_kbuf_add(&b, "crk_op=%u", k->crk_op);
	ct_kbuf_add(&b, " iparams=%u oparams=%u", k->crk_iparams, k->crk_oparams);
	unsigned n = (unsigned)k->crk_iparams + k->crk_oparams;
	if (n > CT_CRK_MAXPARAM)
		n = CT_CRK_MAXPARAM;
	for (unsigned i = 0; i < n; i++)
		ct_kbuf_add(&b, "%s%u", i ? "," : " nbits=", k->crk_param[i].crp_nbits);
	return b.len;
}

size_t ct_cdev_fmt_asymfeat(char *buf, size_t cap, uint32_t features)
{
	static const struct ct_kname bits[] = {
		{ CT_CRF_MOD_EXP, "MOD_EXP" },
		{ CT_CRF_MOD_EXP_CRT, "MOD_EXP_CRT" },
		{ CT_CRF_DSA_SIGN, "DSA_SIGN" },
		{ CT_CRF_DSA_VERIFY, "DSA_VERIFY" },
		{ CT_CRF_DH_COMPUTE_KEY, "DH_COMPUTE_KEY" },
	};
	struct ct_kbuf b = ct_kbuf_init(buf, cap);

	ct_kbuf_add(&b, "features=0x%x ", features);
	if (features)
		add_bits(&b, bits, N(bits), features);
	else
		ct_kbuf_add(&b, "none");
	return b.len;
}

/* Requests whose argument is a pointer to a u32. */
static size_t fmt_u32_arg(char *buf, size_t cap, const char *label, const void *arg)
{
	struct ct_kbuf b = ct_kbuf_init(buf, cap);

	ct_kbuf_add(&b, "%s=%u", label, *(const uint32_t *)arg);
	return b.len;
}

static size_t fmt_gsession(char *buf, size_t cap, const void *arg)
{
	return ct_cdev_fmt_session(buf, cap, arg, false);
}
static size_t fmt_fsession(char *buf, size_t cap, const void *arg)
{
	return fmt_u32_arg(buf, cap, "ses", arg);
}
static size_t fmt_crypt(char *buf, size_t cap, const void *arg)
{
	return ct_cdev_fmt_crypt(buf, cap, arg);
}
static size_t fmt_auth(char *buf, size_t cap, const void *arg)
{
	return ct_cdev_fmt_auth(buf, cap, arg);
}
static size_t fmt_kop(char *buf, size_t cap, const void *arg)
{
	return ct_cdev_fmt_kop(buf, cap, arg);
}
static size_t fmt_sessinfo(char *buf, size_t cap, const void *arg)
{
	/* Before the call only ses is an input; print just that (the hook formats the reply). */
	struct ct_kbuf b = ct_kbuf_init(buf, cap);

	ct_kbuf_add(&b, "ses=%u", ((const struct ct_cdev_session_info_op *)arg)->ses);
	return b.len;
}
static size_t fmt_asymfeat(char *buf, size_t cap, const void *arg)
{
	return ct_cdev_fmt_asymfeat(buf, cap, *(const uint32_t *)arg);
}
static size_t fmt_crioget(char *buf, size_t cap, const void *arg)
{
	return fmt_u32_arg(buf, cap, "fd", arg);
}

static const struct {
	uint32_t nr;
	size_t (*fmt)(char *buf, size_t cap, const void *arg);
} cdev_decoders[] = {
	{ CT_NR_CRIOGET, fmt_crioget },
	{ CT_NR_CIOCGSESSION, fmt_gsession },
	{ CT_NR_CIOCFSESSION, fmt_fsession },
	{ CT_NR_CIOCCRYPT, fmt_crypt },
	{ CT_NR_CIOCKEY, fmt_kop },
	{ CT_NR_CIOCASYMFEAT, fmt_asymfeat },
	{ CT_NR_CIOCGSESSINFO, fmt_sessinfo },
	{ CT_NR_CIOCAUTHCRYPT, fmt_auth },
	{ CT_NR_CIOCASYNCCRYPT, fmt_crypt },
	{ CT_NR_CIOCASYNCFETCH, fmt_crypt },
};

size_t ct_cdev_fmt_ioctl(char *buf, size_t cap, unsigned long request, const void *arg)
{
	struct ct_kbuf b = ct_kbuf_init(buf, cap);
	const char *name = ct_cdev_ioctl_name(request);
	int nr = ct_cdev_ioctl_nr(request);

	if (name)
		ct_kbuf_add(&b, "op=%s", name);
	else
		ct_kbuf_add(&b, "op=0x%lx", request);
	if (!name)
		return b.len;
	if (!arg) {
		ct_kbuf_add(&b, " arg=NULL");
		return b.len;
	}
	for (size_t i = 0; i < N(cdev_decoders); i++) {
		if (cdev_decoders[i].nr != (uint32_t)nr)
			continue;
		if (b.len + 2 < cap) {
			ct_kbuf_add(&b, " ");
			b.len += cdev_decoders[i].fmt(b.p + b.len, cap - b.len, arg);
		}
		break;
	}
	return b.len;
}
