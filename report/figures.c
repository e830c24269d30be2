/* SPDX-License-Identifier: MIT */
/*
 * figures.c - a process's lifetime, its CPU time and the share of both its cipher calls took
 * (struct rp_proc_figures), over its selected paths: what the reports of daemons and servers
 * show per process (docs/tracing-daemons.md); a path that waits for a peer (TLS records) counts its
 * CPU time there, not the wait. Inside a --since/--until window, the part of its
 * life between the window's two snapshots (window.c).
 */
#include "model.h"

#include <string.h>

double rp_path_cost_ns(const struct rp_path *p, bool *known)
{
	if (rp_path_io_wait(p)) {
		*known = p->d.cpu_known;
		return p->d.cpu_known ? p->d.user_ns + p->d.sys_ns : 0;
	}
	*known = p->d.wall_known;
	return p->d.wall_ns;
}

void rp_proc_figures(const struct rp_model *m, struct rp_proc *p)
{
	struct rp_proc_figures *f = &p->fig;
	memset(f, 0, sizeof(*f));
	uint64_t last = p->has_end ? p->end.mono_ns : p->has_proc ? p->proc.mono_ns : 0;
	if (p->win_cut) { /* the part of its life between the window's two snapshots */
		f->wall_known = p->win_wall_known;
		f->wall_ns = p->win_wall_ns;
		f->cpu_known = p->win_cpu_known;
		f->cpu_ns = p->win_cpu_ns;
	} else {
		if (p->has_hdr && last > p->hdr.start_mono_ns) {
			f->wall_known = true;
			f->wall_ns = (double)(last - p->hdr.start_mono_ns);
		}
		if (p->has_proc) {
			f->cpu_known = true;
			f->cpu_ns = (double)(p->proc.utime_ns + p->proc.stime_ns);
		}
	}
	for (size_t k = 0; k < p->npaths; k++) {
		const struct rp_path *pp = &p->paths[k];
		if (!rp_path_selected(m, pp))
			continue;
		f->crypto_calls += pp->st.calls;
		f->crypto_bytes += pp->st.bytes;
		bool known;
		double cost = rp_path_cost_ns(pp, &known);
		if (known) { /* the waiting of a TLS record call is not cipher work */
			f->crypto_wall_known = true;
			f->crypto_wall_ns += cost;
		}
		if (pp->d.cpu_known) {
			f->crypto_cpu_known = true;
			f->crypto_cpu_ns += pp->d.user_ns + pp->d.sys_ns;
		}
	}
}
