/* SPDX-License-Identifier: MIT */
/*
 * static_evp.c - EVP aes-128-cbc encryption of 64 KiB in a program that carries OpenSSL inside
 * itself: built once as a static executable and once as a dynamic one linked with libcrypto.a.
 * Neither goes through the shared libcrypto, so cryptrace sees none of these calls and must say
 * why (nothing-intercepted naming the statically linked OpenSSL). Prints "encrypted N bytes".
 */
#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
	static const unsigned char key[16] = "Qp7!Rs9@Tu1#Vw3$", iv[16] = "Xy5%Za7^Bc9&De1*";
	static unsigned char in[4096], out[4096 + 16];
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	long total = 0;
	int outl;

	memset(in, 0x5a, sizeof(in));
	if (!ctx || EVP_EncryptInit_ex(ctx, EVP_aes_128_cbc(), NULL, key, iv) != 1)
		return 1;
	for (int i = 0; i < 16; i++) {
		if (EVP_EncryptUpdate(ctx, out, &outl, in, (int)sizeof(in)) != 1)
			return 1;
		total += outl;
	}
	EVP_CIPHER_CTX_free(ctx);
	printf("encrypted %ld bytes\n", total);
	return 0;
}
