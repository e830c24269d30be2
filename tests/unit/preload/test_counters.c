/* SPDX-License-Identifier: MIT */
/* test_counters.c - the arithmetic the hot path relies on, on every target: the tick -> ns
 * product (ct_mul_shr32: one MUL on 64-bit targets, 32x32 products on 32-bit ones) against a
 * long multiplication, and the 64-bit counters (CT_ADD: on 32-bit targets a low word and a
 * bracketed carry) across the 2^32 boundary, negative sums, and a reader on another thread that
 * must never see a torn value. */
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "internal.h"

#ifdef CT_SPLIT_COUNTERS /* CT_ADD's carry brackets (stats.c, not linked here) */
_Atomic uint32_t ct_carry_begun, ct_carry_ended;
#endif

/* (a * b) >> 32 mod 2^64 by schoolbook multiplication in 16-bit limbs: no 128-bit type, no
 * 64x64 product, nothing shared with the code under test. */
static uint64_t ref_mul_shr32(uint64_t a, uint64_t b)
{
	uint32_t la[4], lb[4], r[9] = { 0 };
	for (int i = 0; i < 4; i++) {
		la[i] = (uint32_t)(a >> (16 * i)) & 0xffff;
		lb[i] = (uint32_t)(b >> (16 * i)) & 0xffff;
	}
	for (int i = 0; i < 4; i++)
		for (int j = 0; j < 4; j++) {
			uint32_t p = la[i] * lb[j]; /* < 2^32 */
			for (int k = i + j; p; k++) {
				uint32_t s = r[k] + (p & 0xffff);
				r[k] = s & 0xffff;
				p = (p >> 16) + (s >> 16);
			}
		}
	/* limbs 2..5 are bits 32..95 */
	return (uint64_t)r[2] | (uint64_t)r[3] << 16 | (uint64_t)r[4] << 32 | (uint64_t)r[5] << 48;
}

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void test_mul_shr32(void **state)
{
	(void)state;
	static const uint64_t edge[] = { 0,
					 1,
					 0xffffffffull,
					 0x100000000ull,
					 0xffffffffffffffffull,
					 0x8000000000000000ull,
					 1000000000ull << 32 };
	for (size_t i = 0; i < sizeof(edge) / sizeof(edge[0]); i++)
		for (size_t j = 0; j < sizeof(edge) / sizeof(edge[0]); j++)
			assert_true(ct_mul_shr32(edge[i], edge[j]) == ref_mul_shr32(edge[i], edge[j]));
	for (int i = 0; i < 200000; i++) {
		uint64_t a = rnd() >> (rnd() & 63), b = rnd() >> (rnd() & 63);
		assert_true(ct_mul_shr32(a, b) == ref_mul_shr32(a, b));
	}
	/* what it is for: one second of a 2.45 GHz TSC, and of a 25 MHz CNTVCT, is 1e9 ns (to the
	 * truncation of the 32.32 factor) */
	uint64_t mult = (1000000000ull << 32) / 2450000000ull;
	uint64_t ns = ct_mul_shr32(2450000000ull, mult);
	assert_true(ns <= 1000000000ull && ns > 1000000000ull - 3);
	mult = (1000000000ull << 32) / 25000000ull;
	assert_true(ct_mul_shr32(25000000ull, mult) == 1000000000ull);
}

static void test_add_carry(void **state)
{
	(void)state;
	uint64_t v = 0xffffffffull;
	CT_ADD(v, 1);
	assert_true(v == 0x100000000ull);
	CT_ADD(v, 0xffffffffull);
	assert_true(v == 0x1ffffffffull);
	CT_ADD(v, 0x300000002ull); /* a high word of its own and a carry */
	assert_true(v == 0x500000001ull);
	CT_ADD(v, (uint64_t)-2); /* aes.c moves a call out of a cell this way: a borrow */
	assert_true(v == 0x4ffffffffull);
	CT_ADD(v, (uint64_t)-0x4ffffffffll);
	assert_true(v == 0);
	CT_ADD(v, (uint64_t)-5); /* a probe's corrected time may sum below 0 (two's complement) */
	assert_true(v == (uint64_t)-5);
	CT_ADD(v, 7);
	assert_true(v == 2);
	assert_true(ct_counter_load(&v) == 2);
#ifdef CT_SPLIT_COUNTERS
	assert_int_equal(ct_carry_begun, ct_carry_ended);
	assert_true(ct_carry_begun >= 5); /* the carries and borrows above, and no small add */
#endif
}

/* The writer adds 2^24 at a time from just under a carry, so its high word moves every 256
 * adds; the reader checks every value it reads is a whole number of steps from the start and
 * never goes back: a torn read (the new low word with the old high word) breaks both. */
#define STEP 0x1000000ull
#define START (0xff000000ull - 64 * STEP)
#define ADDS (1u << 20)
static uint64_t shared;
static _Atomic int writer_done;
static _Atomic uint64_t reads, adds;

/* ADDS adds at least, and on until the reader has read 10000 times while they ran */
static void *writer(void *arg)
{
	(void)arg;
	uint64_t n = 0;
	while (n < ADDS || atomic_load(&reads) < 10000) {
		CT_ADD(shared, STEP);
		n++;
	}
	atomic_store(&adds, n);
	atomic_store(&writer_done, 1);
	return NULL;
}

static void test_reader_never_torn(void **state)
{
	(void)state;
	shared = START;
	pthread_t th;
	assert_int_equal(pthread_create(&th, NULL, writer, NULL), 0);
	uint64_t last = START;
	while (!atomic_load(&writer_done)) {
		uint32_t begun = 0;
		uint64_t v;
#ifdef CT_SPLIT_COUNTERS
		if (!ct_carry_read_begin(&begun))
			continue;
#endif
		v = ct_counter_load(&shared);
#ifdef CT_SPLIT_COUNTERS
		if (ct_carry_read_again(begun))
			continue;
#endif
		(void)begun;
		assert_true((v - START) % STEP == 0);
		assert_true(v >= last);
		last = v;
		atomic_fetch_add(&reads, 1);
	}
	pthread_join(th, NULL);
	assert_true(ct_counter_load(&shared) == START + atomic_load(&adds) * STEP);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mul_shr32),
		cmocka_unit_test(test_add_carry),
		cmocka_unit_test(test_reader_never_torn),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
