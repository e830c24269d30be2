/* SPDX-License-Identifier: MIT */
/*
 * test_aesni_dispatch.c - the level choice: CPUID or HWCAP decides, CRYPTRACE_AESNI_MAX and
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
	const enum ct_aesni_level back = ct_aesni_set_max_level(CT_AESNI_VAES512);
	if (back != start)
		fail_msg("uncapped level %s, expected %s", ct_aesni_level_name(back),
			 ct_aesni_level_name(start));
}

static void test_levels_and_keys(void **state)
{
	(void)state;
	if (start == CT_AESNI_NONE)
		skip();
	const enum ct_aesni_level base = ct_aesni_base_level();
	assert_int_equal(ct_aesni_set_max_level(base), base);
	assert_true(ct_aesni_available()); /* the base level: AES-NI, ARMv8 CE */
	/* A cap names a rank, not an architecture: "aesni" is the base level on every build. */
	assert_int_equal(ct_aesni_set_max_level(CT_AESNI_XMM), base);
	assert_int_equal(ct_aesni_set_max_level(CT_AESNI_ARMV8_CE), base);
	ct_aesni_set_max_level(CT_AESNI_VAES512);

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

/* What this CPU allows, from its feature bits (not from dispatch.c: this is what it checks). */
static enum ct_aesni_level cpu_level(void)
{
	const uint32_t f = ct_cpu_features();
	switch (ct_aesni_base_level()) {
	case CT_AESNI_XMM:
		if (!(f & CT_CPU_AES) || !(f & CT_CPU_PCLMULQDQ))
			return CT_AESNI_NONE;
		if (!(f & CT_CPU_VAES) || !(f & CT_CPU_VPCLMULQDQ) || !(f & CT_CPU_AVX2))
			return CT_AESNI_XMM;
		return (f & CT_CPU_AVX512F) && (f & CT_CPU_AVX512VL) && (f & CT_CPU_AVX512BW)
			       ? CT_AESNI_VAES512
			       : CT_AESNI_VAES;
	case CT_AESNI_ARMV8_CE:
		return (f & CT_CPU_ARM_AES) && (f & CT_CPU_ARM_PMULL) ? CT_AESNI_ARMV8_CE : CT_AESNI_NONE;
	default:
		return CT_AESNI_NONE;
	}
}

int main(int argc, char **argv)
{
	start = ct_aesni_level();
	cpu = cpu_level();
	printf("cpu level %s, level at start %s\n", ct_aesni_level_name(cpu), ct_aesni_level_name(start));

	if (argc == 3 && !strcmp(argv[1], "--expect")) {
		static const struct {
			const char *name;
			enum ct_aesni_level level;
		} names[] = { { "none", CT_AESNI_NONE },
			      { "aesni", CT_AESNI_XMM },
			      { "vaes", CT_AESNI_VAES },
			      { "vaes512", CT_AESNI_VAES512 },
			      { "armv8-ce", CT_AESNI_ARMV8_CE } };
		expect_name = argv[2];
		expect = CT_AESNI_VAES512;
		for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (!strcmp(argv[2], names[i].name))
				expect = names[i].level;
		/* Levels of this build are ordered by their values (x86: 0 1 2 4; aarch64: 0 3). */
		const bool ours = expect == CT_AESNI_NONE || expect == ct_aesni_base_level() ||
				  ((expect == CT_AESNI_VAES || expect == CT_AESNI_VAES512) &&
				   ct_aesni_base_level() == CT_AESNI_XMM);
		if (!ours || expect > cpu) {
			printf("SKIP: this %s cannot reach level %s\n", ours ? "CPU" : "build", argv[2]);
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
	 * test. Without the CPU's AES instructions there was little to check: say so. */
	if (start == CT_AESNI_NONE && !(expect_name && cpu != CT_AESNI_NONE)) {
		printf("SKIP: no AES-NI + PCLMULQDQ nor ARMv8 AES + PMULL on this CPU: nothing more to "
		       "check\n");
		return 77;
	}
	return 0;
}
