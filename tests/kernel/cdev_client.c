/* SPDX-License-Identifier: MIT */
/*
 * cdev_client.c - drives every cryptodev ioctl the preload decodes, on whatever /dev/crypto is
 * (the tests put a stand-in device there in a private mount namespace, or there is none), and
 * exercises the fd bookkeeping hooks (dup2, fcntl(F_DUPFD), close_range, closefrom). It prints
 * each call's return value and errno: the output must be byte-identical with and without the
 * preload (transparency). Key lengths mark what the trace must show:
 *   keylen=32 on the opened fd, keylen=16 through a dup2'd fd, keylen=24 through an F_DUPFD copy
 *   -> recorded; keylen=17 on an fd that close_range freed and /dev/null reused -> never recorded;
 *   keylen=48 (XTS) after closefrom(3) closed the trace fd -> recorded in the reopened trace.
 */

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "close_range.h"
#include "cryptodev_abi.h"
#include "errno_name.h"

static void show(const char *what, long r)
{
	int e = errno;

	printf("%-40s r=%ld errno=%s\n", what, r, r < 0 ? ct_strerrorname(e) : "0");
	fflush(stdout);
}

static uint8_t key[64], buf[64], iv[16];

static void session(int fd, const char *label, uint32_t cipher, uint32_t keylen)
{
	struct ct_cdev_session_op s = { .cipher = cipher, .keylen = keylen, .key = key };
	char what[64];

	snprintf(what, sizeof(what), "%s CIOCGSESSION keylen=%u", label, keylen);
	errno = 0;
	show(what, ioctl(fd, CT_CIOCGSESSION, &s));
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : CT_CDEV_PATH;

	/* Not a tracked fd: EBADF straight from the kernel. */
	struct ct_cdev_session_op bad = { .cipher = CT_CRYPTO_AES_CBC, .keylen = 16, .key = key };
	errno = 0;
	show("fd -1 CIOCGSESSION", ioctl(-1, CT_CIOCGSESSION, &bad));
	errno = 0;
	show("fd -1 CIOCCRYPT", ioctl(-1, CT_CIOCCRYPT, NULL));
	struct ct_cdev_crypt_kop bad_kop = { .crk_op = CT_CRK_MOD_EXP, .crk_iparams = 3, .crk_oparams = 1 };
	uint32_t bad_feat = 0;
	errno = 0;
	show("fd -1 CIOCKEY", ioctl(-1, CT_CIOCKEY, &bad_kop));
	errno = 0;
	show("fd -1 CIOCASYMFEAT", ioctl(-1, CT_CIOCASYMFEAT, &bad_feat));

	int fd = open(path, O_RDWR | O_CLOEXEC);
	show("open", fd < 0 ? -1 : 0);
	if (fd < 0)
		return 2;
	session(fd, "fd", CT_CRYPTO_AES_CBC, 32);

	struct ct_cdev_crypt_op c = {
		.ses = 7, .op = CT_COP_ENCRYPT, .len = 64, .src = buf, .dst = buf, .iv = iv
	};
	show("CIOCCRYPT", ioctl(fd, CT_CIOCCRYPT, &c));
	show("CIOCASYNCCRYPT", ioctl(fd, CT_CIOCASYNCCRYPT, &c));
	show("CIOCASYNCFETCH", ioctl(fd, CT_CIOCASYNCFETCH, &c));
	struct ct_cdev_crypt_auth_op a = { .ses = 7,
					   .op = CT_COP_DECRYPT,
					   .len = 64,
					   .auth_len = 13,
					   .tag_len = 16,
					   .iv_len = 12,
					   .src = buf,
					   .dst = buf,
					   .iv = iv };
	show("CIOCAUTHCRYPT", ioctl(fd, CT_CIOCAUTHCRYPT, &a));
	struct ct_cdev_session_info_op si = { .ses = 7 };
	show("CIOCGSESSINFO", ioctl(fd, CT_CIOCGSESSINFO, &si));
	/* CIOCKEY with its parameter sizes (the trace keeps them, never the numbers): a MOD_EXP the
	 * device does, and a DSA_SIGN it refuses. The features bits come back as printed. */
	uint8_t num[256] = { 0 };
	struct ct_cdev_crypt_kop k = { .crk_op = CT_CRK_MOD_EXP, .crk_iparams = 3, .crk_oparams = 1 };
	static const uint32_t nbits[4] = { 2048, 17, 2048, 2048 };
	for (int i = 0; i < 4; i++)
		k.crk_param[i] = (struct ct_cdev_crparam){ .crp_p = num, .crp_nbits = nbits[i] };
	show("CIOCKEY MOD_EXP", ioctl(fd, CT_CIOCKEY, &k));
	k.crk_op = CT_CRK_DSA_SIGN;
	k.crk_iparams = 5;
	k.crk_oparams = 2;
	show("CIOCKEY DSA_SIGN", ioctl(fd, CT_CIOCKEY, &k));
	uint32_t feat = 0, ses = 7, clone = 0;
	show("CIOCASYMFEAT", ioctl(fd, CT_CIOCASYMFEAT, &feat));
	printf("CIOCASYMFEAT features=0x%x\n", feat);
	errno = 0;
	show("CIOCASYMFEAT bad pointer", ioctl(fd, CT_CIOCASYMFEAT, (void *)16));
	show("CRIOGET", ioctl(fd, CT_CRIOGET, &clone));
	show("CIOCFSESSION", ioctl(fd, CT_CIOCFSESSION, &ses));
	/* A bad pointer: the kernel (or driver) answers; the preload must not touch it. */
	show("CIOCGSESSION bad pointer", ioctl(fd, CT_CIOCGSESSION, (void *)16));

	/* The state follows dup2 and F_DUPFD; the original closes. */
	show("dup2 -> 50", dup2(fd, 50));
	show("fcntl F_DUPFD_CLOEXEC >= 60", fcntl(fd, F_DUPFD_CLOEXEC, 60) >= 60 ? 0 : -1);
	show("close fd", close(fd));
	session(50, "dup2", CT_CRYPTO_AES_CBC, 16);
	session(60, "dupfd", CT_CRYPTO_AES_CTR, 24);

	/* close_range frees them all; /dev/null then takes a freed number: not ours. */
	show("close_range 3..~0", close_range(3, ~0u, 0));
	int nul = open("/dev/null", O_RDWR);
	show("open /dev/null", nul < 0 ? -1 : 0);
	if (nul >= 0) {
		int nul50 = dup2(nul, 50);
		show("dup2 /dev/null -> 50", nul50);
		session(50, "reused", CT_CRYPTO_AES_CBC, 17);
		close(nul);
		close(50);
	}

	/* closefrom(3) also closes the preload's trace fd: the preload must reopen a new file. */
	closefrom(3);
	show("closefrom 3", 0);
	fd = open(path, O_RDWR | O_CLOEXEC);
	show("reopen", fd < 0 ? -1 : 0);
	if (fd >= 0) {
		session(fd, "after closefrom", CT_CRYPTO_AES_XTS, 48);
		close(fd);
	}
	return 0;
}
