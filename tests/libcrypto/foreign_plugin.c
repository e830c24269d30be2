/* SPDX-License-Identifier: MIT */
/*
 * foreign_plugin.c - a plugin with its own libcrypto: built against OpenSSL 1.1's EVP API (linked
 * with the stub libcrypto.so.1.1, run on the real 1.1.1w), loaded RTLD_LOCAL by foreign_host into
 * a process whose first libcrypto is another version. Encrypts 64 bytes of 'A' with AES-128-CBC
 * (key 00..0f, IV 0) through EVP and returns the ciphertext's length.
 */
#include <openssl/evp.h>
#include <string.h>

int plugin_encrypt(unsigned char *out);

int plugin_encrypt(unsigned char *out)
{
	unsigned char key[16], iv[16] = { 0 }, in[64];
	for (int i = 0; i < 16; i++)
		key[i] = (unsigned char)i;
	memset(in, 'A', sizeof(in));
	EVP_CIPHER_CTX *c = EVP_CIPHER_CTX_new();
	int n = 0, m = 0;
	if (!c || !EVP_EncryptInit_ex(c, EVP_aes_128_cbc(), NULL, key, iv) ||
	    !EVP_EncryptUpdate(c, out, &n, in, sizeof(in)) || !EVP_EncryptFinal_ex(c, out + n, &m)) {
		EVP_CIPHER_CTX_free(c);
		return -1;
	}
	EVP_CIPHER_CTX_free(c);
	return n + m;
}
