/* SPDX-License-Identifier: MIT */
/*
 * test_boringssl.c - BoringSSL's capability word after OPENSSL_ia32cap, as preload/boringssl.c
 * rebuilds it to name the AES code BoringSSL runs (AES-NI, vpaes, C): its three forms (~ clears,
 * | sets, a bare value replaces), hex and decimal, and values BoringSSL does not parse.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "boringssl.h"

/* boringssl.c reads the preload's copy of the variable; this test passes values directly */
const char *ct_config_ia32cap(void)
{
	return "";
}

/* A Zen 4's CPUID.1 word: AES-NI, PCLMUL, SSSE3 and more */
static const uint64_t zen4 = 0x7ed8320b178bfbffull;

static void test_unset(void **state)
{
	(void)state;
	assert_int_equal(ct_boringssl_cap_word(zen4, NULL), zen4);
	assert_int_equal(ct_boringssl_cap_word(zen4, ""), zen4);
	assert_true(zen4 & CT_BSSL_CAP_AESNI);
	assert_true(zen4 & CT_BSSL_CAP_SSSE3);
}

static void test_clear(void **state)
{
	(void)state;
	/* the tests' usual mask: AES-NI and PCLMUL out, SSSE3 left: vpaes */
	uint64_t w = ct_boringssl_cap_word(zen4, "~0x200000200000000");
	assert_false(w & CT_BSSL_CAP_AESNI);
	assert_true(w & CT_BSSL_CAP_SSSE3);
	w = ct_boringssl_cap_word(zen4, "~0x200020200000000");
	assert_false(w & (CT_BSSL_CAP_AESNI | CT_BSSL_CAP_SSSE3));
	/* decimal works too: 2^57 */
	w = ct_boringssl_cap_word(zen4, "~144115188075855872");
	assert_false(w & CT_BSSL_CAP_AESNI);
	/* the second word (after ':') is another word of BoringSSL's: this one is untouched */
	assert_int_equal(ct_boringssl_cap_word(zen4, "~0x0:~0x200000000000000"), zen4);
}

static void test_set_and_replace(void **state)
{
	(void)state;
	assert_int_equal(ct_boringssl_cap_word(0, "|0x200000000000000"), CT_BSSL_CAP_AESNI);
	assert_int_equal(ct_boringssl_cap_word(zen4, "0x20000000000"), CT_BSSL_CAP_SSSE3);
	assert_int_equal(ct_boringssl_cap_word(zen4, "0"), 0);
}

static void test_unparsed(void **state)
{
	(void)state;
	/* BoringSSL's sscanf reads nothing from these: the word stays as CPUID says */
	assert_int_equal(ct_boringssl_cap_word(zen4, "~"), zen4);
	assert_int_equal(ct_boringssl_cap_word(zen4, "junk"), zen4);
	assert_int_equal(ct_boringssl_cap_word(zen4, "~0x"), zen4);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_unset),
		cmocka_unit_test(test_clear),
		cmocka_unit_test(test_set_and_replace),
		cmocka_unit_test(test_unparsed),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
