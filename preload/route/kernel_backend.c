/* SPDX-License-Identifier: MIT */
/*
 * kernel_backend.c - EVP work forwarded to the kernel: AF_ALG skcipher sockets or /dev/crypto
 * sessions (see kernel_backend.h).
 *
 * The system calls go through libc's symbols, which in a traced process are the preload's own
 * kernel hooks: the sockets, sessions, requests and syscalls show up on kernel paths exactly as
 * those of OpenSSL's afalg engine do. Our socket()/open() calls set ct_emul_bypass: when the
 * table also has aesni rules, the kernel-interface emulation must not hand us its in-process
 * descriptors (the point of this route is the real kernel). Requests are cut at 64 KiB so that one sendmsg never waits
 * for socket buffer space that only a read would free.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/if_alg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "core.h"
#include "kernel/cryptodev_abi.h"
#include "kernel/kernel_decode.h"
#include "kernel/emul.h"
#include "kernel/kdriver.h"
#include "kernel/kfd.h"
#include "kernel_backend.h"
#include "route.h"

#define CHUNK 65536

enum kmode { KM_ECB, KM_CBC, KM_CTR };

struct ct_kroute {
	unsigned target; /* CT_ROUTE_AFALG or CT_ROUTE_CRYPTODEV */
	enum kmode mode;
	char cipher[24]; /* "aes-128-cbc": route lookups per request */
	int tfm, op;     /* AF_ALG */
	int cfd;         /* /dev/crypto */
	uint32_t ses;
	/* The kernel hooks' state of our data fd (op socket or /dev/crypto) when we opened it: if the
	 * program closes that fd (a daemon closing every descriptor), the hooks forget it, and a new
	 * file on the same number must never receive our requests or our close(). NULL when the
	 * hooks do not track this process: no check then. */
	struct ct_kfd_state *data_st, *tfm_st;
	bool dead;
	/* the last size decision (openssl speed and most programs repeat one size) */
	size_t last_len;
	bool last_enc, last_kernel, last_valid;
};

/* "aes-128-cbc" -> mode and the kernel's template name. */
static bool parse_cipher(const char *cipher, enum kmode *mode, const char **kname, uint32_t *cdev_alg)
{
	size_t n = strlen(cipher);
	if (n < 4 || strncasecmp(cipher, "aes-", 4) != 0)
		return false;
	const char *m = cipher + n - 3;
	if (!strcasecmp(m, "ecb")) {
		*mode = KM_ECB, *kname = "ecb(aes)", *cdev_alg = CT_CRYPTO_AES_ECB;
	} else if (!strcasecmp(m, "cbc")) {
		*mode = KM_CBC, *kname = "cbc(aes)", *cdev_alg = CT_CRYPTO_AES_CBC;
	} else if (!strcasecmp(m, "ctr")) {
		*mode = KM_CTR, *kname = "ctr(aes)", *cdev_alg = CT_CRYPTO_AES_CTR;
	} else {
		return false;
	}
	return n == 11; /* aes-NNN-xxx */
}

static const char *target_name(unsigned target)
{
	return target == CT_ROUTE_CRYPTODEV ? "cryptodev" : "afalg";
}

/* sshd's sandbox (and others) kill or refuse new syscalls: never start kernel work under a
 * seccomp filter. A /proc that cannot be read counts as "maybe filtered". */
static const char *seccomp_refusal(void)
{
	int fd = open("/proc/self/status", O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return "cannot read /proc/self/status to rule out a seccomp filter";
	char buf[4096];
	ssize_t n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return "cannot read /proc/self/status to rule out a seccomp filter";
	buf[n] = 0;
	const char *s = strstr(buf, "\nSeccomp:");
	if (!s)
		return NULL; /* kernel without seccomp */
	s += 9;
	while (*s == ' ' || *s == '\t')
		s++;
	return *s == '0' ? NULL : "a seccomp filter is active in this process";
}

static const char *errno_reason(char *buf, size_t cap, const char *what, int err)
{
	char eb[24];
	snprintf(buf, cap, "%s: %s", what, ct_errno_name(err, eb, sizeof(eb)));
	return buf;
}

static __thread char reason_buf[160];

/* The real kernel's AF_ALG socket and /dev/crypto, never emulated ones (see the top). */
static int kernel_socket(void)
{
	ct_emul_bypass++;
	int s = socket(AF_ALG, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	int e = errno;
	ct_emul_bypass--;
	errno = e;
	return s;
}

static int kernel_cdev(void)
{
	ct_emul_bypass++;
	int fd = open(CT_CDEV_PATH, O_RDWR | O_CLOEXEC);
	int e = errno;
	ct_emul_bypass--;
	errno = e;
	return fd;
}

const char *ct_kroute_check(unsigned target, const char *cipher, char *driver, size_t cap)
{
	enum kmode mode;
	const char *kname;
	uint32_t alg;
	snprintf(driver, cap, "?");
	if (target != CT_ROUTE_AFALG && target != CT_ROUTE_CRYPTODEV)
		return "not a kernel target";
	if (!parse_cipher(cipher, &mode, &kname, &alg))
		return "cipher or mode not served by the kernel routes (aes ecb, cbc, ctr)";
	const char *sc = seccomp_refusal();
	if (sc)
		return sc;
	if (target == CT_ROUTE_AFALG) {
		int s = kernel_socket();
		if (s < 0)
			return errno_reason(reason_buf, sizeof(reason_buf), "socket(AF_ALG)", errno);
		/* the template must exist (ENOENT otherwise); the key is only known per context */
		struct sockaddr_alg sa = { .salg_family = AF_ALG, .salg_type = "skcipher" };
		snprintf((char *)sa.salg_name, sizeof(sa.salg_name), "%s", kname);
		int e = bind(s, (struct sockaddr *)&sa, sizeof(sa)) == 0 ? 0 : errno;
		close(s);
		if (e)
			return errno_reason(reason_buf, sizeof(reason_buf), "bind", e);
		struct ct_kdrv d;
		if (ct_kdriver_resolve("skcipher", kname, &d) && d.driver[0])
			snprintf(driver, cap, "%s", d.driver);
		return NULL;
	}
	int fd = kernel_cdev();
	if (fd < 0)
		return errno_reason(reason_buf, sizeof(reason_buf), "open(/dev/crypto)", errno);
	/* a throw-away session with a zero key tells the driver (CIOCGSESSINFO) */
	uint8_t key[16] = { 0 };
	struct ct_cdev_session_op s = { .cipher = alg, .keylen = sizeof(key), .key = key };
	const char *why = NULL;
	if (ioctl(fd, CT_CIOCGSESSION, &s) != 0) {
		why = errno_reason(reason_buf, sizeof(reason_buf), "CIOCGSESSION", errno);
	} else {
		struct ct_cdev_session_info_op si = { .ses = s.ses };
		if (ioctl(fd, CT_CIOCGSESSINFO, &si) == 0 && si.cipher_info.cra_driver_name[0])
			snprintf(driver, cap, "%.63s", si.cipher_info.cra_driver_name);
		ioctl(fd, CT_CIOCFSESSION, &s.ses);
	}
	close(fd);
	return why;
}

static void kfallback(const char *cipher, unsigned target, bool enc, const char *when, const char *why)
{
	ct_event(CT_EV_FALLBACK, when, 0, 0, CT_NO_PATH, false, "route %s -> " CT_AESNI_TARGET ": %s %s: %s",
		 target_name(target), cipher, enc ? "enc" : "dec", why);
}

static bool afalg_open(struct ct_kroute *kr, const char *kname, const uint8_t *key, size_t keylen,
		       const char **why)
{
	kr->tfm = kernel_socket();
	if (kr->tfm < 0) {
		*why = errno_reason(reason_buf, sizeof(reason_buf), "socket(AF_ALG)", errno);
		return false;
	}
	struct sockaddr_alg sa = { .salg_family = AF_ALG, .salg_type = "skcipher" };
	snprintf((char *)sa.salg_name, sizeof(sa.salg_name), "%s", kname);
	if (bind(kr->tfm, (struct sockaddr *)&sa, sizeof(sa)) != 0) {
		*why = errno_reason(reason_buf, sizeof(reason_buf), "bind", errno);
		return false;
	}
	kr->tfm_st = ct_kfd_get(kr->tfm);
	if (setsockopt(kr->tfm, SOL_ALG, ALG_SET_KEY, key, (socklen_t)keylen) != 0) {
		*why = errno_reason(reason_buf, sizeof(reason_buf), "setsockopt(ALG_SET_KEY)", errno);
		return false;
	}
	kr->op = accept(kr->tfm, NULL, 0);
	if (kr->op < 0) {
		*why = errno_reason(reason_buf, sizeof(reason_buf), "accept", errno);
		return false;
	}
	kr->data_st = ct_kfd_get(kr->op);
	return true;
}

static bool cdev_open(struct ct_kroute *kr, uint32_t alg, const uint8_t *key, size_t keylen, const char **why)
{
	kr->cfd = kernel_cdev();
	if (kr->cfd < 0) {
		*why = errno_reason(reason_buf, sizeof(reason_buf), "open(/dev/crypto)", errno);
		return false;
	}
	struct ct_cdev_session_op s = { .cipher = alg, .keylen = (uint32_t)keylen, .key = (uint8_t *)key };
	if (ioctl(kr->cfd, CT_CIOCGSESSION, &s) != 0) {
		*why = errno_reason(reason_buf, sizeof(reason_buf), "CIOCGSESSION", errno);
		return false;
	}
	kr->ses = s.ses;
	kr->data_st = ct_kfd_get(kr->cfd);
	return true;
}

/* Is fd (with the hooks' state st when we opened it) still ours? */
static bool still_ours(int fd, const struct ct_kfd_state *st)
{
	return fd >= 0 && (!st || ct_kfd_get(fd) == st);
}

static void kroute_close(struct ct_kroute *kr)
{
	/* descriptors the program closed behind our back may be its own files by now */
	if (!still_ours(kr->op, kr->data_st))
		kr->op = -1;
	if (!still_ours(kr->tfm, kr->tfm_st))
		kr->tfm = -1;
	if (!still_ours(kr->cfd, kr->data_st))
		kr->cfd = -1;
	if (kr->op >= 0)
		close(kr->op);
	if (kr->tfm >= 0)
		close(kr->tfm);
	if (kr->cfd >= 0) {
		if (kr->ses)
			ioctl(kr->cfd, CT_CIOCFSESSION, &kr->ses);
		close(kr->cfd);
	}
	kr->op = kr->tfm = kr->cfd = -1;
	kr->ses = 0;
}

struct ct_kroute *ct_kroute_open(const char *cipher, bool enc, const uint8_t *key, size_t keylen)
{
	const struct ct_route_table *t = ct_route_active();
	if (!t || !cipher || !key)
		return NULL;
	/* the kernel target some rule gives this cipher and direction at some size */
	unsigned target = CT_ROUTE_NONE;
	int dir = enc ? CT_DIR_ENCRYPT : CT_DIR_DECRYPT;
	for (unsigned i = 0; i < t->count && target == CT_ROUTE_NONE; i++) {
		const struct ct_route_rule *r = &t->rules[i];
		if ((r->target == CT_ROUTE_AFALG || r->target == CT_ROUTE_CRYPTODEV) &&
		    (r->dir == CT_DIR_UNKNOWN || r->dir == dir) && ct_route_glob_match(r->glob, cipher))
			target = r->target;
	}
	if (target == CT_ROUTE_NONE)
		return NULL;
	enum kmode mode;
	const char *kname;
	uint32_t alg;
	if (!parse_cipher(cipher, &mode, &kname, &alg))
		return NULL;
	struct ct_kroute *kr = calloc(1, sizeof(*kr));
	if (!kr)
		return NULL;
	kr->target = target;
	kr->mode = mode;
	kr->op = kr->tfm = kr->cfd = -1;
	snprintf(kr->cipher, sizeof(kr->cipher), "%s", cipher);
	for (char *p = kr->cipher; *p; p++)
		*p = (char)(*p >= 'A' && *p <= 'Z' ? *p + 32 : *p);
	const char *why = seccomp_refusal();
	bool ok = !why && (target == CT_ROUTE_AFALG ? afalg_open(kr, kname, key, keylen, &why)
						    : cdev_open(kr, alg, key, keylen, &why));
	if (!ok) {
		kfallback(kr->cipher, target, enc, target == CT_ROUTE_AFALG ? "AF_ALG" : "/dev/crypto",
			  why ? why : "unknown");
		kroute_close(kr);
		free(kr);
		return NULL;
	}
	return kr;
}

void ct_kroute_free(struct ct_kroute *kr)
{
	if (!kr)
		return;
	kroute_close(kr);
	free(kr);
}

/* Does the route table send a request of len bytes to this kernel target? */
static bool wants_kernel(struct ct_kroute *kr, bool enc, size_t len)
{
	if (kr->last_valid && kr->last_len == len && kr->last_enc == enc)
		return kr->last_kernel;
	const struct ct_route_table *t = ct_route_active();
	bool k = t &&
		 ct_route_lookup(t, kr->cipher, enc ? CT_DIR_ENCRYPT : CT_DIR_DECRYPT, len) == kr->target;
	kr->last_len = len;
	kr->last_enc = enc;
	kr->last_kernel = k;
	kr->last_valid = true;
	return k;
}

static void ctr_add(uint8_t ctr[16], uint64_t blocks)
{
	for (int i = 15; i >= 0 && blocks; i--) {
		uint64_t v = ctr[i] + (blocks & 0xff);
		ctr[i] = (uint8_t)v;
		blocks = (blocks >> 8) + (v >> 8);
	}
}

/* One request of n bytes (a multiple of 16, <= CHUNK) through AF_ALG. */
static bool afalg_request(struct ct_kroute *kr, bool enc, const uint8_t iv[16], const uint8_t *in,
			  uint8_t *out, size_t n, int *err)
{
	union {
		char buf[CMSG_SPACE(sizeof(uint32_t)) + CMSG_SPACE(sizeof(struct af_alg_iv) + 16)];
		struct cmsghdr align;
	} cm;
	memset(&cm, 0, sizeof(cm));
	struct iovec iov = { .iov_base = (void *)in, .iov_len = n };
	struct msghdr msg = { .msg_iov = &iov,
			      .msg_iovlen = 1,
			      .msg_control = cm.buf,
			      .msg_controllen = kr->mode == KM_ECB ? CMSG_SPACE(sizeof(uint32_t))
								   : sizeof(cm.buf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_ALG;
	c->cmsg_type = ALG_SET_OP;
	c->cmsg_len = CMSG_LEN(sizeof(uint32_t));
	uint32_t op = enc ? ALG_OP_ENCRYPT : ALG_OP_DECRYPT;
	memcpy(CMSG_DATA(c), &op, sizeof(op));
	if (kr->mode != KM_ECB) {
		c = CMSG_NXTHDR(&msg, c);
		c->cmsg_level = SOL_ALG;
		c->cmsg_type = ALG_SET_IV;
		c->cmsg_len = CMSG_LEN(sizeof(struct af_alg_iv) + 16);
		struct af_alg_iv *ai = (struct af_alg_iv *)CMSG_DATA(c);
		ai->ivlen = 16;
		memcpy(ai->iv, iv, 16);
	}
	ssize_t s = sendmsg(kr->op, &msg, 0);
	explicit_bzero(&cm, sizeof(cm));
	if (s != (ssize_t)n) {
		*err = s < 0 ? errno : EMSGSIZE;
		return false;
	}
	size_t got = 0;
	while (got < n) {
		ssize_t r = read(kr->op, out + got, n - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			*err = r < 0 ? errno : EIO;
			return false;
		}
		got += (size_t)r;
	}
	return true;
}

static bool cdev_request(struct ct_kroute *kr, bool enc, const uint8_t iv[16], const uint8_t *in,
			 uint8_t *out, size_t n, int *err)
{
	uint8_t ivc[16];
	memcpy(ivc, iv, 16);
	struct ct_cdev_crypt_op c = {
		.ses = kr->ses,
		.op = enc ? CT_COP_ENCRYPT : CT_COP_DECRYPT,
		.len = (uint32_t)n,
		.src = (uint8_t *)in,
		.dst = out,
		.iv = kr->mode == KM_ECB ? NULL : ivc,
	};
	int r = ioctl(kr->cfd, CT_CIOCCRYPT, &c);
	if (r != 0)
		*err = errno;
	return r == 0;
}

size_t ct_kroute_cipher(struct ct_kroute *kr, bool enc, uint8_t iv[16], const uint8_t *in, uint8_t *out,
			size_t len, size_t request)
{
	size_t whole = len & ~(size_t)15;
	if (request < len)
		request = len;
	if (!kr || kr->dead || whole == 0 || (len == 16 && request > 16) || !wants_kernel(kr, enc, request))
		return 0;
	int saved = errno;
	size_t done = 0;
	int data_fd = kr->target == CT_ROUTE_AFALG ? kr->op : kr->cfd;
	if (kr->data_st && ct_kfd_get(data_fd) != kr->data_st) {
		/* not ours any more: never send to it nor close it (the tfm socket too may be gone) */
		kfallback(
			kr->cipher, kr->target, enc, kr->target == CT_ROUTE_AFALG ? "AF_ALG" : "/dev/crypto",
			"the program closed the kernel descriptor: the rest of this context runs in-process");
		kr->op = kr->tfm = kr->cfd = -1;
		kr->ses = 0;
		kr->dead = true;
		errno = saved;
		return 0;
	}
	while (done < whole) {
		size_t n = whole - done < CHUNK ? whole - done : CHUNK;
		uint8_t last_in[16];
		if (kr->mode == KM_CBC && !enc)
			memcpy(last_in, in + done + n - 16, 16); /* the next IV, before in-place output */
		int err = 0;
		bool ok = kr->target == CT_ROUTE_AFALG
				  ? afalg_request(kr, enc, iv, in + done, out + done, n, &err)
				  : cdev_request(kr, enc, iv, in + done, out + done, n, &err);
		if (!ok) {
			char eb[24], why[96];
			snprintf(why, sizeof(why), "%s failed (%s): the rest of this context runs in-process",
				 kr->target == CT_ROUTE_AFALG ? "sendmsg/read" : "CIOCCRYPT",
				 ct_errno_name(err, eb, sizeof(eb)));
			kfallback(kr->cipher, kr->target, enc,
				  kr->target == CT_ROUTE_AFALG ? "AF_ALG" : "/dev/crypto", why);
			kroute_close(kr);
			kr->dead = true;
			break;
		}
		if (kr->mode == KM_CBC)
			memcpy(iv, enc ? out + done + n - 16 : last_in, 16);
		else if (kr->mode == KM_CTR)
			ctr_add(iv, n / 16);
		done += n;
	}
	errno = saved;
	return done;
}
