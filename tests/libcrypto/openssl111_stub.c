/* SPDX-License-Identifier: MIT */
/*
 * openssl111_stub.c - a libcrypto.so.1.1 to link against, never to run: the low-level entry
 * points examples/lowlevel_aes.c and tests/route-kernel/lowlevel_diff.c call, versioned
 * OPENSSL_1_1_0 as OpenSSL 1.1 exports them (openssl111_stub.map). The programs linked with it
 * run on the real 1.1.1w libcrypto the libcrypto suite fetches (LD_LIBRARY_PATH), so that the
 * same sources test cryptrace on 1.1.1 as on this host's 3.0; the bodies here are never called.
 * Also the EVP calls of foreign_plugin.c (a plugin bound to its own 1.1 libcrypto).
 */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/aes.h>
#include <openssl/evp.h>
#include <openssl/modes.h>

#define STUB_VOID(name, ...)                                                                                 \
	void name(__VA_ARGS__)                                                                               \
	{                                                                                                    \
	}
#define STUB_INT(name, ...)                                                                                  \
	int name(__VA_ARGS__)                                                                                \
	{                                                                                                    \
		return -1;                                                                                   \
	}

STUB_INT(AES_set_encrypt_key, const unsigned char *k, const int bits, AES_KEY *key)
STUB_INT(AES_set_decrypt_key, const unsigned char *k, const int bits, AES_KEY *key)
STUB_VOID(AES_encrypt, const unsigned char *in, unsigned char *out, const AES_KEY *key)
STUB_VOID(AES_decrypt, const unsigned char *in, unsigned char *out, const AES_KEY *key)
STUB_VOID(AES_ecb_encrypt, const unsigned char *in, unsigned char *out, const AES_KEY *key, const int enc)
STUB_VOID(AES_cbc_encrypt, const unsigned char *in, unsigned char *out, size_t length, const AES_KEY *key,
	  unsigned char *ivec, const int enc)
STUB_VOID(AES_cfb128_encrypt, const unsigned char *in, unsigned char *out, size_t length, const AES_KEY *key,
	  unsigned char *ivec, int *num, const int enc)
STUB_VOID(AES_cfb1_encrypt, const unsigned char *in, unsigned char *out, size_t length, const AES_KEY *key,
	  unsigned char *ivec, int *num, const int enc)
STUB_VOID(AES_cfb8_encrypt, const unsigned char *in, unsigned char *out, size_t length, const AES_KEY *key,
	  unsigned char *ivec, int *num, const int enc)
STUB_VOID(AES_ofb128_encrypt, const unsigned char *in, unsigned char *out, size_t length, const AES_KEY *key,
	  unsigned char *ivec, int *num)
STUB_VOID(AES_ige_encrypt, const unsigned char *in, unsigned char *out, size_t length, const AES_KEY *key,
	  unsigned char *ivec, const int enc)
STUB_VOID(AES_bi_ige_encrypt, const unsigned char *in, unsigned char *out, size_t length, const AES_KEY *key,
	  const AES_KEY *key2, const unsigned char *ivec, const int enc)
STUB_INT(AES_wrap_key, AES_KEY *key, const unsigned char *iv, unsigned char *out, const unsigned char *in,
	 unsigned int inlen)
STUB_INT(AES_unwrap_key, AES_KEY *key, const unsigned char *iv, unsigned char *out, const unsigned char *in,
	 unsigned int inlen)
STUB_VOID(CRYPTO_ctr128_encrypt, const unsigned char *in, unsigned char *out, size_t len, const void *key,
	  unsigned char ivec[16], unsigned char ecount_buf[16], unsigned int *num, block128_f block)

/* foreign_plugin.c's EVP calls */
EVP_CIPHER_CTX *EVP_CIPHER_CTX_new(void)
{
	return NULL;
}
STUB_VOID(EVP_CIPHER_CTX_free, EVP_CIPHER_CTX *c)
const EVP_CIPHER *EVP_aes_128_cbc(void)
{
	return NULL;
}
STUB_INT(EVP_EncryptInit_ex, EVP_CIPHER_CTX *c, const EVP_CIPHER *cipher, ENGINE *impl,
	 const unsigned char *key, const unsigned char *iv)
STUB_INT(EVP_EncryptUpdate, EVP_CIPHER_CTX *c, unsigned char *out, int *outl, const unsigned char *in,
	 int inl)
STUB_INT(EVP_EncryptFinal_ex, EVP_CIPHER_CTX *c, unsigned char *out, int *outl)
