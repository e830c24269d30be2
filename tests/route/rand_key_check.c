/* SPDX-License-Identifier: MIT */
/*
 * rand_key_check.c - EVP_CIPHER_CTX_rand_key on a routed context. OpenSSL draws the key from the
 * DRBG of the cipher's provider's library context; the route's provider lives in a private one,
 * which once had no DRBG: rand_key failed and `openssl speed -evp aes-256-xts` was left with an
 * uninitialised key (equal halves under ASan's malloc fill, refused by XTS). Run under the preload
 * with CRYPTRACE_ROUTE=aes-*=aesni (tests/route/meson.build); exit 0 when the key is random.
 */
#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>

int main(void)
{
	static const char *const names[] = { "AES-256-XTS", "AES-128-CBC", "AES-256-GCM" };
	int bad = 0;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
		const EVP_CIPHER *c = EVP_get_cipherbyname(names[i]);
		unsigned char a[64], b[64];
		memset(a, 0xbe, sizeof(a));
		memset(b, 0xbe, sizeof(b));
		int ok = ctx && c && EVP_CipherInit_ex(ctx, c, NULL, NULL, NULL, 1) == 1 &&
			 EVP_CIPHER_CTX_rand_key(ctx, a) == 1 && EVP_CIPHER_CTX_rand_key(ctx, b) == 1;
		int klen = ctx ? EVP_CIPHER_CTX_get_key_length(ctx) : 0;
		ok = ok && klen > 0 && memcmp(a, b, (size_t)klen) != 0;
		printf("%s: %s\n", names[i], ok ? "ok: two random keys differ" : "FAIL: rand_key");
		bad |= !ok;
		EVP_CIPHER_CTX_free(ctx);
	}
	return bad;
}
