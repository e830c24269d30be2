/* SPDX-License-Identifier: MIT */
/*
 * test_aesni_dispatch.c - the level choice: CPUID decides, CRYPTRACE_AESNI_MAX and
 * ct_aesni_set_max_level() only ever lower it, "none" turns the backend off (set_key fails so a
 * caller cannot use it by mistake), and the calibration gives a plausible cycles/byte.
 *   test_aesni_dispatch              checks the API and the calibration
 *   test_aesni_dispatch --expect L   also checks that the level at start is L (env cap tests)
 */
#include <stdio.h>
#include <string.h>

#include "aesni.h"
#include "cpu.h"
#include "trace_format.h"

static int failures;
#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			failures++;                                                                \
			printf("FAIL %s:%d: ", __FILE__, __LINE__);                                \
			printf(__VA_ARGS__);                                                       \
			printf("\n");                                                              \
		}                                                                                  \
	} while (0)

int main(int argc, char **argv)
{
	const uint32_t f = ct_cpu_features();
	const enum ct_aesni_level start = ct_aesni_level();
	enum ct_aesni_level cpu = CT_AESNI_NONE;
	if ((f & CT_CPU_AES) && (f & CT_CPU_PCLMULQDQ))
		cpu = (f & CT_CPU_VAES) && (f & CT_CPU_VPCLMULQDQ) && (f & CT_CPU_AVX2)
			      ? CT_AESNI_VAES
			      : CT_AESNI_XMM;
	printf("cpu level %s, level at start %s\n", ct_aesni_level_name(cpu),
	       ct_aesni_level_name(start));

	const int expect = argc == 3 && !strcmp(argv[1], "--expect");
	if (expect) {
		enum ct_aesni_level want = !strcmp(argv[2], "none")    ? CT_AESNI_NONE
					   : !strcmp(argv[2], "aesni") ? CT_AESNI_XMM
								       : CT_AESNI_VAES;
		if (want > cpu) {
			printf("SKIP: this CPU cannot reach level %s\n", argv[2]);
			return 77;
		}
		CHECK(start == want, "CRYPTRACE_AESNI_MAX gave %s, expected %s",
		      ct_aesni_level_name(start), argv[2]);
	}
	CHECK(start <= cpu, "level %s above what the CPU has (%s)", ct_aesni_level_name(start),
	      ct_aesni_level_name(cpu));

	/* "none": the backend refuses new keys, but a key set before the cap keeps working. */
	struct ct_aes_key k, before;
	static const uint8_t key[32];
	uint8_t blk[16] = { 0 }, want[16];
	const int had_key = ct_aes_set_key(&before, key, 128) == 0;
	if (had_key)
		ct_aes_encrypt_block(&before, blk, want);
	CHECK(ct_aesni_set_max_level(CT_AESNI_NONE) == CT_AESNI_NONE, "cap to none");
	CHECK(!ct_aesni_available(), "available after cap to none");
	CHECK(ct_aes_set_key(&k, key, 128) == -1, "set_key works with the backend off");
	if (had_key) {
		/* AES-128 of the zero block under the zero key (FIPS-197 known answer). */
		static const uint8_t kat[16] = { 0x66, 0xe9, 0x4b, 0xd4, 0xef, 0x8a, 0x2c, 0x3b,
						 0x88, 0x4c, 0xfa, 0x59, 0xca, 0x34, 0x2b, 0x2e };
		ct_aes_encrypt_block(&before, blk, blk);
		CHECK(!memcmp(blk, want, 16) && !memcmp(blk, kat, 16),
		      "a key set before the cap stopped working");
	}

	/* Raising the cap never goes above the CPU (or the environment's cap). */
	const enum ct_aesni_level back = ct_aesni_set_max_level(CT_AESNI_VAES);
	CHECK(back == start, "uncapped level %s, expected %s", ct_aesni_level_name(back),
	      ct_aesni_level_name(start));
	if (start == CT_AESNI_NONE) {
		/* Capped to none on purpose: the checks above were the test. */
		if (expect && cpu != CT_AESNI_NONE) {
			printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
			return failures ? 1 : 0;
		}
		printf("SKIP: no AES-NI + PCLMULQDQ on this CPU: nothing more to check\n");
		return failures ? 1 : 77;
	}
	CHECK(ct_aesni_set_max_level(CT_AESNI_XMM) == CT_AESNI_XMM, "cap to aesni");
	CHECK(ct_aesni_available(), "aesni level unavailable");
	ct_aesni_set_max_level(CT_AESNI_VAES);

	CHECK(ct_aes_set_key(&k, key, 100) == -1, "odd key size accepted");
	CHECK(ct_aes_set_key(&k, key, 192) == 0 && k.rounds == 12, "192-bit key");
	ct_aes_key_wipe(&k);
	static const uint8_t zero[sizeof(k)];
	CHECK(memcmp(&k, zero, sizeof(k)) == 0, "wipe left key material");

	/* Calibration: our AES-128-CTR at 8 KiB. Real AES-NI code is far below 2 ticks/byte and
	 * cannot be below 0.01; the milli value is the same number rounded. */
	const double cpb = ct_aesni_cpb_bound();
	const uint32_t milli = ct_aesni_cpb_milli();
	printf("calibration: %.3f TSC ticks/byte (%u milli)\n", cpb, milli);
	if (ct_tsc_hz() == 0) {
		CHECK(milli == 0 || cpb > 0, "calibration without a usable TSC");
	} else {
		CHECK(cpb > 0.01 && cpb < 2.0, "implausible calibration %.3f", cpb);
		CHECK(milli == (uint32_t)(cpb * 1000 + 0.5), "milli %u vs %.3f", milli, cpb);
	}
	printf("%s: %d failure(s)\n", failures ? "FAIL" : "PASS", failures);
	return failures ? 1 : 0;
}
