/* SPDX-License-Identifier: MIT */
/*
 * cdev_afalg.c - AF_ALG transforms behind the CUSE cryptodev sessions, and the name of the kernel
 * driver serving each. Plain sendmsg + read (no splice): the server already holds the request's
 * bytes in its own memory, copied there by CUSE.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include <linux/cryptouser.h>
#include <linux/if_alg.h>
#include <linux/netlink.h>

#include "cdev_afalg.h"
#include "kernel_decode.h" /* AF_ALG, SOL_ALG where the libc headers lack them */
#include "proc_crypto.h"

#ifndef CRYPTO_ALG_KERNEL_DRIVER_ONLY
#define CRYPTO_ALG_KERNEL_DRIVER_ONLY 0x00001000
#endif

int cdev_tfm_open(struct cdev_tfm *t, const char *kname, bool aead, const uint8_t *key, unsigned keylen)
{
	struct sockaddr_alg sa = { .salg_family = AF_ALG };
	int err;

	*t = (struct cdev_tfm){ .tfm_fd = -1, .op_fd = -1, .aead = aead };
	snprintf((char *)sa.salg_type, sizeof(sa.salg_type), "%s", aead ? "aead" : "skcipher");
	snprintf((char *)sa.salg_name, sizeof(sa.salg_name), "%s", kname);
	t->tfm_fd = socket(AF_ALG, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (t->tfm_fd < 0)
		return -errno;
	if (bind(t->tfm_fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    setsockopt(t->tfm_fd, SOL_ALG, ALG_SET_KEY, key, keylen) < 0) {
		err = -errno;
		cdev_tfm_close(t);
		return err;
	}
	return 0;
}

void cdev_tfm_close(struct cdev_tfm *t)
{
	if (t->op_fd >= 0)
		close(t->op_fd);
	if (t->tfm_fd >= 0)
		close(t->tfm_fd);
	t->op_fd = t->tfm_fd = -1;
}

/* The request socket, accepted lazily. An AEAD tag length can only be set while no request socket
 * exists (the kernel answers EBUSY), so a change of tag length re-accepts. */
static int op_socket(struct cdev_tfm *t, unsigned authsize)
{
	if (t->aead && t->op_fd >= 0 && t->authsize != authsize) {
		close(t->op_fd);
		t->op_fd = -1;
	}
	if (t->op_fd >= 0)
		return 0;
	if (t->aead) {
		/* The value travels in optlen, by the AF_ALG convention. */
		if (setsockopt(t->tfm_fd, SOL_ALG, ALG_SET_AEAD_AUTHSIZE, NULL, authsize) < 0)
			return -errno;
		t->authsize = authsize;
	}
	t->op_fd = accept4(t->tfm_fd, NULL, NULL, SOCK_CLOEXEC);
	return t->op_fd < 0 ? -errno : 0;
}

/* sendmsg with ALG_SET_OP, ALG_SET_IV and (aead) ALG_SET_AEAD_ASSOCLEN, then read everything. */
static int one_message(struct cdev_tfm *t, bool encrypt, const uint8_t *iv, unsigned ivlen, unsigned assoclen,
		       struct iovec *in, int nin, struct iovec *out, int nout)
{
	union {
		char buf[CMSG_SPACE(sizeof(uint32_t)) + CMSG_SPACE(sizeof(struct af_alg_iv) + 64) +
			 CMSG_SPACE(sizeof(uint32_t))];
		struct cmsghdr align;
	} ctl;
	struct msghdr msg = { .msg_iov = in, .msg_iovlen = (size_t)nin, .msg_control = ctl.buf };
	size_t ctl_len = CMSG_SPACE(sizeof(uint32_t));
	struct cmsghdr *c;

	if (ivlen > 64)
		return -EINVAL;
	if (ivlen)
		ctl_len += CMSG_SPACE(sizeof(struct af_alg_iv) + ivlen);
	if (t->aead)
		ctl_len += CMSG_SPACE(sizeof(uint32_t));
	memset(ctl.buf, 0, sizeof(ctl.buf));
	msg.msg_controllen = ctl_len;

	c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_ALG;
	c->cmsg_type = ALG_SET_OP;
	c->cmsg_len = CMSG_LEN(sizeof(uint32_t));
	*(uint32_t *)CMSG_DATA(c) = encrypt ? ALG_OP_ENCRYPT : ALG_OP_DECRYPT;
	if (ivlen) {
		struct af_alg_iv *aiv;

		c = CMSG_NXTHDR(&msg, c);
		c->cmsg_level = SOL_ALG;
		c->cmsg_type = ALG_SET_IV;
		c->cmsg_len = CMSG_LEN(sizeof(struct af_alg_iv) + ivlen);
		aiv = (struct af_alg_iv *)CMSG_DATA(c);
		aiv->ivlen = ivlen;
		memcpy(aiv->iv, iv, ivlen);
	}
	if (t->aead) {
		c = CMSG_NXTHDR(&msg, c);
		c->cmsg_level = SOL_ALG;
		c->cmsg_type = ALG_SET_AEAD_ASSOCLEN;
		c->cmsg_len = CMSG_LEN(sizeof(uint32_t));
		*(uint32_t *)CMSG_DATA(c) = assoclen;
	}

	if (sendmsg(t->op_fd, &msg, 0) < 0)
		return -errno;
	size_t want = 0;
	for (int i = 0; i < nout; i++)
		want += out[i].iov_len;
	/* One message in, one result out: a short read would mean the kernel split it. */
	ssize_t got = readv(t->op_fd, out, nout);
	if (got < 0)
		return -errno;
	return (size_t)got == want ? 0 : -EIO;
}

int cdev_tfm_skcipher(struct cdev_tfm *t, bool encrypt, const uint8_t *iv, unsigned ivlen, const uint8_t *src,
		      uint8_t *dst, unsigned len)
{
	struct iovec in = { .iov_base = (void *)src, .iov_len = len };
	struct iovec out = { .iov_base = dst, .iov_len = len };
	int err;

	if (len == 0)
		return 0;
	err = op_socket(t, 0);
	if (err)
		return err;
	err = one_message(t, encrypt, iv, ivlen, 0, &in, 1, &out, 1);
	if (err) {
		/* A request socket left mid-message is useless: start the next request afresh. */
		close(t->op_fd);
		t->op_fd = -1;
	}
	return err;
}

int cdev_tfm_aead(struct cdev_tfm *t, bool encrypt, const uint8_t *iv, unsigned ivlen, const uint8_t *aad,
		  unsigned aadlen, const uint8_t *src, unsigned len, unsigned taglen, uint8_t *dst)
{
	unsigned outlen;
	uint8_t *aad_copy;
	int err;

	if (!encrypt && len < taglen)
		return -EINVAL;
	outlen = encrypt ? len + taglen : len - taglen;
	err = op_socket(t, taglen);
	if (err)
		return err;
	/* The kernel copies the AAD in front of the result: read it into a scratch buffer. */
	aad_copy = malloc(aadlen ? aadlen : 1);
	if (!aad_copy)
		return -ENOMEM;
	struct iovec in[2] = { { (void *)aad, aadlen }, { (void *)src, len } };
	struct iovec out[2] = { { aad_copy, aadlen }, { dst, outlen } };
	err = one_message(t, encrypt, iv, ivlen, aadlen, in, 2, out, 2);
	free(aad_copy);
	if (err) {
		close(t->op_fd);
		t->op_fd = -1;
	}
	return err;
}

/* CRYPTO_MSG_GETALG for one driver name: its cra_flags, or false (no crypto_user, no rights). */
static bool driver_flags(const char *driver, uint32_t *flags)
{
	struct {
		struct nlmsghdr hdr;
		struct crypto_user_alg alg;
	} req = {
		.hdr = {
			.nlmsg_len = NLMSG_LENGTH(sizeof(struct crypto_user_alg)),
			.nlmsg_type = CRYPTO_MSG_GETALG,
			.nlmsg_flags = NLM_F_REQUEST,
			.nlmsg_seq = 1,
		},
	};
	union {
		char buf[4096];
		struct nlmsghdr align;
	} resp;
	struct sockaddr_nl kernel = { .nl_family = AF_NETLINK };
	bool ok = false;
	int fd;

	snprintf(req.alg.cru_driver_name, sizeof(req.alg.cru_driver_name), "%s", driver);
	fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_CRYPTO);
	if (fd < 0)
		return false;
	if (sendto(fd, &req, req.hdr.nlmsg_len, 0, (struct sockaddr *)&kernel, sizeof(kernel)) > 0) {
		ssize_t n = recv(fd, resp.buf, sizeof(resp.buf), 0);
		struct nlmsghdr *h = &resp.align;

		if (n > 0 && NLMSG_OK(h, (size_t)n) && h->nlmsg_type == CRYPTO_MSG_GETALG &&
		    h->nlmsg_len >= NLMSG_LENGTH(sizeof(struct crypto_user_alg))) {
			const struct crypto_user_alg *a = NLMSG_DATA(h);
			*flags = a->cru_flags;
			ok = true;
		}
	}
	close(fd);
	return ok;
}

static char *read_proc_crypto(size_t *len)
{
	size_t cap = 1 << 16, n = 0;
	char *text = malloc(cap);
	int fd = open("/proc/crypto", O_RDONLY | O_CLOEXEC);
	ssize_t r;

	if (!text || fd < 0) {
		free(text);
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	while ((r = read(fd, text + n, cap - n - 1)) > 0) {
		n += (size_t)r;
		if (cap - n < 4096) {
			char *bigger = realloc(text, cap * 2);
			if (!bigger)
				break;
			text = bigger;
			cap *= 2;
		}
	}
	close(fd);
	text[n] = '\0';
	*len = n;
	return text;
}

bool cdev_driver_info(const char *kname, bool aead, char *driver, size_t cap, bool *driver_only,
		      bool *flag_from_kernel)
{
	struct ct_kdrv kd;
	size_t len = 0;
	char *text = read_proc_crypto(&len);
	bool found;
	uint32_t flags = 0;

	*driver_only = *flag_from_kernel = false;
	if (cap)
		driver[0] = '\0';
	if (!text)
		return false;
	found = ct_proc_crypto_resolve(text, len, kname, aead ? "aead" : "skcipher", &kd);
	free(text);
	if (!found)
		return false;
	snprintf(driver, cap, "%s", kd.driver);
	/* The kernel's own flag when crypto_user answers; otherwise the driver's class says it. */
	*flag_from_kernel = driver_flags(kd.driver, &flags);
	if (*flag_from_kernel)
		*driver_only = flags & CRYPTO_ALG_KERNEL_DRIVER_ONLY;
	else
		*driver_only = kd.cls == CT_KDRV_HW;
	return true;
}
