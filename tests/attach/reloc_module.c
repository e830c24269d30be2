/* SPDX-License-Identifier: MIT */
/*
 * reloc_module.c - a module the loader takes milliseconds to relocate (tests/attach/reloaded.py):
 * 32,768 absolute addresses of libcrypto functions, each a symbol lookup at load, naming eight
 * functions in turn so that the loader's one-entry lookup cache misses. A module is in the
 * loader's list from its mapping on; a patch of its slots before its relocation is over would be
 * undone by it (gotpatch.c, patch_modules). Its one call, EVP_EncryptUpdate, goes through its
 * own import slot.
 */
#include <openssl/evp.h>

#define EIGHT                                                                                                \
	(const void *)EVP_EncryptInit_ex, (const void *)EVP_CIPHER_CTX_new, (const void *)EVP_aes_128_gcm,   \
		(const void *)EVP_CIPHER_CTX_free, (const void *)EVP_aes_128_ctr,                            \
		(const void *)EVP_CIPHER_CTX_ctrl, (const void *)EVP_aes_256_gcm,                            \
		(const void *)EVP_EncryptFinal_ex
#define X4(...) __VA_ARGS__, __VA_ARGS__, __VA_ARGS__, __VA_ARGS__
#define X64(...) X4(X4(X4(__VA_ARGS__)))
#define X4096(...) X64(X64(__VA_ARGS__))

const void *const reloc_module_addresses[] = { X4096(EIGHT) };

int reloc_module_seal(EVP_CIPHER_CTX *ctx, unsigned char *out, const unsigned char *in, int n)
{
	int len = 0;
	return EVP_EncryptUpdate(ctx, out, &len, in, n) == 1 ? len : -1;
}
