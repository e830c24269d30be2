/* SPDX-License-Identifier: MIT */
/*
 * test_gcrypt_impl.c - how preload/hooks/gcrypt_impl.c names a libgcrypt handle's path: the
 * cipher in OpenSSL's words, the key bits EVP would count, and the libgcrypt 1.10 code per mode
 * and direction from hardware-feature lists as gcry_get_config(0, "hwflist") prints them (this
 * machine's, with AES-NI denied, an ARM's, none), so that CPUs the suites do not run on are
 * named too.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>
#include <gcrypt.h>

#include "gcrypt_impl.h"

static const char *const zen3 =
	"hwflist:intel-bmi2:intel-ssse3:intel-sse4.1:intel-pclmul:intel-aesni:"
	"intel-rdrand:intel-avx:intel-avx2:intel-rdtsc:intel-shaext:intel-vaes-vpclmul:";
static const char *const denied =
	"hwflist:intel-bmi2:intel-ssse3:intel-sse4.1:intel-pclmul:intel-rdrand:"
	"intel-avx:intel-avx2:intel-rdtsc:intel-shaext:intel-vaes-vpclmul:";

static void test_names(void **state)
{
	(void)state;
	char b[48];
	ct_gcrypt_cipher_name(b, sizeof(b), GCRY_CIPHER_AES256, "AES256", GCRY_CIPHER_MODE_CFB);
	assert_string_equal(b, "aes-256-cfb");
	ct_gcrypt_cipher_name(b, sizeof(b), GCRY_CIPHER_AES, "AES", GCRY_CIPHER_MODE_XTS);
	assert_string_equal(b, "aes-128-xts");
	ct_gcrypt_cipher_name(b, sizeof(b), GCRY_CIPHER_AES192, "AES192", GCRY_CIPHER_MODE_GCM_SIV);
	assert_string_equal(b, "aes-192-gcm-siv");
	ct_gcrypt_cipher_name(b, sizeof(b), GCRY_CIPHER_AES256, "AES256", GCRY_CIPHER_MODE_AESWRAP);
	assert_string_equal(b, "id-aes256-wrap");
	/* other ciphers: libgcrypt's name lower-cased, with the mode unless a stream cipher */
	ct_gcrypt_cipher_name(b, sizeof(b), GCRY_CIPHER_TWOFISH, "TWOFISH", GCRY_CIPHER_MODE_CFB);
	assert_string_equal(b, "twofish-cfb");
	ct_gcrypt_cipher_name(b, sizeof(b), GCRY_CIPHER_CHACHA20, "CHACHA20", GCRY_CIPHER_MODE_STREAM);
	assert_string_equal(b, "chacha20");
	ct_gcrypt_cipher_name(b, sizeof(b), GCRY_CIPHER_CHACHA20, "CHACHA20", GCRY_CIPHER_MODE_POLY1305);
	assert_string_equal(b, "chacha20-poly1305");
	ct_gcrypt_cipher_name(b, sizeof(b), 999, NULL, GCRY_CIPHER_MODE_CBC);
	assert_string_equal(b, "gcry-cipher-999-cbc");
	assert_int_equal(ct_gcrypt_key_bits(GCRY_CIPHER_MODE_XTS, 64), 512);
	assert_int_equal(ct_gcrypt_key_bits(GCRY_CIPHER_MODE_CBC, 0), 0);
}

static void test_x86(void **state)
{
	(void)state;
	/* 1.10's VAES bulk functions: CBC and CFB decryption, CTR, GCM, OCB, XTS */
	assert_string_equal(ct_gcrypt_impl(zen3, GCRY_CIPHER_AES256, GCRY_CIPHER_MODE_CBC, false),
			    "gcrypt:aesni");
	assert_string_equal(ct_gcrypt_impl(zen3, GCRY_CIPHER_AES256, GCRY_CIPHER_MODE_CBC, true),
			    "gcrypt:vaes");
	assert_string_equal(ct_gcrypt_impl(zen3, GCRY_CIPHER_AES256, GCRY_CIPHER_MODE_CFB, false),
			    "gcrypt:aesni");
	assert_string_equal(ct_gcrypt_impl(zen3, GCRY_CIPHER_AES256, GCRY_CIPHER_MODE_CFB, true),
			    "gcrypt:vaes");
	assert_string_equal(ct_gcrypt_impl(zen3, GCRY_CIPHER_AES, GCRY_CIPHER_MODE_XTS, false),
			    "gcrypt:vaes");
	assert_string_equal(ct_gcrypt_impl(zen3, GCRY_CIPHER_AES, GCRY_CIPHER_MODE_CTR, false),
			    "gcrypt:vaes");
	assert_string_equal(ct_gcrypt_impl(zen3, GCRY_CIPHER_AES, GCRY_CIPHER_MODE_ECB, false),
			    "gcrypt:aesni");
	assert_string_equal(ct_gcrypt_impl(zen3, GCRY_CIPHER_AES, GCRY_CIPHER_MODE_CCM, false),
			    "gcrypt:aesni");
	/* AES-NI without AVX2 or VAES: every mode AES-NI */
	assert_string_equal(ct_gcrypt_impl("hwflist:intel-aesni:intel-vaes-vpclmul:", GCRY_CIPHER_AES,
					   GCRY_CIPHER_MODE_XTS, false),
			    "gcrypt:aesni");
	/* hwf.deny's intel-aesni: the vector-permute code, whatever else the list has */
	assert_string_equal(ct_gcrypt_impl(denied, GCRY_CIPHER_AES256, GCRY_CIPHER_MODE_XTS, true),
			    "gcrypt:ssse3");
	assert_string_equal(ct_gcrypt_impl("hwflist:", GCRY_CIPHER_AES256, GCRY_CIPHER_MODE_CBC, true),
			    "gcrypt:generic");
	/* "intel-aesni" only as a whole feature, not inside another's name */
	assert_string_equal(ct_gcrypt_impl("hwflist:intel-aesnix:", GCRY_CIPHER_AES, GCRY_CIPHER_MODE_CBC,
					   false),
			    "gcrypt:generic");
}

static void test_other(void **state)
{
	(void)state;
	assert_string_equal(ct_gcrypt_impl("hwflist:arm-neon:arm-aes:arm-pmull:", GCRY_CIPHER_AES,
					   GCRY_CIPHER_MODE_GCM, false),
			    "gcrypt:arm-ce");
	assert_string_equal(ct_gcrypt_impl("hwflist:padlock-aes:", GCRY_CIPHER_AES, GCRY_CIPHER_MODE_CBC,
					   false),
			    "gcrypt:padlock");
	/* padlock serves AES-128 only */
	assert_string_equal(ct_gcrypt_impl("hwflist:padlock-aes:", GCRY_CIPHER_AES256, GCRY_CIPHER_MODE_CBC,
					   false),
			    "gcrypt:generic");
	assert_string_equal(ct_gcrypt_impl(NULL, GCRY_CIPHER_AES, GCRY_CIPHER_MODE_CBC, false),
			    "gcrypt:unknown");
	assert_string_equal(ct_gcrypt_impl(zen3, GCRY_CIPHER_TWOFISH, GCRY_CIPHER_MODE_CFB, false), "gcrypt");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_x86),
		cmocka_unit_test(test_other),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
