/* SPDX-License-Identifier: MIT */
/*
 * test_perfetto_slices.c - the Perfetto export's slicing rule (report/perfetto_slices.c): the
 * first pass's count at every rung of the ladder is the number of slices the second pass builds
 * at that resolution, on streams with gaps, bursts, nested calls and weights; slices never
 * overlap and start at least the resolution apart; their sums are the operations' exactly; the
 * track table finds thousands of tracks; --resolution's parser and printer.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "perfetto_slices.h"
#include "views.h"

static uint64_t rng = 0x243f6a8885a308d3ull;
static uint32_t next_rand(void)
{
	rng = rng * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(rng >> 33);
}

/* A stream of n operations on one thread: mostly back to back, bursts with long pauses, now and
 * then one nested in the previous (starting before it ended), weights 1 or K. */
static struct ct_op *stream(size_t n)
{
	struct ct_op *ops = calloc(n, sizeof(*ops));
	assert_non_null(ops);
	uint64_t t = 1000000;
	for (size_t i = 0; i < n; i++) {
		uint32_t r = next_rand();
		uint32_t dur = 20 + r % 400;
		if (i && r % 50 == 0) /* nested: inside the previous one */
			t = ops[i - 1].start_mono_ns + 1;
		else if (r % 97 == 0)
			t += 1000000 + r % 50000000; /* a pause of 1-51 ms */
		else
			t += (i ? ops[i - 1].dur_ns : 0) + r % 300;
		ops[i] = (struct ct_op){ .start_mono_ns = t,
					 .dur_ns = dur,
					 .path_id = 7,
					 .bytes = 16 + r % 64,
					 .weight = r % 3 == 0 ? 8 : 1 };
	}
	return ops;
}

static void test_passes_agree(void **state)
{
	(void)state;
	enum { N = 20000 };
	struct ct_op *ops = stream(N);
	struct pf_track t = { 0 };
	uint64_t want_ops = 0, want_bytes = 0;
	for (size_t i = 0; i < N; i++) {
		pf_track_count(&t, &ops[i]);
		want_ops += ops[i].weight;
		want_bytes += (uint64_t)ops[i].bytes * ops[i].weight;
	}
	assert_int_equal(t.all.ops, want_ops);
	assert_int_equal(t.all.kept, N);
	assert_int_equal(t.all.bytes, want_bytes);
	uint64_t prev_count = UINT64_MAX;
	for (unsigned k = 0; k < PF_RUNGS; k++) {
		uint64_t res = pf_rung_ns(k), n = 0, sum_ops = 0, sum_kept = 0, sum_bytes = 0;
		uint64_t prev_start = 0, prev_end = 0;
		struct pf_slice s = { 0 };
		for (size_t i = 0; i <= N; i++) {
			if (i < N && pf_slice_add(&s, &ops[i], res))
				continue;
			/* s is finished: check it against the one before */
			if (n) {
				assert_true(s.start_ns >= prev_end);         /* no overlap */
				assert_true(s.start_ns - prev_start >= res); /* the rule */
			}
			n++;
			sum_ops += s.ops;
			sum_kept += s.kept;
			sum_bytes += s.bytes;
			prev_start = s.start_ns;
			prev_end = s.end_ns;
			if (i < N)
				pf_slice_start(&s, &ops[i]);
		}
		assert_int_equal(n, t.slices[k]); /* the count the choice was made on */
		assert_int_equal(sum_ops, want_ops);
		assert_int_equal(sum_kept, N);
		assert_int_equal(sum_bytes, want_bytes);
		assert_true(n <= prev_count); /* coarser, fewer */
		prev_count = n;
	}
	/* nested calls join the slice they are in even at 0: fewer slices than operations */
	assert_true(t.slices[0] < N && t.slices[0] > N / 2);
	assert_true(t.slices[PF_RUNGS - 1] < 20);
	free(ops);
}

static void test_ladder(void **state)
{
	(void)state;
	assert_int_equal(pf_rung_ns(0), 0);
	assert_int_equal(pf_rung_ns(1), 1);
	assert_int_equal(pf_rung_ns(3), 5);
	assert_int_equal(pf_rung_ns(PF_RUNGS - 1), 10000000000ull);
	for (unsigned k = 1; k < PF_RUNGS; k++) {
		uint64_t a = pf_rung_ns(k - 1), b = pf_rung_ns(k);
		assert_true(b > a && (a == 0 || b * 2 >= a * 5 || b == a * 2)); /* 1-2-5 steps */
	}
}

static void test_track_table(void **state)
{
	(void)state;
	struct pf_tracks ts = { 0 };
	for (uint32_t tid = 1; tid <= 3000; tid++)
		for (uint32_t path = 0; path < 3; path++) {
			struct pf_track *t = pf_track_of(&ts, tid, path);
			assert_non_null(t);
			t->out_tid = tid * 10 + path;
		}
	assert_int_equal(ts.n, 9000);
	for (uint32_t tid = 3000; tid >= 1; tid--)
		for (uint32_t path = 0; path < 3; path++) {
			struct pf_track *t = pf_track_of(&ts, tid, path);
			assert_int_equal(t->tid, tid);
			assert_int_equal(t->path_id, path);
			assert_int_equal(t->out_tid, tid * 10 + path);
		}
	assert_int_equal(ts.n, 9000);
	pf_tracks_free(&ts);
}

static void test_parse_resolution(void **state)
{
	(void)state;
	static const struct {
		const char *in;
		bool ok, is_auto;
		uint64_t ns;
	} cases[] = {
		{ "auto", true, true, 0 },
		{ "0ns", true, false, 0 },
		{ "10us", true, false, 10000 },
		{ "1.5us", true, false, 1500 },
		{ "2ms", true, false, 2000000 },
		{ "1s", true, false, 1000000000 },
		{ "86400s", true, false, 86400000000000ull },
		{ "86401s", false, false, 0 },
		{ "1.5ns", false, false, 0 },
		{ "10", false, false, 0 },
		{ "-1ms", false, false, 0 },
		{ "+1ms", false, false, 0 },
		{ "5 us", false, false, 0 },
		{ "", false, false, 0 },
		{ "fast", false, false, 0 },
		{ "nanus", false, false, 0 },
		{ "infs", false, false, 0 },
		{ "1msx", false, false, 0 },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		bool is_auto = !cases[i].is_auto;
		uint64_t ns = 12345;
		bool ok = rp_parse_resolution(cases[i].in, &is_auto, &ns);
		if (ok != cases[i].ok)
			fail_msg("'%s': %s", cases[i].in, ok ? "accepted" : "refused");
		if (ok) {
			assert_int_equal(is_auto, cases[i].is_auto);
			assert_int_equal(ns, cases[i].ns);
		}
	}
	char buf[32];
	rp_format_resolution(0, buf, sizeof(buf));
	assert_string_equal(buf, "0ns");
	rp_format_resolution(5000, buf, sizeof(buf));
	assert_string_equal(buf, "5us");
	rp_format_resolution(1500, buf, sizeof(buf));
	assert_string_equal(buf, "1500ns");
	rp_format_resolution(10000000000ull, buf, sizeof(buf));
	assert_string_equal(buf, "10s");
	rp_format_resolution(200000000, buf, sizeof(buf));
	assert_string_equal(buf, "200ms");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_passes_agree),
		cmocka_unit_test(test_ladder),
		cmocka_unit_test(test_track_table),
		cmocka_unit_test(test_parse_resolution),
	};
	return cmocka_run_group_tests_name("perfetto-slices", tests, NULL, NULL);
}
