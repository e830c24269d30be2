/* SPDX-License-Identifier: MIT */
/*
 * timing_model.h - the arithmetic of a span (timing.h): was it a run of calls with nothing else
 * between them, and how is its time shared among the cells it covered. Pure, no preload state:
 * shared by the preload (which judges spans) and the reporter (which prices cells).
 */
#ifndef CT_TIMING_MODEL_H
#define CT_TIMING_MODEL_H

#include <stdbool.h>
#include <stdint.h>

/* One cell's part of a span. */
struct ct_span_part {
	unsigned cell;
	uint64_t calls;  /* the cell's calls inside the span */
	double probe_ns; /* the mean of the cell's probes: one call's time alone, to completion */
	bool probed;     /* the cell has probes (a span over a cell with none cannot be judged) */
	double share_ns; /* out: the cell's share of an accepted span's time */
};

/* What the calls of a span may cost beyond their probes' mean and still be "back to back": a
 * call in a loop also pays the hook's and the loop's own instructions around it (per call), and
 * the clock reads' resolution blurs a span's ends (once). */
struct ct_span_tolerance {
	double per_call_ns;
	double fixed_ns;
	double pause_max_ns; /* a longer pause is the thread descheduled (0: no such limit) */
};

enum ct_span_verdict {
	CT_SPAN_ACCEPTED,    /* share_ns filled: the cells' times */
	CT_SPAN_REJECTED,    /* other work ran between the calls: their time is not the calls' (share_ns
			   * filled all the same: the pause is measured, timing_model.c) */
	CT_SPAN_UNJUDGED,    /* a cell without probes: nothing to compare with (the span is dropped) */
	CT_SPAN_DESCHEDULED, /* a pause past tol->pause_max_ns: the thread (or its vCPU) was off the
			      * CPU, which the figures leave out; the span is dropped like an unjudged
			      * one, so that neither its pause nor a part of it is extrapolated */
};

/*
 * A span of span_ns over parts[0..n) is accepted when it is no longer than its calls could take
 * back to back: sum(calls x (1.5 x probe + per_call)) + fixed. The factor covers a probe mean
 * still settling and calls that run slower in a loop than alone (a cache or a port shared with
 * the next call); other work between calls (a syscall, a pause, another library) is the usual
 * reason for a longer span and is many times that. An accepted span's time is shared among its
 * cells in proportion to calls x probe (the probes know a key set-up from a 16-byte update).
 */
enum ct_span_verdict ct_span_judge(struct ct_span_part *parts, unsigned n, double span_ns,
				   const struct ct_span_tolerance *tol);

/* A cell's wall-time estimate from its counters: calls x the mean cost per call, where the
 * accepted spans' calls count at their measured time, and the rejected spans' calls at the
 * accepted spans' mean when those are the majority (calls back to back, a rejected span caught a
 * pause) or when the rejected ones cost per call no more than 1.25x the accepted ones (back to back
 * too, judged against probes that undershoot), else at the probes' mean (calls alone); the probes'
 * mean when there are no spans.
 * probe_sum_ns is the probes' (two's complement) sum: a negative sum counts as 0. Returns false
 * when the cell has no timing at all. */
bool ct_cell_wall_ns(uint64_t calls, uint64_t probes, uint64_t probe_sum_ns, uint64_t span_calls,
		     uint64_t span_ns, uint64_t span_rejected, uint64_t span_rejected_ns, double *wall_ns);

/* The time the cell's rejected spans held beyond their calls at per_call_ns each (an interrupt,
 * a preemption, the program's own work between the calls), extrapolated from the judged calls to
 * all `calls` as the spans sample them: what the wall estimate leaves out of the program's clock
 * over those calls. 0 without rejected spans. */
double ct_cell_pause_ns(uint64_t calls, uint64_t span_calls, uint64_t span_rejected, uint64_t rejected_ns,
			double per_call_ns);

#endif
