/* SPDX-License-Identifier: MIT */
/*
 * msg_cost.c - the cost of one whole AEAD message through EVP, where the hooks of the calls
 * around the data (init, ctrl, final) weigh as much as the data call's: AES-GCM messages of LEN
 * bytes on one context, in a loop, timed with this thread's CPU clock, best of ROUNDS batches.
 * Four shapes, as programs make them:
 *   speed  openssl speed's (3.0) GCM loop: AEAD_SET_IVLEN, a re-init with key and IV, the data,
 *          the final (encrypt)
 *   tls13  a TLS 1.3 record: a re-init with the record's IV, 13 bytes of AAD, the data, the
 *          final, then AEAD_GET_TAG (encrypt) or AEAD_SET_TAG first and the final's check
 *          (decrypt, with the tag of an encrypted record, so every message verifies)
 *   tls12  a TLS 1.2 record: AEAD_TLS1_AAD, then the whole record through EVP_Cipher in place
 *          (decrypt: a sealed record copied in first, every record verifies)
 *   ssh    an SSH packet as OpenSSH makes it (encrypt): GCM_IV_GEN, then AAD, data and final
 *          through EVP_Cipher, then GCM_GET_TAG
 * bench/msg_cost.sh runs it natively, traced, and routed with and without the direct lane
 * (route/lane.h), alternating; run alone it prints "ns_per_msg <best>".
 *
 * usage: msg_cost [LEN [MSGS_PER_BATCH [ROUNDS [speed|tls13|tls12|ssh [enc|dec [CIPHER]]]]]]
 *        (defaults 16, 200000, 15, speed, enc, aes-128-gcm)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>

static double thread_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static unsigned char key[32], iv[12], aad[13], buf[65536 + 16], tag[16];

static int speed_msg(EVP_CIPHER_CTX *ctx, int len)
{
	int outl, fl;
	return EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_IVLEN, sizeof(iv), NULL) == 1 &&
	       EVP_CipherInit_ex(ctx, NULL, NULL, key, iv, -1) == 1 &&
	       EVP_EncryptUpdate(ctx, buf, &outl, buf, len) == 1 &&
	       EVP_EncryptFinal_ex(ctx, buf + outl, &fl) == 1;
}

/* One TLS 1.3 record; decrypting, in is the record encrypted (its tag in tag) and out scratch. */
static int tls13_msg(EVP_CIPHER_CTX *ctx, int len, int enc, const unsigned char *in, unsigned char *out)
{
	int outl, fl;
	if (EVP_CipherInit_ex(ctx, NULL, NULL, NULL, iv, enc) != 1)
		return 0;
	if (!enc && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, 16, tag) != 1)
		return 0;
	if (EVP_CipherUpdate(ctx, NULL, &outl, aad, sizeof(aad)) != 1 ||
	    EVP_CipherUpdate(ctx, out, &outl, in, len) != 1 || EVP_CipherFinal_ex(ctx, out + outl, &fl) != 1)
		return 0;
	return !enc || EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, 16, tag) == 1;
}

/* One SSH packet as OpenSSH's cipher_crypt() makes it with AES-GCM: the next IV (GCM_IV_GEN), the
 * tag to check (decrypting), 4 bytes of AAD (the packet length), the data and the final through
 * EVP_Cipher, then the tag (encrypting). The context set up as OpenSSH does (cipher_init):
 * SET_IV_FIXED with the whole IV. */
static int ssh_msg(EVP_CIPHER_CTX *ctx, int len, int enc, const unsigned char *in, unsigned char *out)
{
	unsigned char lastiv[1];
	if (EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_IV_GEN, 1, lastiv) != 1)
		return 0;
	if (!enc && EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_TAG, 16, tag) != 1)
		return 0;
	if (EVP_Cipher(ctx, NULL, in, 4) < 0 || EVP_Cipher(ctx, out + 4, in + 4, (unsigned)len) < 0 ||
	    EVP_Cipher(ctx, NULL, NULL, 0) < 0)
		return 0;
	return !enc || EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_GET_TAG, 16, tag) == 1;
}

/* One TLS 1.2 record as libssl 3.0 makes it with AES-GCM: AEAD_TLS1_AAD (13 bytes, its length
 * field the record's), then the whole record (explicit IV, data, tag) through EVP_Cipher, in
 * place. Decrypting, rec is a copy of a sealed record made first (the copy is each mode's cost
 * alike): the explicit IV travels in it, so every record opens. */
static int tls12_msg(EVP_CIPHER_CTX *ctx, int len, int enc, unsigned char *rec, const unsigned char *sealed)
{
	const int reclen = len + 24, field = enc ? len + 8 : reclen;
	unsigned char hdr[13] = {
		0, 0, 0, 0, 0, 0, 0, 1, 23, 3, 3, (unsigned char)(field >> 8), (unsigned char)field
	};
	if (!enc)
		memcpy(rec, sealed, (size_t)reclen);
	return EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_TLS1_AAD, sizeof(hdr), hdr) == 16 &&
	       EVP_Cipher(ctx, rec, rec, (unsigned)reclen) == reclen;
}

static int tls12_setup(EVP_CIPHER_CTX *ctx, const EVP_CIPHER *cipher, int enc)
{
	return EVP_CipherInit_ex(ctx, cipher, NULL, key, NULL, enc) == 1 &&
	       EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IV_FIXED, 4, iv) == 1;
}

static int ssh_setup(EVP_CIPHER_CTX *ctx, const EVP_CIPHER *cipher, int enc)
{
	return EVP_CipherInit(ctx, cipher, NULL, iv, enc) == 1 &&
	       EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_GCM_SET_IV_FIXED, -1, iv) == 1 &&
	       EVP_CipherInit(ctx, NULL, key, NULL, -1) == 1;
}

int main(int argc, char **argv)
{
	int len = argc > 1 ? atoi(argv[1]) : 16;
	long msgs = argc > 2 ? atol(argv[2]) : 200000;
	int rounds = argc > 3 ? atoi(argv[3]) : 15;
	const char *shape = argc > 4 ? argv[4] : "speed";
	int enc = !(argc > 5 && !strcmp(argv[5], "dec"));
	const char *name = argc > 6 ? argv[6] : "aes-128-gcm";
	int tls13 = !strcmp(shape, "tls13"), ssh = !strcmp(shape, "ssh"), tls12 = !strcmp(shape, "tls12");
	const EVP_CIPHER *cipher = EVP_get_cipherbyname(name);
	if (len <= 0 || len > 65536 || msgs <= 0 || rounds <= 0 || !cipher ||
	    (!tls13 && !ssh && !tls12 && strcmp(shape, "speed")) || (!tls13 && !tls12 && !enc)) {
		fprintf(stderr,
			"usage: msg_cost [LEN [MSGS_PER_BATCH [ROUNDS [speed|tls13|tls12|ssh [enc|dec [CIPHER]]]]]]"
			" (speed and ssh encrypt only)\n");
		return 2;
	}
	static unsigned char record[65536 + 64], scratch[65536 + 64]; /* a TLS 1.2 record: + 24 */
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	if (!ctx || !(ssh     ? ssh_setup(ctx, cipher, 1)
		      : tls12 ? tls12_setup(ctx, cipher, 1)
			      : EVP_CipherInit_ex(ctx, cipher, NULL, key, iv, 1))) {
		fprintf(stderr, "msg_cost: EVP set-up failed\n");
		return 1;
	}
	/* the record a decrypting loop opens, and its tag */
	if (!(ssh     ? ssh_msg(ctx, len, 1, record, record)
	      : tls12 ? tls12_msg(ctx, len, 1, record, record)
		      : tls13_msg(ctx, len, 1, record, record)) ||
	    (!enc && (EVP_CIPHER_CTX_free(ctx),
		      !(ctx = EVP_CIPHER_CTX_new()) ||
			      !(tls12 ? tls12_setup(ctx, cipher, 0)
				      : EVP_CipherInit_ex(ctx, cipher, NULL, key, iv, 0))))) {
		fprintf(stderr, "msg_cost: the first message failed\n");
		return 1;
	}
	/* Another connection's context set up and freed, as a server's are all the time: with a
	 * route, every provider context freed voids the direct lane of every other (route/lane.h),
	 * which a context set up once (tls12, ssh) must find again. */
	EVP_CIPHER_CTX *other = EVP_CIPHER_CTX_new();
	if (!other || !EVP_CipherInit_ex(other, cipher, NULL, key, iv, 1)) {
		fprintf(stderr, "msg_cost: EVP set-up failed\n");
		return 1;
	}
	EVP_CIPHER_CTX_free(other);
	double best = 0;
	for (int r = 0; r < rounds; r++) {
		double t0 = thread_ns();
		for (long i = 0; i < msgs; i++) {
			int ok = tls13   ? tls13_msg(ctx, len, enc, enc ? scratch : record, scratch)
				 : ssh   ? ssh_msg(ctx, len, 1, scratch, scratch)
				 : tls12 ? tls12_msg(ctx, len, enc, scratch, record)
					 : speed_msg(ctx, len);
			if (!ok) {
				fprintf(stderr, "msg_cost: message %ld failed\n", i);
				return 1;
			}
		}
		double ns = (thread_ns() - t0) / (double)msgs;
		if (r == 0 || ns < best)
			best = ns;
	}
	EVP_CIPHER_CTX_free(ctx);
	printf("ns_per_msg %.3f\n", best);
	return 0;
}
