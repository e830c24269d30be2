/* SPDX-License-Identifier: MIT */
/*
 * merge.c - turns per-process snapshots into the report's view: applies the filters, adds up
 * paths that are the same across processes, groups identical events, and derives wall, CPU,
 * cycles/byte and latency percentiles from the sampled timings (method: docs/report.md). Each
 * process's role (roles.c) and lifetime figures (figures.c) are filled in at the end.
 */
#include "model.h"
#include "report.h"

#include <fnmatch.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "timing_model.h"

/* The launcher, not the process, wrote END (tracer/end_trace.c: it exited without its exit
 * handlers), and the process could have done hooked cipher work after its last snapshot: with
 * libcrypto loaded or paths recorded, its figures may miss that work. A Go program's trace
 * without either (age) is complete. */
static bool end_unseen_may_miss_work(const struct rp_proc *p)
{
	bool unseen = false;
	for (size_t k = 0; k < p->nevents && !unseen; k++)
		unseen = p->events[k].ev.kind == CT_EV_TRACE_WARNING &&
			 rp_str_is(p->events[k].ev.call, RP_EXIT_UNSEEN_CALL);
	return unseen && (p->npaths || p->hdr.libcrypto.len ||
			  (p->has_proc && (p->proc.flags & CT_PROC_HAS_LIBCRYPTO)));
}

enum rp_status rp_proc_status(const struct rp_proc *p)
{
	if (p->read_status != CT_READ_EOF)
		return RP_TRUNCATED;
	if (!p->has_end || (p->has_proc && (p->proc.flags & CT_PROC_INCOMPLETE)) ||
	    end_unseen_may_miss_work(p))
		return RP_INCOMPLETE;
	return RP_COMPLETE;
}

const char *rp_status_name(enum rp_status s)
{
	static const char *const names[] = { "complete", "truncated", "incomplete" };
	return s <= RP_INCOMPLETE ? names[s] : "unknown";
}

/* ---- derived figures */

static uint64_t lat_percentile(const uint64_t *lat, uint64_t total, double q)
{
	double w = ceil(q * (double)total);
	uint64_t want = w >= (double)total ? total : (uint64_t)w, seen = 0; /* no float overflow */
	if (want == 0)
		want = 1;
	for (unsigned b = 0; b < CT_LAT_BUCKETS; b++) {
		seen += lat[b];
		if (seen >= want)
			return ct_lat_bucket_low(b);
	}
	return ct_lat_bucket_low(CT_LAT_BUCKETS - 1);
}

uint64_t rp_messages(const struct ct_path_stats *s)
{
	uint64_t fin = s->phase[CT_PHASE_FINAL].calls, tag = s->phase[CT_PHASE_TAG].calls;
	return s->tls_records + (fin > tag ? fin : tag);
}

bool rp_cipher_is_aead(struct ct_str cipher)
{
	static const char *const modes[] = { "-gcm", "-ccm", "-ocb", "-siv", "-gcm-siv", "chacha20-poly1305" };
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		size_t n = strlen(modes[i]);
		if (cipher.len >= n && strncasecmp(cipher.p + cipher.len - n, modes[i], n) == 0)
			return true;
	}
	return false;
}

/* One cell's wall time (timing_model.h); cells with no timing at all use the path's mean per
 * call (fallback_per_call < 0: none known). */
static double cell_wall(const struct ct_size_bucket *sb, double fallback_per_call, bool *known)
{
	double w;
	if (ct_cell_wall_ns(sb->calls, sb->timed_calls, sb->timed_ns, sb->span_calls, sb->span_ns,
			    sb->span_rejected, sb->span_rejected_ns, &w)) {
		*known = true;
		return w;
	}
	return fallback_per_call >= 0 ? (double)sb->calls * fallback_per_call : 0;
}

void rp_derive(struct rp_path *p)
{
	const struct ct_path_stats *s = &p->st;
	struct rp_derived *d = &p->d;
	memset(d, 0, sizeof(*d));
	d->cycles_per_byte = -1;
	d->wall_exact = s->calls > 0 && s->timed_calls >= s->calls;
	/* the mean per call of the data cells that have timing, for those that have none (a
	 * writer that counted calls but no histogram, or a bucket no sample fell in) */
	double timed_wall = 0, timed_calls = 0;
	uint64_t bucket_calls = 0;
	for (unsigned b = 0; b < CT_SIZE_BUCKETS; b++) {
		bool known = false;
		double w = cell_wall(&s->size[b], -1, &known);
		bucket_calls += s->size[b].calls;
		if (known) {
			timed_wall += w;
			timed_calls += (double)s->size[b].calls;
		}
	}
	double mean = timed_calls > 0  ? timed_wall / timed_calls
		      : s->timed_calls ? (double)(int64_t)s->timed_ns / (double)s->timed_calls
				       : -1;
	if (mean < -0.5 && s->timed_calls)
		mean = 0;
	d->wall_known = timed_calls > 0 || s->timed_calls > 0;
	for (unsigned b = 0; b < CT_SIZE_BUCKETS; b++) {
		bool known = false;
		d->bucket_wall_ns[b] = cell_wall(&s->size[b], mean, &known);
		d->data_wall_ns += d->bucket_wall_ns[b];
	}
	if (bucket_calls == 0 && s->calls && mean >= 0)
		d->data_wall_ns = (double)s->calls * mean;
	for (unsigned ph = 0; ph < CT_PHASES; ph++) {
		bool known = false;
		d->phase_wall_ns[ph] = cell_wall(&s->phase[ph], -1, &known);
		d->phase_known[ph] = known;
		if (known) {
			d->phases_wall_ns += d->phase_wall_ns[ph];
			d->wall_known = true;
		}
	}
	d->wall_ns = d->data_wall_ns + d->phases_wall_ns;
	for (unsigned i = 0; i < CT_CELLS; i++) {
		const struct ct_size_bucket *sb = i < CT_SIZE_BUCKETS ? &s->size[i]
								      : &s->phase[i - CT_SIZE_BUCKETS];
		double cell = i < CT_SIZE_BUCKETS ? d->bucket_wall_ns[i]
						  : d->phase_wall_ns[i - CT_SIZE_BUCKETS];
		if (sb->calls && sb->span_rejected)
			d->cell_pause_ns[i] = ct_cell_pause_ns(sb->calls, sb->span_calls, sb->span_rejected,
							       sb->span_rejected_ns,
							       cell / (double)sb->calls);
		d->pause_ns += d->cell_pause_ns[i];
	}
	d->messages = rp_messages(s);
	if (d->messages && d->wall_known && rp_cipher_is_aead(p->def.cipher))
		d->per_message_ns = d->wall_ns / (double)d->messages;
	if (s->cpu_samples && s->cpu_sample_wall_ns && d->wall_known) {
		/* the samples' CPU sums are signed (one sample may read below 0 or above its wall
		 * time: preload/timing.c); their ratio to wall is clamped to [0, 1] */
		double user = (double)(int64_t)s->cpu_sample_user_ns,
		       sys = (double)(int64_t)s->cpu_sample_sys_ns;
		user = user > 0 ? user : 0;
		sys = sys > 0 ? sys : 0;
		double wall = (double)s->cpu_sample_wall_ns,
		       scale = user + sys > wall ? wall / (user + sys) : 1;
		d->cpu_known = true;
		d->user_ns = d->wall_ns * user * scale / wall;
		d->sys_ns = d->wall_ns * sys * scale / wall;
	}
	bool cost_known;
	double cost = rp_path_cost_ns(p, &cost_known);
	if (p->tsc_hz && s->bytes && cost_known)
		d->cycles_per_byte = cost * (double)p->tsc_hz / 1e9 / (double)s->bytes;
	uint64_t lat_total = 0;
	for (unsigned b = 0; b < CT_LAT_BUCKETS; b++)
		lat_total += s->lat[b];
	if (lat_total) {
		d->lat_known = true;
		d->p50_ns = lat_percentile(s->lat, lat_total, 0.50);
		d->p99_ns = lat_percentile(s->lat, lat_total, 0.99);
	}
}

/* ---- filters */

double rp_measured_calls(const struct ct_path_stats *s)
{
	double n = 0;
	for (unsigned b = 0; b < CT_SIZE_BUCKETS; b++)
		n += (double)(s->size[b].timed_calls + s->size[b].span_calls);
	return n < (double)s->calls ? n : (double)s->calls;
}

bool rp_path_setups_only(const struct ct_path_stats *s)
{
	if (s->calls || s->setup_calls || s->teardown_calls)
		return false;
	for (unsigned ph = 0; ph < CT_PHASES; ph++)
		if (s->phase[ph].calls && ph != CT_PHASE_KEY && ph != CT_PHASE_INIT)
			return false;
	return s->phase[CT_PHASE_KEY].calls || s->phase[CT_PHASE_INIT].calls;
}

static uint64_t plus(uint64_t a, uint64_t b)
{
	return a + b;
}

/* Whether set-up path base's set-ups belong to path v. A libgcrypt handle is set up before it
 * has a direction (its first encrypt or decrypt gives it one), and libgcrypt's code may differ by
 * direction (VAES decrypts CBC, AES-NI encrypts it): its set-up path folds into the path of the
 * same cipher and key size whichever direction and code did the work. */
static bool setup_of(const struct ct_path_def *base, const struct ct_path_def *v)
{
	if (base->api == CT_API_GCRYPT && base->dir == CT_DIR_UNKNOWN)
		return v->api == base->api && v->key_bits == base->key_bits &&
		       rp_str_eq(v->cipher, base->cipher);
	return rp_same_path_any_entry(v, base);
}

/*
 * A context's set-up (an init naming a cipher: a key schedule, the provider's context) is counted
 * on the path of the init, whose entry is not known yet: the first data call attaches the ctx to
 * the path variant of its entry (EVP_*Update, EVP_Cipher). The set-ups belong to the work that
 * followed: folded here into the same path's busiest entry variant of the same process.
 */
static void fold_setups(struct rp_proc *p)
{
	for (size_t k = 0; k < p->npaths; k++) {
		struct rp_path *base = &p->paths[k];
		if (!base->has_stats || base->def.entry != CT_ENTRY_UNKNOWN)
			continue;
		struct rp_path *to = NULL;
		for (size_t j = 0; j < p->npaths; j++) {
			struct rp_path *v = &p->paths[j];
			if (v != base && v->has_stats && v->st.calls && v->def.entry != CT_ENTRY_UNKNOWN &&
			    setup_of(&base->def, &v->def) && (!to || v->st.bytes > to->st.bytes))
				to = v;
		}
		if (!to)
			continue;
		/* only the phases move: the same cell arithmetic as every merge (rp_stats_combine) */
		struct ct_path_stats phases = { 0 };
		memcpy(phases.phase, base->st.phase, sizeof(phases.phase));
		memset(base->st.phase, 0, sizeof(base->st.phase));
		rp_stats_combine(&to->st, &to->st, &phases, plus);
		to->st.tls_records += base->st.tls_records;
		base->st.tls_records = 0;
		/* nothing left: a definition events may name, no longer a path */
		if (!base->st.calls && !base->st.setup_calls && !base->st.teardown_calls)
			base->has_stats = false;
	}
}

bool rp_path_selected(const struct rp_model *m, const struct rp_path *p)
{
	const struct rp_filter *f = &m->filter;
	/* a definition without counters (a path only events refer to) is never shown as a path,
	 * nor one whose contexts were set up and never used (its set-ups, if any, were folded into
	 * the path that did the work: fold_setups) */
	if (!p->has_stats || rp_path_setups_only(&p->st))
		return false;
	if (f->api && strcmp(f->api, ct_api_name(p->def.api)) != 0)
		return false;
	if (f->cipher_glob) {
		char cipher[128];
		snprintf(cipher, sizeof(cipher), "%.*s", (int)p->def.cipher.len, p->def.cipher.p);
		if (fnmatch(f->cipher_glob, cipher, 0) != 0)
			return false;
	}
	return true;
}

/* Keeps only the size buckets inside [min_size, max_size] and recomputes the totals from them;
 * the latency histogram and CPU samples cannot be split by size and stay whole; the phases (key
 * and message set-ups, AAD, finals, tags) have no request size and go. */
static void apply_size_filter(const struct rp_filter *f, struct ct_path_stats *s)
{
	if (!f->min_size && !f->max_size)
		return;
	s->calls = s->bytes = s->timed_calls = s->timed_ns = 0;
	memset(s->phase, 0, sizeof(s->phase));
	s->tls_records = 0;
	for (unsigned b = 0; b < CT_SIZE_BUCKETS; b++) {
		uint64_t low = ct_size_bucket_low(b);
		uint64_t high = b + 1 < CT_SIZE_BUCKETS ? ct_size_bucket_low(b + 1) - 1 : UINT64_MAX;
		if (b == 0)
			high = 0;
		bool in = high >= f->min_size && (!f->max_size || low <= f->max_size);
		if (!in) {
			memset(&s->size[b], 0, sizeof(s->size[b]));
			continue;
		}
		s->calls += s->size[b].calls;
		s->bytes += s->size[b].bytes;
		s->timed_calls += s->size[b].timed_calls;
		s->timed_ns += s->size[b].timed_ns;
	}
}

bool rp_same_path_any_entry(const struct ct_path_def *a, const struct ct_path_def *b)
{
	/* BoringSSL's EVP_AEAD contexts are not EVP_CIPHER contexts: set up on their own entry (the
	 * preload classifies them on it), never a variant of an EVP_CIPHER path of the same cipher */
	bool aead_a = a->entry == CT_ENTRY_EVP_AEAD, aead_b = b->entry == CT_ENTRY_EVP_AEAD;
	return a->api == b->api && a->dir == b->dir && a->key_bits == b->key_bits && a->route == b->route &&
	       aead_a == aead_b && rp_str_eq(a->impl, b->impl) && rp_str_eq(a->cipher, b->cipher) &&
	       rp_str_eq(a->proto, b->proto);
}

bool rp_same_path(const struct rp_path *a, const struct rp_path *b)
{
	return a->def.entry == b->def.entry && rp_same_path_any_entry(&a->def, &b->def);
}

void rp_stats_combine(struct ct_path_stats *out, const struct ct_path_stats *a, const struct ct_path_stats *b,
		      uint64_t (*op)(uint64_t, uint64_t))
{
#define C(f) out->f = op(a->f, b->f)
	C(calls);
	C(bytes);
	C(errors);
	C(timed_calls);
	C(timed_ns);
	C(cpu_samples);
	C(cpu_sample_wall_ns);
	C(cpu_sample_user_ns);
	C(cpu_sample_sys_ns);
	C(syscalls);
	C(setup_calls);
	C(setup_ns);
	C(teardown_calls);
	C(teardown_ns);
	C(spliced_calls);
	C(tls_records);
#define CELL(x)                                                                                              \
	do {                                                                                                 \
		C(x.calls);                                                                                  \
		C(x.bytes);                                                                                  \
		C(x.timed_calls);                                                                            \
		C(x.timed_ns);                                                                               \
		C(x.span_calls);                                                                             \
		C(x.span_ns);                                                                                \
		C(x.span_rejected);                                                                          \
		C(x.span_rejected_ns);                                                                       \
	} while (0)
	for (unsigned k = 0; k < CT_SIZE_BUCKETS; k++)
		CELL(size[k]);
	for (unsigned k = 0; k < CT_PHASES; k++)
		CELL(phase[k]);
#undef CELL
	for (unsigned k = 0; k < CT_LAT_BUCKETS; k++)
		C(lat[k]);
#undef C
}

static void add_stats(struct ct_path_stats *to, const struct ct_path_stats *s)
{
	rp_stats_combine(to, to, s, plus);
}

static bool same_event(const struct ct_event *a, const struct ct_event *b)
{
	return a->kind == b->kind && a->err == b->err && rp_str_eq(a->call, b->call) &&
	       rp_str_eq(a->detail, b->detail) && rp_str_eq(a->callsite, b->callsite) &&
	       (a->ret <= 0) == (b->ret <= 0);
}

static int cmp_path(const void *a, const void *b)
{
	const struct rp_path *x = a, *y = b;
	if (x->st.bytes != y->st.bytes)
		return x->st.bytes < y->st.bytes ? 1 : -1;
	if (x->st.calls != y->st.calls)
		return x->st.calls < y->st.calls ? 1 : -1;
	return 0;
}

/* ---- one process, several files */

/* N of a "name.ctrace.N" file (0 for "name.ctrace"): the writer opens .N when the program closed
 * its trace fd (sshd's closefrom), and the new file repeats the header and every path. */
static unsigned file_generation(const char *file)
{
	const char *dot = file ? strrchr(file, '.') : NULL;
	if (!dot || dot[1] < '0' || dot[1] > '9')
		return 0;
	return (unsigned)strtoul(dot + 1, NULL, 10);
}

/* Is b a newer file of the same process image as a? Same pid and same start (an exec starts a
 * new image with a new start time, and its file is a different process in the report). */
static bool newer_file_of(const struct rp_proc *a, const struct rp_proc *b)
{
	if (!a->has_hdr || !b->has_hdr || a == b || a->hdr.pid != b->hdr.pid ||
	    a->hdr.start_mono_ns != b->hdr.start_mono_ns)
		return false;
	unsigned ga = file_generation(a->file), gb = file_generation(b->file);
	if (ga != gb)
		return gb > ga;
	if (a->has_proc && b->has_proc && a->proc.mono_ns != b->proc.mono_ns)
		return b->proc.mono_ns > a->proc.mono_ns;
	return b > a;
}

static void mark_superseded(struct rp_model *m)
{
	for (size_t i = 0; i < m->nprocs; i++) {
		m->procs[i].superseded = false;
		for (size_t k = 0; k < m->nprocs && !m->procs[i].superseded; k++)
			m->procs[i].superseded = newer_file_of(&m->procs[i], &m->procs[k]);
	}
}

bool rp_proc_shown(const struct rp_model *m, const struct rp_proc *p)
{
	return !p->superseded && (m->filter.pid < 0 || (long long)p->hdr.pid == m->filter.pid);
}

void rp_model_merge(struct rp_model *m)
{
	mark_superseded(m);
	for (size_t i = 0; i < m->npaths; i++)
		free(m->paths[i].pids.v);
	for (size_t i = 0; i < m->nevents; i++)
		free(m->events[i].pids.v);
	m->npaths = m->nevents = 0;

	for (size_t i = 0; i < m->nprocs; i++) {
		struct rp_proc *p = &m->procs[i];
		if (!rp_proc_shown(m, p))
			continue;
		fold_setups(p);
		for (size_t k = 0; k < p->npaths; k++) {
			struct rp_path *pp = &p->paths[k];
			/* a timer that is not the CPU clock (CNTVCT_EL0) has no cycles to show */
			pp->tsc_hz = p->hdr.flags & CT_HDR_TICKS_NOT_CYCLES ? 0 : p->hdr.tsc_hz;
			if (!pp->size_cut) /* once: a later merge sees the stats already cut */
				pp->calls_all_sizes = pp->st.calls;
			pp->size_cut = m->filter.min_size || m->filter.max_size;
			apply_size_filter(&m->filter, &pp->st);
			rp_derive(pp);
			/* rp_path_selected also leaves out definitions without counters: paths events
			 * refer to that never did any work (a context set up before its first data call
			 * chose the entry variant) */
			if (!rp_path_selected(m, pp))
				continue;
			struct rp_path *to = NULL;
			for (size_t j = 0; j < m->npaths && !to; j++)
				if (rp_same_path(&m->paths[j], pp))
					to = &m->paths[j];
			if (!to) {
				if (!rp_grow((void **)&m->paths, &m->cap_paths, m->npaths, sizeof(*m->paths)))
					continue;
				to = &m->paths[m->npaths++];
				memset(to, 0, sizeof(*to));
				to->def = pp->def;
				to->has_def = pp->has_def;
				to->st.path_id = pp->def.path_id;
			}
			to->has_stats |= pp->has_stats;
			if (!to->tsc_hz)
				to->tsc_hz = pp->tsc_hz;
			if (!to->def.callsite.len)
				to->def.callsite = pp->def.callsite;
			add_stats(&to->st, &pp->st);
			to->size_cut |= pp->size_cut;
			to->calls_all_sizes += pp->size_cut ? pp->calls_all_sizes : pp->st.calls;
			rp_u32list_add(&to->pids, p->hdr.pid);
		}
		for (size_t k = 0; k < p->nevents; k++) {
			const struct rp_event *e = &p->events[k];
			struct rp_event *to = NULL;
			for (size_t j = 0; j < m->nevents && !to; j++)
				if (same_event(&m->events[j].ev, &e->ev))
					to = &m->events[j];
			if (!to) {
				if (!rp_grow((void **)&m->events, &m->cap_events, m->nevents,
					     sizeof(*m->events)))
					continue;
				to = &m->events[m->nevents++];
				memset(to, 0, sizeof(*to));
				to->ev = e->ev;
				to->ev.count = 0;
				to->pid = e->pid;
			}
			to->ev.count += e->ev.count ? e->ev.count : 1;
			rp_u32list_add(&to->pids, e->pid);
		}
	}
	for (size_t i = 0; i < m->nprocs; i++) {
		struct rp_proc *p = &m->procs[i];
		rp_proc_role(m, p, p->role, sizeof(p->role));
		if (p->superseded) /* listed in JSON (flagged): its own figures still make sense */
			for (size_t k = 0; k < p->npaths; k++)
				rp_derive(&p->paths[k]);
		rp_proc_figures(m, p);
		rp_profile_sample_time(p);
		rp_profile_hooks_check(m, p);
	}
	for (size_t j = 0; j < m->npaths; j++)
		rp_derive(&m->paths[j]);
	if (m->npaths > 1)
		qsort(m->paths, m->npaths, sizeof(*m->paths), cmp_path);
}
