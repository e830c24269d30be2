/* SPDX-License-Identifier: MIT */
/* test_ops_cap.c - per-call mode's rate cap (preload/ops_cap.c) on made-up op streams, with a
 * nanosecond clock: a short burst is kept whole; a steady high rate keeps between B/2 and B per
 * window whose weights add up to the ops offered (within 6 standard deviations of the estimate);
 * a rate that jumps within a window, or ops all at one instant, still keep at most B; every op
 * offered is either kept or counted as sampled out. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <math.h>

#include "internal.h"

struct ct_clock ct_clk = { .use_tsc = false, .ms_ticks = 1000000 }; /* CLOCK_MONOTONIC ns */

#define RATE 250000u
#define B (RATE / 10) /* the budget of a 100 ms window */
#define WINDOW_NS 100000000ull
#define MAX_WINDOWS 64

struct tally {
	uint64_t offered, kept, weights;
	double var; /* sum of w (w - 1): the weights' variance estimate */
	uint64_t kept_in[MAX_WINDOWS];
	uint32_t weights_in[MAX_WINDOWS]; /* bit i: an op of weight 2^i was kept in that window */
	uint64_t t0;
	bool all_weight_1;
};

static struct ct_thread th;

static void start(struct tally *y, uint64_t t0)
{
	/* a fresh process state: the window state is static in ops_cap.c, so each case starts long
	 * after the last one (a new window, K from 1) */
	memset(y, 0, sizeof(*y));
	y->t0 = t0;
	y->all_weight_1 = true;
	th.rng = 12345;
	atomic_store(&th.ops_sampled_out, 0);
	ct_ops_cap_configure(RATE);
}

static void offer(struct tally *y, uint64_t at)
{
	uint32_t w = 0;
	y->offered++;
	if (!ct_ops_cap_keep(&th, at, &w))
		return;
	assert_true(w >= 1 && (w & (w - 1)) == 0); /* a power of two */
	y->kept++;
	y->weights += w;
	y->var += (double)w * (double)(w - 1);
	y->all_weight_1 &= w == 1;
	uint64_t win = (at - y->t0) / WINDOW_NS;
	if (win < MAX_WINDOWS) {
		y->kept_in[win]++;
		y->weights_in[win] |= w;
	}
}

static void check_accounts(const struct tally *y)
{
	assert_int_equal(y->kept + atomic_load(&th.ops_sampled_out), y->offered);
	for (unsigned i = 0; i < MAX_WINDOWS; i++)
		if (y->kept_in[i] > B)
			fail_msg("window %u kept %llu > B = %u", i, (unsigned long long)y->kept_in[i], B);
	double off = fabs((double)y->weights - (double)y->offered);
	if (off > 6 * sqrt(y->var))
		fail_msg("weights %llu vs %llu offered: off by %.0f > 6 sigma = %.0f",
			 (unsigned long long)y->weights, (unsigned long long)y->offered, off,
			 6 * sqrt(y->var));
}

/* 10,000 ops within 10 ms (under B/2), twice with a second between: every one kept, weight 1. */
static void test_burst_kept_whole(void **state)
{
	(void)state;
	struct tally y;
	uint64_t t0 = 1000ull * WINDOW_NS;
	start(&y, t0);
	for (int burst = 0; burst < 2; burst++)
		for (unsigned i = 0; i < 10000; i++)
			offer(&y, t0 + (uint64_t)burst * 10 * WINDOW_NS + i * 1000);
	assert_int_equal(y.kept, 20000);
	assert_true(y.all_weight_1);
	check_accounts(&y);
}

/* 5 M ops/s evenly for 3 s: from the second window on, each keeps between B/2 and B. */
static void test_steady_rate(void **state)
{
	(void)state;
	struct tally y;
	uint64_t t0 = 2000ull * WINDOW_NS;
	start(&y, t0);
	for (uint64_t i = 0; i < 15000000; i++)
		offer(&y, t0 + i * 200);
	for (unsigned w = 1; w < 30; w++) {
		if (y.kept_in[w] < B / 2)
			fail_msg("window %u kept %llu < B/2", w, (unsigned long long)y.kept_in[w]);
		/* K comes from the previous window's rate: the sample starts at the right K (1 and K,
		 * or 2K after a doubling the draw's noise may cause), rather than doubling its way up
		 * from 1 again in every window */
		if (__builtin_popcount(y.weights_in[w]) > 3)
			fail_msg("window %u kept weights %#x: K climbed from 1 again", w, y.weights_in[w]);
	}
	assert_false(y.all_weight_1);
	check_accounts(&y);
}

/* A quiet window (1,000 ops), then 20 M ops/s: the doubling within the window holds it to B. */
static void test_rate_jump(void **state)
{
	(void)state;
	struct tally y;
	uint64_t t0 = 3000ull * WINDOW_NS;
	start(&y, t0);
	for (uint64_t i = 0; i < 1000; i++)
		offer(&y, t0 + i * (WINDOW_NS / 1000));
	for (uint64_t i = 0; i < 4000000; i++)
		offer(&y, t0 + WINDOW_NS + i * 50);
	assert_true(y.kept_in[1] >= B / 2);
	check_accounts(&y);
}

/* 3 M ops with one and the same start (a coarse clock): no share of the window passes, and still
 * no more than B are kept. */
static void test_one_instant(void **state)
{
	(void)state;
	struct tally y;
	uint64_t t0 = 4000ull * WINDOW_NS;
	start(&y, t0);
	for (uint64_t i = 0; i < 3000000; i++)
		offer(&y, t0);
	assert_true(y.kept >= B / 2 && y.kept <= B);
	assert_int_equal(y.kept + atomic_load(&th.ops_sampled_out), y.offered);
	assert_true(ct_ops_cap_max_weight() > 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_burst_kept_whole),
		cmocka_unit_test(test_steady_rate),
		cmocka_unit_test(test_rate_jump),
		cmocka_unit_test(test_one_instant),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
