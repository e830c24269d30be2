/* SPDX-License-Identifier: MIT */
/* timing_model.c - span judging and a cell's wall-time estimate (timing_model.h). */
#include "timing_model.h"

enum ct_span_verdict ct_span_judge(struct ct_span_part *parts, unsigned n, double span_ns,
				   const struct ct_span_tolerance *tol)
{
	double predicted = 0, limit = tol->fixed_ns, calls = 0;
	for (unsigned i = 0; i < n; i++) {
		if (!parts[i].probed)
			return CT_SPAN_UNJUDGED;
		double p = parts[i].probe_ns > 0 ? parts[i].probe_ns : 0;
		predicted += (double)parts[i].calls * p;
		limit += (double)parts[i].calls * (1.5 * p + tol->per_call_ns);
		calls += (double)parts[i].calls;
	}
	if (calls == 0)
		return CT_SPAN_UNJUDGED;
	if (span_ns < 0)
		span_ns = 0;
	bool rejected = span_ns > limit;
	/* a pause past pause_max_ns is the thread descheduled or its vCPU stolen: counting any part
	 * of it (it used to keep pause_max_ns) would add that much for every such gap the sampling
	 * caught, extrapolated over the spans it skipped, while the program's own clock between
	 * preemptions (examples/batches.h) has none of it */
	if (rejected && tol->pause_max_ns > 0 && span_ns > predicted + tol->pause_max_ns)
		return CT_SPAN_DESCHEDULED;
	for (unsigned i = 0; i < n; i++) {
		double p = parts[i].probe_ns > 0 ? parts[i].probe_ns : 0;
		double w = predicted > 0 ? (double)parts[i].calls * p / predicted
					 : (double)parts[i].calls / calls;
		parts[i].share_ns = span_ns * w;
	}
	return rejected ? CT_SPAN_REJECTED : CT_SPAN_ACCEPTED;
}

/* Whether the rejected spans cost per call about what the accepted ones did (within 1.25x, over
 * at least 64 accepted calls): then they ran back to back like them, and were rejected because the
 * probes undershoot this path (a hook whose work before its first clock read is more than the
 * calibrated empty call's, GnuTLS's handle lookup), not because a pause or other work landed in
 * them, which makes a span many times longer. Calls alone with other work between them are
 * rejected far beyond it. */
static bool like_accepted(uint64_t span_calls, uint64_t span_ns, uint64_t span_rejected,
			  uint64_t span_rejected_ns)
{
	if (span_calls < 64 || !span_rejected)
		return false;
	return (double)span_rejected_ns / (double)span_rejected <=
	       1.25 * (double)span_ns / (double)span_calls;
}

bool ct_cell_wall_ns(uint64_t calls, uint64_t probes, uint64_t probe_sum_ns, uint64_t span_calls,
		     uint64_t span_ns, uint64_t span_rejected, uint64_t span_rejected_ns, double *wall_ns)
{
	int64_t sum = (int64_t)probe_sum_ns;
	double probe_mean = probes ? (sum > 0 ? (double)sum : 0) / (double)probes : 0;
	double per;
	if (span_calls + span_rejected > 0 && (probes || span_calls)) {
		/* When most of the cell's spans were accepted, its calls run back to back and a
		 * rejected span is one that caught a pause: its calls cost what the accepted ones
		 * did. When most were rejected, its calls run alone: each costs its probes' mean. */
		double rejected_each =
			span_calls >= span_rejected || !probes ||
					like_accepted(span_calls, span_ns, span_rejected, span_rejected_ns)
				? (double)span_ns / (double)span_calls
				: probe_mean;
		per = ((double)span_ns + (double)span_rejected * rejected_each) /
		      (double)(span_calls + span_rejected);
	} else if (probes) {
		per = probe_mean;
	} else {
		*wall_ns = 0;
		return false;
	}
	*wall_ns = (double)calls * per;
	return true;
}

double ct_cell_pause_ns(uint64_t calls, uint64_t span_calls, uint64_t span_rejected, uint64_t rejected_ns,
			double per_call_ns)
{
	uint64_t judged = span_calls + span_rejected;
	if (!judged || !span_rejected)
		return 0;
	double pause = (double)rejected_ns - (double)span_rejected * (per_call_ns > 0 ? per_call_ns : 0);
	return pause > 0 ? pause * (double)calls / (double)judged : 0;
}
