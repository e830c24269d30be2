/* SPDX-License-Identifier: MIT */
/*
 * emul_cdev.c - /dev/crypto served in-process: sessions (CIOCGSESSION, CIOCGSESSINFO,
 * CIOCFSESSION), CIOCCRYPT with cryptodev-linux's IV semantics (the session IV chains from request
 * to request; COP_FLAG_WRITE_IV copies the updated IV back) and CIOCAUTHCRYPT for plain GCM
 * (cryptodev-linux's layout: encrypt writes ciphertext || tag to dst, decrypt takes len bytes that
 * end with the tag; a bad tag is EBADMSG). Errors are cryptodev-linux's: EINVAL for an unknown
 * cipher, key size, session or length.
 *
 * When a real device is behind the descriptor, only sessions the route sends to aesni are ours
 * (their ids carry CT_EMUL_SES_TAG); everything else goes to the kernel.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core.h"
#include "emul.h"
#include "kernel/cryptodev_abi.h"
#include "kernel/kernel_decode.h"

#define CT_EMUL_SES_TAG 0x5ee00000u /* our session ids: a range the kernel's counter never reaches */
#define EMUL_SESSIONS 64

struct emul_session {
	struct ct_emul_key key;
	uint8_t iv[16];
	bool used;
};

struct ct_emul_cdev {
	bool device_missing;
	struct emul_session *ses[EMUL_SESSIONS];
};

int ct_emul_cdev_open(int flags)
{
	return CT_REAL(open)("/dev/null", O_RDWR | (flags & O_CLOEXEC));
}

bool ct_emul_cdev_attach(struct ct_kfd_state *st, bool device_missing)
{
	struct ct_emul_cdev *c = ct_emul_alloc(sizeof(*c));

	if (!c)
		return false;
	c->device_missing = device_missing;
	st->emul = c;
	return true;
}

static struct emul_session *find(struct ct_emul_cdev *c, uint32_t ses)
{
	uint32_t i = ses - CT_EMUL_SES_TAG - 1;
	return (ses & 0xfff00000u) == CT_EMUL_SES_TAG && i < EMUL_SESSIONS ? c->ses[i] : NULL;
}

bool ct_emul_cdev_ours(const struct ct_kfd_state *st, uint32_t ses)
{
	return st->emul && find(st->emul, ses);
}

static int fail(int e)
{
	errno = e;
	return -1;
}

static int gsession(struct ct_emul_cdev *c, struct ct_cdev_session_op *s)
{
	enum ct_emul_mode m = ct_emul_mode_of_cdev(s->cipher);
	uint8_t key[64];

	if (m == CT_EM_NONE || s->mac || s->keylen > sizeof(key) || !s->key)
		return fail(EINVAL);
	unsigned i = 0;
	while (i < EMUL_SESSIONS && c->ses[i])
		i++;
	if (i == EMUL_SESSIONS)
		return fail(ENOMEM);
	struct emul_session *es = ct_emul_alloc(sizeof(*es));
	if (!es)
		return fail(ENOMEM);
	memcpy(key, s->key, s->keylen);
	int r = ct_emul_key_set(&es->key, m, key, s->keylen);
	explicit_bzero(key, sizeof(key));
	if (r) {
		ct_emul_free(es, sizeof(*es));
		return fail(EINVAL);
	}
	c->ses[i] = es;
	s->ses = CT_EMUL_SES_TAG + i + 1;
	return 0;
}

static int fsession(struct ct_emul_cdev *c, uint32_t ses)
{
	struct emul_session *es = find(c, ses);

	if (!es)
		return fail(EINVAL);
	c->ses[ses - CT_EMUL_SES_TAG - 1] = NULL;
	ct_emul_free(es, sizeof(*es));
	return 0;
}

static int sessinfo(struct ct_emul_cdev *c, struct ct_cdev_session_info_op *si)
{
	struct emul_session *es = find(c, si->ses);

	if (!es)
		return fail(EINVAL);
	memset(&si->cipher_info, 0, sizeof(si->cipher_info));
	memset(&si->hash_info, 0, sizeof(si->hash_info));
	snprintf(si->cipher_info.cra_name, sizeof(si->cipher_info.cra_name), "%s(aes)",
		 ct_emul_mode_name(es->key.mode));
	snprintf(si->cipher_info.cra_driver_name, sizeof(si->cipher_info.cra_driver_name), CT_AESNI_DRIVER);
	si->alignmask = 0;
	si->flags = 0; /* CPU instructions, not an offload engine */
	return 0;
}

static int cipher_op(struct ct_emul_cdev *c, struct ct_cdev_crypt_op *op)
{
	struct emul_session *es = find(c, op->ses);

	if (!es || (op->op != CT_COP_ENCRYPT && op->op != CT_COP_DECRYPT))
		return fail(EINVAL);
	if (es->key.mode == CT_EM_GCM) /* AEAD only through CIOCAUTHCRYPT */
		return fail(EINVAL);
	if (op->len && (!op->src || !op->dst))
		return fail(EFAULT);
	if (op->iv && es->key.mode != CT_EM_ECB)
		memcpy(es->iv, op->iv, 16);
	int r = ct_emul_skcipher(&es->key, op->op == CT_COP_ENCRYPT, es->iv, op->src, op->dst, op->len);
	if (r)
		return fail(-r);
	if (op->iv && (op->flags & CT_COP_FLAG_WRITE_IV) && es->key.mode != CT_EM_ECB)
		memcpy(op->iv, es->iv, 16);
	return 0;
}

static int authcrypt(struct ct_emul_cdev *c, struct ct_cdev_crypt_auth_op *a)
{
	struct emul_session *es = find(c, a->ses);

	if (!es || es->key.mode != CT_EM_GCM || (a->op != CT_COP_ENCRYPT && a->op != CT_COP_DECRYPT) ||
	    (a->flags & (CT_COP_FLAG_AEAD_TLS_TYPE | CT_COP_FLAG_AEAD_SRTP_TYPE)) || a->tag_len > 16)
		return fail(EINVAL);
	if (!a->iv || !a->iv_len || (a->auth_len && !a->auth_src) || (a->len && (!a->src || !a->dst)))
		return fail(EFAULT);
	uint32_t taglen = a->tag_len ? a->tag_len : 16;
	bool enc = a->op == CT_COP_ENCRYPT;
	if (!enc && a->len < taglen)
		return fail(EINVAL);
	uint32_t n = enc ? a->len : a->len - taglen;
	uint8_t tag[16];
	if (!enc)
		memcpy(tag, a->src + n, taglen);
	int r = ct_emul_gcm(&es->key, enc, a->iv, a->iv_len, a->auth_src, a->auth_len, a->src, a->dst, n, tag,
			    taglen);
	if (r)
		return fail(-r);
	if (enc)
		memcpy(a->dst + n, tag, taglen);
	a->tag_len = taglen;
	return 0;
}

int ct_emul_cdev_ioctl(struct ct_kfd_state *st, unsigned long request, void *arg, bool *served)
{
	struct ct_emul_cdev *c = st->emul;
	int nr = ct_cdev_ioctl_nr(request);

	*served = false;
	if (!c)
		return 0;
	/* Without a device, a cipher the route does not send to aesni meets "a device lacking it". */
	if (c->device_missing && nr == CT_NR_CIOCGSESSION && arg) {
		const struct ct_cdev_session_op *s = arg;
		if (!ct_emul_mode_routed(ct_emul_mode_of_cdev(s->cipher), s->keylen)) {
			*served = true;
			return fail(EINVAL);
		}
	}
	/* With a real device behind us, ours are only the aesni-routed sessions. */
	if (!c->device_missing) {
		switch (nr) {
		case CT_NR_CIOCGSESSION: {
			const struct ct_cdev_session_op *s = arg;
			if (!s || s->mac || !ct_emul_mode_routed(ct_emul_mode_of_cdev(s->cipher), s->keylen))
				return 0;
			break;
		}
		case CT_NR_CIOCFSESSION:
		case CT_NR_CIOCCRYPT:
		case CT_NR_CIOCAUTHCRYPT:
		case CT_NR_CIOCGSESSINFO:
			if (!arg || !find(c, *(const uint32_t *)arg)) /* ses is the first field */
				return 0;
			break;
		default:
			return 0;
		}
	}
	*served = true;
	if (!arg && nr != CT_NR_CIOCASYMFEAT)
		return fail(EFAULT);
	switch (nr) {
	case CT_NR_CIOCGSESSION:
		return gsession(c, arg);
	case CT_NR_CIOCFSESSION:
		return fsession(c, *(uint32_t *)arg);
	case CT_NR_CIOCGSESSINFO:
		return sessinfo(c, arg);
	case CT_NR_CIOCCRYPT:
		return cipher_op(c, arg);
	case CT_NR_CIOCAUTHCRYPT:
		return authcrypt(c, arg);
	case CT_NR_CIOCASYMFEAT:
		if (arg)
			*(uint32_t *)arg = 0; /* no asymmetric operations, like every Linux driver */
		return 0;
	case CT_NR_CRIOGET: {
		/* A clone: another descriptor on the same device, with sessions of its own. */
		int fd = ct_emul_cdev_open(O_CLOEXEC);
		if (fd < 0)
			return -1;
		struct ct_kfd_state *cl = ct_kfd_new(fd, CT_KFD_CDEV_CLONE);
		if (!cl || !ct_emul_cdev_attach(cl, true)) {
			struct ct_kfd_state *last = cl ? ct_kfd_forget(fd) : NULL;
			if (last)
				ct_kfd_free(last);
			CT_REAL(close)(fd);
			return fail(ENOMEM);
		}
		*(uint32_t *)arg = (uint32_t)fd;
		return 0;
	}
	case CT_NR_CIOCASYNCCRYPT:
	case CT_NR_CIOCASYNCFETCH:
		return fail(ENOSYS); /* the async interface is not emulated: programs fall back */
	default:
		return fail(ENOTTY);
	}
}

void ct_emul_cdev_release(void *emul)
{
	struct ct_emul_cdev *c = emul;

	for (unsigned i = 0; i < EMUL_SESSIONS; i++)
		ct_emul_free(c->ses[i], sizeof(*c->ses[i]));
	ct_emul_free(c, sizeof(*c));
}
