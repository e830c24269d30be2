/* SPDX-License-Identifier: MIT */
/*
 * afalg_aead - AES-GCM through an AF_ALG "aead" socket (gcm(aes)): encrypt with associated data,
 * decrypt it back, and check ciphertext, tag and plaintext against OpenSSL; a tampered tag must be
 * refused with EBADMSG. Prints the errno and exits 2 when AF_ALG or gcm(aes) is unavailable,
 * 1 on a mismatch, 0 when every check passed.
 */
#include <getopt.h>
#include <linux/if_alg.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "kex_common.h"

#ifndef AF_ALG
#define AF_ALG 38
#endif
#ifndef SOL_ALG
#define SOL_ALG 279
#endif

enum { IV_LEN = 12, TAG_LEN = 16, MAX_AAD = 256, MAX_PT = 16384 };

static const char *fail_call;

/* One AEAD request: input = AAD || text, output = AAD || text' (|| tag when encrypting). */
static ssize_t aead_op(int op, bool enc, const uint8_t *iv, unsigned aadlen, const uint8_t *in, size_t inlen,
		       uint8_t *out, size_t outlen)
{
	union {
		char buf[CMSG_SPACE(4) + CMSG_SPACE(sizeof(struct af_alg_iv) + IV_LEN) + CMSG_SPACE(4)];
		struct cmsghdr align;
	} ctl;
	struct iovec iov = { .iov_base = (void *)in, .iov_len = inlen };
	struct msghdr msg = {
		.msg_control = ctl.buf, .msg_controllen = sizeof(ctl.buf), .msg_iov = &iov, .msg_iovlen = 1
	};

	memset(&ctl, 0, sizeof(ctl));
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_ALG;
	c->cmsg_type = ALG_SET_OP;
	c->cmsg_len = CMSG_LEN(4);
	*(uint32_t *)CMSG_DATA(c) = enc ? ALG_OP_ENCRYPT : ALG_OP_DECRYPT;
	c = CMSG_NXTHDR(&msg, c);
	c->cmsg_level = SOL_ALG;
	c->cmsg_type = ALG_SET_IV;
	c->cmsg_len = CMSG_LEN(sizeof(struct af_alg_iv) + IV_LEN);
	struct af_alg_iv *aiv = (void *)CMSG_DATA(c);
	aiv->ivlen = IV_LEN;
	memcpy(aiv->iv, iv, IV_LEN);
	c = CMSG_NXTHDR(&msg, c);
	c->cmsg_level = SOL_ALG;
	c->cmsg_type = ALG_SET_AEAD_ASSOCLEN;
	c->cmsg_len = CMSG_LEN(4);
	*(uint32_t *)CMSG_DATA(c) = aadlen;

	fail_call = "sendmsg";
	if (sendmsg(op, &msg, 0) != (ssize_t)inlen)
		return -1;
	fail_call = "read";
	return read(op, out, outlen);
}

/* OpenSSL's GCM of the same input, the reference. */
static bool ref_gcm(unsigned bits, const uint8_t *key, const uint8_t *iv, const uint8_t *aad, unsigned aadlen,
		    const uint8_t *pt, unsigned ptlen, uint8_t *ct, uint8_t *tag)
{
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	const EVP_CIPHER *c = bits == 128   ? EVP_aes_128_gcm()
			      : bits == 192 ? EVP_aes_192_gcm()
					    : EVP_aes_256_gcm();
	int n = 0, ok;

	ok = ctx && EVP_EncryptInit_ex(ctx, c, NULL, NULL, NULL) == 1 &&
	     EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IVLEN, IV_LEN, NULL) == 1 &&
	     EVP_EncryptInit_ex(ctx, NULL, NULL, key, iv) == 1 &&
	     (aadlen == 0 || EVP_EncryptUpdate(ctx, NULL, &n, aad, (int)aadlen) == 1) &&
	     EVP_EncryptUpdate(ctx, ct, &n, pt, (int)ptlen) == 1 &&
	     EVP_EncryptFinal_ex(ctx, ct + n, &n) == 1 &&
	     EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, TAG_LEN, tag) == 1;
	EVP_CIPHER_CTX_free(ctx);
	return ok;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "bits", required_argument, NULL, 'b' }, { "aad", required_argument, NULL, 'a' },
		{ "len", required_argument, NULL, 'l' },  { "count", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },       { 0 },
	};
	unsigned bits = 128, aadlen = 16, ptlen = 64;
	unsigned long count = 1;
	int ch;

	while ((ch = getopt_long(argc, argv, "b:a:l:n:h", lopts, NULL)) != -1) {
		switch (ch) {
		case 'b':
			bits = (unsigned)atoi(optarg);
			break;
		case 'a':
			aadlen = (unsigned)atoi(optarg);
			break;
		case 'l':
			ptlen = (unsigned)atoi(optarg);
			break;
		case 'n':
			count = strtoul(optarg, NULL, 0);
			break;
		case 'h':
		default:
			fprintf(ch == 'h' ? stdout : stderr,
				"usage: afalg_aead [--bits 128|192|256] [--aad N] [--len N] [--count N]\n"
				"gcm(aes) via AF_ALG, checked against OpenSSL. Exit 2 if unavailable.\n");
			return ch == 'h' ? 0 : 64;
		}
	}
	if ((bits != 128 && bits != 192 && bits != 256) || aadlen > MAX_AAD || ptlen > MAX_PT || count == 0) {
		fprintf(stderr, "afalg_aead: bad arguments\n");
		return 64;
	}

	static uint8_t in[MAX_AAD + MAX_PT + TAG_LEN], out[MAX_AAD + MAX_PT + TAG_LEN];
	static uint8_t ref_ct[MAX_PT + 16];
	uint8_t key[32], iv[IV_LEN], ref_tag[TAG_LEN];
	struct sockaddr_alg sa = { .salg_family = AF_ALG, .salg_type = "aead", .salg_name = "gcm(aes)" };

	kex_fill(key, sizeof(key), 11);
	kex_fill(iv, sizeof(iv), 12);
	kex_fill(in, aadlen + ptlen, 13); /* AAD || plaintext */

	int tfm = socket(AF_ALG, SOCK_SEQPACKET | SOCK_CLOEXEC, 0), op = -1;
	fail_call = "socket(AF_ALG)";
	if (tfm < 0)
		goto unavailable;
	fail_call = "bind(aead, gcm(aes))";
	if (bind(tfm, (struct sockaddr *)&sa, sizeof(sa)) < 0)
		goto unavailable;
	fail_call = "setsockopt(ALG_SET_KEY)";
	if (setsockopt(tfm, SOL_ALG, ALG_SET_KEY, key, bits / 8) < 0)
		goto unavailable;
	fail_call = "setsockopt(ALG_SET_AEAD_AUTHSIZE)";
	if (setsockopt(tfm, SOL_ALG, ALG_SET_AEAD_AUTHSIZE, NULL, TAG_LEN) < 0)
		goto unavailable;
	fail_call = "accept(AF_ALG)";
	op = accept4(tfm, NULL, NULL, SOCK_CLOEXEC);
	if (op < 0)
		goto unavailable;

	if (!ref_gcm(bits, key, iv, in, aadlen, in + aadlen, ptlen, ref_ct, ref_tag)) {
		fprintf(stderr, "OpenSSL reference failed\n");
		return 1;
	}
	int status = 0;
	uint64_t t0 = kex_now_ns();
	for (unsigned long i = 0; i < count; i++) {
		/* encrypt: out = AAD || CT || TAG */
		ssize_t n = aead_op(op, true, iv, aadlen, in, aadlen + ptlen, out, aadlen + ptlen + TAG_LEN);
		if (n < 0)
			goto unavailable;
		if ((size_t)n != aadlen + ptlen + TAG_LEN || memcmp(out + aadlen, ref_ct, ptlen) ||
		    memcmp(out + aadlen + ptlen, ref_tag, TAG_LEN)) {
			printf("encrypt: MISMATCH against OpenSSL (got %zd bytes)\n", n);
			return 1;
		}
		/* decrypt it back: in = AAD || CT || TAG, out = AAD || PT */
		static uint8_t back[MAX_AAD + MAX_PT + TAG_LEN];
		memcpy(back, in, aadlen);
		memcpy(back + aadlen, out + aadlen, ptlen + TAG_LEN);
		n = aead_op(op, false, iv, aadlen, back, aadlen + ptlen + TAG_LEN, out, aadlen + ptlen);
		if (n < 0)
			goto unavailable;
		if ((size_t)n != aadlen + ptlen || memcmp(out + aadlen, in + aadlen, ptlen)) {
			printf("decrypt: MISMATCH (got %zd bytes)\n", n);
			return 1;
		}
		if (i + 1 < count)
			continue;
		/* A flipped tag bit must be refused. */
		back[aadlen + ptlen] ^= 1;
		n = aead_op(op, false, iv, aadlen, back, aadlen + ptlen + TAG_LEN, out, aadlen + ptlen);
		if (n >= 0 || errno != EBADMSG) {
			printf("tampered tag: expected EBADMSG, got %zd (%s)\n", n,
			       n < 0 ? strerror(errno) : "accepted");
			status = 1;
		}
	}
	uint64_t ns = kex_now_ns() - t0;
	printf("gcm(aes) aes-%u-gcm aad=%u len=%u tag=%u: %lu x (encrypt + decrypt) match OpenSSL, "
	       "tampered tag refused; %.2f us per pair\n",
	       bits, aadlen, ptlen, TAG_LEN, count, ns / 1e3 / count);
	close(op);
	close(tfm);
	return status;
unavailable:;
	int e = errno;
	fprintf(stderr, "%s: %s\n", fail_call, strerror(e));
	return 2;
}
