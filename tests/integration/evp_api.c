/* SPDX-License-Identifier: MIT */
/*
 * evp_api.c - every hooked EVP init entry (EVP_{Encrypt,Decrypt,Cipher}Init{,_ex,_ex2}), each on
 * its own cipher, with the data entry that matches it; a context copy that goes on counting on
 * its original's path; a reset and re-init on another cipher; a failed decrypt Final. Prints
 *   expect api=evp cipher=<name> dir=<encrypt|decrypt> calls=<n> bytes=<n>
 * for each path, then `final_failures=N`. Exit 0 when OpenSSL accepted every call it should.
 */
#include <stdio.h>
#include <string.h>

#include <openssl/evp.h>

enum { CALLS = 37, LEN = 48 };
static const unsigned char key[32] = "0123456789abcdef0123456789abcdef", iv[16] = "fedcba9876543210";
static unsigned char in[4096], out[4096 + 32];

enum how { ENC, DEC, CIPHER_ENC, CIPHER_DEC };

static int updates(EVP_CIPHER_CTX *ctx, enum how how, int n)
{
	int outl;
	for (int i = 0; i < n; i++) {
		int ok = how == ENC   ? EVP_EncryptUpdate(ctx, out, &outl, in, LEN)
			 : how == DEC ? EVP_DecryptUpdate(ctx, out, &outl, in, LEN)
				      : EVP_CipherUpdate(ctx, out, &outl, in, LEN);
		if (!ok)
			return 0;
	}
	return 1;
}

static void expect(const char *cipher, const char *dir, unsigned long calls)
{
	printf("expect api=evp cipher=%s dir=%s calls=%lu bytes=%lu\n", cipher, dir, calls, calls * LEN);
}

int main(void)
{
	EVP_CIPHER *fetched = EVP_CIPHER_fetch(NULL, "AES-256-CBC", NULL);
	EVP_CIPHER *fetched2 = EVP_CIPHER_fetch(NULL, "AES-256-CTR", NULL);
	EVP_CIPHER *fetched3 = EVP_CIPHER_fetch(NULL, "AES-256-OFB", NULL);
	EVP_CIPHER_CTX *c[9];
	for (int i = 0; i < 9; i++)
		c[i] = EVP_CIPHER_CTX_new();
	int ok = fetched && fetched2 && fetched3 && EVP_EncryptInit(c[0], EVP_aes_128_cbc(), key, iv) &&
		 EVP_EncryptInit_ex(c[1], EVP_aes_192_cbc(), NULL, key, iv) &&
		 EVP_EncryptInit_ex2(c[2], fetched, key, iv, NULL) &&
		 EVP_DecryptInit(c[3], EVP_aes_128_ctr(), key, iv) &&
		 EVP_DecryptInit_ex(c[4], EVP_aes_192_ctr(), NULL, key, iv) &&
		 EVP_DecryptInit_ex2(c[5], fetched2, key, iv, NULL) &&
		 EVP_CipherInit(c[6], EVP_aes_128_ofb(), key, iv, 1) &&
		 EVP_CipherInit_ex(c[7], EVP_aes_192_ofb(), NULL, key, iv, 0) &&
		 EVP_CipherInit_ex2(c[8], fetched3, key, iv, 1, NULL);
	static const enum how hows[9] = { ENC, ENC, ENC, DEC, DEC, DEC, CIPHER_ENC, CIPHER_DEC, CIPHER_ENC };
	for (int i = 0; ok && i < 9; i++)
		ok = updates(c[i], hows[i], CALLS + i);

	/* a copy counts on its original's path (aes-128-cbc encrypt) */
	EVP_CIPHER_CTX *copy = EVP_CIPHER_CTX_new();
	ok = ok && copy && EVP_CIPHER_CTX_copy(copy, c[0]) && updates(copy, ENC, 5);
	/* reset, then the same ctx on another cipher: its new path */
	ok = ok && EVP_CIPHER_CTX_reset(c[1]) &&
	     EVP_EncryptInit_ex(c[1], EVP_aes_128_ecb(), NULL, key, NULL) && updates(c[1], ENC, 11);
	/* a decrypt whose padding is wrong: DecryptFinal fails (an error event, not a data call) */
	int outl, finals_failed = 0;
	EVP_CIPHER_CTX *bad = EVP_CIPHER_CTX_new();
	ok = ok && bad && EVP_DecryptInit_ex(bad, EVP_aes_128_cbc(), NULL, key, iv) &&
	     EVP_DecryptUpdate(bad, out, &outl, in, 32);
	if (ok && !EVP_DecryptFinal_ex(bad, out, &outl))
		finals_failed++;
	if (!ok) {
		fprintf(stderr, "evp_api: an EVP call failed\n");
		return 1;
	}
	expect("aes-128-cbc", "encrypt", CALLS + 0 + 5);
	expect("aes-192-cbc", "encrypt", CALLS + 1);
	expect("aes-256-cbc", "encrypt", CALLS + 2);
	expect("aes-128-ctr", "decrypt", CALLS + 3);
	expect("aes-192-ctr", "decrypt", CALLS + 4);
	expect("aes-256-ctr", "decrypt", CALLS + 5);
	expect("aes-128-ofb", "encrypt", CALLS + 6);
	expect("aes-192-ofb", "decrypt", CALLS + 7);
	expect("aes-256-ofb", "encrypt", CALLS + 8);
	expect("aes-128-ecb", "encrypt", 11);
	printf("expect api=evp cipher=aes-128-cbc dir=decrypt calls=1 bytes=32\n");
	printf("final_failures=%d\n", finals_failed);
	for (int i = 0; i < 9; i++)
		EVP_CIPHER_CTX_free(c[i]);
	EVP_CIPHER_CTX_free(copy);
	EVP_CIPHER_CTX_free(bad);
	EVP_CIPHER_free(fetched);
	EVP_CIPHER_free(fetched2);
	EVP_CIPHER_free(fetched3);
	return 0;
}
