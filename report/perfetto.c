/* SPDX-License-Identifier: MIT */
/*
 * perfetto.c - `cryptrace report --perfetto FILE`: Chrome trace-event JSON that ui.perfetto.dev and
 * chrome://tracing open. Named processes and threads (ph "M"); per-call operations as complete
 * events (ph "X") when the per-call mode was on, otherwise per-path throughput counters (ph "C")
 * at each flushed snapshot; failures and fallbacks as process-scoped instants (ph "i", s "p"),
 * and so are silent-fallback findings (cat "finding"); the CPU profile over time as counters of
 * the crypto code's share of the sampled CPU, in all and per category.
 * Times are microseconds from the first process start (the --since/--until base).
 */
#include "views.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

struct pf {
	const struct rp_model *m;
	const struct rp_view *v;
	const struct rp_proc *p;
	FILE *f;
	uint64_t t0;
	bool first;
	/* counters: the previous snapshot per path */
	struct prev {
		uint32_t path_id;
		double t_s;
		uint64_t bytes;
	} * prev;
	size_t nprev, cap_prev;
	uint64_t emitted;
	/* threads of this process: named by a THREAD record, or seen in an op (named after); as
	 * many as the trace has (a thread pool that churns through thousands is still named) */
	struct tid_seen {
		uint32_t tid;
		bool named;
	} * tids;
	size_t ntids, cap_tids;
	size_t last_tid; /* index of the last hit: ops come in per-thread batches */
};

static struct tid_seen *tid_of(struct pf *x, uint32_t tid)
{
	if (x->last_tid < x->ntids && x->tids[x->last_tid].tid == tid)
		return &x->tids[x->last_tid];
	for (size_t i = 0; i < x->ntids; i++)
		if (x->tids[i].tid == tid) {
			x->last_tid = i;
			return &x->tids[i];
		}
	if (!rp_grow((void **)&x->tids, &x->cap_tids, x->ntids, sizeof(*x->tids)))
		return NULL; /* out of memory: that thread keeps Perfetto's default name */
	x->tids[x->ntids] = (struct tid_seen){ .tid = tid };
	x->last_tid = x->ntids;
	return &x->tids[x->ntids++];
}

static void ev_begin(struct pf *x, const char *ph, uint32_t pid, uint32_t tid, double ts_us)
{
	fputs(x->first ? "\n" : ",\n", x->f);
	x->first = false;
	x->emitted++;
	fprintf(x->f, "{\"ph\":\"%s\",\"pid\":%u,\"tid\":%u,\"ts\":%.3f", ph, pid, tid, ts_us);
}

static void key_str(FILE *f, const char *k, const char *s, size_t len)
{
	fprintf(f, ",\"%s\":", k);
	rp_json_str(f, s, len);
}

static void meta_name(struct pf *x, const char *what, uint32_t pid, uint32_t tid, const char *name,
		      size_t len)
{
	ev_begin(x, "M", pid, tid, 0);
	fprintf(x->f, ",\"name\":\"%s\",\"args\":{", what);
	fputs("\"name\":", x->f);
	rp_json_str(x->f, name, len);
	fputs("}}", x->f);
}

static void on_thread(void *ctx, uint32_t tid, struct ct_str name)
{
	struct pf *x = ctx;
	if (tid == x->p->hdr.pid)
		return; /* the main thread is named with the process below */
	struct tid_seen *t = tid_of(x, tid);
	if (t)
		t->named = true;
	meta_name(x, "thread_name", x->p->hdr.pid, tid, name.len ? name.p : "thread",
		  name.len ? name.len : 6);
}

static void on_op(void *ctx, uint32_t tid, const struct ct_op *op)
{
	struct pf *x = ctx;
	const struct rp_path *pp = rp_view_proc_path(x->m, x->p, op->path_id);
	if (!pp || !rp_size_selected(x->m, op->bytes))
		return;
	double s = rp_time_s(x->t0, x->p, op->start_mono_ns);
	if (!rp_view_time_ok(x->v, s, s + op->dur_ns / 1e9))
		return;
	if (tid != x->p->hdr.pid)
		tid_of(x, tid);
	ev_begin(x, "X", x->p->hdr.pid, tid, s * 1e6);
	char name[200];
	snprintf(name, sizeof(name), "%.*s %s", (int)pp->def.cipher.len, pp->def.cipher.p,
		 ct_dir_name(pp->def.dir));
	fprintf(x->f, ",\"dur\":%.3f", op->dur_ns / 1e3);
	key_str(x->f, "name", name, strlen(name));
	fprintf(x->f, ",\"cat\":\"%s\",\"args\":{\"bytes\":%u", ct_api_name(pp->def.api), op->bytes);
	char label[512];
	rp_path_label(pp, label, sizeof(label));
	key_str(x->f, "path", label, strlen(label));
	fputs("}}", x->f);
}

static struct prev *prev_of(struct pf *x, uint32_t path_id)
{
	for (size_t i = 0; i < x->nprev; i++)
		if (x->prev[i].path_id == path_id)
			return &x->prev[i];
	if (!rp_grow((void **)&x->prev, &x->cap_prev, x->nprev, sizeof(*x->prev)))
		return NULL;
	struct prev *pr = &x->prev[x->nprev++];
	*pr = (struct prev){ .path_id = path_id, .t_s = rp_time_s(x->t0, x->p, x->p->hdr.start_mono_ns) };
	return pr;
}

/* Throughput between two snapshots: the bytes the path processed per second of the program's
 * time (how busy the path was), in MB/s; the request-size filter applies by bucket. */
static void on_snapshot(void *ctx, uint64_t mono_ns, const struct ct_path_stats *st)
{
	struct pf *x = ctx;
	const struct rp_path *pp = rp_view_proc_path(x->m, x->p, st->path_id);
	if (!pp)
		return;
	uint64_t bytes = 0;
	for (unsigned b = 0; b < CT_SIZE_BUCKETS; b++)
		if (rp_size_selected(x->m, ct_size_bucket_low(b)))
			bytes += st->size[b].bytes;
	struct prev *pr = prev_of(x, st->path_id);
	if (!pr)
		return;
	double t = rp_time_s(x->t0, x->p, mono_ns);
	if (t <= pr->t_s) {
		pr->bytes = bytes;
		return;
	}
	double rate = (double)(bytes - (bytes >= pr->bytes ? pr->bytes : bytes)) / (t - pr->t_s);
	/* the counter holds its value from the previous snapshot up to this one */
	if (rp_view_time_ok(x->v, pr->t_s, t)) {
		char name[600], label[512];
		rp_path_label(pp, label, sizeof(label));
		snprintf(name, sizeof(name), "MB/s %s", label);
		ev_begin(x, "C", x->p->hdr.pid, x->p->hdr.pid, pr->t_s * 1e6);
		key_str(x->f, "name", name, strlen(name));
		fprintf(x->f, ",\"args\":{\"MB/s\":%.6g}}", rate / 1e6);
		ev_begin(x, "C", x->p->hdr.pid, x->p->hdr.pid, t * 1e6);
		key_str(x->f, "name", name, strlen(name));
		fputs(",\"args\":{\"MB/s\":0}}", x->f);
	}
	pr->t_s = t;
	pr->bytes = bytes;
}

static void instants(struct pf *x)
{
	const struct rp_proc *p = x->p;
	for (size_t i = 0; i < p->nevents; i++) {
		const struct ct_event *e = &p->events[i].ev;
		if (!rp_event_is_failure(e))
			continue;
		if (e->path_id != CT_NO_PATH) {
			bool known = false;
			for (size_t k = 0; k < p->npaths && !known; k++)
				known = p->paths[k].def.path_id == e->path_id;
			if (known && !rp_view_proc_path(x->m, p, e->path_id))
				continue; /* filtered out with its path */
		}
		char name[200], eb[32];
		snprintf(name, sizeof(name), "%s %.*s %s", e->kind == CT_EV_FALLBACK ? "fallback" : "failed",
			 (int)e->call.len, e->call.p, e->err ? rp_errno_name(e->err, eb, sizeof(eb)) : "");
		ev_begin(x, "i", p->hdr.pid, e->tid ? e->tid : p->hdr.pid,
			 rp_time_s(x->t0, p, e->first_mono_ns) * 1e6);
		key_str(x->f, "name", name, strlen(name));
		fprintf(x->f, ",\"s\":\"p\",\"cat\":\"%s\",\"args\":{\"count\":%llu,\"ret\":%lld",
			ct_event_kind_name(e->kind), (unsigned long long)(e->count ? e->count : 1),
			(long long)e->ret);
		key_str(x->f, "detail", e->detail.p, e->detail.len);
		key_str(x->f, "callsite", e->callsite.p, e->callsite.len);
		fputs("}}", x->f);
	}
}

/* A silent-fallback finding is the fallback as the user meets it (work that ran in software
 * although offload was asked for): an instant in its process, at the first failure it rests on
 * (or the start of the window or of the process when none is in the selection). */
static void finding_instants(struct pf *x)
{
	const struct rp_proc *p = x->p;
	for (size_t i = 0; i < x->m->nfindings; i++) {
		const struct rp_finding *fd = &x->m->findings[i];
		if (strcmp(fd->kind, "silent-fallback") || fd->pid != p->hdr.pid)
			continue;
		double ts = rp_time_s(x->t0, p, p->hdr.start_mono_ns);
		bool have = false;
		uint32_t tid = p->hdr.pid;
		for (size_t k = 0; k < p->nevents; k++) {
			const struct ct_event *e = &p->events[k].ev;
			double t = rp_time_s(x->t0, p, e->first_mono_ns);
			if (rp_event_is_failure(e) && (!have || t < ts)) {
				ts = t;
				tid = e->tid ? e->tid : p->hdr.pid;
				have = true;
			}
		}
		if (x->v->has_since && ts < x->v->since_s)
			ts = x->v->since_s;
		char name[160];
		snprintf(name, sizeof(name), "finding %s (%s)", fd->kind, rp_severity_name(fd->severity));
		ev_begin(x, "i", p->hdr.pid, tid, ts * 1e6);
		key_str(x->f, "name", name, strlen(name));
		fputs(",\"s\":\"p\",\"cat\":\"finding\",\"args\":{", x->f);
		fputs("\"kind\":", x->f);
		rp_json_str(x->f, fd->kind, strlen(fd->kind));
		key_str(x->f, "severity", rp_severity_name(fd->severity),
			strlen(rp_severity_name(fd->severity)));
		key_str(x->f, "message", fd->message, strlen(fd->message));
		key_str(x->f, "evidence", fd->evidence, strlen(fd->evidence));
		key_str(x->f, "fix", fd->fix, strlen(fd->fix));
		fputs("}}", x->f);
	}
}

/* One counter track of the profile: at each bin's start its value, and 0 where the next bin with
 * samples is not the next one (no sample there). */
static void profile_track(struct pf *x, const char *name, const struct rp_profile_bin *bins, size_t n,
			  int cat)
{
	for (size_t i = 0; i < n; i++) {
		const struct rp_profile_bin *b = &bins[i];
		double s = rp_time_s(x->t0, x->p, b->start_mono_ns), e = s + b->dur_ns / 1e9;
		/* sampling starts at the exec, the trace at the preload's constructor (some ms later
		 * under a sanitizer): a bin that began before the process's trace is drawn from it */
		double start = rp_time_s(x->t0, x->p, x->p->hdr.start_mono_ns);
		if (s < start && e > start)
			s = start;
		if (!b->samples || !rp_view_time_ok(x->v, s, e)) /* no samples: a damaged record */
			continue;
		uint64_t part = cat < 0 ? b->crypto : b->cat[cat];
		ev_begin(x, "C", x->p->hdr.pid, x->p->hdr.pid, s * 1e6);
		key_str(x->f, "name", name, strlen(name));
		fprintf(x->f, ",\"args\":{\"%%\":%.4g}}", 100.0 * (double)part / (double)b->samples);
		if (i + 1 == n || bins[i + 1].start_mono_ns > b->start_mono_ns + b->dur_ns) {
			ev_begin(x, "C", x->p->hdr.pid, x->p->hdr.pid, e * 1e6);
			key_str(x->f, "name", name, strlen(name));
			fputs(",\"args\":{\"%\":0}}", x->f);
		}
	}
}

/* The CPU profile over time (profile_time.c): per process the share of its sampled CPU in crypto
 * code, and in each crypto category, bin by bin. */
static void profile_tracks(struct pf *x)
{
	struct rp_profile_bin *bins;
	const char *cats[RP_PROFILE_TIME_CATS];
	size_t ncats, n = rp_profile_timeline(&x->p->prof, &bins, cats, &ncats);
	if (!n)
		return;
	profile_track(x, "CPU profile: crypto %", bins, n, -1);
	for (size_t c = 0; c < ncats; c++) {
		char name[64];
		snprintf(name, sizeof(name), "CPU profile: %s %%", cats[c]);
		profile_track(x, name, bins, n, (int)c);
	}
	free(bins);
}

void rp_print_perfetto(const struct rp_model *m, const struct rp_view *v, FILE *f)
{
	struct pf x = { .m = m, .v = v, .f = f, .t0 = rp_model_t0(m), .first = true };
	fputs("{\"traceEvents\":[", f);
	for (size_t i = 0; i < m->nprocs; i++) {
		const struct rp_proc *p = &m->procs[i];
		if (!rp_proc_selected(m, p) || !p->has_hdr)
			continue;
		x.p = p;
		x.nprev = 0;
		x.ntids = 0;
		char name[400];
		struct ct_str a0 = rp_str_part(p->hdr.argv, '\0', 0), a1 = rp_str_part(p->hdr.argv, '\0', 1);
		struct ct_str exe = a0.len ? a0 : p->hdr.exe;
		snprintf(name, sizeof(name), "%.*s%s%.*s (pid %u)", (int)(exe.len > 200 ? 200 : exe.len),
			 exe.p, a1.len ? " " : "", (int)(a1.len > 100 ? 100 : a1.len), a1.p, p->hdr.pid);
		meta_name(&x, "process_name", p->hdr.pid, p->hdr.pid, name, strlen(name));
		meta_name(&x, "thread_name", p->hdr.pid, p->hdr.pid, "main", 4);
		ev_begin(&x, "M", p->hdr.pid, p->hdr.pid, 0);
		fprintf(f, ",\"name\":\"process_sort_index\",\"args\":{\"sort_index\":%zu}}", i);
		if (p->hdr.flags & CT_HDR_PER_CALL)
			rp_proc_scan(p, 0, UINT64_MAX, on_op, on_thread, &x);
		else {
			rp_proc_scan(p, 0, UINT64_MAX, NULL, on_thread, &x);
			rp_proc_snapshots(p, on_snapshot, &x);
		}
		profile_tracks(&x);
		instants(&x);
		finding_instants(&x);
		/* a thread that ended before any flush has no THREAD record: name it by its tid */
		for (size_t k = 0; k < x.ntids; k++) {
			if (x.tids[k].named)
				continue;
			char tname[32];
			snprintf(tname, sizeof(tname), "thread %u", x.tids[k].tid);
			meta_name(&x, "thread_name", p->hdr.pid, x.tids[k].tid, tname, strlen(tname));
		}
	}
	free(x.prev);
	free(x.tids);
	fputs("\n],\"displayTimeUnit\":\"ns\",\"otherData\":{\"generator\":\"cryptrace report --perfetto\","
	      "\"time_base\":\"microseconds from the first traced process start\"}}\n",
	      f);
}
