/* SPDX-License-Identifier: MIT */
/*
 * window.c - --since/--until on path totals. The tracer writes cumulative STATS snapshots at each
 * flush (every flush_interval_ms while the program makes calls, and at fork, exec and exit), each
 * flush closed by a PROC record that dates it. A path's totals in the window [since, until] are
 * the last snapshot at or before `until` minus the last one at or before `since` (zero before the
 * first), per process, per path and per size and latency bucket; the process's lifetime and CPU
 * in the window come from the same two flushes' PROC records. So the totals cover the time
 * between two flushes, each end up to one flush interval before the asked-for time: the model
 * keeps those two times per process and rp_window_note says so in every output.
 */
#include "views.h"

#include <stdlib.h>
#include <string.h>

static uint64_t sub(uint64_t a, uint64_t b)
{
	return a > b ? a - b : 0; /* a snapshot never shrinks; a damaged one must not wrap */
}

static void stats_sub(struct ct_path_stats *d, const struct ct_path_stats *top,
		      const struct ct_path_stats *base)
{
	uint32_t id = d->path_id;
	memset(d, 0, sizeof(*d));
	d->path_id = id;
	if (!top)
		return;
	static const struct ct_path_stats zero;
	rp_stats_combine(d, top, base ? base : &zero, sub);
}

static bool stats_empty(const struct ct_path_stats *s)
{
	return !s->calls && !s->errors && !s->setup_calls && !s->teardown_calls && !s->syscalls;
}

/* The two snapshots of one process: per path (index in p->paths) and of the process. */
struct cut {
	struct ct_path_stats *base, *top;
	bool *has_base, *has_top;
	bool proc_base, proc_top, proc_last;
	double base_s, top_s, last_s;         /* when those flushes were taken */
	uint64_t base_cpu, top_cpu, last_cpu; /* utime + stime then */
};

static long path_index(const struct rp_proc *p, uint32_t path_id)
{
	for (size_t k = 0; k < p->npaths; k++)
		if (p->paths[k].def.path_id == path_id)
			return (long)k;
	return -1;
}

/* scan_flushes' state: the window, the time origin and what is found */
struct scan {
	const struct rp_proc *p;
	const struct rp_window *w;
	uint64_t t0;
	struct cut *c;
};

/* A snapshot dated t: the base when taken at or before since, the top at or before until (a
 * flush writes a path once; the newest wins anyway). */
static void on_snapshot(void *ctx, uint64_t mono_ns, const struct ct_path_stats *st)
{
	struct scan *x = ctx;
	long k = path_index(x->p, st->path_id);
	if (k < 0)
		return;
	double t = rp_time_s(x->t0, x->p, mono_ns);
	if (x->w->has_since && t <= x->w->since_s) {
		x->c->base[k] = *st;
		x->c->has_base[k] = true;
	}
	if (!x->w->has_until || t <= x->w->until_s) {
		x->c->top[k] = *st;
		x->c->has_top[k] = true;
	}
}

/* The record that dates a flush: the process's CPU time then (an END has none of its own). */
static void on_flush(void *ctx, uint64_t mono_ns, const struct ct_record *dating)
{
	struct scan *x = ctx;
	struct cut *c = x->c;
	double t = rp_time_s(x->t0, x->p, mono_ns);
	uint64_t cpu = dating->type == CT_REC_PROC ? dating->u.proc.utime_ns + dating->u.proc.stime_ns
						   : c->last_cpu;
	if (x->w->has_since && t <= x->w->since_s) {
		c->proc_base = true;
		c->base_s = t;
		c->base_cpu = cpu;
	}
	if (x->w->has_until && t <= x->w->until_s) {
		c->proc_top = true;
		c->top_s = t;
		c->top_cpu = cpu;
	}
	c->proc_last = true;
	c->last_s = t;
	c->last_cpu = cpu;
}

/* Reads the process's snapshots again (rp_proc_snapshots pairs each with the PROC record that
 * dates its flush): the newest at or before each edge of the window. false: out of memory. */
static bool scan_flushes(const struct rp_proc *p, const struct rp_window *w, uint64_t t0, struct cut *c)
{
	struct scan x = { p, w, t0, c };
	return rp_proc_snapshots(p, on_snapshot, on_flush, &x);
}

static void cut_proc(struct rp_model *m, struct rp_proc *p, uint64_t t0)
{
	const struct rp_window *w = &m->window;
	struct cut c = { 0 };
	size_t n = p->npaths + 1;
	c.base = calloc(n, sizeof(*c.base));
	c.top = calloc(n, sizeof(*c.top));
	c.has_base = calloc(n, sizeof(*c.has_base));
	c.has_top = calloc(n, sizeof(*c.has_top));
	if (!c.base || !c.top || !c.has_base || !c.has_top || !scan_flushes(p, w, t0, &c)) {
		rp_model_warn(m,
			      "%s: out of memory while cutting the time window: its totals are "
			      "the whole trace's",
			      p->file ? p->file : "?");
		goto out;
	}
	double start_s = rp_time_s(t0, p, p->hdr.start_mono_ns);
	p->win_cut = true;
	p->win_from_s = c.proc_base ? c.base_s : start_s;
	uint64_t from_cpu = c.proc_base ? c.base_cpu : 0;
	uint64_t to_cpu;
	if (w->has_until) {
		p->win_to_s = c.proc_top ? c.top_s : p->win_from_s;
		to_cpu = c.proc_top ? c.top_cpu : from_cpu;
	} else { /* up to the end of the trace: the newest snapshot, dated or not */
		p->win_to_s = p->has_end    ? rp_time_s(t0, p, p->end.mono_ns)
			      : c.proc_last ? c.last_s
					    : p->win_from_s;
		to_cpu = p->has_proc ? p->proc.utime_ns + p->proc.stime_ns : from_cpu;
	}
	p->win_wall_known = p->has_hdr && p->win_to_s >= p->win_from_s;
	p->win_wall_ns = p->win_wall_known ? (p->win_to_s - p->win_from_s) * 1e9 : 0;
	p->win_cpu_known = p->has_proc;
	p->win_cpu_ns = (double)sub(to_cpu, from_cpu);
	size_t kept = 0;
	for (size_t k = 0; k < p->npaths; k++) {
		struct rp_path *pp = &p->paths[k];
		const struct ct_path_stats *top = w->has_until ? (c.has_top[k] ? &c.top[k] : NULL) : &pp->st;
		struct ct_path_stats d = { .path_id = pp->st.path_id };
		stats_sub(&d, top, c.has_base[k] ? &c.base[k] : NULL);
		/* No work of this path between the two snapshots: not in the report, unless the
		 * trace has per-call operations, which the window cuts exactly and which the
		 * timeline and Perfetto draw on their path (a window shorter than the flush
		 * interval holds operations but no snapshot difference). */
		if (stats_empty(&d) && !p->ops)
			continue;
		pp->st = d;
		p->paths[kept++] = *pp;
	}
	p->npaths = kept;
	if (p->hdr.flush_interval_ms > m->window.flush_ms)
		m->window.flush_ms = p->hdr.flush_interval_ms;
out:
	free(c.base);
	free(c.top);
	free(c.has_base);
	free(c.has_top);
}

void rp_window_apply(struct rp_model *m, const struct rp_view *v)
{
	if (!v->has_since && !v->has_until)
		return;
	m->window = (struct rp_window){ .active = true,
					.has_since = v->has_since,
					.has_until = v->has_until,
					.since_s = v->since_s,
					.until_s = v->until_s };
	uint64_t t0 = rp_model_t0(m);
	for (size_t i = 0; i < m->nprocs; i++)
		cut_proc(m, &m->procs[i], t0);
}

void rp_window_note(const struct rp_model *m, char *buf, size_t cap)
{
	const struct rp_window *w = &m->window;
	buf[0] = 0;
	if (!w->active || cap == 0)
		return;
	char since[48] = "", until[48] = "";
	if (w->has_since)
		snprintf(since, sizeof(since), " --since %.3f s", w->since_s);
	if (w->has_until)
		snprintf(until, sizeof(until), " --until %.3f s", w->until_s);
	size_t len = (size_t)snprintf(
		buf, cap,
		"Time window%s%s (seconds from the first process start). Events and per-call "
		"operations are cut at these times. Path totals are the difference of two cumulative "
		"snapshots, the last one at or before each end; the tracer flushed one every %u ms "
		"while a program made calls, so each end of the totals can be that much earlier. "
		"The totals cover:",
		since, until, w->flush_ms);
	size_t shown = 0, more = 0;
	for (size_t i = 0; i < m->nprocs && len < cap; i++) {
		const struct rp_proc *p = &m->procs[i];
		if (!p->win_cut || !rp_proc_shown(m, p))
			continue;
		if (shown == 6) {
			more++;
			continue;
		}
		len += (size_t)snprintf(buf + len, cap - len, "%s pid %u %.3f-%.3f s", shown ? "," : "",
					p->hdr.pid, p->win_from_s, p->win_to_s);
		shown++;
	}
	if (len < cap && more)
		len += (size_t)snprintf(buf + len, cap - len, " and %zu more process(es)", more);
	if (len < cap)
		snprintf(buf + len, cap - len, "%s.", shown ? "" : " no process");
}
