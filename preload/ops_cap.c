/* SPDX-License-Identifier: MIT */
/*
 * ops_cap.c - per-call mode's rate cap on the timeline (CRYPTRACE_MAX_OPS_RATE, `cryptrace run
 * --max-ops-rate`): which operations offered to the threads' rings are kept, and what each kept
 * one weighs. Calls and bytes stay exact (the STATS cells count every call); only the timeline is
 * cut, and the trace says by how much (PROC's ops_sampled_out, each kept op's weight).
 *
 * The rule (docs/reports.md, "Per-call timeline"): time in windows of CT_OPS_WINDOW_MS per
 * process; budget B = rate x window. The first B/2 operations of a window are all kept (weight
 * 1: a short burst is seen whole); after them a uniform random sample of 1 in K, K a power of two
 * from the previous window's rate so that the sample fills about B/2, doubled within the window
 * whenever the sample fills faster than the window passes; never more than B kept in a window.
 * A kept op weighs K (the inverse of its chance to be kept), so the weights of a window sum to
 * its operations in expectation.
 *
 * Process-wide state in relaxed atomics. An op the sample passes over costs two loads of shared
 * words that change ten times a second, a random draw and a count in its own thread's state;
 * only kept ops (at most B per window) write a shared word. A thread that reads a window's state
 * just as another turns it may keep its op under the old window's terms: a window can keep a few
 * ops beyond B, one per thread racing its turn at most.
 */
#include <stdatomic.h>

#include "internal.h"

uint32_t ct_max_ops_rate;

static uint64_t budget, half; /* B and B/2 of a window, at least 1 each */
static uint64_t checkpoint;   /* the sample's fill is checked every this many kept ops */

static struct {
	_Atomic uint64_t end;       /* clock value at which the current window ends; 0: none yet */
	_Atomic uint32_t kept;      /* ops kept (or drawn past B) in the current window: 32 bits,
				      * one plain atomic add on 32-bit targets too */
	_Atomic uint32_t shift;     /* log2 K of the current window's sample */
	_Atomic uint32_t max_shift; /* the largest shift a kept op carried (PROC) */
} win;

void ct_ops_cap_configure(uint32_t rate)
{
	ct_max_ops_rate = rate;
	budget = ((uint64_t)rate * CT_OPS_WINDOW_MS + 999) / 1000;
	half = (budget + 1) / 2;
	/* 32 checks per window's sample: a rate that jumps mid-window is caught within 1/32 of it */
	checkpoint = half / 32 ? half / 32 : 1;
}

static uint64_t window_ticks(void)
{
	return CT_OPS_WINDOW_MS * ct_clk.ms_ticks;
}

/* log2 of the K that leaves about B/2 sampled of `offered` ops in a window: the smallest power of
 * two with (offered - B/2) / K <= B/2. */
static uint32_t shift_for(uint64_t offered)
{
	uint32_t s = 0;
	while (s < CT_OP_WEIGHT_LOG2_MAX && offered > half && ((offered - half) >> s) > half)
		s++;
	return s;
}

/* The op at `start` is past the window that ends at `end`: turns it (one thread wins the turn;
 * the others see its result). Returns the current window's end. */
static uint64_t window_turn(uint64_t start, uint64_t end)
{
	uint64_t w = window_ticks();
	/* the next window follows on, unless the process was idle for a whole window (then the new
	 * one starts now, and its K starts from 1: the previous window saw nothing) */
	bool follows = end && start < end + w;
	uint64_t next_end = follows ? end + w : start + w;
	if (!atomic_compare_exchange_strong_explicit(&win.end, &end, next_end, memory_order_relaxed,
						     memory_order_relaxed))
		return end; /* another thread turned it */
	uint64_t kept = atomic_exchange_explicit(&win.kept, 0u, memory_order_relaxed);
	uint32_t shift = atomic_load_explicit(&win.shift, memory_order_relaxed);
	/* the previous window's ops, estimated from what it kept: its burst, and each kept sample
	 * standing for K (the last K it used: an over- rather than an underestimate when it doubled) */
	uint64_t offered = kept <= half ? kept : half + ((kept - half) << shift);
	atomic_store_explicit(&win.shift, follows ? shift_for(offered) : 0, memory_order_relaxed);
	return next_end;
}

/* The sample of this window has kept `sampled` ops by `start`: when that is more of its B/2 than
 * the share of the window gone by, K doubles (from the value this op was drawn with). */
static void maybe_double(uint64_t start, uint64_t end, uint64_t sampled, uint32_t shift)
{
	uint64_t w = window_ticks();
	uint64_t elapsed = start + w > end ? start + w - end : 0;
	if (elapsed * half >= sampled * w || shift >= CT_OP_WEIGHT_LOG2_MAX)
		return;
	atomic_compare_exchange_strong_explicit(&win.shift, &shift, shift + 1, memory_order_relaxed,
						memory_order_relaxed);
}

/* An op not kept: counted in its thread (single writer; the flusher sums them into PROC). */
static bool left_out(struct ct_thread *t)
{
	ct_owned_inc(&t->ops_sampled_out);
	return false;
}

bool ct_ops_cap_keep(struct ct_thread *t, uint64_t start, uint32_t *weight)
{
	uint64_t end = atomic_load_explicit(&win.end, memory_order_relaxed);
	if (CT_UNLIKELY(start >= end))
		end = window_turn(start, end);
	uint32_t shift = 0;
	if (atomic_load_explicit(&win.kept, memory_order_relaxed) >= half) {
		shift = atomic_load_explicit(&win.shift, memory_order_relaxed);
		/* kept with chance 2^-shift: the top `shift` bits of a uniform word all zero */
		if (shift && ct_rng_next(t) >> (32 - shift))
			return left_out(t);
	}
	uint64_t kept = (uint64_t)atomic_fetch_add_explicit(&win.kept, 1u, memory_order_relaxed) + 1;
	if (CT_UNLIKELY(kept > budget))
		return left_out(t);
	if (kept > half && (kept - half) % checkpoint == 0)
		maybe_double(start, end, kept - half, shift);
	uint32_t max = atomic_load_explicit(&win.max_shift, memory_order_relaxed);
	while (CT_UNLIKELY(shift > max) &&
	       !atomic_compare_exchange_weak_explicit(&win.max_shift, &max, shift, memory_order_relaxed,
						      memory_order_relaxed))
		;
	*weight = 1u << shift;
	return true;
}

uint64_t ct_ops_cap_burst(void)
{
	return half;
}

uint32_t ct_ops_cap_max_weight(void)
{
	return 1u << atomic_load_explicit(&win.max_shift, memory_order_relaxed);
}

void ct_ops_cap_after_fork_child(void)
{
	/* the child's timeline starts afresh (its trace starts from zero), at the parent's rate */
	atomic_store_explicit(&win.max_shift, 0, memory_order_relaxed);
}
