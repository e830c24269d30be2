/* SPDX-License-Identifier: MIT */
/*
 * profile_loop.c - EVP encryption of 16 KiB requests for a given time: CPU work whose code the
 * launcher's profile must name (tests/profile/). Built against the shared libcrypto, and, where
 * libcrypto.a and a static libc exist, as a static executable that no preload can enter.
 * usage: profile_loop SECONDS [CIPHER]; prints "encrypted N bytes".
 */
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	static const unsigned char key[32] = "profile-loop key, not a secret.";
	static const unsigned char iv[16] = "profile-loop iv";
	static unsigned char in[16384], out[16384 + 32];
	double seconds = argc > 1 ? atof(argv[1]) : 1;
	const EVP_CIPHER *cipher = EVP_get_cipherbyname(argc > 2 ? argv[2] : "aes-128-cbc");
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	if (!cipher || !ctx || EVP_EncryptInit_ex(ctx, cipher, NULL, key, iv) != 1)
		return 1;
	memset(in, 0x5a, sizeof(in));
	unsigned long long total = 0;
	double end = now() + seconds;
	int outl;
	do {
		for (int i = 0; i < 64; i++) {
			if (EVP_EncryptUpdate(ctx, out, &outl, in, (int)sizeof(in)) != 1)
				return 1;
			total += (unsigned long long)outl;
		}
	} while (now() < end);
	EVP_CIPHER_CTX_free(ctx);
	printf("encrypted %llu bytes\n", total);
	return 0;
}
