/* SPDX-License-Identifier: MIT */
/*
 * boringssl_plugin.c - a plugin linked against BoringSSL's libcrypto, for boringssl_host (linked
 * against OpenSSL's) to dlopen RTLD_LOCAL: two libcryptos in one process, and BoringSSL's
 * EVP_AEAD calls made from a library the global scope does not hold. It seals
 * PLUGIN_SEALS messages of PLUGIN_LEN bytes with AES-128-GCM.
 */
#include <openssl/aead.h>
#include <stdint.h>

#include "boringssl_plugin.h"

int plugin_seal(void)
{
	static uint8_t key[16], nonce[12], in[PLUGIN_LEN], out[PLUGIN_LEN + EVP_AEAD_MAX_OVERHEAD];
	for (unsigned i = 0; i < sizeof(key); i++)
		key[i] = (uint8_t)(0x5a ^ (13 * i));
	EVP_AEAD_CTX *ctx =
		EVP_AEAD_CTX_new(EVP_aead_aes_128_gcm(), key, sizeof(key), EVP_AEAD_DEFAULT_TAG_LENGTH);
	if (!ctx)
		return -1;
	int sealed = 0;
	for (int i = 0; i < PLUGIN_SEALS; i++) {
		size_t n = 0;
		nonce[0] = (uint8_t)i;
		sealed += EVP_AEAD_CTX_seal(ctx, out, &n, sizeof(out), nonce, sizeof(nonce), in, sizeof(in),
					    NULL, 0);
	}
	EVP_AEAD_CTX_free(ctx);
	return sealed;
}
