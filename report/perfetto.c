/* SPDX-License-Identifier: MIT */
/*
 * perfetto.c - `cryptrace report --perfetto FILE`: Chrome trace-event JSON that ui.perfetto.dev and
 * chrome://tracing open. Named processes and threads (ph "M"); per-call operations as complete
 * events (ph "X") when the per-call mode was on, each thread's operations on one path on a track
 * of their own, consecutive ones within the resolution one slice (perfetto_slices.h: so that the
 * file stays loadable, <= 100 MB, whatever the trace's size), otherwise per-path throughput
 * counters (ph "C") at each flushed snapshot; failures and fallbacks as process-scoped instants (ph "i", s "p"),
 * and so are silent-fallback findings (cat "finding"); the CPU profile over time as counters of
 * the crypto code's share of the sampled CPU, in all and per category.
 * Times are microseconds from the first process start (the --since/--until base).
 */
#include "perfetto_slices.h"
#include "views.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* What a file viewers open may take (the viewers hold every event: a few hundred MB of JSON is
 * already more than a browser tab's memory), and what of it the operations' slices may take: the
 * rest (names, counters, instants, the profile) is small beside them. */
#define PF_FILE_BUDGET 100000000ull
#define PF_SLICE_BUDGET 90000000ull
/* Tracks' tids in the output: above any Linux tid (PID_MAX_LIMIT is 2^22), numbered through the
 * whole file so that no two processes share one (the viewers key threads by tid). */
#define PF_TRACK_TID0 0x40000000u

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
	/* per-call operations: each process's tracks (indexed as m->procs), the resolution, and
	 * what was written */
	struct pf_tracks *tracks, *cur;
	uint64_t res_ns;
	bool over_budget; /* even the coarsest rung does not fit PF_SLICE_BUDGET */
	uint64_t slices, ops, kept;
};

static void ev_begin(struct pf *x, const char *ph, uint32_t pid, uint32_t tid, double ts_us)
{
	fputs(x->first ? "\n" : ",\n", x->f);
	x->first = false;
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
	meta_name(x, "thread_name", x->p->hdr.pid, tid, name.len ? name.p : "thread",
		  name.len ? name.len : 6);
}

/* ---- per-call operations */

/* The --since/--until bound on process p's CLOCK_MONOTONIC: rp_time_s the other way round. */
static uint64_t mono_at(uint64_t t0, const struct rp_proc *p, double s)
{
	double start = t0 && p->hdr.start_realtime_ns ? (double)(int64_t)(p->hdr.start_realtime_ns - t0) : 0;
	double ns = (double)p->hdr.start_mono_ns + s * 1e9 - start;
	return ns <= 0 ? 0 : ns >= 1.8e19 ? UINT64_MAX : (uint64_t)ns;
}

static void window_mono(const struct pf *x, uint64_t *from, uint64_t *to)
{
	*from = x->v->has_since ? mono_at(x->t0, x->p, x->v->since_s) : 0;
	*to = x->v->has_until ? mono_at(x->t0, x->p, x->v->until_s) + 1 : UINT64_MAX;
}

/* Nanoseconds from t0 of a moment on p's CLOCK_MONOTONIC: integers, so that a slice that ends
 * where the next one starts is printed so, not a rounding apart. */
static int64_t rel_ns(uint64_t t0, const struct rp_proc *p, uint64_t mono_ns)
{
	int64_t start = t0 && p->hdr.start_realtime_ns ? (int64_t)(p->hdr.start_realtime_ns - t0) : 0;
	return start + (int64_t)(mono_ns - p->hdr.start_mono_ns);
}

/* Microseconds with three decimals, the trace-event unit, exactly. */
static void us_str(char *buf, size_t cap, int64_t ns)
{
	uint64_t a = ns < 0 ? (uint64_t)0 - (uint64_t)ns : (uint64_t)ns;
	snprintf(buf, cap, "%s%llu.%03llu", ns < 0 ? "-" : "", (unsigned long long)(a / 1000),
		 (unsigned long long)(a % 1000));
}

/* The track an operation goes on, or NULL when the report does not select it (--path, --pid,
 * --api, --cipher, the request sizes); both passes decide alike. */
static struct pf_track *op_track(struct pf *x, uint32_t tid, const struct ct_op *op)
{
	if (!rp_view_proc_path(x->m, x->p, op->path_id) || !rp_size_selected(x->m, op->bytes))
		return NULL;
	return pf_track_of(x->cur, tid, op->path_id);
}

static void count_op(void *ctx, uint32_t tid, const struct ct_op *op)
{
	struct pf *x = ctx;
	struct pf_track *t = op_track(x, tid, op);
	if (t)
		pf_track_count(t, op);
}

/* One slice: its numbers around the track's constant JSON; the length it takes (without the
 * separator) when f is NULL. */
static size_t slice_json(FILE *f, const struct pf *x, const struct pf_track *t, int64_t ts_ns,
			 uint64_t dur_ns, uint64_t ops, uint64_t kept, uint64_t bytes)
{
	char ts[32], dur[32];
	us_str(ts, sizeof(ts), ts_ns);
	us_str(dur, sizeof(dur), (int64_t)dur_ns);
	static const char fmt[] =
		"{\"ph\":\"X\",\"pid\":%u,\"tid\":%u,\"ts\":%s,\"dur\":%s%s"
		"\"ops\":%llu,\"kept_ops\":%llu,\"bytes\":%llu%s";
	unsigned long long o = ops, k = kept, b = bytes;
	if (!f)
		return (size_t)snprintf(NULL, 0, fmt, x->p->hdr.pid, t->out_tid, ts, dur, t->head, o, k, b,
					t->tail);
	fprintf(f, fmt, x->p->hdr.pid, t->out_tid, ts, dur, t->head, o, k, b, t->tail);
	return 0;
}

static void write_slice(struct pf *x, const struct pf_track *t)
{
	const struct pf_slice *s = &t->cur;
	fputs(x->first ? "\n" : ",\n", x->f);
	x->first = false;
	slice_json(x->f, x, t, rel_ns(x->t0, x->p, s->start_ns), s->end_ns - s->start_ns, s->ops, s->kept,
		   s->bytes);
	x->slices++;
	x->ops += s->ops;
	x->kept += s->kept;
}

static void write_op(void *ctx, uint32_t tid, const struct ct_op *op)
{
	struct pf *x = ctx;
	struct pf_track *t = op_track(x, tid, op);
	if (!t || !t->head || pf_slice_add(&t->cur, op, x->res_ns))
		return;
	write_slice(x, t);
	pf_slice_start(&t->cur, op);
}

/* A string made by the JSON writers (the escaping is theirs). */
static char *json_text(void (*fill)(FILE *, const void *), const void *arg)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	if (!m)
		return NULL;
	fill(m, arg);
	if (fclose(m) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

static void fill_head(FILE *f, const void *arg)
{
	const struct rp_path *pp = arg;
	char name[200];
	snprintf(name, sizeof(name), "%.*s %s", (int)pp->def.cipher.len, pp->def.cipher.p,
		 ct_dir_name(pp->def.dir));
	key_str(f, "name", name, strlen(name));
	fprintf(f, ",\"cat\":\"%s\",\"args\":{", ct_api_name(pp->def.api));
}

static void fill_tail(FILE *f, const void *arg)
{
	char label[512];
	rp_path_label(arg, label, sizeof(label));
	key_str(f, "path", label, strlen(label));
	fputs("}}", f);
}

/* A process's tracks in the order they are shown: the main thread's first, then by tid, then by
 * path. */
struct track_key {
	bool other; /* not the main thread */
	uint32_t tid, path_id;
	size_t index;
};

static int track_cmp(const void *a, const void *b)
{
	const struct track_key *ka = a, *kb = b;
	if (ka->other != kb->other)
		return ka->other ? 1 : -1;
	if (ka->tid != kb->tid)
		return ka->tid < kb->tid ? -1 : 1;
	return ka->path_id < kb->path_id ? -1 : ka->path_id > kb->path_id;
}

/* After the first pass: each track's output tid, constant JSON and largest slice. */
static bool prepare_tracks(struct pf *x, uint32_t *next_tid)
{
	struct pf_tracks *ts = x->cur;
	struct track_key *order = malloc((ts->n ? ts->n : 1) * sizeof(*order));
	if (!order)
		return false;
	for (size_t i = 0; i < ts->n; i++)
		order[i] = (struct track_key){ .other = ts->t[i].tid != x->p->hdr.pid,
					       .tid = ts->t[i].tid,
					       .path_id = ts->t[i].path_id,
					       .index = i };
	qsort(order, ts->n, sizeof(*order), track_cmp);
	for (size_t i = 0; i < ts->n; i++) {
		struct pf_track *t = &ts->t[order[i].index];
		const struct rp_path *pp = rp_view_proc_path(x->m, x->p, t->path_id);
		t->out_tid = (*next_tid)++;
		t->head = json_text(fill_head, pp);
		t->tail = json_text(fill_tail, pp);
		if (!t->head || !t->tail) {
			free(order);
			return false;
		}
		/* every slice's numbers are at most the track's: its ts, span and totals */
		int64_t a = rel_ns(x->t0, x->p, t->all.start_ns), b = rel_ns(x->t0, x->p, t->all.end_ns);
		size_t la = slice_json(NULL, x, t, a, t->all.end_ns - t->all.start_ns, t->all.ops,
				       t->all.kept, t->all.bytes),
		       lb = slice_json(NULL, x, t, b, t->all.end_ns - t->all.start_ns, t->all.ops,
				       t->all.kept, t->all.bytes);
		t->slice_max = (la > lb ? la : lb) + 2;
	}
	free(order);
	return true;
}

/* The finest rung whose slices fit the budget, all processes together. */
static unsigned choose_rung(const struct pf *x, size_t nprocs)
{
	for (unsigned k = 0; k < PF_RUNGS; k++) {
		uint64_t bytes = 0;
		for (size_t i = 0; i < nprocs; i++)
			for (size_t j = 0; j < x->tracks[i].n; j++)
				bytes += x->tracks[i].t[j].slices[k] * x->tracks[i].t[j].slice_max;
		if (bytes <= PF_SLICE_BUDGET)
			return k;
	}
	return PF_RUNGS;
}

/* First pass over every selected per-call process: its tracks and their slices at each rung;
 * then the resolution. False when out of memory. */
static bool plan_ops(struct pf *x)
{
	const struct rp_model *m = x->m;
	uint32_t next_tid = PF_TRACK_TID0;
	x->tracks = calloc(m->nprocs ? m->nprocs : 1, sizeof(*x->tracks));
	if (!x->tracks)
		return false;
	for (size_t i = 0; i < m->nprocs; i++) {
		const struct rp_proc *p = &m->procs[i];
		if (!rp_proc_selected(m, p) || !p->has_hdr || !(p->hdr.flags & CT_HDR_PER_CALL))
			continue;
		x->p = p;
		x->cur = &x->tracks[i];
		uint64_t from, to;
		window_mono(x, &from, &to);
		rp_proc_scan(p, from, to, count_op, NULL, x);
		if (!prepare_tracks(x, &next_tid))
			return false;
	}
	if (x->v->has_resolution)
		return true;
	unsigned k = choose_rung(x, m->nprocs);
	x->over_budget = k == PF_RUNGS;
	x->res_ns = pf_rung_ns(x->over_budget ? PF_RUNGS - 1 : k);
	return true;
}

/* Second pass over one process: its tracks named, then its slices. */
static void write_ops(struct pf *x)
{
	const struct rp_proc *p = x->p;
	for (size_t i = 0; i < x->cur->n; i++) {
		const struct pf_track *t = &x->cur->t[i];
		const struct rp_path *pp = rp_view_proc_path(x->m, p, t->path_id);
		char name[300];
		snprintf(name, sizeof(name), "%u %.*s %s", t->tid, (int)pp->def.cipher.len, pp->def.cipher.p,
			 ct_dir_name(pp->def.dir));
		meta_name(x, "thread_name", p->hdr.pid, t->out_tid, name, strlen(name));
		ev_begin(x, "M", p->hdr.pid, t->out_tid, 0);
		fprintf(x->f, ",\"name\":\"thread_sort_index\",\"args\":{\"sort_index\":%llu}}",
			(unsigned long long)(t->out_tid - PF_TRACK_TID0));
	}
	uint64_t from, to;
	window_mono(x, &from, &to);
	rp_proc_scan(p, from, to, write_op, on_thread, x);
	for (size_t i = 0; i < x->cur->n; i++)
		if (x->cur->t[i].cur.open)
			write_slice(x, &x->cur->t[i]);
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

/* The rule the slices follow, in the file: a reader of the JSON alone knows what a slice is. */
static void other_data(const struct pf *x)
{
	char res[32];
	rp_format_resolution(x->res_ns, res, sizeof(res));
	fputs("\"otherData\":{\"generator\":\"cryptrace report --perfetto\","
	      "\"time_base\":\"microseconds from the first traced process start\",",
	      x->f);
	fprintf(x->f, "\"resolution\":\"%s\",\"resolution_ns\":%llu,\"resolution_from\":\"%s\",", res,
		(unsigned long long)x->res_ns,
		x->v->has_resolution ? "--resolution"
		: x->over_budget     ? "auto: the coarsest of the ladder (the slices exceed the budget "
				       "even so)"
				     : "auto: the finest of 0, 1 ns, 2 ns, 5 ns ... 10 s whose slices fit "
				       "the file's budget");
	fprintf(x->f,
		"\"aggregation\":\"each thread's operations on one path are a track of their own, on "
		"which consecutive operations are one slice while each starts less than the "
		"resolution after the slice's first one started (or before the slice ended); a slice "
		"spans its first operation's start to its last one's end, args.ops is the operations "
		"it stands for (the kept ones' weights), args.kept_ops those recorded, args.bytes "
		"their bytes times weight\",\"slices\":%llu,\"operations\":%llu,"
		"\"kept_operations\":%llu,\"budget_bytes\":%llu}",
		(unsigned long long)x->slices, (unsigned long long)x->ops, (unsigned long long)x->kept,
		(unsigned long long)PF_FILE_BUDGET);
}

void rp_print_perfetto(const struct rp_model *m, const struct rp_view *v, FILE *f)
{
	struct pf x = {
		.m = m, .v = v, .f = f, .t0 = rp_model_t0(m), .first = true, .res_ns = v->resolution_ns
	};
	bool planned = plan_ops(&x);
	if (!planned)
		fprintf(stderr, "cryptrace report: out of memory: the Perfetto file has no operations\n");
	fputs("{\"traceEvents\":[", f);
	for (size_t i = 0; i < m->nprocs; i++) {
		const struct rp_proc *p = &m->procs[i];
		if (!rp_proc_selected(m, p) || !p->has_hdr)
			continue;
		x.p = p;
		x.nprev = 0;
		char name[400];
		struct ct_str a0 = rp_str_part(p->hdr.argv, '\0', 0), a1 = rp_str_part(p->hdr.argv, '\0', 1);
		struct ct_str exe = a0.len ? a0 : p->hdr.exe;
		snprintf(name, sizeof(name), "%.*s%s%.*s (pid %u)", (int)(exe.len > 200 ? 200 : exe.len),
			 exe.p, a1.len ? " " : "", (int)(a1.len > 100 ? 100 : a1.len), a1.p, p->hdr.pid);
		meta_name(&x, "process_name", p->hdr.pid, p->hdr.pid, name, strlen(name));
		meta_name(&x, "thread_name", p->hdr.pid, p->hdr.pid, "main", 4);
		ev_begin(&x, "M", p->hdr.pid, p->hdr.pid, 0);
		fprintf(f, ",\"name\":\"process_sort_index\",\"args\":{\"sort_index\":%zu}}", i);
		if (p->hdr.flags & CT_HDR_PER_CALL) {
			x.cur = planned ? &x.tracks[i] : NULL;
			if (x.cur)
				write_ops(&x);
			else
				rp_proc_scan(p, 0, UINT64_MAX, NULL, on_thread, &x);
		} else {
			rp_proc_scan(p, 0, UINT64_MAX, NULL, on_thread, &x);
			rp_proc_snapshots(p, on_snapshot, NULL, &x);
		}
		profile_tracks(&x);
		instants(&x);
		finding_instants(&x);
	}
	free(x.prev);
	if (x.tracks)
		for (size_t i = 0; i < m->nprocs; i++)
			pf_tracks_free(&x.tracks[i]);
	free(x.tracks);
	fputs("\n],\"displayTimeUnit\":\"ns\",", f);
	other_data(&x);
	fputs("}\n", f);
}
