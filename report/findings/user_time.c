/* SPDX-License-Identifier: MIT */
/*
 * user_time.c - the `user-time-misleads` finding: a path whose wall time is far above its user
 * CPU time, because the work happens in the kernel or waiting on it, so a benchmark that counts
 * user time only (`openssl speed` without -elapsed) overstates its throughput by that factor.
 */
#include "findings.h"

#include <math.h>
#include <stdio.h>

/* Wall / user at or above this, on a path with enough calls and CPU samples for the ratio to
 * mean something. */
#define USER_MISLEADS_FACTOR 2.0
#define USER_MISLEADS_MIN_CALLS 100
#define USER_MISLEADS_MIN_SAMPLES 5

/* The wall / user factor of a path, or 0 when the path does not qualify. */
static double user_misleads_factor(const struct rp_path *p)
{
	const struct rp_derived *d = &p->d;
	/* a TLS record's wall time waits for the peer: that it exceeds user time says nothing */
	if (rp_path_io_wait(p))
		return 0;
	if (!d->cpu_known || p->st.calls < USER_MISLEADS_MIN_CALLS ||
	    p->st.cpu_samples < USER_MISLEADS_MIN_SAMPLES || d->wall_ns <= 0)
		return 0;
	/* Only where the kernel takes part: in-process software work is all user time, and
	 * wall above it there only means the thread was preempted on a busy machine. */
	bool kernel_involved = rp_path_reached_kernel(p) || rp_str_starts(p->def.impl, "engine:") ||
			       p->st.syscalls > 0 || d->sys_ns > 0.1 * d->wall_ns;
	if (!kernel_involved)
		return 0;
	double factor = d->user_ns > 0 ? d->wall_ns / d->user_ns : INFINITY;
	return factor >= USER_MISLEADS_FACTOR ? factor : 0;
}

void rp_eval_user_time_misleads(struct rp_model *m)
{
	for (size_t i = 0; i < m->npaths; i++) {
		const struct rp_path *p = &m->paths[i];
		const struct rp_derived *d = &p->d;
		double factor = user_misleads_factor(p);
		if (factor == 0)
			continue;
		/* A kernel path driven from inside an engine's EVP calls is the same work as that
		 * EVP path: say it once, on the EVP path the program's benchmark sees. */
		bool outer_said = false;
		for (size_t j = 0; j < m->npaths && (p->def.flags & CT_PATH_NESTED); j++)
			outer_said |= j != i && !rp_path_reached_kernel(&m->paths[j]) &&
				      rp_str_eq(m->paths[j].def.cipher, p->def.cipher) &&
				      user_misleads_factor(&m->paths[j]) > 0;
		if (outer_said)
			continue;
		struct rp_finding *f = rp_finding_add(m, "user-time-misleads", RP_WARNING, 0);
		if (!f)
			return;
		char w[32], u[32], s[32], fs[32];
		if (isinf(factor) || factor > 1000)
			snprintf(fs, sizeof(fs), "more than 1000");
		else
			snprintf(fs, sizeof(fs), "%.1f", factor);
		CAT(message,
		    "On path %zu (%s %.*s %.*s), wall time is %sx the user CPU time: the work "
		    "happens in the kernel or waiting on it. A benchmark that counts user time "
		    "only (like `openssl speed` without -elapsed) overstates this path's throughput "
		    "by that factor.",
		    i + 1, ct_api_name(p->def.api), S(p->def.impl), S(p->def.cipher), fs);
		CAT(evidence, "wall %s, user %s, sys %s over %llu calls (%llu CPU-sampled)",
		    rp_fmt_ns(w, sizeof(w), d->wall_ns), rp_fmt_ns(u, sizeof(u), d->user_ns),
		    rp_fmt_ns(s, sizeof(s), d->sys_ns), (unsigned long long)p->st.calls,
		    (unsigned long long)p->st.cpu_samples);
		CAT(fix,
		    "Compare paths by wall time (`openssl speed -elapsed`), or by user+sys CPU "
		    "time, never by user time alone.");
	}
}
