/* SPDX-License-Identifier: MIT */
/* rel_plugin.c - a plugin linked with libcrypto, dlopen'd RTLD_LOCAL by rel_late: its EVP calls
 * go through normal symbol lookup (global scope first), where the preload's hooks sit. */
#include <openssl/evp.h>
#include <string.h>

__attribute__((visibility("default"))) int rel_plugin_run(int n)
{
	static const unsigned char key[16] = "Uz3$Va5#Wb7@Xc9!", iv[16] = "Rd1%Se3^Tf5&Ug7*";
	unsigned char in[64], out[96];
	int outl;
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();

	memset(in, 3, sizeof(in));
	if (!ctx || EVP_EncryptInit_ex(ctx, EVP_aes_128_cbc(), NULL, key, iv) != 1)
		return 1;
	for (int i = 0; i < n; i++)
		if (EVP_EncryptUpdate(ctx, out, &outl, in, 64) != 1)
			return 1;
	EVP_CIPHER_CTX_free(ctx);
	return 0;
}
