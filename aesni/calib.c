/* SPDX-License-Identifier: MIT */
/*
 * calib.c - ct_aesni_cpb_bound(): what AES costs on this CPU when done well, measured rather
 * than assumed, so the reporter can call a path "software speed" by comparison. Our own
 * AES-128-CTR at 8 KiB, best of several short trials (the bound, not the average), in ticks of
 * the counter ticks.h names (TSC cycles on x86): the unit of the trace's own times, so the
 * reporter compares like with like. The doctor's per-byte bound (ct_aesni_per_byte_bound) is in
 * ct_aesni_clock's unit instead: cycles on x86, ns elsewhere, which a reader can judge.
 */
#include <string.h>
#include <time.h>

#include "aes_internal.h"
#include "ticks.h"

#define CALIB_BYTES CT_AESNI_CALIB_BYTES
#define CALIB_TRIALS 64
#define CALIB_REPS 4

/* __atomic_*_n want integers: the double goes through its bit pattern. */
static uint64_t cached_bits; /* 0 = not measured yet */

uint64_t ct_aesni_clock(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return ct_rdtsc();
#else
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
#endif
}

const char *ct_aesni_clock_unit(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return "cycles";
#else
	return "ns";
#endif
}

/* Best of `trials` runs of 4 x 8 KiB of CTR, in now()'s unit per byte. */
static double measure_with(uint64_t (*now)(void), uint8_t buf[CT_AESNI_CALIB_BYTES], unsigned trials)
{
	static const uint8_t key[16] = { 0x2b, 0x7e, 0x15, 0x16, 0x28, 0xae, 0xd2, 0xa6,
					 0xab, 0xf7, 0x15, 0x88, 0x09, 0xcf, 0x4f, 0x3c };
	uint8_t ctr[16] = { 0 }, ecount[16];
	struct ct_aes_key k;
	unsigned num = 0;
	uint64_t best = UINT64_MAX;

	if (!trials || ct_aes_set_key(&k, key, 128) != 0 || now() == 0)
		return 0.0;
	memset(buf, 0x5a, CALIB_BYTES);
	for (int i = 0; i < 8; i++) /* warm caches, branch predictors and the AVX units */
		ct_aes_ctr128(&k, ctr, ecount, &num, buf, buf, CALIB_BYTES);
	for (unsigned t = 0; t < trials; t++) {
		const uint64_t t0 = now();
		for (int r = 0; r < CALIB_REPS; r++)
			ct_aes_ctr128(&k, ctr, ecount, &num, buf, buf, CALIB_BYTES);
		const uint64_t dt = now() - t0;
		if (dt < best)
			best = dt;
	}
	ct_aes_key_wipe(&k);
	return (double)best / (CALIB_BYTES * CALIB_REPS);
}

double ct_aesni_cpb_measure(uint8_t buf[CT_AESNI_CALIB_BYTES], unsigned trials)
{
	return measure_with(ct_ticks, buf, trials);
}

double ct_aesni_per_byte_bound(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return ct_aesni_cpb_bound();
#else
	static uint64_t bits; /* as cached_bits; the doctor asks once, a race only measures twice */
	uint8_t buf[CALIB_BYTES] __attribute__((aligned(64)));
	double v;
	uint64_t b = __atomic_load_n(&bits, __ATOMIC_ACQUIRE);
	if (b == 0) {
		v = measure_with(ct_aesni_clock, buf, CALIB_TRIALS);
		memcpy(&b, &v, sizeof(b));
		b |= b == 0;
		__atomic_store_n(&bits, b, __ATOMIC_RELEASE);
	}
	memcpy(&v, &b, sizeof(v));
	return v > 1e-9 ? v : 0.0;
#endif
}

static double measure(void)
{
	uint8_t buf[CALIB_BYTES] __attribute__((aligned(64)));

	return ct_aesni_cpb_measure(buf, CALIB_TRIALS);
}

double ct_aesni_cpb_bound(void)
{
	uint64_t bits = __atomic_load_n(&cached_bits, __ATOMIC_ACQUIRE);
	double v;
	if (bits == 0) {
		/* Racing first calls both measure; either result is fine. */
		v = measure();
		memcpy(&bits, &v, sizeof(bits));
		bits |= bits == 0; /* 0.0 (no AES-NI) must still count as measured */
		__atomic_store_n(&cached_bits, bits, __ATOMIC_RELEASE);
	}
	memcpy(&v, &bits, sizeof(v));
	return v > 1e-9 ? v : 0.0;
}

uint32_t ct_aesni_cpb_milli(void)
{
	const double v = ct_aesni_cpb_bound();
	return v > 0 ? (uint32_t)(v * 1000.0 + 0.5) : 0;
}
