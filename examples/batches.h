/* SPDX-License-Identifier: MIT */
/*
 * batches.h - how the self-timing examples (selftimed.c, gcrypt_bench.c, gnutls_cipher_bench.c)
 * time their calls: in batches of about a millisecond between clock reads, after WARMUP_BATCHES
 * warm-up batches of 16 (counted, not kept; the fastest sizes the others), summed up by the median batch
 * and the mean of the batches no preemption stretched: a busy machine's interrupts slow every
 * batch a little (that is the calls' cost there), and a few batches lose the CPU for a time
 * slice, to another thread or, on a VM, to the hypervisor (steal; that is not). A batch that
 * took more than BATCH_OFF_CPU_NS beyond the median lost it: the same bound as the report's (a
 * pause longer than that is the thread descheduled, preload/timing.c CT_PAUSE_MAX_NS), so that
 * both leave out the same gaps. The tests compare the report's times with that mean.
 */
#ifndef CT_EXAMPLES_BATCHES_H
#define CT_EXAMPLES_BATCHES_H

#include <stdint.h>
#include <stdlib.h>

#define BATCH_OFF_CPU_NS 500000u

/* Warm-up batches of 16 iterations, the fastest of which sizes the others. One of them is often
 * slow for reasons of the first calls (page faults; under cryptrace, its calibration or first
 * call-site unwind): sized from a single one, 1 in ~20 runs had batches of ~50 iterations (10 us),
 * where the program's own clock reads (CLOCK_THREAD_CPUTIME_ID is a syscall) cost 10-20 % of the
 * batches and ran outside them, but inside the report's spans (tests/truth read 1.12-1.19). */
#define WARMUP_BATCHES 4

struct batches {
	uint64_t *ns; /* the kept batches' times; NULL when out of memory */
	size_t n, cap;
	int size;            /* iterations in the next batch */
	int sized;           /* warm-up batches done (WARMUP_BATCHES: sized) */
	uint64_t warmup_min; /* the fastest warm-up batch so far */
};

static inline void batches_init(struct batches *b)
{
	b->cap = 1 << 16;
	b->n = 0;
	b->size = 16;
	b->sized = 0;
	b->warmup_min = UINT64_MAX;
	b->ns = malloc(b->cap * sizeof(*b->ns));
}

static int batches_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* A batch of b->size iterations took ns (count its iterations before: b->size may change). */
static inline void batches_add(struct batches *b, uint64_t ns)
{
	if (b->n == b->cap) {
		b->cap *= 2;
		uint64_t *more = realloc(b->ns, b->cap * sizeof(*b->ns));
		if (!more)
			free(b->ns);
		b->ns = more;
	}
	if (b->ns)
		b->ns[b->n++] = ns;
	if (b->sized < WARMUP_BATCHES) { /* the fastest sizes the others to ~1 ms */
		if (ns < b->warmup_min)
			b->warmup_min = ns;
		uint64_t each = b->warmup_min / 16 ? b->warmup_min / 16 : 1;
		if (++b->sized == WARMUP_BATCHES)
			b->size = 1000000 / each > 4096 ? 4096
				  : 1000000 / each < 1  ? 1
							: (int)(1000000 / each);
		b->n = 0; /* warm-up batches are not kept */
	}
}

/* The median batch and the robust mean; false when no batch was kept. Sorts the batches. */
static inline int batches_summary(struct batches *b, uint64_t *median, uint64_t *robust)
{
	if (!b->ns || !b->n)
		return 0;
	qsort(b->ns, b->n, sizeof(*b->ns), batches_cmp);
	uint64_t kept = 0, kept_ns = 0;
	for (size_t i = 0; i < b->n && b->ns[i] <= b->ns[b->n / 2] + BATCH_OFF_CPU_NS; i++, kept++)
		kept_ns += b->ns[i];
	*median = b->ns[b->n / 2];
	*robust = kept_ns / kept;
	return 1;
}

#endif
