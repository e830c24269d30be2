/* SPDX-License-Identifier: MIT */
/* test_timing.c - the span and cell arithmetic of common/timing_model.c: which spans count as
 * calls back to back, how a span's time is shared among its cells, and how a cell is priced. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include "timing_model.h"

static const struct ct_span_tolerance tol = { .per_call_ns = 10, .fixed_ns = 20 };

/* 100 calls of a 20 ns probe in 2.5 us: a loop (each call pays a few ns around it): accepted */
static void test_loop_accepted(void **state)
{
	(void)state;
	struct ct_span_part p[1] = { { .cell = 5, .calls = 100, .probe_ns = 20, .probed = true } };
	assert_int_equal(ct_span_judge(p, 1, 2500, &tol), CT_SPAN_ACCEPTED);
	assert_float_equal(p[0].share_ns, 2500, 1e-9);
	/* the limit: 100 x (1.5 x 20 + 10) + 20 = 4020 */
	assert_int_equal(ct_span_judge(p, 1, 4020, &tol), CT_SPAN_ACCEPTED);
	assert_int_equal(ct_span_judge(p, 1, 4021, &tol), CT_SPAN_REJECTED);
}

/* A pause inside the span (a batch's end, a syscall, another library's work): rejected */
static void test_pause_rejected(void **state)
{
	(void)state;
	struct ct_span_part p[1] = { { .cell = 5, .calls = 100, .probe_ns = 20, .probed = true } };
	assert_int_equal(ct_span_judge(p, 1, 100 * 20 + 50000, &tol), CT_SPAN_REJECTED);
}

/* A cell with no probe cannot be judged; an empty span neither */
static void test_unjudged(void **state)
{
	(void)state;
	struct ct_span_part p[2] = { { .cell = 5, .calls = 10, .probe_ns = 20, .probed = true },
				     { .cell = 34, .calls = 10, .probed = false } };
	assert_int_equal(ct_span_judge(p, 2, 300, &tol), CT_SPAN_UNJUDGED);
	assert_int_equal(ct_span_judge(p, 0, 300, &tol), CT_SPAN_UNJUDGED);
}

/* A message loop (key set-up 270 ns, AAD 20 ns, data 40 ns): the span's time is shared in
 * proportion to calls x probe, and the shares add up to the span */
static void test_shares(void **state)
{
	(void)state;
	struct ct_span_part p[3] = { { .cell = 33, .calls = 4, .probe_ns = 270, .probed = true },
				     { .cell = 35, .calls = 4, .probe_ns = 20, .probed = true },
				     { .cell = 7, .calls = 4, .probe_ns = 40, .probed = true } };
	assert_int_equal(ct_span_judge(p, 3, 1650, &tol), CT_SPAN_ACCEPTED);
	assert_float_equal(p[0].share_ns, 1650.0 * 270 / 330, 1e-6);
	assert_float_equal(p[1].share_ns, 1650.0 * 20 / 330, 1e-6);
	assert_float_equal(p[0].share_ns + p[1].share_ns + p[2].share_ns, 1650, 1e-6);
	/* probes of 0 ns (a call shorter than a clock tick): shared by calls */
	struct ct_span_part q[2] = { { .calls = 3, .probe_ns = 0, .probed = true },
				     { .calls = 1, .probe_ns = -2, .probed = true } };
	assert_int_equal(ct_span_judge(q, 2, 40, &tol), CT_SPAN_ACCEPTED);
	assert_float_equal(q[0].share_ns, 30, 1e-9);
	/* a span measured below its calibrated cost counts as 0, not negative */
	assert_int_equal(ct_span_judge(q, 2, -5, &tol), CT_SPAN_ACCEPTED);
	assert_float_equal(q[0].share_ns + q[1].share_ns, 0, 1e-9);
	/* a rejected span is shared the same way (the reporter measures the pause from it) */
	struct ct_span_part r[2] = { { .cell = 33, .calls = 1, .probe_ns = 300, .probed = true },
				     { .cell = 7, .calls = 2, .probe_ns = 50, .probed = true } };
	assert_int_equal(ct_span_judge(r, 2, 60400, &tol), CT_SPAN_REJECTED);
	assert_float_equal(r[0].share_ns, 60400.0 * 300 / 400, 1e-6);
	assert_float_equal(r[0].share_ns + r[1].share_ns, 60400, 1e-6);
	/* a pause past pause_max_ns (beyond the 400 ns the calls predict) is the thread descheduled:
	 * the span is dropped; one just within it is a pause, kept whole */
	const struct ct_span_tolerance capped = { .per_call_ns = 10, .fixed_ns = 20, .pause_max_ns = 500000 };
	assert_int_equal(ct_span_judge(r, 2, 3e6, &capped), CT_SPAN_DESCHEDULED);
	assert_int_equal(ct_span_judge(r, 2, 400 + 500001, &capped), CT_SPAN_DESCHEDULED);
	assert_int_equal(ct_span_judge(r, 2, 400 + 499999, &capped), CT_SPAN_REJECTED);
	assert_float_equal(r[0].share_ns + r[1].share_ns, 400 + 499999, 1e-6);
	assert_float_equal(r[0].share_ns, (400 + 499999) * 300.0 / 400, 1e-6);
	/* an accepted span keeps its time whole */
	assert_int_equal(ct_span_judge(r, 2, 500, &capped), CT_SPAN_ACCEPTED);
	assert_float_equal(r[0].share_ns + r[1].share_ns, 500, 1e-6);
}

/* What a cell's rejected spans held beyond their calls, extrapolated to all its calls */
static void test_cell_pause(void **state)
{
	(void)state;
	/* none rejected, or nothing judged: no pause */
	assert_float_equal(ct_cell_pause_ns(1000, 100, 0, 0, 20), 0, 1e-9);
	assert_float_equal(ct_cell_pause_ns(1000, 0, 0, 0, 20), 0, 1e-9);
	/* a tight loop of 20 ns calls: 10 of 1000 judged calls were in spans that an interrupt of
	 * 60 us stretched (their time 60200 ns), over 100000 calls: the pause is 60 us per 1000
	 * judged calls, 6 ms over all */
	assert_float_equal(ct_cell_pause_ns(100000, 990, 10, 60200, 20), 60000.0 * 100, 1e-6);
	/* rejected spans no longer than their calls' price: no pause, never negative */
	assert_float_equal(ct_cell_pause_ns(100000, 990, 10, 150, 20), 0, 1e-9);
}

static void test_cell_wall(void **state)
{
	(void)state;
	double w;
	/* no timing at all */
	assert_false(ct_cell_wall_ns(10, 0, 0, 0, 0, 0, 0, &w));
	/* probes only (kernel paths, old traces): calls x the probes' mean */
	assert_true(ct_cell_wall_ns(1000, 10, 500, 0, 0, 0, 0, &w));
	assert_float_equal(w, 1000 * 50.0, 1e-9);
	/* a negative probe sum reads as 0 */
	assert_true(ct_cell_wall_ns(1000, 10, (uint64_t)-30, 0, 0, 0, 0, &w));
	assert_float_equal(w, 0, 1e-9);
	/* spans mostly accepted: rejected calls cost what accepted ones did (a loop with pauses) */
	assert_true(ct_cell_wall_ns(10000, 100, 100 * 7, 900, 900 * 15, 100, 100 * 400, &w));
	assert_float_equal(w, 10000 * 15.0, 1e-6);
	/* spans mostly rejected: calls run alone, rejected ones at the probes' mean */
	assert_true(ct_cell_wall_ns(10000, 100, 100 * 70, 100, 100 * 15, 900, 900 * 200, &w));
	assert_float_equal(w, 10000 * (100 * 15.0 + 900 * 70.0) / 1000, 1e-6);
	/* spans mostly rejected, but at about the accepted ones' cost per call (30.2 vs 29.7 ns):
	 * back to back, judged against probes that undershoot (5.3 ns, GnuTLS at 16 B): at the
	 * accepted spans' mean, not the probes' */
	assert_true(ct_cell_wall_ns(1000000, 1937, 1937 * 5, 417, 417 * 30, 12857, 12857 * 31, &w));
	assert_float_equal(w, 1000000 * 30.0, 1e-6);
	/* ... but not over too few accepted calls to know their cost */
	assert_true(ct_cell_wall_ns(1000000, 1937, 1937 * 5, 40, 40 * 30, 12857, 12857 * 31, &w));
	assert_float_equal(w, 1000000 * (40 * 30.0 + 12857 * 5.0) / (40 + 12857), 1e-6);
	/* rejected spans far beyond the accepted (other work between calls): the probes' mean */
	assert_true(ct_cell_wall_ns(1000000, 1937, 1937 * 5, 417, 417 * 30, 12857, 12857 * 60, &w));
	assert_float_equal(w, 1000000 * (417 * 30.0 + 12857 * 5.0) / (417 + 12857), 1e-6);
	/* spans without probes (not written by the preload): at the spans' mean */
	assert_true(ct_cell_wall_ns(100, 0, 0, 10, 200, 5, 5 * 20, &w));
	assert_float_equal(w, 100 * 20.0, 1e-9);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loop_accepted), cmocka_unit_test(test_pause_rejected),
		cmocka_unit_test(test_unjudged),      cmocka_unit_test(test_shares),
		cmocka_unit_test(test_cell_wall),     cmocka_unit_test(test_cell_pause),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
