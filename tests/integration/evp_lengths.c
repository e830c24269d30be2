/* SPDX-License-Identifier: MIT */
/*
 * evp_lengths.c - request-length patterns that exercise every branch of the preload's EVP
 * counting: runs of equal lengths (the fast path's cached length), alternating lengths, empty
 * requests, always-timed large requests, two contexts taking turns, the same ctx through
 * EVP_CipherUpdate and through EVP_Cipher (another entry), and EVP_Cipher without input (a
 * custom cipher's final: a phase of the operation, not a data call). Then AES-128-GCM messages
 * in the shapes of openssl speed (IV length ctrl, re-init with key and IV, data, final) and of
 * TLS 1.3 records (re-init with the IV, AAD, data, final, tag), on one context and on two taking
 * turns: the phase calls (inits, ctrls, finals) counted on the thread's cached context between
 * samples, and off it. Prints what each size bucket must hold, per entry, computed here from the
 * calls made and what OpenSSL returned:
 *   bucket entry=update|cipher low=N calls=N bytes=N
 *   errors entry=update|cipher n=N
 *   phase entry=cipher name=final calls=N
 *   gcm phase=key|message|aad|final|tag calls=N bytes=N   (aes-128-gcm, encrypt)
 *   gcm data calls=N bytes=N
 *   gcm errors n=N                                       (AAD calls that failed)
 *   ssh message|aad|final|tag|data calls=N bytes=N      (aes-128-gcm, decrypt, EVP_Cipher)
 *   ssh errors n=N                                       (finals that failed: a wrong tag)
 * A bucket is [2^(k-1), 2^k) bytes named by its low end (0 for empty requests), as in the trace.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include <openssl/evp.h>

enum { UPDATE, CIPHER, ENTRIES };
#define BUCKETS 40

static unsigned long long calls[ENTRIES][BUCKETS], bytes[ENTRIES][BUCKETS], errors[ENTRIES];
static unsigned long long finals;
static unsigned char in[1 << 16], out[(1 << 16) + 64];

static unsigned bucket_of(unsigned long long n)
{
	unsigned b = 0;
	while (n) {
		b++;
		n >>= 1;
	}
	return b;
}

static void note(int entry, long long len)
{
	unsigned long long n = len > 0 ? (unsigned long long)len : 0;
	calls[entry][bucket_of(n)]++;
	bytes[entry][bucket_of(n)] += n;
}

static void update(EVP_CIPHER_CTX *ctx, int len, int how)
{
	int outl = 0, r;
	note(UPDATE, len);
	if (how == 0)
		r = EVP_EncryptUpdate(ctx, out, &outl, in, len);
	else
		r = EVP_CipherUpdate(ctx, out, &outl, in, len);
	if (r != 1)
		errors[UPDATE]++;
}

static void cipher(EVP_CIPHER_CTX *ctx, const unsigned char *src, unsigned len)
{
	if (src)
		note(CIPHER, (long long)len);
	else
		finals++;
	int r = EVP_Cipher(ctx, out, src, len);
	if (!(r > 0 || (r == 0 && !src)))
		errors[CIPHER]++;
}

/* The GCM messages' expected counts: per phase (enum order of the trace: key, message, aad,
 * final, tag), and the data calls. */
static const char *const gcm_phase_names[] = { "key", "message", "aad", "final", "tag" };
enum { G_KEY, G_MSG, G_AAD, G_FINAL, G_TAG, G_PHASES };
static unsigned long long gcm_calls[G_PHASES], gcm_bytes[G_PHASES], gcm_data_calls, gcm_data_bytes,
	gcm_errors;

static int gcm_message(EVP_CIPHER_CTX *ctx, bool speed_shape, int len)
{
	static const unsigned char key[16] = "gcm-key-0123456", aad[13] = "record-header";
	unsigned char iv[12] = "nonce-000000", tag[16];
	int outl = 0;
	iv[11] = (unsigned char)len;
	if (speed_shape) {
		if (EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_IVLEN, 12, NULL) != 1 ||
		    !EVP_EncryptInit_ex(ctx, NULL, NULL, key, iv))
			return 0;
		gcm_calls[G_MSG]++, gcm_calls[G_KEY]++;
	} else {
		if (!EVP_EncryptInit_ex(ctx, NULL, NULL, NULL, iv) ||
		    EVP_EncryptUpdate(ctx, NULL, &outl, aad, sizeof(aad)) != 1)
			return 0;
		gcm_calls[G_MSG]++, gcm_calls[G_AAD]++, gcm_bytes[G_AAD] += sizeof(aad);
	}
	if (EVP_EncryptUpdate(ctx, out, &outl, in, len) != 1 ||
	    EVP_EncryptFinal_ex(ctx, out + outl, &outl) != 1)
		return 0;
	gcm_data_calls++, gcm_data_bytes += (unsigned)len, gcm_calls[G_FINAL]++;
	if (!speed_shape) {
		if (EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, 16, tag) != 1)
			return 0;
		gcm_calls[G_TAG]++;
	}
	return 1;
}

static int gcm_messages(void)
{
	static const unsigned char key[16] = "gcm-key-0123456";
	EVP_CIPHER_CTX *g = EVP_CIPHER_CTX_new(), *h = EVP_CIPHER_CTX_new();
	int ok = g && h && EVP_EncryptInit_ex(g, EVP_aes_128_gcm(), NULL, key, NULL) &&
		 EVP_EncryptInit_ex(h, EVP_aes_128_gcm(), NULL, key, NULL);
	gcm_calls[G_KEY] += 2;
	for (int i = 0; ok && i < 1500; i++)
		ok = gcm_message(g, true, 16); /* openssl speed's loop: one context, one length */
	for (int i = 0; ok && i < 1500; i++)
		ok = gcm_message(g, false, 16 + i % 2); /* TLS 1.3 records */
	for (int i = 0; ok && i < 400; i++) {
		/* a record, then AAD of a negative length, which fails: an error on the path */
		int outl;
		ok = gcm_message(g, false, 16);
		if (ok && EVP_EncryptUpdate(g, NULL, &outl, in, -1) == 1)
			ok = 0;
		gcm_calls[G_AAD]++, gcm_errors++;
	}
	for (int i = 0; ok && i < 600; i++)
		ok = gcm_message(i % 2 ? g : h, i % 3 == 0, 32); /* two contexts taking turns */
	for (int i = 0; ok && i < 300; i++)
		ok = gcm_message(h, false, 3000); /* large: every data call timed */
	EVP_CIPHER_CTX_free(g);
	EVP_CIPHER_CTX_free(h);
	return ok;
}

/*
 * OpenSSH's AES-GCM packets, decrypting (cipher_crypt): GCM_IV_GEN, a tag (a wrong one, so that
 * every packet's final fails), 4 bytes of AAD, the data (16 and 17 bytes in turn) and the final,
 * all through EVP_Cipher on one context: the AAD, the data of either length and the final each
 * miss the fast path's cached key, and the failed finals are errors.
 */
enum { S_MSG, S_AAD, S_FINAL, S_TAG, S_DATA, S_KINDS };
static const char *const ssh_kind_names[] = { "message", "aad", "final", "tag", "data" };
static unsigned long long ssh_calls[S_KINDS], ssh_bytes[S_KINDS], ssh_errors;

static int ssh_packets(void)
{
	static const unsigned char key[16] = "ssh-key-0123456", iv[12] = "ssh-iv-00000";
	unsigned char tag[16] = { 0 }, lastiv[1];
	EVP_CIPHER_CTX *d = EVP_CIPHER_CTX_new();
	int ok = d && EVP_CipherInit(d, EVP_aes_128_gcm(), NULL, iv, 0) == 1 &&
		 EVP_CIPHER_CTX_ctrl(d, EVP_CTRL_GCM_SET_IV_FIXED, -1, (void *)iv) == 1 &&
		 EVP_CipherInit(d, NULL, key, NULL, -1) == 1;
	ssh_calls[S_MSG]++;
	for (int i = 0; ok && i < 600; i++) {
		const unsigned len = 16 + (unsigned)(i % 2);
		ok = EVP_CIPHER_CTX_ctrl(d, EVP_CTRL_GCM_IV_GEN, 1, lastiv) == 1 &&
		     EVP_CIPHER_CTX_ctrl(d, EVP_CTRL_GCM_SET_TAG, 16, tag) == 1 &&
		     EVP_Cipher(d, NULL, in, 4) == 4 && EVP_Cipher(d, out, in, len) == (int)len;
		ssh_calls[S_MSG]++, ssh_calls[S_TAG]++, ssh_calls[S_AAD]++, ssh_bytes[S_AAD] += 4;
		ssh_calls[S_DATA]++, ssh_bytes[S_DATA] += len;
		if (ok && EVP_Cipher(d, NULL, NULL, 0) < 0)
			ssh_errors++;
		ssh_calls[S_FINAL]++;
	}
	EVP_CIPHER_CTX_free(d);
	return ok && ssh_errors == ssh_calls[S_FINAL];
}

int main(void)
{
	static const unsigned char key[16] = "0123456789abcdef", iv[16] = "fedcba9876543210";
	EVP_CIPHER_CTX *a = EVP_CIPHER_CTX_new(), *b = EVP_CIPHER_CTX_new();
	if (!a || !b || !EVP_EncryptInit_ex(a, EVP_aes_128_ctr(), NULL, key, iv) ||
	    !EVP_EncryptInit_ex(b, EVP_aes_128_ctr(), NULL, key, iv)) {
		fprintf(stderr, "evp_lengths: EVP set-up failed\n");
		return 1;
	}
	for (int i = 0; i < 1000; i++)
		update(a, 16, 0); /* one length: the cached fast path */
	for (int i = 0; i < 500; i++)
		update(a, i % 2 ? 17 : 16, 0); /* alternating: a length miss each time */
	for (int i = 0; i < 300; i++)
		update(a, 0, 0);
	for (int i = 0; i < 200; i++)
		update(a, 2000, 0); /* always timed */
	for (int i = 0; i < 200; i++)
		update(a, i % 3 ? 31 : 4096, 0);
	for (int i = 0; i < 400; i++)
		update(i % 2 ? a : b, 64, 0); /* two contexts taking turns */
	for (int i = 0; i < 250; i++)
		update(a, 1, 1); /* the same entry through EVP_CipherUpdate */
	for (int i = 0; i < 300; i++)
		cipher(a, in, 16); /* another entry on the same ctx */
	/* one length through both entries in turn: the entry is part of the cached key */
	for (int i = 0; i < 200; i++)
		i % 2 ? cipher(a, in, 16) : update(a, 16, 0);
	for (int i = 0; i < 100; i++)
		cipher(a, NULL, 0); /* no input: a "final" (a phase), counted, never cached */
	for (int i = 0; i < 300; i++)
		update(a, 16, 0); /* back to the first entry */
	for (int i = 0; i < 5000; i++)
		update(a, 1 + i % 200, 0);
	EVP_CIPHER_CTX_free(a);
	EVP_CIPHER_CTX_free(b);
	if (!gcm_messages()) {
		fprintf(stderr, "evp_lengths: an AES-128-GCM message failed\n");
		return 1;
	}

	if (!ssh_packets()) {
		fprintf(stderr, "evp_lengths: an SSH packet went otherwise than expected\n");
		return 1;
	}

	static const char *const names[ENTRIES] = { "update", "cipher" };
	for (int e = 0; e < ENTRIES; e++) {
		for (unsigned k = 0; k < BUCKETS; k++)
			if (calls[e][k])
				printf("bucket entry=%s low=%llu calls=%llu bytes=%llu\n", names[e],
				       k ? 1ull << (k - 1) : 0, calls[e][k], bytes[e][k]);
		printf("errors entry=%s n=%llu\n", names[e], errors[e]);
	}
	printf("phase entry=cipher name=final calls=%llu\n", finals);
	for (int p = 0; p < G_PHASES; p++)
		printf("gcm phase=%s calls=%llu bytes=%llu\n", gcm_phase_names[p], gcm_calls[p],
		       gcm_bytes[p]);
	printf("gcm data calls=%llu bytes=%llu\n", gcm_data_calls, gcm_data_bytes);
	printf("gcm errors n=%llu\n", gcm_errors);
	for (int k = 0; k < S_KINDS; k++)
		printf("ssh %s calls=%llu bytes=%llu\n", ssh_kind_names[k], ssh_calls[k], ssh_bytes[k]);
	printf("ssh errors n=%llu\n", ssh_errors);
	return 0;
}
