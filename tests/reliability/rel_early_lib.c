/* SPDX-License-Identifier: MIT */
/*
 * rel_early_lib.c - a library whose constructor does EVP work (250 x 64 bytes, aes-192-ctr).
 * rel_early links it, so the dynamic loader runs this constructor before the preload's own
 * (dependencies are initialised before LD_PRELOAD objects): hooks are entered before the
 * preload was initialised, and must count (or at least pass through) without crashing.
 */
#include <openssl/evp.h>
#include <string.h>

int rel_early_calls;

__attribute__((constructor)) static void rel_early_ctor(void)
{
	static const unsigned char key[24] = "Kp3=Lq5+Mr7-Ns9_Ot1)Pu3(", iv[16] = "Mz4!Na6@Ob8#Pc0$";
	unsigned char in[64], out[96];
	int outl;
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();

	memset(in, 9, sizeof(in));
	if (!ctx || EVP_EncryptInit_ex(ctx, EVP_aes_192_ctr(), NULL, key, iv) != 1)
		return;
	for (int i = 0; i < 250; i++)
		if (EVP_EncryptUpdate(ctx, out, &outl, in, 64) == 1)
			rel_early_calls++;
	EVP_CIPHER_CTX_free(ctx);
}
