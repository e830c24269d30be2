/* SPDX-License-Identifier: MIT */
/*
 * test_cryptodev_decode.c - the cryptodev decoders driven without a device: hand-built structs
 * for every ioctl, names and raw fallbacks, size-independent ioctl matching, OpenSSL names.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "kernel_decode.h"

static void test_ioctl_names(void **state)
{
	(void)state;
	assert_string_equal(ct_cdev_ioctl_name(CT_CRIOGET), "CRIOGET");
	assert_string_equal(ct_cdev_ioctl_name(CT_CIOCGSESSION), "CIOCGSESSION");
	assert_string_equal(ct_cdev_ioctl_name(CT_CIOCFSESSION), "CIOCFSESSION");
	assert_string_equal(ct_cdev_ioctl_name(CT_CIOCCRYPT), "CIOCCRYPT");
	assert_string_equal(ct_cdev_ioctl_name(CT_CIOCKEY), "CIOCKEY");
	assert_string_equal(ct_cdev_ioctl_name(CT_CIOCASYMFEAT), "CIOCASYMFEAT");
	assert_string_equal(ct_cdev_ioctl_name(CT_CIOCGSESSINFO), "CIOCGSESSINFO");
	assert_string_equal(ct_cdev_ioctl_name(CT_CIOCAUTHCRYPT), "CIOCAUTHCRYPT");
	assert_string_equal(ct_cdev_ioctl_name(CT_CIOCASYNCCRYPT), "CIOCASYNCCRYPT");
	assert_string_equal(ct_cdev_ioctl_name(CT_CIOCASYNCFETCH), "CIOCASYNCFETCH");
	/* The well-known 64-bit value of CIOCGSESSION (on a 32-bit build, the native one is the
	 * 32-bit program's), and the 32-bit program's (size 28). */
	assert_int_equal((unsigned long)CT_CIOCGSESSION, sizeof(void *) == 8 ? 0xc0306366ul : 0xc01c6366ul);
	assert_string_equal(ct_cdev_ioctl_name(0xc01c6366ul), "CIOCGSESSION");
	assert_int_equal(ct_cdev_ioctl_nr(0xc01c6366ul), CT_NR_CIOCGSESSION);
	/* Another type, or an unknown number of type 'c': no name. */
	assert_null(ct_cdev_ioctl_name(0x5401ul)); /* TCGETS */
	assert_int_equal(ct_cdev_ioctl_nr(0x5401ul), -1);
	assert_null(ct_cdev_ioctl_name(_IO('c', 200)));
}

static void test_alg_names(void **state)
{
	(void)state;
	assert_string_equal(ct_cdev_alg_name(11), "AES_CBC");
	assert_string_equal(ct_cdev_alg_name(21), "AES_CTR");
	assert_string_equal(ct_cdev_alg_name(22), "AES_XTS");
	assert_string_equal(ct_cdev_alg_name(23), "AES_ECB");
	assert_string_equal(ct_cdev_alg_name(50), "AES_GCM");
	assert_string_equal(ct_cdev_alg_name(7), "SHA1_HMAC");
	assert_null(ct_cdev_alg_name(9999));
	assert_string_equal(ct_cdev_op_name(CT_COP_ENCRYPT), "encrypt");
	assert_string_equal(ct_cdev_op_name(CT_COP_DECRYPT), "decrypt");
	assert_null(ct_cdev_op_name(7));
	assert_string_equal(ct_cdev_crk_name(CT_CRK_DH_COMPUTE_KEY), "DH_COMPUTE_KEY");
	assert_true(ct_cdev_alg_is_cipher(CT_CRYPTO_AES_CBC));
	assert_false(ct_cdev_alg_is_cipher(CT_CRYPTO_SHA1_HMAC));
}

static void test_openssl_names(void **state)
{
	char b[32];
	(void)state;
	assert_true(ct_cdev_openssl_cipher(CT_CRYPTO_AES_CBC, 16, b, sizeof(b)));
	assert_string_equal(b, "aes-128-cbc");
	assert_true(ct_cdev_openssl_cipher(CT_CRYPTO_AES_CBC, 32, b, sizeof(b)));
	assert_string_equal(b, "aes-256-cbc");
	assert_true(ct_cdev_openssl_cipher(CT_CRYPTO_AES_CTR, 24, b, sizeof(b)));
	assert_string_equal(b, "aes-192-ctr");
	assert_true(ct_cdev_openssl_cipher(CT_CRYPTO_AES_XTS, 32, b, sizeof(b)));
	assert_string_equal(b, "aes-128-xts");
	assert_true(ct_cdev_openssl_cipher(CT_CRYPTO_AES_XTS, 64, b, sizeof(b)));
	assert_string_equal(b, "aes-256-xts");
	assert_false(ct_cdev_openssl_cipher(CT_CRYPTO_AES_XTS, 48, b, sizeof(b)));
	assert_true(ct_cdev_openssl_cipher(CT_CRYPTO_AES_ECB, 16, b, sizeof(b)));
	assert_string_equal(b, "aes-128-ecb");
	assert_true(ct_cdev_openssl_cipher(CT_CRYPTO_AES_GCM, 16, b, sizeof(b)));
	assert_string_equal(b, "aes-128-gcm");
	assert_false(ct_cdev_openssl_cipher(CT_CRYPTO_AES_CBC, 17, b, sizeof(b)));
	assert_string_equal(b, "");
	assert_true(ct_cdev_openssl_cipher(CT_CRYPTO_3DES_CBC, 24, b, sizeof(b)));
	assert_string_equal(b, "des-ede3-cbc");
	assert_false(ct_cdev_openssl_cipher(CT_CRYPTO_SHA1_HMAC, 20, b, sizeof(b)));
}

static void test_session(void **state)
{
	char b[160];
	uint8_t key[32] = { 0xaa };
	struct ct_cdev_session_op s = {
		.cipher = CT_CRYPTO_AES_CBC,
		.keylen = 32,
		.key = key,
		.mac = 0,
		.ses = 77,
	};
	(void)state;
	ct_cdev_fmt_session(b, sizeof(b), &s, false);
	assert_string_equal(b, "cipher=AES_CBC keylen=32 (aes-256-cbc) mac=0");
	ct_cdev_fmt_session(b, sizeof(b), &s, true);
	assert_string_equal(b, "cipher=AES_CBC keylen=32 (aes-256-cbc) mac=0 ses=77");
	/* The seed-000 case: a key length the cipher cannot take, no OpenSSL name. */
	s.keylen = 17;
	ct_cdev_fmt_session(b, sizeof(b), &s, false);
	assert_string_equal(b, "cipher=AES_CBC keylen=17 mac=0");
	/* Unknown ids print raw; a mac prints its key length. */
	struct ct_cdev_session_op m = { .cipher = 0, .mac = CT_CRYPTO_SHA2_256_HMAC, .mackeylen = 64 };
	ct_cdev_fmt_session(b, sizeof(b), &m, false);
	assert_string_equal(b, "cipher=0 keylen=0 mac=SHA2_256_HMAC mackeylen=64");
	m.cipher = 4242;
	m.mac = 0;
	ct_cdev_fmt_session(b, sizeof(b), &m, false);
	assert_string_equal(b, "cipher=4242 keylen=0 mac=0");
	/* No key byte ever appears. */
	s.keylen = 32;
	ct_cdev_fmt_ioctl(b, sizeof(b), CT_CIOCGSESSION, &s);
	assert_string_equal(b, "op=CIOCGSESSION cipher=AES_CBC keylen=32 (aes-256-cbc) mac=0");
	assert_null(strstr(b, "aa"));
}

static void test_crypt(void **state)
{
	char b[160];
	uint8_t buf[64], iv[16];
	struct ct_cdev_crypt_op c = {
		.ses = 3,
		.op = CT_COP_ENCRYPT,
		.len = 4096,
		.src = buf,
		.dst = buf,
		.iv = iv,
	};
	(void)state;
	ct_cdev_fmt_ioctl(b, sizeof(b), CT_CIOCCRYPT, &c);
	assert_string_equal(b, "op=CIOCCRYPT ses=3 dir=encrypt len=4096 inplace");
	c.op = CT_COP_DECRYPT;
	c.dst = iv;
	c.iv = NULL;
	c.flags = CT_COP_FLAG_WRITE_IV | 0x100;
	ct_cdev_fmt_ioctl(b, sizeof(b), CT_CIOCCRYPT, &c);
	assert_string_equal(b, "op=CIOCCRYPT ses=3 dir=decrypt len=4096 flags=WRITE_IV|0x100 iv=none");
	c.op = 9;
	c.flags = 0;
	ct_cdev_fmt_ioctl(b, sizeof(b), CT_CIOCASYNCCRYPT, &c);
	assert_string_equal(b, "op=CIOCASYNCCRYPT ses=3 dir=9 len=4096 iv=none");
	ct_cdev_fmt_ioctl(b, sizeof(b), CT_CIOCASYNCFETCH, &c);
	assert_string_equal(b, "op=CIOCASYNCFETCH ses=3 dir=9 len=4096 iv=none");
}

static void test_auth_kop_misc(void **state)
{
	char b[200];
	(void)state;
	struct ct_cdev_crypt_auth_op a = {
		.ses = 5,
		.op = CT_COP_ENCRYPT,
		.len = 100,
		.auth_len = 13,
		.tag_len = 16,
		.iv_len = 12,
		.flags = CT_COP_FLAG_AEAD_TLS_TYPE,
	};
	ct_cdev_fmt_ioctl(b, sizeof(b), CT_CIOCAUTHCRYPT, &a);
	assert_string_equal(b,
			    "op=CIOCAUTHCRYPT ses=5 dir=encrypt len=100 auth_len=13 tag_len=16 "
			    "iv_len=12 flags=AEAD_TLS");
	struct ct_cdev_crypt_kop k = { .crk_op = CT_CRK_MOD_EXP, .crk_iparams = 3, .crk_oparams = 1 };
	k.crk_param[0].crp_nbits = 2048;
	k.crk_param[1].crp_nbits = 17;
	k.crk_param[2].crp_nbits = 2048;
	k.crk_param[3].crp_nbits = 2048;
	ct_cdev_fmt_ioctl(b, sizeof(b), CT_CIOCKEY, &k);
	assert_string_equal(b, "op=CIOCKEY crk_op=MOD_EXP iparams=3 oparams=1 nbits=2048,17,2048,2048");
	k.crk_op = 99;
	k.crk_iparams = 200; /* bogus counts are clamped, never read past the array */
	ct_cdev_fmt_ioctl(b, sizeof(b), CT_CIOCKEY, &k);
	assert_non_null(strstr(b, "crk_op=99 iparams=200 oparams=1"));
	uint32_t u = 3;
	ct_cdev_fmt_ioctl(b, sizeof(b), CT_CIOCFSESSION, &u);
	assert_string_equal(b, "op=CIOCFSESSION ses=3");
	ct_cdev_fmt_ioctl(b, sizeof(b), CT_CIOCASYMFEAT, &u);
	assert_string_equal(b, "op=CIOCASYMFEAT features=0x3 MOD_EXP|MOD_EXP_CRT");
	ct_cdev_fmt_ioctl(b, sizeof(b), CT_CRIOGET, &u);
	assert_string_equal(b, "op=CRIOGET fd=3");
	ct_cdev_fmt_ioctl(b, sizeof(b), CT_CIOCCRYPT, NULL);
	assert_string_equal(b, "op=CIOCCRYPT arg=NULL");
	ct_cdev_fmt_ioctl(b, sizeof(b), 0x5401ul, &u);
	assert_string_equal(b, "op=0x5401");
}

/* CIOCKEY as the hook records it after a success: counts and sizes, never the numbers. */
static void test_kop_sizes_only(void **state)
{
	char b[200];
	uint8_t secret[4] = { 0xde, 0xad, 0xbe, 0xef };
	struct ct_cdev_crypt_kop k = {
		.crk_op = CT_CRK_DH_COMPUTE_KEY, .crk_iparams = 3, .crk_oparams = 1, .crk_status = 0
	};
	(void)state;
	for (int i = 0; i < 4; i++)
		k.crk_param[i] = (struct ct_cdev_crparam){ .crp_p = secret, .crp_nbits = 32 };
	ct_cdev_fmt_kop(b, sizeof(b), &k);
	assert_string_equal(b, "crk_op=DH_COMPUTE_KEY iparams=3 oparams=1 nbits=32,32,32,32");
	assert_null(strstr(b, "de"));
	assert_null(strstr(b, "ef"));
	/* Every parameter slot, and no further even when the counts claim more. */
	k.crk_op = CT_CRK_DSA_VERIFY;
	k.crk_iparams = 7;
	k.crk_oparams = 9;
	for (int i = 0; i < CT_CRK_MAXPARAM; i++)
		k.crk_param[i].crp_nbits = (uint32_t)(i + 1);
	ct_cdev_fmt_kop(b, sizeof(b), &k);
	assert_string_equal(b, "crk_op=DSA_VERIFY iparams=7 oparams=9 nbits=1,2,3,4,5,6,7,8");
	k.crk_iparams = k.crk_oparams = 0;
	ct_cdev_fmt_kop(b, sizeof(b), &k);
	assert_string_equal(b, "crk_op=DSA_VERIFY iparams=0 oparams=0");
}

static void test_asymfeat(void **state)
{
	char b[120];
	(void)state;
	ct_cdev_fmt_asymfeat(b, sizeof(b), 0);
	assert_string_equal(b, "features=0x0 none");
	ct_cdev_fmt_asymfeat(b, sizeof(b), CT_CRF_MOD_EXP);
	assert_string_equal(b, "features=0x1 MOD_EXP");
	ct_cdev_fmt_asymfeat(b, sizeof(b),
			     CT_CRF_MOD_EXP | CT_CRF_MOD_EXP_CRT | CT_CRF_DSA_SIGN | CT_CRF_DSA_VERIFY |
				     CT_CRF_DH_COMPUTE_KEY);
	assert_string_equal(b, "features=0x1f MOD_EXP|MOD_EXP_CRT|DSA_SIGN|DSA_VERIFY|DH_COMPUTE_KEY");
	/* Bits no crk_op has print as one raw rest. */
	ct_cdev_fmt_asymfeat(b, sizeof(b), CT_CRF_DSA_SIGN | 0x300u);
	assert_string_equal(b, "features=0x304 DSA_SIGN|0x300");
	ct_cdev_fmt_asymfeat(b, sizeof(b), 0x80000000u);
	assert_string_equal(b, "features=0x80000000 0x80000000");
	char small[10];
	assert_int_equal(ct_cdev_fmt_asymfeat(small, sizeof(small), 3), 9);
	assert_string_equal(small, "features=");
}

static void test_sessinfo(void **state)
{
	char b[300];
	struct ct_cdev_session_info_op si = { .ses = 9, .alignmask = 15, .flags = 0 };
	(void)state;
	strcpy(si.cipher_info.cra_name, "cbc(aes)");
	strcpy(si.cipher_info.cra_driver_name, "cbc-aes-aesni");
	ct_cdev_fmt_sessinfo(b, sizeof(b), &si);
	assert_string_equal(b,
			    "ses=9 cipher=cbc(aes) driver=cbc-aes-aesni alignmask=15 kernel_driver_only=0");
	si.flags = CT_SIOP_FLAG_KERNEL_DRIVER_ONLY;
	/* A driver name that fills its field without a terminator is cut at the field. */
	memset(si.cipher_info.cra_driver_name, 'x', sizeof(si.cipher_info.cra_driver_name));
	ct_cdev_fmt_sessinfo(b, sizeof(b), &si);
	assert_non_null(strstr(b, "kernel_driver_only=1"));
	char want[80];
	memset(want, 'x', 64);
	want[64] = '\0';
	assert_non_null(strstr(b, want));
	ct_cdev_fmt_ioctl(b, sizeof(b), CT_CIOCGSESSINFO, &si);
	assert_string_equal(b, "op=CIOCGSESSINFO ses=9");
}

static void test_truncation(void **state)
{
	char b[12];
	struct ct_cdev_session_op s = { .cipher = CT_CRYPTO_AES_CBC, .keylen = 16 };
	(void)state;
	size_t n = ct_cdev_fmt_ioctl(b, sizeof(b), CT_CIOCGSESSION, &s);
	assert_int_equal(n, strlen(b));
	assert_true(n < sizeof(b));
	assert_string_equal(b, "op=CIOCGSES");
	char raw[8];
	assert_string_equal(ct_kname_or_raw(raw, sizeof(raw), NULL, 0, 42), "42");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_ioctl_names),    cmocka_unit_test(test_alg_names),
		cmocka_unit_test(test_openssl_names),  cmocka_unit_test(test_session),
		cmocka_unit_test(test_crypt),          cmocka_unit_test(test_auth_kop_misc),
		cmocka_unit_test(test_kop_sizes_only), cmocka_unit_test(test_asymfeat),
		cmocka_unit_test(test_sessinfo),       cmocka_unit_test(test_truncation),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
