/* SPDX-License-Identifier: MIT */
/*
 * test_proc_crypto.c - driver resolution from hand-written /proc/crypto texts (with and without
 * aesni-intel loaded, a 6.x kernel with lskcipher, an offload engine) and driver classification.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "proc_crypto.h"

/* A guest with aesni-intel loaded: the simd wrapper at 400, the internal helper it wraps, and
 * the generic template instance the kernel built earlier. */
static const char with_aesni[] =
	"name         : cbc(aes)\n"
	"driver       : cbc-aes-aesni\n"
	"module       : aesni_intel\n"
	"priority     : 400\n"
	"refcnt       : 1\n"
	"selftest     : passed\n"
	"internal     : no\n"
	"type         : skcipher\n"
	"async        : yes\n"
	"blocksize    : 16\n"
	"\n"
	"name         : __cbc(aes)\n"
	"driver       : __cbc-aes-aesni\n"
	"module       : aesni_intel\n"
	"priority     : 400\n"
	"selftest     : passed\n"
	"internal     : yes\n"
	"type         : skcipher\n"
	"\n"
	"name         : cbc(aes)\n"
	"driver       : cbc(aes-generic)\n"
	"module       : kernel\n"
	"priority     : 100\n"
	"selftest     : passed\n"
	"internal     : no\n"
	"type         : skcipher\n"
	"\n"
	"name         : gcm(aes)\n"
	"driver       : generic-gcm-aesni\n"
	"module       : aesni_intel\n"
	"priority     : 400\n"
	"selftest     : passed\n"
	"internal     : no\n"
	"type         : aead\n"
	"\n"
	"name         : xts(aes)\n"
	"driver       : xts-aes-vaes-avx2\n"
	"module       : aesni_intel\n"
	"priority     : 600\n"
	"selftest     : passed\n"
	"internal     : no\n"
	"type         : skcipher\n"
	"\n"
	"name         : aes\n"
	"driver       : aes-aesni\n"
	"module       : aesni_intel\n"
	"priority     : 300\n"
	"selftest     : passed\n"
	"internal     : no\n"
	"type         : cipher\n";

/* The same guest without aesni-intel: only the generic template instance. */
static const char without_aesni[] =
	"name         : cbc(aes)\n"
	"driver       : cbc(aes-generic)\n"
	"module       : kernel\n"
	"priority     : 100\n"
	"refcnt       : 1\n"
	"selftest     : passed\n"
	"internal     : no\n"
	"type         : skcipher\n"
	"\n"
	"name         : aes\n"
	"driver       : aes-generic\n"
	"module       : kernel\n"
	"priority     : 100\n"
	"selftest     : passed\n"
	"internal     : no\n"
	"type         : cipher\n"
	"\n";

/* This host (6.18): lskcipher over aes-fixed-time; a failed or unfinished self-test and a
 * higher-priority hash with the same name as a test of type filtering. */
static const char host_618[] =
	"name         : cbc(aes)\n"
	"driver       : cbc(ecb(aes-fixed-time))\n"
	"module       : kernel\n"
	"priority     : 101\n"
	"selftest     : passed\n"
	"internal     : no\n"
	"type         : lskcipher\n"
	"\n"
	"name         : cbc(aes)\n"
	"driver       : cbc-aes-broken\n"
	"module       : broken_mod\n"
	"priority     : 900\n"
	"selftest     : unknown\n"
	"internal     : no\n"
	"type         : skcipher\n"
	"\n"
	"name         : cbc(aes)\n"
	"driver       : cbc-aes-hashy\n"
	"module       : hashy\n"
	"priority     : 950\n"
	"selftest     : passed\n"
	"internal     : no\n"
	"type         : shash"; /* no trailing newline */

/* An ARM SoC with an offload engine above the ARMv8 CE driver. */
static const char with_caam[] =
	"name         : cbc(aes)\n"
	"driver       : cbc-aes-ce\n"
	"module       : aes_ce_blk\n"
	"priority     : 300\n"
	"selftest     : passed\n"
	"internal     : no\n"
	"type         : skcipher\n"
	"\n"
	"name         : cbc(aes)\n"
	"driver       : cbc-aes-caam\n"
	"module       : caam_jr\n"
	"priority     : 3000\n"
	"selftest     : passed\n"
	"internal     : no\n"
	"type         : skcipher\n"
	"\n";

static void test_with_aesni(void **state)
{
	struct ct_kdrv d;
	(void)state;
	assert_true(ct_proc_crypto_resolve(with_aesni, strlen(with_aesni), "cbc(aes)", "skcipher", &d));
	assert_string_equal(d.driver, "cbc-aes-aesni");
	assert_string_equal(d.module, "aesni_intel");
	assert_string_equal(d.type, "skcipher");
	assert_int_equal(d.priority, 400);
	assert_int_equal(d.cls, CT_KDRV_CPU);
	assert_true(ct_proc_crypto_resolve(with_aesni, strlen(with_aesni), "gcm(aes)", "aead", &d));
	assert_string_equal(d.driver, "generic-gcm-aesni");
	assert_int_equal(d.cls, CT_KDRV_CPU);
	/* gcm(aes) is an aead: a skcipher socket cannot use it. */
	assert_false(ct_proc_crypto_resolve(with_aesni, strlen(with_aesni), "gcm(aes)", "skcipher", &d));
	assert_true(ct_proc_crypto_resolve(with_aesni, strlen(with_aesni), "xts(aes)", NULL, &d));
	assert_string_equal(d.driver, "xts-aes-vaes-avx2");
	assert_int_equal(d.cls, CT_KDRV_CPU);
	/* The internal helper is never picked, even by its own name. */
	assert_false(ct_proc_crypto_resolve(with_aesni, strlen(with_aesni), "__cbc(aes)", NULL, &d));
	assert_false(ct_proc_crypto_resolve(with_aesni, strlen(with_aesni), "ctr(aes)", NULL, &d));
}

static void test_without_aesni(void **state)
{
	struct ct_kdrv d;
	(void)state;
	assert_true(ct_proc_crypto_resolve(without_aesni, strlen(without_aesni), "cbc(aes)", "skcipher", &d));
	assert_string_equal(d.driver, "cbc(aes-generic)");
	assert_string_equal(d.module, "kernel");
	assert_int_equal(d.priority, 100);
	assert_int_equal(d.cls, CT_KDRV_SW);
	assert_string_equal(ct_kdrv_class_name(d.cls), "software");
}

static void test_host_lskcipher(void **state)
{
	struct ct_kdrv d;
	(void)state;
	assert_true(ct_proc_crypto_resolve(host_618, strlen(host_618), "cbc(aes)", "skcipher", &d));
	assert_string_equal(d.driver, "cbc(ecb(aes-fixed-time))");
	assert_string_equal(d.type, "lskcipher");
	assert_int_equal(d.cls, CT_KDRV_SW);
	/* As a hash socket, the unterminated last block is the one. */
	assert_true(ct_proc_crypto_resolve(host_618, strlen(host_618), "cbc(aes)", "hash", &d));
	assert_string_equal(d.driver, "cbc-aes-hashy");
	assert_int_equal(d.priority, 950);
}

static void test_offload(void **state)
{
	struct ct_kdrv d;
	(void)state;
	assert_true(ct_proc_crypto_resolve(with_caam, strlen(with_caam), "cbc(aes)", "skcipher", &d));
	assert_string_equal(d.driver, "cbc-aes-caam");
	assert_int_equal(d.cls, CT_KDRV_HW);
	assert_string_equal(ct_kdrv_class_name(d.cls), "hardware");
}

static void test_classify(void **state)
{
	(void)state;
	assert_int_equal(ct_kdrv_classify("cbc-aes-aesni", "aesni_intel"), CT_KDRV_CPU);
	assert_int_equal(ct_kdrv_classify("ctr-aes-vaes-avx2", "aesni_intel"), CT_KDRV_CPU);
	assert_int_equal(ct_kdrv_classify("cbc-aes-ce", "aes_ce_blk"), CT_KDRV_CPU);
	assert_int_equal(ct_kdrv_classify("cbc-aes-neonbs", "aes_neon_bs"), CT_KDRV_CPU);
	assert_int_equal(ct_kdrv_classify("cbc-aes-padlock", "padlock_aes"), CT_KDRV_CPU);
	assert_int_equal(ct_kdrv_classify("cbc(aes-aesni)", "kernel"), CT_KDRV_CPU);
	assert_int_equal(ct_kdrv_classify("cbc(aes-generic)", "kernel"), CT_KDRV_SW);
	assert_int_equal(ct_kdrv_classify("cbc(ecb(aes-fixed-time))", "kernel"), CT_KDRV_SW);
	assert_int_equal(ct_kdrv_classify("aes-generic", "aes_generic"), CT_KDRV_SW);
	assert_int_equal(ct_kdrv_classify("cbc-aes-caam", "caam_jr"), CT_KDRV_HW);
	assert_int_equal(ct_kdrv_classify("mv-cbc-aes", "marvell_cesa"), CT_KDRV_HW);
	assert_int_equal(ct_kdrv_classify("cbc-aes-sun8i-ce", "sun8i_ce"), CT_KDRV_HW);
	assert_int_equal(ct_kdrv_classify("qat_aes_cbc", "intel_qat"), CT_KDRV_HW);
	assert_int_equal(ct_kdrv_classify("", "x"), CT_KDRV_UNKNOWN);
	assert_int_equal(ct_kdrv_classify(NULL, NULL), CT_KDRV_UNKNOWN);
	assert_string_equal(ct_kdrv_class_name(CT_KDRV_CPU), "cpu");
	assert_string_equal(ct_kdrv_class_name(CT_KDRV_UNKNOWN), "unknown");
}

static void test_garbage(void **state)
{
	struct ct_kdrv d;
	static const char junk[] = "no colon here\n:\n : \nname:\nname : cbc(aes)\npriority : x\n\n\n";
	(void)state;
	assert_false(ct_proc_crypto_resolve(junk, strlen(junk), "cbc(aes)", NULL, &d));
	assert_false(ct_proc_crypto_resolve("", 0, "cbc(aes)", NULL, &d));
	assert_false(ct_proc_crypto_resolve(NULL, 0, "cbc(aes)", NULL, &d));
	/* A length shorter than the text: only that prefix is read. */
	assert_false(ct_proc_crypto_resolve(with_aesni, 20, "cbc(aes)", NULL, &d));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_with_aesni),     cmocka_unit_test(test_without_aesni),
		cmocka_unit_test(test_host_lskcipher), cmocka_unit_test(test_offload),
		cmocka_unit_test(test_classify),       cmocka_unit_test(test_garbage),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
