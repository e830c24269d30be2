/* SPDX-License-Identifier: MIT */
/*
 * cdev_check.c - a cryptodev client that checks a /dev/crypto against OpenSSL and against what a
 * profile of the CUSE server promises: which sessions it must refuse (EINVAL), the results of
 * CIOCCRYPT and CIOCAUTHCRYPT (GCM), IV write-back, the tag pointer, tag failures (EBADMSG),
 * CIOCGSESSINFO, CRIOGET and the errno of misuse. One line per check; exit 1 if any failed,
 * 2 if the device cannot be opened.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <openssl/evp.h>

#include "cryptodev_abi.h"

static int failures, checks;

static void check(bool ok, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void check(bool ok, const char *fmt, ...)
{
	va_list ap;

	checks++;
	if (!ok)
		failures++;
	printf("%s ", ok ? "ok  " : "FAIL");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
}

static void fill(uint8_t *p, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1664525u + 1013904223u;
		p[i] = (uint8_t)(seed >> 24);
	}
}

static const char *errname(int e)
{
	switch (e) {
	case 0:
		return "0";
	case EINVAL:
		return "EINVAL";
	case ENOENT:
		return "ENOENT";
	case ENOTTY:
		return "ENOTTY";
	case EBADMSG:
		return "EBADMSG";
	case E2BIG:
		return "E2BIG";
	case EFAULT:
		return "EFAULT";
	default:
		return strerror(e);
	}
}

/* ioctl's errno, 0 on success. */
static int xioctl(int fd, unsigned long req, void *arg)
{
	return ioctl(fd, req, arg) < 0 ? errno : 0;
}

struct mode {
	const char *name; /* OpenSSL name pattern */
	uint32_t alg;
	unsigned keylen;
	unsigned ivlen;
	bool aead;
};

static const struct mode modes[] = {
	{ .name = "aes-128-cbc", .alg = CT_CRYPTO_AES_CBC, .keylen = 16, .ivlen = 16 },
	{ .name = "aes-192-cbc", .alg = CT_CRYPTO_AES_CBC, .keylen = 24, .ivlen = 16 },
	{ .name = "aes-256-cbc", .alg = CT_CRYPTO_AES_CBC, .keylen = 32, .ivlen = 16 },
	{ .name = "aes-128-ctr", .alg = CT_CRYPTO_AES_CTR, .keylen = 16, .ivlen = 16 },
	{ .name = "aes-256-ctr", .alg = CT_CRYPTO_AES_CTR, .keylen = 32, .ivlen = 16 },
	{ .name = "aes-128-ecb", .alg = CT_CRYPTO_AES_ECB, .keylen = 16, .ivlen = 0 },
	{ .name = "aes-128-xts", .alg = CT_CRYPTO_AES_XTS, .keylen = 32, .ivlen = 16 },
	{ .name = "aes-256-xts", .alg = CT_CRYPTO_AES_XTS, .keylen = 64, .ivlen = 16 },
	{ .name = "aes-128-gcm", .alg = CT_CRYPTO_AES_GCM, .keylen = 16, .ivlen = 12, .aead = true },
	{ .name = "aes-256-gcm", .alg = CT_CRYPTO_AES_GCM, .keylen = 32, .ivlen = 12, .aead = true },
};

/* Does the profile promise a session for this mode? */
static bool profile_accepts(const char *profile, const struct mode *m)
{
	if (!strcmp(profile, "glxsb"))
		return m->alg == CT_CRYPTO_AES_CBC && m->keylen == 16;
	if (!strcmp(profile, "eip93-like"))
		return m->alg != CT_CRYPTO_AES_CBC;
	return true;
}

static bool evp_cipher(const char *name, const uint8_t *key, const uint8_t *iv, const uint8_t *in, int len,
		       uint8_t *out, int enc)
{
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	int n1 = 0, n2 = 0;
	bool ok = ctx && EVP_CipherInit_ex(ctx, EVP_get_cipherbyname(name), NULL, key, iv, enc) == 1 &&
		  EVP_CIPHER_CTX_set_padding(ctx, 0) == 1 && EVP_CipherUpdate(ctx, out, &n1, in, len) == 1 &&
		  EVP_CipherFinal_ex(ctx, out + n1, &n2) == 1 && n1 + n2 == len;
	EVP_CIPHER_CTX_free(ctx);
	return ok;
}

/* GCM encryption: ciphertext then a 16-byte tag, as cryptodev lays it out. */
static bool evp_gcm(const char *name, const uint8_t *key, const uint8_t *iv, const uint8_t *aad, int aadlen,
		    const uint8_t *in, int len, uint8_t *out)
{
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	int n = 0;
	bool ok = ctx && EVP_EncryptInit_ex(ctx, EVP_get_cipherbyname(name), NULL, NULL, NULL) == 1 &&
		  EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, 12, NULL) == 1 &&
		  EVP_EncryptInit_ex(ctx, NULL, NULL, key, iv) == 1 &&
		  (aadlen == 0 || EVP_EncryptUpdate(ctx, NULL, &n, aad, aadlen) == 1) &&
		  EVP_EncryptUpdate(ctx, out, &n, in, len) == 1 &&
		  EVP_EncryptFinal_ex(ctx, out + n, &n) == 1 &&
		  EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, 16, out + len) == 1;
	EVP_CIPHER_CTX_free(ctx);
	return ok;
}

static int new_session(int fd, uint32_t alg, unsigned keylen, const uint8_t *key, uint32_t *ses)
{
	struct ct_cdev_session_op s = { .cipher = alg, .keylen = keylen, .key = (uint8_t *)key };
	int e = xioctl(fd, CT_CIOCGSESSION, &s);

	*ses = s.ses;
	return e;
}

static void check_sessinfo(int fd, uint32_t ses, const char *name)
{
	struct ct_cdev_session_info_op si = { .ses = ses };
	int e = xioctl(fd, CT_CIOCGSESSINFO, &si);

	check(e == 0 && si.cipher_info.cra_driver_name[0] && si.cipher_info.cra_name[0],
	      "%s CIOCGSESSINFO: %s, cra_name %.64s, driver %.64s, kernel_driver_only %u", name, errname(e),
	      si.cipher_info.cra_name, si.cipher_info.cra_driver_name,
	      si.flags & CT_SIOP_FLAG_KERNEL_DRIVER_ONLY);
}

static void check_skcipher(int fd, uint32_t ses, const struct mode *m, const uint8_t *key)
{
	enum { LEN = 4096 };
	static uint8_t pt[LEN], ct[LEN], ref[LEN], back[LEN];
	uint8_t iv[16];
	int e;

	fill(pt, LEN, 7);
	fill(iv, sizeof(iv), 8);
	struct ct_cdev_crypt_op op = {
		.ses = ses, .op = CT_COP_ENCRYPT, .len = LEN, .src = pt, .dst = ct, .iv = m->ivlen ? iv : NULL
	};
	e = xioctl(fd, CT_CIOCCRYPT, &op);
	bool same = e == 0 && evp_cipher(m->name, key, iv, pt, LEN, ref, 1) && !memcmp(ct, ref, LEN);
	check(same, "%s CIOCCRYPT encrypt %u bytes: %s, %s OpenSSL", m->name, LEN, errname(e),
	      same ? "equal to" : "DIFFERENT from");
	op = (struct ct_cdev_crypt_op){ .ses = ses,
					.op = CT_COP_DECRYPT,
					.len = LEN,
					.src = ct,
					.dst = back,
					.iv = m->ivlen ? iv : NULL };
	e = xioctl(fd, CT_CIOCCRYPT, &op);
	check(e == 0 && !memcmp(back, pt, LEN), "%s CIOCCRYPT decrypt: %s, %s", m->name, errname(e),
	      e == 0 && !memcmp(back, pt, LEN) ? "round trip" : "DIFFERENT");

	if (m->alg == CT_CRYPTO_AES_CBC || m->alg == CT_CRYPTO_AES_CTR) {
		/* Two chained requests with COP_FLAG_WRITE_IV equal one long one. */
		uint8_t civ[16];
		memcpy(civ, iv, 16);
		for (int half = 0; half < 2; half++) {
			op = (struct ct_cdev_crypt_op){ .ses = ses,
							.op = CT_COP_ENCRYPT,
							.flags = CT_COP_FLAG_WRITE_IV,
							.len = LEN / 2,
							.src = pt + half * LEN / 2,
							.dst = back + half * LEN / 2,
							.iv = civ };
			e = xioctl(fd, CT_CIOCCRYPT, &op);
			if (e)
				break;
		}
		check(e == 0 && !memcmp(back, ref, LEN), "%s COP_FLAG_WRITE_IV: two chained requests %s one",
		      m->name, e == 0 && !memcmp(back, ref, LEN) ? "equal" : "DIFFER from");
	}
	if (m->ivlen == 16 && m->alg != CT_CRYPTO_AES_CTR) {
		op = (struct ct_cdev_crypt_op){
			.ses = ses, .op = CT_COP_ENCRYPT, .len = 15, .src = pt, .dst = ct, .iv = iv
		};
		e = xioctl(fd, CT_CIOCCRYPT, &op);
		check(e == EINVAL, "%s 15-byte request: %s (expected EINVAL)", m->name, errname(e));
	}
}

static void check_gcm(int fd, uint32_t ses, const struct mode *m, const uint8_t *key)
{
	enum { LEN = 1000, AAD = 20 };
	static uint8_t pt[LEN], aad[AAD], ct[LEN + 16], ref[LEN + 16], back[LEN];
	uint8_t iv[12];
	int e;

	fill(pt, LEN, 11);
	fill(aad, AAD, 12);
	fill(iv, sizeof(iv), 13);
	struct ct_cdev_crypt_auth_op a = { .ses = ses,
					   .op = CT_COP_ENCRYPT,
					   .len = LEN,
					   .auth_len = AAD,
					   .auth_src = aad,
					   .src = pt,
					   .dst = ct,
					   .iv = iv,
					   .iv_len = 12 };
	e = xioctl(fd, CT_CIOCAUTHCRYPT, &a);
	bool same = e == 0 && evp_gcm(m->name, key, iv, aad, AAD, pt, LEN, ref) && !memcmp(ct, ref, LEN + 16);
	check(same, "%s CIOCAUTHCRYPT encrypt %u+%u bytes: %s, ciphertext and tag %s OpenSSL", m->name, AAD,
	      LEN, errname(e), same ? "equal to" : "DIFFERENT from");
	check(e == 0 && a.tag == ct + LEN && a.tag_len == 16,
	      "%s tag written back: tag = dst+%td, tag_len %u (expected dst+%u, 16)", m->name,
	      a.tag ? a.tag - ct : (ptrdiff_t)-1, a.tag_len, LEN);

	a = (struct ct_cdev_crypt_auth_op){ .ses = ses,
					    .op = CT_COP_DECRYPT,
					    .len = LEN + 16,
					    .auth_len = AAD,
					    .auth_src = aad,
					    .src = ct,
					    .dst = back,
					    .iv = iv,
					    .iv_len = 12 };
	e = xioctl(fd, CT_CIOCAUTHCRYPT, &a);
	check(e == 0 && !memcmp(back, pt, LEN), "%s CIOCAUTHCRYPT decrypt: %s, %s", m->name, errname(e),
	      e == 0 && !memcmp(back, pt, LEN) ? "round trip" : "DIFFERENT");
	ct[LEN + 3] ^= 1;
	e = xioctl(fd, CT_CIOCAUTHCRYPT, &a);
	check(e == EBADMSG, "%s tampered tag: %s (expected EBADMSG)", m->name, errname(e));
}

int main(int argc, char **argv)
{
	const char *dev = CT_CDEV_PATH, *profile = "full";
	int ch;

	while ((ch = getopt(argc, argv, "d:p:")) != -1) {
		switch (ch) {
		case 'd':
			dev = optarg;
			break;
		case 'p':
			profile = optarg;
			break;
		default:
			fprintf(stderr,
				"usage: cdev_check [-d /dev/crypto] [-p full|glxsb|eip93-like|slow]\n");
			return 64;
		}
	}
	int fd = open(dev, O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		fprintf(stderr, "open(%s): %s\n", dev, strerror(errno));
		return 2;
	}

	uint8_t key[64];
	fill(key, sizeof(key), 5);
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		const struct mode *m = &modes[i];
		bool want = profile_accepts(profile, m);
		uint32_t ses = 0;
		int e = new_session(fd, m->alg, m->keylen, key, &ses);

		check(want ? e == 0 : e == EINVAL, "%s CIOCGSESSION under %s: %s (expected %s)", m->name,
		      profile, errname(e), want ? "a session" : "EINVAL");
		if (e)
			continue;
		check_sessinfo(fd, ses, m->name);
		if (m->aead)
			check_gcm(fd, ses, m, key);
		else
			check_skcipher(fd, ses, m, key);
		e = xioctl(fd, CT_CIOCFSESSION, &ses);
		check(e == 0, "%s CIOCFSESSION: %s", m->name, errname(e));
		struct ct_cdev_crypt_op op = {
			.ses = ses, .op = CT_COP_ENCRYPT, .len = 16, .src = key, .dst = key, .iv = key
		};
		e = xioctl(fd, CT_CIOCCRYPT, &op);
		check(e == EINVAL, "%s CIOCCRYPT after CIOCFSESSION: %s (expected EINVAL)", m->name,
		      errname(e));
	}

	/* Misuse, whatever the profile. */
	uint32_t bogus = 0x7fffffff;
	int e = xioctl(fd, CT_CIOCFSESSION, &bogus);
	check(e == ENOENT, "CIOCFSESSION of an unknown session: %s (expected ENOENT)", errname(e));
	struct ct_cdev_session_op bad = { .cipher = CT_CRYPTO_AES_CBC, .keylen = 16, .key = NULL };
	e = xioctl(fd, CT_CIOCGSESSION, &bad);
	check(e == EFAULT || (e == EINVAL && !strcmp(profile, "eip93-like")),
	      "CIOCGSESSION with a NULL key: %s (expected EFAULT)", errname(e));
	uint32_t feat = 0;
	e = xioctl(fd, CT_CIOCASYMFEAT, &feat);
	check(e == ENOTTY, "CIOCASYMFEAT: %s (expected ENOTTY: no asymmetric support)", errname(e));

	/* CRIOGET: a descriptor on the same open file, so its sessions are visible there. */
	int clone = -1;
	e = xioctl(fd, CT_CRIOGET, &clone);
	bool clone_ok = e == 0 && clone >= 0 && fcntl(clone, F_GETFD) >= 0;
	check(clone_ok, "CRIOGET: %s, descriptor %d (opened as %d)", errname(e), clone, fd);
	const struct mode *any = NULL;
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]) && !any; i++)
		if (profile_accepts(profile, &modes[i]))
			any = &modes[i];
	if (clone_ok && any) {
		uint32_t ses = 0;
		e = new_session(fd, any->alg, any->keylen, key, &ses);
		struct ct_cdev_session_info_op si = { .ses = ses };
		int e2 = e ? e : xioctl(clone, CT_CIOCGSESSINFO, &si);
		check(e2 == 0, "CRIOGET descriptor sees the session made on the original: %s", errname(e2));
		xioctl(fd, CT_CIOCFSESSION, &ses);
	}

	/* The largest request CUSE can carry, and one beyond it. */
	const struct mode *ctr = &modes[3]; /* aes-128-ctr */
	uint32_t ses = 0;
	if (profile_accepts(profile, ctr) && new_session(fd, ctr->alg, ctr->keylen, key, &ses) == 0) {
		static uint8_t big[128 * 1024], out[128 * 1024], ref[128 * 1024];
		uint8_t iv[16] = { 1 };
		fill(big, sizeof(big), 21);
		struct ct_cdev_crypt_op op = {
			.ses = ses, .op = CT_COP_ENCRYPT, .len = 64 * 1024, .src = big, .dst = out, .iv = iv
		};
		e = xioctl(fd, CT_CIOCCRYPT, &op);
		bool same = e == 0 && evp_cipher(ctr->name, key, iv, big, 64 * 1024, ref, 1) &&
			    !memcmp(out, ref, 64 * 1024);
		check(same, "64 KiB CTR request: %s, %s OpenSSL", errname(e),
		      same ? "equal to" : "DIFFERENT from");
		op.len = sizeof(big);
		e = xioctl(fd, CT_CIOCCRYPT, &op);
		check(e == E2BIG, "128 KiB request: %s (expected E2BIG: beyond what CUSE moves)", errname(e));
		xioctl(fd, CT_CIOCFSESSION, &ses);
	}
	close(fd);
	printf("%d checks, %d failed\n", checks, failures);
	return failures ? 1 : 0;
}
