/* SPDX-License-Identifier: MIT */
/*
 * profile_stacks.c - a known call structure for the profile's call stacks (tests/profile/):
 * main -> encrypt_part -> EVP_EncryptUpdate (16 KiB AES-128-CBC) and main -> mac_part -> HMAC
 * (HMAC-SHA256 of 16 KiB), each ROUNDS times per round, built without frame pointers as Debian's
 * libraries are. Each function keeps a marker on its stack (the test checks that no stack byte
 * reaches the trace). usage: profile_stacks ROUNDS; prints "done N".
 */
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROUNDS_PER_CALL 64

/* On the stack, built at run time (not in the binary's data): "CT-STACK-MARKER-" + 8 hex */
static void put_marker(volatile char *m)
{
	static const char hex[] = "0123456789abcdef";
	const char *head = "CT-STACK-";
	for (int i = 0; head[i]; i++)
		m[i] = head[i];
	for (int i = 0; i < 7; i++)
		m[9 + i] = "MARKER-"[i];
	for (int i = 0; i < 8; i++)
		m[16 + i] = hex[(0x5eed1234u >> (28 - 4 * i)) & 15];
	m[24] = 0;
}

__attribute__((noinline)) static int encrypt_part(EVP_CIPHER_CTX *ctx, unsigned char *out,
						  const unsigned char *in, size_t n)
{
	volatile char marker[32];
	int outl, ok = 1;
	put_marker(marker);
	for (int i = 0; i < ROUNDS_PER_CALL && ok; i++)
		ok = EVP_EncryptUpdate(ctx, out, &outl, in, (int)n) == 1;
	__asm__ volatile("" : : "r"(marker) : "memory");
	return ok;
}

__attribute__((noinline)) static int mac_part(const unsigned char *key, const unsigned char *in, size_t n)
{
	volatile char marker[32];
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdl;
	int ok = 1;
	put_marker(marker);
	for (int i = 0; i < ROUNDS_PER_CALL && ok; i++)
		ok = HMAC(EVP_sha256(), key, 32, in, n, md, &mdl) != NULL;
	__asm__ volatile("" : : "r"(marker) : "memory");
	return ok;
}

int main(int argc, char **argv)
{
	static const unsigned char key[32] = "profile-stacks key, not secret";
	static const unsigned char iv[16] = "profile-stack iv";
	static unsigned char in[16384], out[16384 + 32];
	volatile char marker[32];
	int rounds = argc > 1 ? atoi(argv[1]) : 10;
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	put_marker(marker);
	if (!ctx || EVP_EncryptInit_ex(ctx, EVP_aes_128_cbc(), NULL, key, iv) != 1)
		return 1;
	memset(in, 0x5a, sizeof(in));
	for (int r = 0; r < rounds; r++)
		if (!encrypt_part(ctx, out, in, sizeof(in)) || !mac_part(key, in, sizeof(in)))
			return 1;
	EVP_CIPHER_CTX_free(ctx);
	__asm__ volatile("" : : "r"(marker) : "memory");
	printf("done %d\n", rounds);
	return 0;
}
