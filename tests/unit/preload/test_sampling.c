/* SPDX-License-Identifier: MIT */
/* test_sampling.c - the hot path's counting and sampling decision (ct_tick, no span open): every
 * call and byte counted in the right size bucket, 1 in N small calls sampled, larger calls more
 * often (halving the interval per doubling above 1 KiB), every call from sample_all_bytes. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "internal.h"

#ifdef CT_SPLIT_COUNTERS /* CT_ADD's carry brackets on 32-bit targets (stats.c, not linked here) */
_Atomic uint32_t ct_carry_begun, ct_carry_ended;
#endif

/* the globals ct_tick reads (config.c in the preload) */
unsigned ct_sample_period, ct_sample_all_bytes;
bool ct_per_call;

static struct ct_thread t;
static struct ct_counters c;

/* One data call as a hook makes it: counted, and when sampled, the next interval drawn as
 * ct_timed_end does after a probe. */
static bool ct_count_fast(struct ct_thread *th, struct ct_counters *cc, uint64_t bytes)
{
	bool sampled = ct_tick(th, cc, ct_cell_of_size(bytes), bytes);
	if (sampled && th->countdown == 0)
		th->countdown = ct_sample_next(th, bytes);
	return sampled;
}

static void setup(unsigned period, unsigned all_bytes)
{
	memset(&t, 0, sizeof(t));
	memset(&c, 0, sizeof(c));
	ct_sample_period = period;
	ct_sample_all_bytes = all_bytes;
	t.countdown = period;
	t.rng = 12345;
}

static void test_one_in_n(void **state)
{
	(void)state;
	setup(16, 1024);
	unsigned timed = 0;
	for (unsigned i = 0; i < 16000; i++)
		timed += ct_count_fast(&t, &c, 16);
	/* intervals are uniform in [1, 31]: about 1000 timed, never all or none */
	assert_in_range(timed, 850, 1150);
	assert_int_equal(c.cell[5].calls, 16000); /* 16 B: bucket [16, 32) */
	assert_int_equal(c.cell[5].bytes, 16000 * 16);
}

/* Two call kinds alternating in a period that divides the sampling period (TLS records: AAD then
 * data) must both be timed: a fixed interval of 16 would time only one of them. */
static void test_no_aliasing(void **state)
{
	(void)state;
	setup(16, 1024);
	unsigned timed[4] = { 0 };
	for (unsigned i = 0; i < 16000; i++)
		timed[i % 4] += ct_count_fast(&t, &c, 16);
	for (unsigned k = 0; k < 4; k++)
		assert_in_range(timed[k], 150, 350);
}

static void test_large_always_timed(void **state)
{
	(void)state;
	setup(16, 1024);
	unsigned timed = 0;
	for (unsigned i = 0; i < 100; i++)
		timed += ct_count_fast(&t, &c, 8192);
	assert_int_equal(timed, 100);
	assert_int_equal(c.cell[14].calls, 100); /* 8192: bucket [8192, 16384) */
	/* calls from sample_all_bytes on do not consume the countdown */
	assert_int_equal(t.countdown, 16);
}

/* Between 1 KiB and sample_all_bytes the mean interval halves per doubling of the size: with
 * N = 256, 1 in 256 at 16 B, 1 in 128 at 1 KiB, 1 in 16 at 8 KiB, 1 in 2 at 64 KiB, every
 * call at 128 KiB. Each count is ~25 % of its mean for the number of calls made. */
static void test_period_halves_per_doubling(void **state)
{
	(void)state;
	static const struct {
		uint64_t bytes;
		unsigned period;
	} cases[] = {
		{ 16, 256 },  { 1023, 256 }, { 1024, 128 }, { 2048, 64 },
		{ 8192, 16 }, { 16383, 16 }, { 65536, 2 },  { 131071, 2 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		setup(256, 1u << 30);
		assert_int_equal(ct_sample_period_for(cases[i].bytes), cases[i].period);
		const unsigned calls = 1000 * cases[i].period;
		unsigned timed = 0;
		for (unsigned k = 0; k < calls; k++)
			timed += ct_count_fast(&t, &c, cases[i].bytes);
		assert_in_range(timed, 750, 1250);
	}
	setup(256, 1u << 30);
	assert_int_equal(ct_sample_period_for(128 * 1024), 1);
	assert_int_equal(ct_sample_period_for(1ull << 40), 1);
}

/* Large calls after many small ones: an interval drawn for 16 B calls (mean 256) is cut to the
 * large size's, so a short burst of 8 KiB calls is still timed about 1 in 16. */
static void test_burst_after_small_calls(void **state)
{
	(void)state;
	unsigned timed = 0;
	for (unsigned r = 0; r < 200; r++) {
		setup(256, 1u << 30);
		t.rng = 1000 + r;
		for (unsigned k = 0; k < 300; k++)
			ct_count_fast(&t, &c, 16);
		for (unsigned k = 0; k < 32; k++)
			timed += ct_count_fast(&t, &c, 8192);
	}
	/* 200 bursts x 32 calls / 16: ~400 */
	assert_in_range(timed, 300, 500);
}

static void test_every_call(void **state)
{
	(void)state;
	setup(1, 1024);
	for (unsigned i = 0; i < 50; i++)
		assert_true(ct_count_fast(&t, &c, 1));
	setup(16, 0); /* sample_all_bytes 0: everything is "large" */
	for (unsigned i = 0; i < 50; i++)
		assert_true(ct_count_fast(&t, &c, 0));
	assert_int_equal(c.cell[0].calls, 50);
}

static void test_buckets_match_format(void **state)
{
	(void)state;
	setup(1000000, 1u << 30);
	const uint64_t sizes[] = { 0, 1, 2, 3, 15, 16, 17, 1023, 1024, 65535, 1u << 20, (1ull << 40) };
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		memset(&c, 0, sizeof(c));
		ct_count_fast(&t, &c, sizes[i]);
		unsigned b = ct_size_bucket(sizes[i]);
		assert_int_equal(c.cell[b].calls, 1);
		assert_int_equal(c.cell[b].bytes, sizes[i]);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_one_in_n),
		cmocka_unit_test(test_no_aliasing),
		cmocka_unit_test(test_large_always_timed),
		cmocka_unit_test(test_period_halves_per_doubling),
		cmocka_unit_test(test_burst_after_small_calls),
		cmocka_unit_test(test_every_call),
		cmocka_unit_test(test_buckets_match_format),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
