/* SPDX-License-Identifier: MIT */
/*
 * fake_cryptodev.c - a stand-in /dev/crypto for hosts without cryptodev-linux, for tests only.
 * Preloaded AFTER libcryptrace.so (LD_PRELOAD="libcryptrace.so fake_cryptodev.so"), it is what
 * the preload's "real" open/ioctl resolve to: open("/dev/crypto") opens /dev/null, and cryptodev
 * ioctls on /dev/null descriptors behave like the ABI says - the argument is read first (EFAULT
 * for a bad pointer), sessions are checked (AES-CBC/CTR/ECB with 16/24/32-byte keys, XTS with
 * 32/64; anything else EINVAL), CIOCGSESSINFO names a driver (ECB as a kernel-only "hardware"
 * driver, the rest cbc/ctr/xts-aes-aesni), CIOCCRYPT transforms data (not real AES: the tests
 * check the trace, the examples' OpenSSL check is off), CIOCASYMFEAT offers MOD_EXP and
 * MOD_EXP_CRT and CIOCKEY accepts a MOD_EXP with 3 inputs and 1 output (EINVAL for anything
 * else; no numbers are computed). Everything else goes to libc. The
 * session table is locked like the real driver's: the threads stress shares it between threads.
 */
#undef _FILE_OFFSET_BITS /* we define open and open64 both */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "cryptodev_abi.h"
#include "ct_config.h"

#define MAX_SES 256

static struct {
	bool used;
	uint32_t cipher, keylen;
} sessions[MAX_SES];

static void *next(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

static bool is_fake_dev(int fd)
{
	struct stat st;
	return fstat(fd, &st) == 0 && S_ISCHR(st.st_mode) && major(st.st_rdev) == 1 && minor(st.st_rdev) == 3;
}

static bool bad_ptr(const void *p)
{
	return (uintptr_t)p < 4096;
}

#define OPEN_BODY(realname, ...)                                                                             \
	do {                                                                                                 \
		unsigned mode = 0;                                                                           \
		if (flags & (O_CREAT | O_TMPFILE)) {                                                         \
			va_list ap;                                                                          \
			va_start(ap, flags);                                                                 \
			mode = va_arg(ap, unsigned);                                                         \
			va_end(ap);                                                                          \
		}                                                                                            \
		int (*real)() = next(realname);                                                              \
		if (!strcmp(path, CT_CDEV_PATH))                                                             \
			path = "/dev/null";                                                                  \
		return real(__VA_ARGS__, mode);                                                              \
	} while (0)

int open(const char *path, int flags, ...)
{
	OPEN_BODY("open", path, flags);
}
#ifndef open64 /* musl: a macro for open */
int open64(const char *path, int flags, ...)
{
	OPEN_BODY("open64", path, flags);
}
#endif
int openat(int dirfd, const char *path, int flags, ...)
{
	OPEN_BODY("openat", dirfd, path, flags);
}
#ifndef openat64 /* musl: a macro for openat */
int openat64(int dirfd, const char *path, int flags, ...)
{
	OPEN_BODY("openat64", dirfd, path, flags);
}
#endif

static int fail(int e)
{
	errno = e;
	return -1;
}

static bool key_ok(uint32_t cipher, uint32_t keylen)
{
	switch (cipher) {
	case CT_CRYPTO_AES_CBC:
	case CT_CRYPTO_AES_CTR:
	case CT_CRYPTO_AES_ECB:
		return keylen == 16 || keylen == 24 || keylen == 32;
	case CT_CRYPTO_AES_XTS:
		return keylen == 32 || keylen == 64;
	default:
		return false;
	}
}

static pthread_mutex_t sessions_lock = PTHREAD_MUTEX_INITIALIZER;

static int fake_ioctl_locked(int fd, unsigned long req, void *arg)
{
	int nr = _IOC_NR(req);

	if (bad_ptr(arg))
		return fail(EFAULT);
	switch (nr) {
	case CT_NR_CRIOGET: {
		int c = dup(fd);
		if (c < 0)
			return -1;
		*(uint32_t *)arg = (uint32_t)c;
		return 0;
	}
	case CT_NR_CIOCGSESSION: {
		struct ct_cdev_session_op *s = arg;
		if (!key_ok(s->cipher, s->keylen))
			return fail(EINVAL);
		for (uint32_t i = 1; i < MAX_SES; i++) {
			if (sessions[i].used)
				continue;
			sessions[i].used = true;
			sessions[i].cipher = s->cipher;
			sessions[i].keylen = s->keylen;
			s->ses = i;
			return 0;
		}
		return fail(ENOMEM);
	}
	case CT_NR_CIOCFSESSION: {
		uint32_t ses = *(uint32_t *)arg;
		if (ses >= MAX_SES || !sessions[ses].used)
			return fail(EINVAL);
		sessions[ses].used = false;
		return 0;
	}
	case CT_NR_CIOCGSESSINFO: {
		struct ct_cdev_session_info_op *si = arg;
		if (si->ses >= MAX_SES || !sessions[si->ses].used)
			return fail(EINVAL);
		static const char *const modes[] = { [CT_CRYPTO_AES_CBC] = "cbc",
						     [CT_CRYPTO_AES_CTR] = "ctr",
						     [CT_CRYPTO_AES_XTS] = "xts",
						     [CT_CRYPTO_AES_ECB] = "ecb" };
		uint32_t c = sessions[si->ses].cipher;
		memset(&si->cipher_info, 0, sizeof(si->cipher_info));
		memset(&si->hash_info, 0, sizeof(si->hash_info));
		snprintf(si->cipher_info.cra_name, sizeof(si->cipher_info.cra_name), "%s(aes)", modes[c]);
		if (c == CT_CRYPTO_AES_ECB) {
			snprintf(si->cipher_info.cra_driver_name, sizeof(si->cipher_info.cra_driver_name),
				 "ecb-aes-fakehw");
			si->flags = CT_SIOP_FLAG_KERNEL_DRIVER_ONLY;
		} else {
			snprintf(si->cipher_info.cra_driver_name, sizeof(si->cipher_info.cra_driver_name),
				 "%s-aes-aesni", modes[c]);
			si->flags = 0;
		}
		si->alignmask = 15;
		return 0;
	}
	case CT_NR_CIOCCRYPT:
	case CT_NR_CIOCASYNCCRYPT: {
		struct ct_cdev_crypt_op *op = arg;
		if (op->ses >= MAX_SES || !sessions[op->ses].used || op->op > CT_COP_DECRYPT)
			return fail(EINVAL);
		if (sessions[op->ses].cipher != CT_CRYPTO_AES_CTR && op->len % 16)
			return fail(EINVAL);
		if (bad_ptr(op->src) || bad_ptr(op->dst))
			return fail(EFAULT);
		for (uint32_t i = 0; i < op->len; i++)
			op->dst[i] = op->src[i] ^ 0x5a;
		return 0;
	}
	case CT_NR_CIOCASYMFEAT:
		*(uint32_t *)arg = CT_CRF_MOD_EXP | CT_CRF_MOD_EXP_CRT;
		return 0;
	case CT_NR_CIOCKEY: {
		/* MOD_EXP (base, exponent, modulus -> result) is "done"; the numbers are not read. */
		struct ct_cdev_crypt_kop *k = arg;
		if (k->crk_op != CT_CRK_MOD_EXP || k->crk_iparams != 3 || k->crk_oparams != 1)
			return fail(EINVAL);
		k->crk_status = 0;
		return 0;
	}
	case CT_NR_CIOCASYNCFETCH:
		return fail(EAGAIN);
	case CT_NR_CIOCAUTHCRYPT:
		return fail(EINVAL);
	default:
		return fail(ENOTTY);
	}
}

static int fake_ioctl(int fd, unsigned long req, void *arg)
{
	pthread_mutex_lock(&sessions_lock);
	int r = fake_ioctl_locked(fd, req, arg);
	int e = errno;
	pthread_mutex_unlock(&sessions_lock);
	errno = e;
	return r;
}

int ioctl(int fd, CT_IOCTL_REQUEST_T req, ...)
{
	va_list ap;
	va_start(ap, req);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	int (*real)(int, unsigned long, ...) = next("ioctl");

	if (_IOC_TYPE(req) == CT_CDEV_IOC_TYPE && is_fake_dev(fd))
		return fake_ioctl(fd, (unsigned)req, arg); /* 32 bits, as the kernel reads it */
	return real(fd, req, arg);
}
