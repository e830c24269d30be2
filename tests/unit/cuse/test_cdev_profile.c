/* SPDX-License-Identifier: MIT */
/*
 * test_cdev_profile.c - the CUSE server's pure logic on the host (no /dev/cuse needed): which
 * sessions each profile allows, the cipher table, and the IV left for chained requests (the CTR
 * counter's carries, which one guest run is unlikely to hit).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "cdev_profile.h"
#include "cryptodev_abi.h"

static struct cdev_profile get(const char *name)
{
	struct cdev_profile p;

	assert_true(cdev_profile_parse(name, &p));
	assert_string_equal(p.name, name);
	return p;
}

static void test_parse(void **state)
{
	struct cdev_profile p;

	(void)state;
	assert_int_equal(get("full").latency_us, 0);
	assert_int_equal(get("slow").latency_us, 200);
	assert_int_equal(get("glxsb").id, CDEV_PROFILE_GLXSB);
	assert_int_equal(get("eip93-like").id, CDEV_PROFILE_EIP93);
	assert_false(cdev_profile_parse("eip93", &p));
	assert_false(cdev_profile_parse("", &p));
}

static void test_full(void **state)
{
	struct cdev_profile p = get("full");

	(void)state;
	assert_int_equal(cdev_profile_allows(&p, CT_CRYPTO_AES_CBC, 32, 0), 0);
	assert_int_equal(cdev_profile_allows(&p, CT_CRYPTO_AES_XTS, 64, 0), 0);
	assert_int_equal(cdev_profile_allows(&p, CT_CRYPTO_AES_GCM, 16, 0), 0);
	/* Not ciphers this server has, hash sessions, and keys cryptodev-linux refuses itself. */
	assert_int_equal(cdev_profile_allows(&p, CT_CRYPTO_3DES_CBC, 24, 0), -EINVAL);
	assert_int_equal(cdev_profile_allows(&p, CT_CRYPTO_AES_CBC, 16, CT_CRYPTO_SHA1_HMAC), -EINVAL);
	assert_int_equal(cdev_profile_allows(&p, CT_CRYPTO_AES_CBC, 0, 0), -EINVAL);
	assert_int_equal(cdev_profile_allows(&p, CT_CRYPTO_AES_CBC, 65, 0), -EINVAL);
}

static void test_glxsb(void **state)
{
	struct cdev_profile p = get("glxsb");

	(void)state;
	assert_int_equal(cdev_profile_allows(&p, CT_CRYPTO_AES_CBC, 16, 0), 0);
	assert_int_equal(cdev_profile_allows(&p, CT_CRYPTO_AES_CBC, 24, 0), -EINVAL);
	assert_int_equal(cdev_profile_allows(&p, CT_CRYPTO_AES_CBC, 32, 0), -EINVAL);
	assert_int_equal(cdev_profile_allows(&p, CT_CRYPTO_AES_ECB, 16, 0), -EINVAL);
	assert_int_equal(cdev_profile_allows(&p, CT_CRYPTO_AES_CTR, 16, 0), -EINVAL);
	assert_int_equal(cdev_profile_allows(&p, CT_CRYPTO_AES_GCM, 16, 0), -EINVAL);
}

static void test_eip93(void **state)
{
	struct cdev_profile p = get("eip93-like");

	(void)state;
	for (uint32_t k = 16; k <= 32; k += 8)
		assert_int_equal(cdev_profile_allows(&p, CT_CRYPTO_AES_CBC, k, 0), -EINVAL);
	assert_int_equal(cdev_profile_allows(&p, CT_CRYPTO_AES_CTR, 16, 0), 0);
	assert_int_equal(cdev_profile_allows(&p, CT_CRYPTO_AES_CTR, 32, 0), 0);
	assert_int_equal(cdev_profile_allows(&p, CT_CRYPTO_AES_GCM, 16, 0), 0);
}

static void test_table(void **state)
{
	(void)state;
	assert_string_equal(cdev_cipher_find(CT_CRYPTO_AES_CBC)->kname, "cbc(aes)");
	assert_string_equal(cdev_cipher_find(CT_CRYPTO_AES_XTS)->kname, "xts(aes)");
	assert_true(cdev_cipher_find(CT_CRYPTO_AES_GCM)->aead);
	assert_int_equal(cdev_cipher_find(CT_CRYPTO_AES_GCM)->ivlen, 12);
	assert_int_equal(cdev_cipher_find(CT_CRYPTO_AES_CTR)->blocksize, 1);
	assert_int_equal(cdev_cipher_find(CT_CRYPTO_AES_ECB)->ivlen, 0);
	assert_null(cdev_cipher_find(CT_CRYPTO_DES_CBC));
}

static void test_next_iv_cbc(void **state)
{
	const struct cdev_cipher *cbc = cdev_cipher_find(CT_CRYPTO_AES_CBC);
	uint8_t src[48], dst[48], iv[16] = { 0 };

	(void)state;
	for (int i = 0; i < 48; i++) {
		src[i] = (uint8_t)i;
		dst[i] = (uint8_t)(200 + i);
	}
	cdev_next_iv(cbc, true, src, dst, 48, iv);
	assert_memory_equal(iv, dst + 32, 16); /* encrypt: the last ciphertext block */
	cdev_next_iv(cbc, false, src, dst, 48, iv);
	assert_memory_equal(iv, src + 32, 16); /* decrypt: the last ciphertext block, the input */
}

static void test_next_iv_ctr(void **state)
{
	const struct cdev_cipher *ctr = cdev_cipher_find(CT_CRYPTO_AES_CTR);
	uint8_t iv[16] = { 0 }, want[16] = { 0 };

	(void)state;
	/* A carry through three bytes: ...00 ff ff fe + 3 blocks (the last one partial). */
	iv[13] = 0xff, iv[14] = 0xff, iv[15] = 0xfe;
	want[12] = 0x01, want[15] = 0x01;
	cdev_next_iv(ctr, true, NULL, NULL, 33, iv);
	assert_memory_equal(iv, want, 16);

	/* The counter wraps at 2^128, as the kernel's crypto_inc does. */
	memset(iv, 0xff, 16);
	memset(want, 0, 16);
	want[15] = 0x0f;
	cdev_next_iv(ctr, false, NULL, NULL, 16 * 16, iv);
	assert_memory_equal(iv, want, 16);

	/* 64 KiB = 0x1000 blocks: a step wider than a byte, carrying out of byte 14. */
	memset(iv, 0, 16);
	iv[14] = 0xf8, iv[15] = 0x80;
	memset(want, 0, 16);
	want[13] = 0x01, want[14] = 0x08, want[15] = 0x80;
	cdev_next_iv(ctr, true, NULL, NULL, 65536, iv);
	assert_memory_equal(iv, want, 16);
}

static void test_next_iv_others(void **state)
{
	uint8_t iv[16], orig[16];

	(void)state;
	for (int i = 0; i < 16; i++)
		iv[i] = orig[i] = (uint8_t)(i * 3);
	cdev_next_iv(cdev_cipher_find(CT_CRYPTO_AES_XTS), true, NULL, NULL, 64, iv);
	assert_memory_equal(iv, orig, 16);
	cdev_next_iv(cdev_cipher_find(CT_CRYPTO_AES_ECB), true, NULL, NULL, 64, iv);
	assert_memory_equal(iv, orig, 16);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_parse),       cmocka_unit_test(test_full),
		cmocka_unit_test(test_glxsb),       cmocka_unit_test(test_eip93),
		cmocka_unit_test(test_table),       cmocka_unit_test(test_next_iv_cbc),
		cmocka_unit_test(test_next_iv_ctr), cmocka_unit_test(test_next_iv_others),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
