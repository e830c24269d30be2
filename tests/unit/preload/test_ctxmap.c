/* SPDX-License-Identifier: MIT */
/* test_ctxmap.c - the lock-free context map: insert/lookup/delete, tombstone reuse, a full table,
 * and concurrent inserts of distinct keys from several threads. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "ctxmap.h"

#define NO_PATH 0xffffffffu

static struct ct_ctxmap make(unsigned bits)
{
	struct ct_ctxmap m;
	ct_ctxmap_init(&m, calloc((size_t)1 << bits, sizeof(struct ct_ctxmap_slot)), bits);
	return m;
}

static void test_basic(void **state)
{
	(void)state;
	struct ct_ctxmap m = make(8);
	int a, b;
	assert_int_equal(ct_ctxmap_lookup(&m, &a), NO_PATH);
	assert_true(ct_ctxmap_put(&m, &a, 7));
	assert_true(ct_ctxmap_put(&m, &b, 0));
	assert_int_equal(ct_ctxmap_lookup(&m, &a), 7);
	assert_int_equal(ct_ctxmap_lookup(&m, &b), 0);
	assert_true(ct_ctxmap_put(&m, &a, 9)); /* update in place */
	assert_int_equal(ct_ctxmap_lookup(&m, &a), 9);
	ct_ctxmap_remove(&m, &a);
	assert_int_equal(ct_ctxmap_lookup(&m, &a), NO_PATH);
	assert_int_equal(ct_ctxmap_lookup(&m, &b), 0);
	assert_false(ct_ctxmap_put(&m, NULL, 1)); /* reserved keys */
	assert_false(ct_ctxmap_put(&m, (void *)1, 1));
	free(m.slots);
}

/* Keys that collide (same hash) probe past each other and past tombstones. */
static void test_collisions_and_tombstones(void **state)
{
	(void)state;
	struct ct_ctxmap m = make(4); /* 16 slots */
	uintptr_t keys[16];
	for (unsigned i = 0; i < 16; i++) {
		keys[i] = 0x1000 + 16 * i;
		assert_true(ct_ctxmap_put(&m, (void *)keys[i], i));
	}
	assert_false(ct_ctxmap_put(&m, (void *)0x9990, 1)); /* full */
	assert_int_equal(m.full, 1);
	for (unsigned i = 0; i < 16; i++)
		assert_int_equal(ct_ctxmap_lookup(&m, (void *)keys[i]), i);
	for (unsigned i = 0; i < 16; i += 2)
		ct_ctxmap_remove(&m, (void *)keys[i]);
	for (unsigned i = 1; i < 16; i += 2)
		assert_int_equal(ct_ctxmap_lookup(&m, (void *)keys[i]), i);
	/* tombstones are reused: 8 new keys fit again */
	for (unsigned i = 0; i < 8; i++)
		assert_true(ct_ctxmap_put(&m, (void *)(uintptr_t)(0x50000 + 32 * i), 100 + i));
	for (unsigned i = 0; i < 8; i++)
		assert_int_equal(ct_ctxmap_lookup(&m, (void *)(uintptr_t)(0x50000 + 32 * i)), 100 + i);
	for (unsigned i = 1; i < 16; i += 2)
		assert_int_equal(ct_ctxmap_lookup(&m, (void *)keys[i]), i);
	free(m.slots);
}

struct worker {
	struct ct_ctxmap *m;
	unsigned id;
};

static void *insert_many(void *arg)
{
	struct worker *w = arg;
	for (unsigned i = 0; i < 20000; i++) {
		uintptr_t k = ((uintptr_t)w->id << 28) | ((uintptr_t)(i + 1) << 4); /* 32-bit too */
		if (!ct_ctxmap_put(w->m, (void *)k, w->id * 100000 + i))
			return (void *)1;
		if (i % 3 == 0)
			ct_ctxmap_remove(w->m, (void *)k);
	}
	return NULL;
}

static void test_concurrent(void **state)
{
	(void)state;
	struct ct_ctxmap m = make(18);
	pthread_t th[4];
	struct worker w[4];
	for (unsigned i = 0; i < 4; i++) {
		w[i] = (struct worker){ .m = &m, .id = i + 1 };
		pthread_create(&th[i], NULL, insert_many, &w[i]);
	}
	for (unsigned i = 0; i < 4; i++) {
		void *r;
		pthread_join(th[i], &r);
		assert_null(r);
	}
	for (unsigned id = 1; id <= 4; id++)
		for (unsigned i = 0; i < 20000; i++) {
			uintptr_t k = ((uintptr_t)id << 28) | ((uintptr_t)(i + 1) << 4);
			uint32_t want = i % 3 == 0 ? NO_PATH : id * 100000 + i;
			assert_int_equal(ct_ctxmap_lookup(&m, (void *)k), want);
		}
	free(m.slots);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_basic),
		cmocka_unit_test(test_collisions_and_tombstones),
		cmocka_unit_test(test_concurrent),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
