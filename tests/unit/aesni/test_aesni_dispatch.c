/* SPDX-License-Identifier: MIT */
/*
 * test_aesni_dispatch.c - the level choice: CPUID decides, CRYPTRACE_AESNI_MAX and
 * ct_aesni_set_max_level() only ever lower it, "none" turns the backend off (set_key fails so a
 * caller cannot use it by mistake), and the calibration gives a plausible cycles/byte.
 *   test_aesni_dispatch              checks the API and the calibration
 *   test_aesni_dispatch --expect L   also checks that the level at start is L (env cap tests)
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "aesni.h"
#include "cpu.h"
#include "trace_format.h"

/* What main() found before any test capped the level. */
static enum ct_aesni_level cpu;    /* what CPUID allows */
static enum ct_aesni_level start;  /* the level at start (CPUID and CRYPTRACE_AESNI_MAX) */
static const char *expect_name;    /* --expect L, or NULL */
static enum ct_aesni_level expect; /* its level */

static void test_level_at_start(void **state)
{
	(void)state;
	if (expect_name && start != expect)
		fail_msg("CRYPTRACE_AESNI_MAX gave %s, expected %s", ct_aesni_level_name(start), expect_name);
	if (start > cpu)
		fail_msg("level %s above what the CPU has (%s)", ct_aesni_level_name(start),
			 ct_aesni_level_name(cpu));
}

/* "none": the backend refuses new keys, but a key set before the cap keeps working; raising the
 * cap again never goes above the CPU (or the environment's cap). */
static void test_cap_to_none(void **state)
{
	(void)state;
	struct ct_aes_key k, before;
	static const uint8_t key[32];
	uint8_t blk[16] = { 0 }, want[16];
	const int had_key = ct_aes_set_key(&before, key, 128) == 0;
	if (had_key)
		ct_aes_encrypt_block(&before, blk, want);
	assert_int_equal(ct_aesni_set_max_level(CT_AESNI_NONE), CT_AESNI_NONE);
	assert_false(ct_aesni_available());
	assert_int_equal(ct_aes_set_key(&k, key, 128), -1); /* set_key works with the backend off */
	if (had_key) {
		/* AES-128 of the zero block under the zero key (FIPS-197 known answer). */
		static const uint8_t kat[16] = { 0x66, 0xe9, 0x4b, 0xd4, 0xef, 0x8a, 0x2c, 0x3b,
						 0x88, 0x4c, 0xfa, 0x59, 0xca, 0x34, 0x2b, 0x2e };
		ct_aes_encrypt_block(&before, blk, blk);
		assert_memory_equal(blk, want, 16); /* a key set before the cap stopped working */
		assert_memory_equal(blk, kat, 16);
	}
	const enum ct_aesni_level back = ct_aesni_set_max_level(CT_AESNI_VAES);
	if (back != start)
		fail_msg("uncapped level %s, expected %s", ct_aesni_level_name(back),
			 ct_aesni_level_name(start));
}

static void test_levels_and_keys(void **state)
{
	(void)state;
	if (start == CT_AESNI_NONE)
		skip();
	assert_int_equal(ct_aesni_set_max_level(CT_AESNI_XMM), CT_AESNI_XMM);
	assert_true(ct_aesni_available()); /* the aesni level */
	ct_aesni_set_max_level(CT_AESNI_VAES);

	struct ct_aes_key k;
	static const uint8_t key[32];
	assert_int_equal(ct_aes_set_key(&k, key, 100), -1); /* an odd key size */
	assert_int_equal(ct_aes_set_key(&k, key, 192), 0);
	assert_int_equal(k.rounds, 12);
	ct_aes_key_wipe(&k);
	static const uint8_t zero[sizeof(k)];
	assert_memory_equal(&k, zero, sizeof(k)); /* wipe left key material */
}

/* Calibration: our AES-128-CTR at 8 KiB. Real AES-NI code is far below 2 ticks/byte and cannot
 * be below 0.01; the milli value is the same number rounded. */
static void test_calibration(void **state)
{
	(void)state;
	if (start == CT_AESNI_NONE)
		skip();
	const double cpb = ct_aesni_cpb_bound();
	const uint32_t milli = ct_aesni_cpb_milli();
	print_message("calibration: %.3f TSC ticks/byte (%u milli)\n", cpb, milli);
	if (ct_tsc_hz() == 0) {
		if (!(milli == 0 || cpb > 0))
			fail_msg("calibration without a usable TSC: %.3f (%u milli)", cpb, milli);
	} else {
		if (!(cpb > 0.01 && cpb < 2.0))
			fail_msg("implausible calibration %.3f", cpb);
		assert_int_equal(milli, (uint32_t)(cpb * 1000 + 0.5));
	}
}

int main(int argc, char **argv)
{
	const uint32_t f = ct_cpu_features();
	start = ct_aesni_level();
	cpu = CT_AESNI_NONE;
	if ((f & CT_CPU_AES) && (f & CT_CPU_PCLMULQDQ))
		cpu = (f & CT_CPU_VAES) && (f & CT_CPU_VPCLMULQDQ) && (f & CT_CPU_AVX2) ? CT_AESNI_VAES
											: CT_AESNI_XMM;
	printf("cpu level %s, level at start %s\n", ct_aesni_level_name(cpu), ct_aesni_level_name(start));

	if (argc == 3 && !strcmp(argv[1], "--expect")) {
		expect_name = argv[2];
		expect = !strcmp(argv[2], "none")    ? CT_AESNI_NONE
			 : !strcmp(argv[2], "aesni") ? CT_AESNI_XMM
						     : CT_AESNI_VAES;
		if (expect > cpu) {
			printf("SKIP: this CPU cannot reach level %s\n", argv[2]);
			return 77;
		}
	}
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_level_at_start),
		cmocka_unit_test(test_cap_to_none),
		cmocka_unit_test(test_levels_and_keys),
		cmocka_unit_test(test_calibration),
	};
	if (cmocka_run_group_tests(tests, NULL, NULL))
		return 1;
	/* Capped to none on purpose (--expect none on an AES-NI CPU): the checks that ran were the
	 * test. Without AES-NI + PCLMULQDQ there was little to check: say so. */
	if (start == CT_AESNI_NONE && !(expect_name && cpu != CT_AESNI_NONE)) {
		printf("SKIP: no AES-NI + PCLMULQDQ on this CPU: nothing more to check\n");
		return 77;
	}
	return 0;
}
