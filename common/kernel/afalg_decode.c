/* SPDX-License-Identifier: MIT */
/*
 * afalg_decode.c - AF_ALG decoding: SOL_ALG option and operation names, sockaddr_alg read by the
 * caller's addrlen, control messages of sendmsg, and kernel algorithm names mapped to OpenSSL's
 * cipher names. Lengths only: keys and IVs are never read.
 */
#include <string.h>

#include "kbuf.h"
#include "kernel_decode.h"

#define N(tab) (sizeof(tab) / sizeof((tab)[0]))

static const struct ct_kname alg_opts[] = {
	{ CT_ALG_SET_KEY, "ALG_SET_KEY" },
	{ CT_ALG_SET_IV, "ALG_SET_IV" },
	{ CT_ALG_SET_OP, "ALG_SET_OP" },
	{ CT_ALG_SET_AEAD_ASSOCLEN, "ALG_SET_AEAD_ASSOCLEN" },
	{ CT_ALG_SET_AEAD_AUTHSIZE, "ALG_SET_AEAD_AUTHSIZE" },
	{ CT_ALG_SET_DRBG_ENTROPY, "ALG_SET_DRBG_ENTROPY" },
	{ CT_ALG_SET_KEY_BY_KEY_SERIAL, "ALG_SET_KEY_BY_KEY_SERIAL" },
};

static const struct ct_kname alg_ops[] = {
	{ CT_ALG_OP_DECRYPT, "decrypt" },
	{ CT_ALG_OP_ENCRYPT, "encrypt" },
};

static const char *const alg_types[] = { "skcipher", "aead", "hash", "rng", "akcipher", "kpp" };

const char *ct_alg_opt_name(uint32_t opt)
{
	return ct_kname_find(alg_opts, N(alg_opts), opt);
}
const char *ct_alg_op_name(uint32_t op)
{
	return ct_kname_find(alg_ops, N(alg_ops), op);
}

bool ct_alg_type_known(const char *type)
{
	for (size_t i = 0; type && i < N(alg_types); i++)
		if (!strcmp(type, alg_types[i]))
			return true;
	return false;
}

/* struct sockaddr_alg: u16 family, u8 type[14], u32 feat, u32 mask, u8 name[64 or more]. */
enum {
	SALG_TYPE_OFF = 2,
	SALG_TYPE_LEN = 14,
	SALG_FEAT_OFF = 16,
	SALG_MASK_OFF = 20,
	SALG_NAME_OFF = 24,
	SALG_NAME_MAX = 128, /* CRYPTO_MAX_ALG_NAME */
};

/* Copies a possibly unterminated field of at most avail bytes. */
static void copy_field(char *dst, size_t dstsize, const uint8_t *src, size_t avail)
{
	size_t n = strnlen((const char *)src, avail);

	if (n >= dstsize)
		n = dstsize - 1;
	memcpy(dst, src, n);
	dst[n] = '\0';
}

bool ct_alg_decode_addr(const void *addr, size_t addrlen, struct ct_alg_addr *out)
{
	const uint8_t *p = addr;

	memset(out, 0, sizeof(*out));
	if (!addr || addrlen < sizeof(uint16_t))
		return false;
	memcpy(&out->family, p, sizeof(uint16_t));
	if (addrlen > SALG_TYPE_OFF) {
		size_t avail = addrlen - SALG_TYPE_OFF;
		copy_field(out->type, sizeof(out->type), p + SALG_TYPE_OFF,
			   avail < SALG_TYPE_LEN ? avail : SALG_TYPE_LEN);
		out->has_type = true;
	}
	if (addrlen >= SALG_FEAT_OFF + 4) {
		memcpy(&out->feat, p + SALG_FEAT_OFF, 4);
		out->has_feat = true;
	}
	if (addrlen >= SALG_MASK_OFF + 4) {
		memcpy(&out->mask, p + SALG_MASK_OFF, 4);
		out->has_mask = true;
	}
	if (addrlen > SALG_NAME_OFF) {
		size_t avail = addrlen - SALG_NAME_OFF;
		copy_field(out->name, sizeof(out->name), p + SALG_NAME_OFF,
			   avail < SALG_NAME_MAX ? avail : SALG_NAME_MAX);
		out->has_name = true;
	}
	return true;
}

size_t ct_alg_fmt_addr(char *buf, size_t cap, const void *addr, size_t addrlen)
{
	struct ct_kbuf b = ct_kbuf_init(buf, cap);
	struct ct_alg_addr a;

	if (!ct_alg_decode_addr(addr, addrlen, &a)) {
		ct_kbuf_add(&b, addr ? "addrlen=%zu short" : "addr=NULL addrlen=%zu", addrlen);
		return b.len;
	}
	if (a.family == AF_ALG)
		ct_kbuf_add(&b, "family=AF_ALG");
	else
		ct_kbuf_add(&b, "family=%u", a.family);
	if (a.has_type)
		ct_kbuf_add(&b, " type=%s", a.type);
	if (a.has_name)
		ct_kbuf_add(&b, " name=%s", a.name);
	if (a.feat)
		ct_kbuf_add(&b, " feat=0x%x", a.feat);
	if (a.mask)
		ct_kbuf_add(&b, " mask=0x%x", a.mask);
	/* The kernel wants at least the fixed part plus one name byte. */
	if (addrlen < SALG_NAME_OFF + 1)
		ct_kbuf_add(&b, " addrlen=%zu short", addrlen);
	return b.len;
}

size_t ct_alg_fmt_sockopt(char *buf, size_t cap, int level, int optname, const void *optval, size_t optlen)
{
	struct ct_kbuf b = ct_kbuf_init(buf, cap);
	const char *name = level == SOL_ALG ? ct_alg_opt_name((uint32_t)optname) : NULL;

	if (level != SOL_ALG) {
		ct_kbuf_add(&b, "level=%d opt=%d optlen=%zu", level, optname, optlen);
		return b.len;
	}
	if (name)
		ct_kbuf_add(&b, "opt=%s", name);
	else
		ct_kbuf_add(&b, "opt=%d", optname);
	switch (optname) {
	case CT_ALG_SET_KEY:
		ct_kbuf_add(&b, " keylen=%zu", optlen);
		break;
	case CT_ALG_SET_AEAD_AUTHSIZE:
		/* The kernel takes the tag size from optlen, optval must be NULL. */
		ct_kbuf_add(&b, " authsize=%zu", optlen);
		break;
	case CT_ALG_SET_DRBG_ENTROPY:
		ct_kbuf_add(&b, " entropylen=%zu", optlen);
		break;
	case CT_ALG_SET_KEY_BY_KEY_SERIAL:
		if (optval && optlen >= sizeof(int32_t)) {
			int32_t serial;
			memcpy(&serial, optval, sizeof(serial));
			ct_kbuf_add(&b, " key_serial=%d", serial);
		} else {
			ct_kbuf_add(&b, " optlen=%zu", optlen);
		}
		break;
	default:
		ct_kbuf_add(&b, " optlen=%zu", optlen);
	}
	return b.len;
}

void ct_alg_parse_cmsgs(const struct msghdr *msg, struct ct_alg_cmsgs *out)
{
	memset(out, 0, sizeof(*out));
	if (!msg || !msg->msg_control || msg->msg_controllen < sizeof(struct cmsghdr))
		return;
	const uint8_t *base = msg->msg_control, *end = base + msg->msg_controllen;
	const uint8_t *p = base;

	/* Our own walk rather than CMSG_NXTHDR: it must never step past msg_controllen, even on a
	 * cmsg_len the kernel would reject. */
	while ((size_t)(end - p) >= sizeof(struct cmsghdr)) {
		struct cmsghdr h;
		memcpy(&h, p, sizeof(h));
		if (h.cmsg_len < sizeof(struct cmsghdr) || h.cmsg_len > (size_t)(end - p))
			break;
		const uint8_t *data = p + CMSG_LEN(0);
		size_t dlen = h.cmsg_len - CMSG_LEN(0);
		if (h.cmsg_level != SOL_ALG) {
			out->unknown++;
		} else if (h.cmsg_type == CT_ALG_SET_OP && dlen >= 4) {
			memcpy(&out->op, data, 4);
			out->has_op = true;
		} else if (h.cmsg_type == CT_ALG_SET_IV && dlen >= 4) {
			/* struct af_alg_iv { u32 ivlen; u8 iv[]; }: the length only. */
			memcpy(&out->ivlen, data, 4);
			out->has_iv = true;
		} else if (h.cmsg_type == CT_ALG_SET_AEAD_ASSOCLEN && dlen >= 4) {
			memcpy(&out->assoclen, data, 4);
			out->has_assoclen = true;
		} else {
			out->unknown++;
		}
		size_t step = CMSG_ALIGN(h.cmsg_len);
		if (step > (size_t)(end - p))
			break;
		p += step;
	}
}

size_t ct_alg_fmt_cmsgs(char *buf, size_t cap, const struct ct_alg_cmsgs *c)
{
	struct ct_kbuf b = ct_kbuf_init(buf, cap);
	const char *sep = "";

	if (c->has_op) {
		const char *name = ct_alg_op_name(c->op);
		if (name)
			ct_kbuf_add(&b, "op=%s", name);
		else
			ct_kbuf_add(&b, "op=%u", c->op);
		sep = " ";
	}
	if (c->has_iv) {
		ct_kbuf_add(&b, "%sivlen=%u", sep, c->ivlen);
		sep = " ";
	}
	if (c->has_assoclen) {
		ct_kbuf_add(&b, "%sassoclen=%u", sep, c->assoclen);
		sep = " ";
	}
	if (c->unknown)
		ct_kbuf_add(&b, "%sother_cmsgs=%u", sep, c->unknown);
	return b.len;
}

/* Kernel template -> OpenSSL mode, and how the key length maps to AES key bits. */
static const struct {
	const char *kname;
	const char *mode;
	unsigned key_divisor; /* xts: two keys; */
	unsigned key_extra;   /* rfc4106/rfc3686: a 4-byte nonce/salt follows the key */
} alg_modes[] = {
	{ "cbc(aes)", "cbc", 1, 0 },          { "ctr(aes)", "ctr", 1, 0 },
	{ "ecb(aes)", "ecb", 1, 0 },          { "xts(aes)", "xts", 2, 0 },
	{ "gcm(aes)", "gcm", 1, 0 },          { "ccm(aes)", "ccm", 1, 0 },
	{ "ofb(aes)", "ofb", 1, 0 },          { "cfb(aes)", "cfb", 1, 0 },
	{ "cts(cbc(aes))", "cbc-cts", 1, 0 }, { "rfc4106(gcm(aes))", "gcm", 1, 4 },
	{ "rfc3686(ctr(aes))", "ctr", 1, 4 },
};

bool ct_alg_openssl_cipher(const char *kname, uint32_t keylen, char *buf, size_t cap)
{
	if (cap)
		buf[0] = '\0';
	if (!kname)
		return false;
	for (size_t i = 0; i < N(alg_modes); i++) {
		if (strcmp(kname, alg_modes[i].kname))
			continue;
		if (keylen < alg_modes[i].key_extra)
			return false;
		uint32_t bits = (keylen - alg_modes[i].key_extra) * 8 / alg_modes[i].key_divisor;
		if ((keylen - alg_modes[i].key_extra) % alg_modes[i].key_divisor)
			return false;
		if (bits != 128 && bits != 192 && bits != 256)
			return false;
		if (alg_modes[i].key_divisor == 2 && bits == 192)
			return false;
		snprintf(buf, cap, "aes-%u-%s", bits, alg_modes[i].mode);
		return cap > 0;
	}
	return false;
}
