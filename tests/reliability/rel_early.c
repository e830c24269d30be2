/* SPDX-License-Identifier: MIT */
/* rel_early.c - main program linked with rel_early_lib (whose constructor encrypts first), then
 * 300 x 64 bytes of aes-128-ctr of its own. Prints what ran, as expect lines. */
#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>

extern int rel_early_calls;

int main(void)
{
	static const unsigned char key[16] = "Qv5*Rw7&Sx9^Ty1%", iv[16] = "Gt6*Hu8&Iv0^Jw2%";
	unsigned char in[64], out[96];
	int outl;
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();

	memset(in, 1, sizeof(in));
	if (!ctx || EVP_EncryptInit_ex(ctx, EVP_aes_128_ctr(), NULL, key, iv) != 1)
		return 1;
	for (int i = 0; i < 300; i++)
		if (EVP_EncryptUpdate(ctx, out, &outl, in, 64) != 1)
			return 1;
	EVP_CIPHER_CTX_free(ctx);
	printf("expect api=evp cipher=aes-192-ctr dir=encrypt calls=%d bytes=%d\n", rel_early_calls,
	       rel_early_calls * 64);
	printf("expect api=evp cipher=aes-128-ctr dir=encrypt calls=300 bytes=19200\n");
	return rel_early_calls == 250 ? 0 : 1;
}
