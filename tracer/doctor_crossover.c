/* SPDX-License-Identifier: MIT */
/*
 * doctor_crossover.c - the doctor's one measurement of the kernel's AES: where AF_ALG or
 * /dev/crypto works, cbc(aes) encryption per request through it against cryptrace's in-process
 * AES-NI code, at request sizes from 16 B to 64 KiB. A system call costs a few microseconds, so
 * the kernel path loses on small requests; a hardware engine behind it can win on large ones.
 * The size from which it wins (and keeps winning) is the threshold of a route recommendation.
 */
#include <fcntl.h>
#include <linux/if_alg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "cryptodev_abi.h"
#include "doctor.h"
#include "tracer.h"
#include "aesni.h"

#ifndef SOL_ALG
#define SOL_ALG 279
#endif

#define XO_MAX 65536
#define XO_SECONDS 0.02
#define XO_SIZES 7 /* 16 B .. 64 KiB, x4 */

/* One cbc(aes) encryption of size bytes in place through a path; false when it was refused. */
typedef bool (*xo_request)(void *path, uint8_t *buf, size_t size);

/* Seconds per request of size bytes, over XO_SECONDS of requests; < 0 when one failed. */
static double per_request(xo_request one, void *path, uint8_t *buf, size_t size)
{
	long n = 0;
	uint64_t t0 = ct_clock_ns(CLOCK_MONOTONIC);
	double t;

	do {
		if (!one(path, buf, size))
			return -1;
		n++;
		t = (double)(ct_clock_ns(CLOCK_MONOTONIC) - t0) / 1e9;
	} while (t < XO_SECONDS);
	return t / (double)n;
}

/* t[i]: seconds per request of 16 x 4^i bytes; all < 0 when the path could not be set up. */
static void per_size(xo_request one, void *path, uint8_t *buf, double *t)
{
	size_t size = 16;

	for (int i = 0; i < XO_SIZES; i++, size *= 4)
		t[i] = path ? per_request(one, path, buf, size) : -1;
}

/* ---- the paths ---------------------------------------------------------------------------- */

struct inproc_path {
	struct ct_aes_key key;
	uint8_t iv[16];
};

static bool inproc_request(void *path, uint8_t *buf, size_t size)
{
	struct inproc_path *p = path;

	ct_aes_cbc_encrypt(&p->key, p->iv, buf, buf, size);
	return true;
}

/* sendmsg (operation and IV in control messages) + read on an accepted AF_ALG socket. */
struct afalg_path {
	int opfd;
	struct iovec iov;
	struct msghdr msg;
	char cbuf[CMSG_SPACE(sizeof(uint32_t)) + CMSG_SPACE(sizeof(struct af_alg_iv) + 16)];
};

static void afalg_path_init(struct afalg_path *p, int opfd)
{
	memset(p, 0, sizeof(*p));
	p->opfd = opfd;
	p->msg.msg_iov = &p->iov;
	p->msg.msg_iovlen = 1;
	p->msg.msg_control = p->cbuf;
	p->msg.msg_controllen = sizeof(p->cbuf);

	struct cmsghdr *cm = CMSG_FIRSTHDR(&p->msg);

	cm->cmsg_level = SOL_ALG;
	cm->cmsg_type = ALG_SET_OP;
	cm->cmsg_len = CMSG_LEN(sizeof(uint32_t));
	*(uint32_t *)CMSG_DATA(cm) = ALG_OP_ENCRYPT;
	cm = CMSG_NXTHDR(&p->msg, cm);
	cm->cmsg_level = SOL_ALG;
	cm->cmsg_type = ALG_SET_IV;
	cm->cmsg_len = CMSG_LEN(sizeof(struct af_alg_iv) + 16);
	((struct af_alg_iv *)CMSG_DATA(cm))->ivlen = 16;
}

static bool afalg_request(void *path, uint8_t *buf, size_t size)
{
	struct afalg_path *p = path;

	p->iov.iov_base = buf;
	p->iov.iov_len = size;
	return sendmsg(p->opfd, &p->msg, 0) == (ssize_t)size && read(p->opfd, buf, size) == (ssize_t)size;
}

/* One CIOCCRYPT on a /dev/crypto AES-CBC session. */
struct cryptodev_path {
	int fd;
	uint32_t ses;
	uint8_t iv[16];
};

static bool cryptodev_request(void *path, uint8_t *buf, size_t size)
{
	struct cryptodev_path *p = path;
	struct ct_cdev_crypt_op op = {
		.ses = p->ses,
		.op = CT_COP_ENCRYPT,
		.len = (uint32_t)size,
		.src = buf,
		.dst = buf,
		.iv = p->iv,
	};

	return ioctl(p->fd, CT_CIOCCRYPT, &op) == 0;
}

/* ---- the checks --------------------------------------------------------------------------- */

/* How a kernel path appears in the checklist. */
struct xo_kernel {
	const char *id, *what, *target; /* check id, its name in text, its route target */
	const char *unmeasured_title, *unmeasured_why;
};

static const struct xo_kernel xo_afalg = {
	.id = "crossover",
	.what = "AF_ALG",
	.target = "afalg",
	.unmeasured_title = "crossover not measured",
	.unmeasured_why = "AF_ALG cbc(aes) could not be set up or refused a request",
};

static const struct xo_kernel xo_cryptodev = {
	.id = "crossover:cryptodev",
	.what = "/dev/crypto",
	.target = "cryptodev",
	.unmeasured_title = "/dev/crypto crossover not measured",
	.unmeasured_why = "no AES-128-CBC session, or CIOCCRYPT refused a request",
};

/* One kernel path's per-size times against in-process ones: a check and, when the kernel wins
 * from some size on, a route recommendation. */
static void crossover_check(struct dr_report *r, const struct xo_kernel *k, const double *tk,
			    const double *ti)
{
	const char *what = k->what;

	if (tk[0] < 0) {
		dr_add(r, k->id, DR_INFO, k->unmeasured_title, "%s", k->unmeasured_why);
		return;
	}

	char table[700] = "";
	size_t len = 0, cross = 0, size = 16;

	for (int i = 0; i < XO_SIZES; i++, size *= 4) {
		if (tk[i] < 0)
			break;
		len += (size_t)snprintf(table + len, len < sizeof(table) ? sizeof(table) - len : 0,
					"%s%zu B: kernel %.1f us, in-process %.2f us", len ? "; " : "", size,
					tk[i] * 1e6, ti[i] * 1e6);
		/* The crossover is where the kernel starts winning and keeps winning. */
		if (tk[i] < ti[i]) {
			if (!cross)
				cross = size;
		} else {
			cross = 0;
		}
		if (len >= sizeof(table))
			break;
	}

	struct dr_check *c = dr_add(r, k->id, DR_INFO, "",
				    "%s cbc(aes) encrypt vs cryptrace's "
				    "in-process " CT_AESNI_INSNS ", per request: %s",
				    what, table);

	if (cross) {
		snprintf(c->title, sizeof(c->title),
			 "%s beats in-process AES from %zu-byte "
			 "requests",
			 what, cross);
		dr_recommend(r,
			     "route aes-*-cbc=%s>=%zu," CT_AESNI_TARGET
			     " (cryptrace run --route): %s wins "
			     "from %zu-byte requests here",
			     k->target, cross, what, cross);
	} else {
		snprintf(c->title, sizeof(c->title), "%s never beats in-process AES (16 B to 64 KiB)", what);
	}
	dr_value(c, "size", true, "%s", "");
	if (cross)
		snprintf(c->values[c->nvalues - 1].val, sizeof(c->values[0].val), "%zu", cross);
}

void dr_probe_crossover(struct dr_report *r)
{
	if (!r->afalg_ok && !r->cryptodev_ok) {
		struct dr_check *c = dr_add(r, "crossover", DR_INFO,
					    "no kernel path: no crossover to measure",
					    "neither AF_ALG nor /dev/crypto is available");

		dr_value(c, "size", true, "%s", "");
		return;
	}
	if (!ct_aesni_available()) {
		dr_add(r, "crossover", DR_INFO, "crossover not measured",
		       "no in-process " CT_AESNI_INSNS " to compare the kernel path with");
		return;
	}

	static const uint8_t key[16] = { 3 };
	uint8_t *buf = aligned_alloc(64, XO_MAX);
	struct inproc_path in = { .iv = { 0 } };
	double ti[XO_SIZES], tk[XO_SIZES];

	if (!buf)
		return;
	memset(buf, 0x5a, XO_MAX);
	ct_aes_set_key(&in.key, key, 128);
	per_size(inproc_request, &in, buf, ti);
	ct_aes_key_wipe(&in.key);

	if (r->afalg_ok) {
		int tfm = ct_afalg_bind("skcipher", "cbc(aes)");
		int opfd = -1;
		struct afalg_path af;

		if (tfm >= 0 && setsockopt(tfm, SOL_ALG, ALG_SET_KEY, key, sizeof(key)) == 0)
			opfd = accept4(tfm, NULL, NULL, SOCK_CLOEXEC);
		afalg_path_init(&af, opfd);
		per_size(afalg_request, opfd >= 0 ? &af : NULL, buf, tk);
		if (opfd >= 0)
			close(opfd);
		if (tfm >= 0)
			close(tfm);
		crossover_check(r, &xo_afalg, tk, ti);
	}
	if (r->cryptodev_ok) {
		int fd = open(CT_CDEV_PATH, O_RDWR | O_CLOEXEC);
		struct ct_cdev_session_op s = {
			.cipher = CT_CRYPTO_AES_CBC,
			.keylen = sizeof(key),
			.key = (uint8_t *)key,
		};
		bool ses = fd >= 0 && ioctl(fd, CT_CIOCGSESSION, &s) == 0;
		struct cryptodev_path cd = { .fd = fd, .ses = s.ses };

		per_size(cryptodev_request, ses ? &cd : NULL, buf, tk);
		if (ses)
			ioctl(fd, CT_CIOCFSESSION, &s.ses);
		if (fd >= 0)
			close(fd);
		crossover_check(r, &xo_cryptodev, tk, ti);
	}
	free(buf);
}
