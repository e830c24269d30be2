/* SPDX-License-Identifier: MIT */
/*
 * rand_key_check.c - EVP_CIPHER_CTX_rand_key on a routed context. OpenSSL draws the key from the
 * DRBG of the cipher's provider's library context; the route's provider lives in a private one,
 * which once had no DRBG: rand_key failed and `openssl speed -evp aes-256-xts` was left with an
 * uninitialised key (equal halves under ASan's malloc fill, refused by XTS). Run under the preload
 * with CRYPTRACE_ROUTE=aes-*=aesni (tests/route/meson.build): two keys drawn for each cipher
 * differ.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <openssl/evp.h>

static void test_two_random_keys_differ(void **state)
{
	const char *name = *state;
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	const EVP_CIPHER *c = EVP_get_cipherbyname(name);
	unsigned char a[64], b[64];
	memset(a, 0xbe, sizeof(a));
	memset(b, 0xbe, sizeof(b));
	assert_non_null(ctx);
	assert_non_null(c);
	assert_int_equal(EVP_CipherInit_ex(ctx, c, NULL, NULL, NULL, 1), 1);
	assert_int_equal(EVP_CIPHER_CTX_rand_key(ctx, a), 1);
	assert_int_equal(EVP_CIPHER_CTX_rand_key(ctx, b), 1);
	const int klen = EVP_CIPHER_CTX_get_key_length(ctx);
	assert_in_range(klen, 1, sizeof(a));
	assert_memory_not_equal(a, b, (size_t)klen);
	EVP_CIPHER_CTX_free(ctx);
}

int main(void)
{
#define RAND_KEY(cipher)                                                                                     \
	{                                                                                                    \
		.name = "rand_key " cipher, .test_func = test_two_random_keys_differ,                        \
		.initial_state = cipher                                                                      \
	}
	const struct CMUnitTest tests[] = {
		RAND_KEY("AES-256-XTS"),
		RAND_KEY("AES-128-CBC"),
		RAND_KEY("AES-256-GCM"),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
