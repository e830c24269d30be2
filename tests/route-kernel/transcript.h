/* SPDX-License-Identifier: MIT */
/*
 * transcript.h - what the differential programs of this folder (lowlevel_diff.c,
 * evp_kernel_diff.c) share: the xorshift generator their cases are drawn from, so that one seed
 * reproduces a run, and the running FNV-1a hash per class of cases that they print, so that a
 * native and a routed run can be compared line by line. Included once per program.
 */
#ifndef CT_TRANSCRIPT_H
#define CT_TRANSCRIPT_H

#include <stddef.h>
#include <stdint.h>

static uint64_t rng_state; /* the seed; never 0 */

static uint64_t rnd(void)
{
	uint64_t x = rng_state;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return rng_state = x;
}

/* *h (0: not started) extended by n bytes at p. */
static void fnv_mix(uint64_t *h, const void *p, size_t n)
{
	const uint8_t *b = p;
	uint64_t x = *h ? *h : 0xcbf29ce484222325ull;
	for (size_t i = 0; i < n; i++)
		x = (x ^ b[i]) * 0x100000001b3ull;
	*h = x;
}

#endif
