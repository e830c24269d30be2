/* SPDX-License-Identifier: MIT */
/*
 * test_tallies.c - the profile's sample table and its timeline (tracer/tallies.c): counts kept
 * exact while the table grows, and the timeline's bins widened two-fold when it fills, merging
 * what falls together and never losing a sample until the widest bins are full.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "tallies.h"

static uint64_t total(const struct tallies *ts)
{
	uint64_t n = 0;
	for (size_t i = 0; i < ts->cap; i++)
		n += ts->t[i].n;
	return n;
}

static uint64_t count_of(const struct tallies *ts, uint32_t file, uint64_t off, uint32_t bin)
{
	for (size_t i = 0; i < ts->cap; i++)
		if (ts->t[i].n && ts->t[i].file == file && ts->t[i].off == off && ts->t[i].bin == bin)
			return ts->t[i].n;
	return 0;
}

/* The table doubles at half full and every count survives the growth. */
static void test_counts_grow_exact(void **state)
{
	(void)state;
	struct tallies ts = { 0 };
	for (uint64_t off = 0; off < 20000; off++)
		for (unsigned k = 0; k <= off % 3; k++)
			assert_true(ct_tallies_add(&ts, 0, 1, off, 0, SIZE_MAX));
	assert_int_equal(ts.used, 20000);
	assert_true(ts.used * 2 <= ts.cap);
	for (uint64_t off = 0; off < 20000; off += 997)
		assert_int_equal(count_of(&ts, 1, off, 0), off % 3 + 1);
	free(ts.t);
}

/* A table at its cap refuses a new key rather than grow past it; a known key still counts. */
static void test_counts_cap(void **state)
{
	(void)state;
	struct tallies ts = { 0 };
	uint64_t off = 0, refused = 0;
	for (; off < 10000; off++)
		if (!ct_tallies_add(&ts, 0, 0, off, 0, 8192))
			refused++;
	assert_int_equal(ts.cap, 8192);
	assert_int_equal(ts.used + refused, 10000);
	assert_true(refused > 0);
	free(ts.t);
}

/* A timeline fuller than TL_MAX_ENTRIES widens its bins: a hot loop (the same 1000 offsets over
 * and over, 1 ms apart) for 20 minutes needs 2 s bins; every sample is still there, in the bin
 * its time falls in at the final width, which is a power of two times TL_BIN_NS. */
static void test_timeline_widens(void **state)
{
	(void)state;
	struct timeline tl = { 0 };
	const uint64_t t0 = 1000000000ull, n = 1200000, offsets = 1000;
	for (uint64_t i = 0; i < n; i++)
		ct_timeline_add(&tl, 0, 2, i % offsets, t0 + i * 1000000ull);
	assert_true(tl.bin_ns > TL_BIN_NS);
	assert_int_equal(tl.bin_ns % TL_BIN_NS, 0);
	assert_int_equal(__builtin_popcountll(tl.bin_ns / TL_BIN_NS), 1);
	assert_int_equal(tl.start_ns, t0);
	assert_int_equal(tl.left_out, 0);
	assert_int_equal(total(&tl.c), n);
	assert_true(tl.c.used < TL_MAX_ENTRIES);
	/* offset k is sampled at i = k, k + 1000, ...: count the ones in its bin at the final width */
	uint64_t per_bin = tl.bin_ns / 1000000ull;
	for (uint64_t k = 0; k < offsets; k += 97) {
		uint32_t bin = (uint32_t)(600000 / per_bin); /* a bin in the middle of the run */
		uint64_t want = 0;
		for (uint64_t i = k; i < n; i += offsets)
			want += i / per_bin == bin;
		assert_int_equal(count_of(&tl.c, 2, k, bin), want);
	}
	free(tl.c.t);
}

/* Code too varied to merge (every sample at its own offset) widens to the widest bins at once,
 * then leaves samples out, counting them: the timeline never holds more than its cap. */
static void test_timeline_distinct_offsets(void **state)
{
	(void)state;
	struct timeline tl = { 0 };
	const uint64_t n = 3 * (uint64_t)TL_MAX_ENTRIES;
	for (uint64_t i = 0; i < n; i++)
		ct_timeline_add(&tl, 0, 2, i, i * 1000000ull);
	assert_int_equal(tl.bin_ns, TL_BIN_NS << 13); /* the first width >= TL_BIN_MAX_NS */
	assert_true(tl.left_out > 0);
	assert_int_equal(total(&tl.c) + tl.left_out, n);
	assert_true(tl.c.cap <= 2 * TL_MAX_ENTRIES);
	free(tl.c.t);
}

/* Samples of one offset merge when their bins do: a widening halves the bins in use. */
static void test_timeline_merges_bins(void **state)
{
	(void)state;
	struct timeline tl = { 0 };
	/* fill the table with distinct keys in bin 0 .. so that the next add widens */
	for (uint64_t i = 0; i + 1 < TL_MAX_ENTRIES; i++)
		ct_timeline_add(&tl, 0, 3, i % 64, i / 64 * TL_BIN_NS);
	uint64_t before = tl.bin_ns;
	ct_timeline_add(&tl, 0, 3, 0, 0);
	assert_int_equal(tl.bin_ns, 2 * before);
	assert_int_equal(total(&tl.c), TL_MAX_ENTRIES);
	/* offset 5 was in bins 0 and 1 once each at 10 ms; at 20 ms both are bin 0 */
	assert_int_equal(count_of(&tl.c, 3, 5, 0), 2);
	free(tl.c.t);
}

/* Past the widest bins, samples are left out of the timeline and counted as such. */
static void test_timeline_left_out(void **state)
{
	(void)state;
	struct timeline tl = { .bin_ns = TL_BIN_MAX_NS, .start_ns = 0 };
	uint64_t n = 2 * (uint64_t)TL_MAX_ENTRIES + 1000;
	for (uint64_t i = 0; i < n; i++)
		ct_timeline_add(&tl, 0, 0, i, 1);
	assert_int_equal(tl.bin_ns, TL_BIN_MAX_NS);
	assert_true(tl.left_out > 0);
	assert_int_equal(total(&tl.c) + tl.left_out, n);
	free(tl.c.t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counts_grow_exact),    cmocka_unit_test(test_counts_cap),
		cmocka_unit_test(test_timeline_widens),      cmocka_unit_test(test_timeline_distinct_offsets),
		cmocka_unit_test(test_timeline_merges_bins), cmocka_unit_test(test_timeline_left_out),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
