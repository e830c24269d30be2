/* SPDX-License-Identifier: MIT */
/*
 * select.c - the selection every output shares beyond model.h's filters: --path (a report number
 * or a glob), the --since/--until window (events here, path totals in window.c), and the figures
 * per size bucket the charts, CSV and diff print. Selection happens on the loaded processes,
 * before the merge, so the text and JSON reports, the findings and the new outputs all see the
 * same data.
 */
#include "views.h"

#include <ctype.h>
#include <fnmatch.h>
#include <stdlib.h>
#include <string.h>

void rp_path_label(const struct rp_path *p, char *buf, size_t cap)
{
	snprintf(buf, cap, "%s/%.*s/%.*s/%s", ct_api_name(p->def.api), (int)p->def.impl.len, p->def.impl.p,
		 (int)p->def.cipher.len, p->def.cipher.p, ct_dir_name(p->def.dir));
}

bool rp_path_same(const struct ct_path_def *a, const struct ct_path_def *b)
{
	return a->api == b->api && a->dir == b->dir && a->key_bits == b->key_bits && a->entry == b->entry &&
	       a->route == b->route && rp_str_eq(a->impl, b->impl) && rp_str_eq(a->cipher, b->cipher);
}

static bool glob_str(const char *glob, struct ct_str s)
{
	char buf[256];
	snprintf(buf, sizeof(buf), "%.*s", (int)s.len, s.p);
	return fnmatch(glob, buf, 0) == 0;
}

static bool glob_matches(const char *glob, const struct rp_path *p)
{
	char label[512];
	rp_path_label(p, label, sizeof(label));
	return fnmatch(glob, label, 0) == 0 || glob_str(glob, p->def.impl) || glob_str(glob, p->def.cipher) ||
	       fnmatch(glob, ct_api_name(p->def.api), 0) == 0;
}

static bool all_digits(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (!isdigit((unsigned char)*s))
			return false;
	return true;
}

uint64_t rp_model_t0(const struct rp_model *m)
{
	uint64_t t0 = 0;
	for (size_t i = 0; i < m->nprocs; i++) {
		const struct ct_header *h = &m->procs[i].hdr;
		if (m->procs[i].has_hdr && h->start_realtime_ns && (!t0 || h->start_realtime_ns < t0))
			t0 = h->start_realtime_ns;
	}
	return t0;
}

double rp_time_s(uint64_t t0, const struct rp_proc *p, uint64_t mono_ns)
{
	double start = t0 && p->hdr.start_realtime_ns ? (double)(int64_t)(p->hdr.start_realtime_ns - t0) : 0;
	return (start + (double)(int64_t)(mono_ns - p->hdr.start_mono_ns)) / 1e9;
}

bool rp_view_time_ok(const struct rp_view *v, double t0_s, double t1_s)
{
	if (v->has_since && t1_s < v->since_s)
		return false;
	if (v->has_until && t0_s > v->until_s)
		return false;
	return true;
}

bool rp_proc_selected(const struct rp_model *m, const struct rp_proc *p)
{
	return rp_proc_shown(m, p); /* --pid, and not superseded by a later file of it */
}

bool rp_size_selected(const struct rp_model *m, uint64_t size)
{
	unsigned b = ct_size_bucket(size);
	uint64_t low = ct_size_bucket_low(b);
	uint64_t high = b == 0 ? 0 : b + 1 < CT_SIZE_BUCKETS ? ct_size_bucket_low(b + 1) - 1 : UINT64_MAX;
	return high >= m->filter.min_size && (!m->filter.max_size || low <= m->filter.max_size);
}

const struct rp_path *rp_view_proc_path(const struct rp_model *m, const struct rp_proc *p, uint32_t path_id)
{
	if (!rp_proc_selected(m, p))
		return NULL;
	for (size_t i = 0; i < p->npaths; i++)
		if (p->paths[i].def.path_id == path_id)
			return rp_path_selected(m, &p->paths[i]) ? &p->paths[i] : NULL;
	return NULL;
}

long rp_merged_index(const struct rp_model *m, const struct rp_path *pp)
{
	for (size_t i = 0; i < m->npaths; i++)
		if (rp_path_same(&m->paths[i].def, &pp->def))
			return (long)i;
	return -1;
}

static bool path_kept(const struct rp_proc *p, uint32_t path_id)
{
	for (size_t i = 0; i < p->npaths; i++)
		if (p->paths[i].def.path_id == path_id)
			return true;
	return false;
}

bool rp_view_apply(struct rp_model *m, const struct rp_view *v, char *msg, size_t cap)
{
	msg[0] = 0;
	rp_window_apply(m, v); /* first: --path N numbers the paths of the report in the window */
	if (v->path_sel) {
		struct ct_path_def want = { 0 };
		bool by_number = all_digits(v->path_sel);
		if (by_number) {
			/* Numbers are those of the report the user saw: every other filter applied. */
			rp_model_merge(m);
			unsigned long n = strtoul(v->path_sel, NULL, 10);
			if (n < 1 || n > m->npaths) {
				snprintf(msg, cap, "--path %s: the report has %zu path(s), numbered from 1",
					 v->path_sel, m->npaths);
				return false;
			}
			want = m->paths[n - 1].def;
		}
		size_t kept = 0;
		for (size_t i = 0; i < m->nprocs; i++) {
			struct rp_proc *p = &m->procs[i];
			size_t w = 0;
			for (size_t k = 0; k < p->npaths; k++) {
				bool keep = by_number ? rp_path_same(&p->paths[k].def, &want)
						      : glob_matches(v->path_sel, &p->paths[k]);
				if (keep)
					p->paths[w++] = p->paths[k];
			}
			m->filter.path_cut |= w < p->npaths;
			p->npaths = w;
			kept += w;
		}
		if (!kept && !(v->allow_empty && !by_number)) {
			snprintf(msg, cap,
				 "--path '%s' matches no path (it matches 'api/impl/cipher/dir' "
				 "or one of those parts, e.g. 'evp/*/aes-128-cbc/*' or 'aes-*-gcm')",
				 v->path_sel);
			return false;
		}
	}
	for (size_t i = 0; i < m->nprocs; i++) {
		struct rp_proc *p = &m->procs[i];
		size_t w = 0;
		uint64_t t0 = rp_model_t0(m);
		for (size_t k = 0; k < p->nevents; k++) {
			const struct ct_event *e = &p->events[k].ev;
			bool keep = rp_view_time_ok(
				v, rp_time_s(t0, p, e->first_mono_ns),
				rp_time_s(t0, p, e->last_mono_ns ? e->last_mono_ns : e->first_mono_ns));
			if (keep && v->path_sel && e->path_id != CT_NO_PATH)
				keep = path_kept(p, e->path_id);
			if (keep)
				p->events[w++] = p->events[k];
		}
		p->nevents = w;
	}
	rp_model_merge(m);
	rp_findings_evaluate(m);
	return true;
}

/* ---- figures */

double rp_path_wall_bps(const struct rp_path *p)
{
	/* a path that waits for a peer has no wall-clock rate: its wall time is mostly the wait */
	if (!p->d.wall_known || p->d.wall_ns <= 0 || rp_path_io_wait(p))
		return -1;
	return (double)p->st.bytes * 1e9 / p->d.wall_ns;
}

double rp_path_cpu_bps(const struct rp_path *p)
{
	double cpu = p->d.user_ns + p->d.sys_ns;
	if (!p->d.cpu_known || cpu <= 0)
		return -1;
	return (double)p->st.bytes * 1e9 / cpu;
}

/* A path whose calls wait for a peer (TLS records, kTLS) has no rate by size: a bucket's wall is
 * mostly waiting, and its CPU, priced as its wall x the path's CPU share, would spread the CPU by
 * waiting time (a record call that returns plaintext already decrypted waits and decrypts
 * nothing). Its rates are the whole path's, from CPU time (figures.c). */
double rp_bucket_wall_bps(const struct rp_path *p, unsigned b)
{
	double w = p->d.bucket_wall_ns[b];
	if (!p->d.wall_known || w <= 0 || !p->st.size[b].bytes || rp_path_io_wait(p))
		return -1;
	return (double)p->st.size[b].bytes * 1e9 / w;
}

double rp_bucket_cpu_bps(const struct rp_path *p, unsigned b)
{
	double w = p->d.bucket_wall_ns[b];
	double share = p->d.cpu_known && p->d.wall_ns > 0 ? (p->d.user_ns + p->d.sys_ns) / p->d.wall_ns : 0;
	if (!p->d.wall_known || w <= 0 || share <= 0 || !p->st.size[b].bytes || rp_path_io_wait(p))
		return -1;
	return (double)p->st.size[b].bytes * 1e9 / (w * share);
}

bool rp_event_is_failure(const struct ct_event *e)
{
	switch (e->kind) {
	case CT_EV_CALL_FAILED:
	case CT_EV_FALLBACK:
		return true;
	case CT_EV_SESSION: /* ioctl/bind/setsockopt: 0 is success */
		return e->err != 0 || e->ret < 0;
	case CT_EV_ENGINE_REQUEST: /* ENGINE_* and provider loads: <= 0 is failure */
	case CT_EV_PROVIDER_LOAD:
		return e->err != 0 || e->ret <= 0;
	default:
		return false;
	}
}
