/* SPDX-License-Identifier: MIT */
/*
 * json.c - `cryptrace report --json`: the whole model as one JSON object for scripts. Always
 * valid JSON: strings are escaped and invalid UTF-8 becomes U+FFFD; unknown figures are null.
 */
#include "views.h"
#include "model.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A minimal streaming writer: it remembers per nesting level whether a comma is due. */
struct jw {
	FILE *f;
	int depth;
	bool need_comma[64];
};

static void j_sep(struct jw *w)
{
	if (w->need_comma[w->depth])
		fputc(',', w->f);
	w->need_comma[w->depth] = true;
}

static void j_open(struct jw *w, char c)
{
	j_sep(w);
	fputc(c, w->f);
	if (w->depth < 63)
		w->depth++;
	w->need_comma[w->depth] = false;
}

static void j_close(struct jw *w, char c)
{
	fputc(c, w->f);
	if (w->depth > 0)
		w->depth--;
}

static void j_key(struct jw *w, const char *k)
{
	j_sep(w);
	rp_json_str(w->f, k, strlen(k));
	fputc(':', w->f);
	w->need_comma[w->depth] = false; /* the value follows without a comma */
}

static void j_value_done(struct jw *w)
{
	w->need_comma[w->depth] = true;
}

static void j_str(struct jw *w, const char *k, struct ct_str s)
{
	if (k)
		j_key(w, k);
	else
		j_sep(w);
	rp_json_str(w->f, s.p, s.len);
	j_value_done(w);
}

static void j_cstr(struct jw *w, const char *k, const char *s)
{
	j_str(w, k, ct_str_from(s));
}

static void j_u64(struct jw *w, const char *k, uint64_t v)
{
	if (k)
		j_key(w, k);
	else
		j_sep(w);
	fprintf(w->f, "%llu", (unsigned long long)v);
	j_value_done(w);
}

static void j_i64(struct jw *w, const char *k, int64_t v)
{
	j_key(w, k);
	fprintf(w->f, "%lld", (long long)v);
	j_value_done(w);
}

/* A number, or null when unknown. */
static void j_num(struct jw *w, const char *k, double v, bool known)
{
	j_key(w, k);
	if (!known || isnan(v) || isinf(v))
		fputs("null", w->f);
	else if (v == floor(v) && fabs(v) < 9e15)
		fprintf(w->f, "%.0f", v);
	else
		fprintf(w->f, "%.6g", v);
	j_value_done(w);
}

static void j_bool(struct jw *w, const char *k, bool v)
{
	j_key(w, k);
	fputs(v ? "true" : "false", w->f);
	j_value_done(w);
}

static void j_obj(struct jw *w, const char *k)
{
	if (k) {
		j_key(w, k);
		w->need_comma[w->depth] = false;
	}
	j_open(w, '{');
}

static void j_arr(struct jw *w, const char *k)
{
	if (k) {
		j_key(w, k);
		w->need_comma[w->depth] = false;
	}
	j_open(w, '[');
}

static void j_pids(struct jw *w, const char *k, const struct rp_u32list *l)
{
	j_arr(w, k);
	for (size_t i = 0; i < l->n; i++)
		j_u64(w, NULL, l->v[i]);
	j_close(w, ']');
}

static const char *const cpu_flag_names[32] = {
	[0] = "aes",        [1] = "pclmulqdq", [2] = "avx",      [3] = "avx2",       [4] = "vaes",
	[5] = "vpclmulqdq", [6] = "avx512f",   [7] = "sha",      [8] = "hypervisor", [9] = "gfni",
	[10] = "avx512vl",  [11] = "avx512bw", [16] = "arm-aes", [17] = "arm-pmull",
};

static void json_path_figures(struct jw *w, const struct rp_path *p)
{
	const struct rp_derived *d = &p->d;
	j_u64(w, "calls", p->st.calls);
	j_u64(w, "bytes", p->st.bytes);
	j_u64(w, "errors", p->st.errors);
	j_num(w, "wall_ns", d->wall_ns, d->wall_known);
	j_num(w, "user_ns", d->user_ns, d->cpu_known);
	j_num(w, "sys_ns", d->sys_ns, d->cpu_known);
}

static void json_creator_fields(struct jw *w, const struct rp_creator *c, const char *purpose)
{
	j_cstr(w, "frame", c->created_by);
	j_cstr(w, "module", c->module);
	j_cstr(w, "via", c->via);
	j_cstr(w, "purpose", purpose);
}

/* A call site as every output shows it (C++ names demangled), and as it was before demangling
 * (demangle.c), for scripts that want the exact symbols. */
static void j_callsite(struct jw *w, const struct rp_model *m, struct ct_str callsite)
{
	j_str(w, "callsite", callsite);
	j_str(w, "callsite_mangled", rp_callsite_mangled(m, callsite));
}

/* callsite plus who created the contexts (callsites.c): "created_by" "ssh+0x632ac", its module,
 * the libcrypto API it went through and the purpose ("TLS", "SSH transport"...), judged in
 * process p (NULL: the merged path, in every process that has it). */
static void json_creator(struct jw *w, const struct rp_model *m, const struct rp_proc *p,
			 const struct rp_path *path)
{
	struct rp_creator c;
	j_callsite(w, m, path->def.callsite);
	if (!rp_path_creator(m, p, path, &c)) {
		j_num(w, "created_by", 0, false);
		return;
	}
	j_obj(w, "created_by");
	json_creator_fields(w, &c, rp_path_purpose(m, p, path, &c));
	j_close(w, '}');
}

/* Every call site that set up the merged path's contexts, with its count (creators.c), and the
 * usage patterns seen: "creators": {"setups": N, "usage": [...], "sites": [...]}, or null for a
 * trace without set-up counts. */
static void json_creators(struct jw *w, const struct rp_model *m, const struct rp_path *p)
{
	struct rp_path_creators pc;
	if (!rp_path_creators(m, p, &pc)) {
		j_num(w, "creators", 0, false);
		return;
	}
	j_obj(w, "creators");
	j_u64(w, "setups", pc.setups);
	j_arr(w, "usage");
	static const struct {
		uint32_t bit;
		const char *name;
	} names[] = {
		{ RP_USAGE_IV_REINIT, "iv-reinit" },   { RP_USAGE_TLS1_AAD, "aead-tls1-aad" },
		{ RP_USAGE_IV_FIXED, "gcm-iv-fixed" }, { RP_USAGE_SET_IVLEN, "aead-set-ivlen" },
		{ RP_USAGE_MAC_KEY, "aead-mac-key" },
	};
	for (size_t k = 0; k < sizeof(names) / sizeof(names[0]); k++)
		if (pc.usage & names[k].bit)
			j_cstr(w, NULL, names[k].name);
	j_close(w, ']');
	j_arr(w, "sites");
	for (size_t k = 0; k < pc.nsites; k++) {
		j_obj(w, NULL);
		j_u64(w, "setups", pc.sites[k].setups);
		j_callsite(w, m, pc.sites[k].callsite);
		json_creator_fields(w, &pc.sites[k].who, rp_creator_purpose(&pc.sites[k].who, pc.usage));
		j_close(w, '}');
	}
	j_close(w, ']');
	j_u64(w, "other_setups", pc.other_setups);
	j_close(w, '}');
}

/* part / whole, or null when either is unknown */
static void j_share(struct jw *w, const char *k, double part, bool part_known, double whole, bool whole_known)
{
	j_num(w, k, part / whole, part_known && whole_known && whole > 0);
}

/* How a cell's time was measured (docs/report.md "How time is measured"): its probes and the
 * calls of its accepted and rejected spans. */
static void json_cell_timing(struct jw *w, const struct ct_size_bucket *sb, double pause_ns)
{
	j_num(w, "pause_ns", pause_ns, true);
	int64_t probe_sum = (int64_t)sb->timed_ns;
	j_u64(w, "probes", sb->timed_calls);
	j_num(w, "probe_mean_ns", (probe_sum > 0 ? (double)probe_sum : 0) / (double)sb->timed_calls,
	      sb->timed_calls > 0);
	j_u64(w, "span_calls", sb->span_calls);
	j_num(w, "span_mean_ns", (double)sb->span_ns / (double)sb->span_calls, sb->span_calls > 0);
	j_u64(w, "span_rejected_calls", sb->span_rejected);
	j_num(w, "span_rejected_mean_ns", (double)sb->span_rejected_ns / (double)sb->span_rejected,
	      sb->span_rejected > 0);
}

/* The operation's calls besides the data: AAD bytes are AAD, not data; messages and the cost
 * per message (AEAD); the update / set-up-and-finish split of the path's wall time. */
static void json_phases(struct jw *w, const struct rp_path *p)
{
	const struct rp_derived *d = &p->d;
	j_num(w, "update_wall_ns", d->data_wall_ns, d->wall_known);
	j_num(w, "setup_finish_wall_ns", d->phases_wall_ns, d->wall_known);
	j_u64(w, "messages", d->messages);
	j_num(w, "per_message_ns", d->per_message_ns, d->per_message_ns > 0);
	j_u64(w, "aad_bytes", p->st.phase[CT_PHASE_AAD].bytes);
	j_arr(w, "phases");
	for (unsigned ph = 0; ph < CT_PHASES; ph++) {
		const struct ct_size_bucket *sb = &p->st.phase[ph];
		if (!sb->calls)
			continue;
		j_obj(w, NULL);
		j_cstr(w, "phase", ct_phase_name(ph));
		j_u64(w, "calls", sb->calls);
		j_u64(w, "bytes", sb->bytes);
		j_num(w, "wall_ns", d->phase_wall_ns[ph], d->phase_known[ph]);
		j_num(w, "each_ns", d->phase_wall_ns[ph] / (double)sb->calls, d->phase_known[ph]);
		json_cell_timing(w, sb, d->cell_pause_ns[CT_SIZE_BUCKETS + ph]);
		j_close(w, '}');
	}
	j_close(w, ']');
}

static void json_path(struct jw *w, const struct rp_model *m, const struct rp_path *p)
{
	const struct rp_derived *d = &p->d;
	j_obj(w, NULL);
	j_cstr(w, "api", ct_api_name(p->def.api));
	j_str(w, "impl", p->def.impl);
	j_str(w, "cipher", p->def.cipher);
	j_cstr(w, "dir", ct_dir_name(p->def.dir));
	j_u64(w, "key_bits", p->def.key_bits);
	j_cstr(w, "entry", ct_entry_name(p->def.entry));
	j_cstr(w, "route", ct_route_name(p->def.route));
	j_str(w, "requested", p->def.requested);
	j_str(w, "proto", p->def.proto);
	j_u64(w, "flags", p->def.flags);
	/* its calls wait for a peer: wall_ns includes the wait, cost_ns is its CPU time */
	j_bool(w, "io_wait", rp_path_io_wait(p));
	bool cost_known;
	double cost = rp_path_cost_ns(p, &cost_known);
	j_num(w, "cost_ns", cost, cost_known);
	json_path_figures(w, p);
	j_bool(w, "wall_exact", d->wall_exact);
	j_num(w, "pause_ns", d->pause_ns, d->wall_known);
	j_num(w, "cycles_per_byte", d->cycles_per_byte, d->cycles_per_byte >= 0);
	j_num(w, "throughput_wall_bps", (double)p->st.bytes * 1e9 / d->wall_ns,
	      d->wall_known && d->wall_ns > 0 && !rp_path_io_wait(p));
	j_num(w, "throughput_cpu_bps", (double)p->st.bytes * 1e9 / (d->user_ns + d->sys_ns),
	      d->cpu_known && d->user_ns + d->sys_ns > 0);
	j_u64(w, "syscalls", p->st.syscalls);
	j_obj(w, "latency_ns");
	j_num(w, "p50", (double)d->p50_ns, d->lat_known);
	j_num(w, "p99", (double)d->p99_ns, d->lat_known);
	j_close(w, '}');
	j_obj(w, "timing");
	j_u64(w, "timed_calls", p->st.timed_calls);
	j_u64(w, "cpu_samples", p->st.cpu_samples);
	j_close(w, '}');
	json_phases(w, p);
	j_obj(w, "session");
	j_u64(w, "setup_calls", p->st.setup_calls);
	j_u64(w, "setup_ns", p->st.setup_ns);
	j_u64(w, "teardown_calls", p->st.teardown_calls);
	j_u64(w, "teardown_ns", p->st.teardown_ns);
	j_u64(w, "spliced_calls", p->st.spliced_calls);
	j_close(w, '}');
	j_pids(w, "pids", &p->pids);
	json_creator(w, m, NULL, p);
	json_creators(w, m, p);
	j_arr(w, "sizes");
	for (unsigned b = 0; b < CT_SIZE_BUCKETS; b++) {
		const struct ct_size_bucket *sb = &p->st.size[b];
		if (!sb->calls)
			continue;
		j_obj(w, NULL);
		j_u64(w, "bucket_low", ct_size_bucket_low(b));
		j_u64(w, "calls", sb->calls);
		j_u64(w, "bytes", sb->bytes);
		j_num(w, "wall_ns", d->bucket_wall_ns[b], d->wall_known);
		json_cell_timing(w, sb, d->cell_pause_ns[b]);
		j_close(w, '}');
	}
	j_close(w, ']');
	j_close(w, '}');
}

/* The sampled CPU profile (report/profile.c): null when none was taken. */
static void json_profile(struct jw *w, const struct rp_profile *pr)
{
	if (!pr->has) {
		j_num(w, "profile", 0, false);
		return;
	}
	j_obj(w, "profile");
	j_u64(w, "period_us", pr->period_us);
	/* what a sample counts: the period, or less where the sampling clock ran ahead (steal) */
	j_num(w, "sample_us", rp_profile_sample_s(pr) * 1e6, true);
	j_num(w, "cpu_s", (double)pr->samples * rp_profile_sample_s(pr), true);
	j_u64(w, "samples", pr->samples);
	j_u64(w, "lost", pr->lost);
	j_u64(w, "unmapped", pr->unmapped);
	j_u64(w, "crypto_samples", pr->crypto_samples);
	j_bool(w, "stacks", pr->nstacks > 0);
	j_cstr(w, "stacks_note", pr->stacks_note);
	j_u64(w, "stacks_dropped", pr->stacks_dropped);
	j_num(w, "crypto_share", (double)pr->crypto_samples / (double)pr->samples, pr->samples > 0);
	uint64_t groups[RP_PROFILE_GROUPS];
	rp_profile_group_samples(pr, groups);
	j_obj(w, "group_samples");
	for (size_t g = 0; g < RP_PROFILE_GROUPS; g++)
		j_u64(w, rp_profile_group_names[g], groups[g]);
	j_close(w, '}');
	/* the profile over time (profile_time.c): what the Perfetto tracks draw, added up */
	struct rp_profile_bin *bins;
	const char *cats[RP_PROFILE_TIME_CATS];
	size_t ncats, nb = rp_profile_timeline(pr, &bins, cats, &ncats);
	if (nb) {
		uint64_t ts = 0, tc = 0;
		for (size_t i = 0; i < nb; i++) {
			ts += bins[i].samples;
			tc += bins[i].crypto;
		}
		j_obj(w, "timeline");
		j_u64(w, "bins", nb);
		j_u64(w, "bin_us", bins[0].dur_ns / 1000u);
		j_u64(w, "samples", ts);
		j_u64(w, "crypto_samples", tc);
		uint64_t left_out = 0;
		for (size_t i = 0; i < pr->ntimes; i++)
			left_out = pr->times[i].left_out > left_out ? pr->times[i].left_out : left_out;
		j_u64(w, "left_out_samples", left_out);
		j_close(w, '}');
	} else {
		j_num(w, "timeline", 0, false);
	}
	free(bins);
	const struct rp_hooks_check *c = &pr->check;
	if (c->made) {
		j_obj(w, "hooks_check");
		j_num(w, "hooks_s", c->hooks_s, true);
		j_num(w, "profile_s", c->profile_s, true);
		j_num(w, "error_s", c->error_s, true);
		j_num(w, "profile_max_s", c->profile_max_s, true);
		j_num(w, "error_max_s", c->error_max_s, true);
		j_num(w, "outside_s", c->outside_s, true);
		j_cstr(w, "outside_module", c->outside_module);
		j_cstr(w, "hooked_module", c->hooked_module);
		j_bool(w, "agree", !c->verdict);
		j_cstr(w, "verdict",
		       c->verdict > 0   ? "profile-above"
		       : c->verdict < 0 ? "hooks-above"
					: "agree");
		j_close(w, '}');
	} else {
		j_num(w, "hooks_check", 0, false);
	}
	j_arr(w, "items");
	for (size_t i = 0; i < pr->nitems; i++) {
		const struct rp_profile_item *it = &pr->items[i];
		j_obj(w, NULL);
		j_cstr(w, "category", it->category);
		j_cstr(w, "group", rp_profile_item_group(it));
		j_cstr(w, "impl", it->impl);
		j_cstr(w, "module", it->module);
		j_cstr(w, "function", it->function);
		j_cstr(w, "via", it->via);
		j_u64(w, "samples", it->samples);
		j_num(w, "share", (double)it->samples / (double)pr->samples, pr->samples > 0);
		j_close(w, '}');
	}
	j_close(w, ']');
	j_close(w, '}');
}

static void json_proc(struct jw *w, const struct rp_model *m, const struct rp_proc *p)
{
	const struct ct_header *h = &p->hdr;
	j_obj(w, NULL);
	j_u64(w, "pid", h->pid);
	j_u64(w, "ppid", h->ppid);
	j_cstr(w, "file", p->file);
	j_str(w, "exe", h->exe);
	j_arr(w, "argv");
	for (unsigned i = 0, n = rp_str_nparts(h->argv, '\0'); i < n; i++)
		j_str(w, NULL, rp_str_part(h->argv, '\0', i));
	j_close(w, ']');
	/* values on the command line that carry a secret, recorded as "<redacted>"; argv[0] alone */
	j_u64(w, "argv_redacted", h->argv_redacted);
	j_bool(w, "argv_omitted", h->flags & CT_HDR_ARGV_OMITTED);
	j_u64(w, "start_realtime_ns", h->start_realtime_ns);
	j_str(w, "libcrypto", p->proc.libcrypto.len ? p->proc.libcrypto : h->libcrypto);
	j_str(w, "cpu_model", h->cpu_model);
	j_arr(w, "cpu_flags");
	for (unsigned b = 0; b < 32; b++)
		if ((h->cpu_flags & (1u << b)) && cpu_flag_names[b])
			j_cstr(w, NULL, cpu_flag_names[b]);
	j_close(w, ']');
	j_str(w, "kernel", h->kernel);
	j_str(w, "hostname", h->hostname);
	j_str(w, "ia32cap", h->ia32cap);
	/* how the process numbered errno; the events' errno values are renumbered as the reporter's
	 * (load.c), so that errno and errno_name agree on this machine */
	j_str(w, "errno_abi", h->errno_abi.len ? h->errno_abi : ct_str_from("generic"));
	j_str(w, "route_spec", h->route_spec);
	j_str(w, "timing", h->timing);
	j_u64(w, "tsc_hz", h->tsc_hz);
	j_u64(w, "sample_period", h->sample_period);
	j_u64(w, "aesni_cpb_milli", h->aesni_cpb_milli);
	/* measured by the process itself when no launcher passed a bound in (preload/calib.c) */
	j_u64(w, "aesni_cpb_milli_in_process", p->proc.aesni_cpb_milli);
	enum rp_status st = rp_proc_status(p);
	j_cstr(w, "status", rp_status_name(st));
	if (p->read_status != CT_READ_EOF)
		j_cstr(w, "damage", p->damage);
	if (p->has_end) {
		static const char *const reasons[] = { "", "exit", "exec", "signal", "detach" };
		j_cstr(w, "end_reason",
		       p->end.reason >= 1 && p->end.reason <= 4 ? reasons[p->end.reason] : "unknown");
		j_i64(w, "exit_status", p->end.status);
	} else {
		j_num(w, "end_reason", 0, false);
		j_num(w, "exit_status", 0, false);
	}
	j_num(w, "utime_ns", (double)p->proc.utime_ns, p->has_proc);
	j_num(w, "stime_ns", (double)p->proc.stime_ns, p->has_proc);
	j_u64(w, "hooked_calls", p->proc.hooked_calls);
	j_bool(w, "has_libcrypto", p->proc.flags & CT_PROC_HAS_LIBCRYPTO);
	/* the last PROC: a flusher thread wrote a snapshot every interval, idle or not */
	j_bool(w, "periodic_snapshots", p->proc.flags & CT_PROC_PERIODIC);
	j_bool(w, "flusher_off", p->proc.flags & CT_PROC_NO_FLUSHER); /* CRYPTRACE_FLUSHER=0 */
	j_arr(w, "crypto_libs");
	for (unsigned i = 0, n = rp_str_nparts(p->proc.crypto_libs, '\n'); i < n; i++)
		j_str(w, NULL, rp_str_part(p->proc.crypto_libs, '\n', i));
	j_close(w, ']');
	/* every shared object the process mapped (MODULE records of preload/mapped.c) */
	j_arr(w, "mapped");
	for (size_t i = 0; i < p->nmodules; i++)
		if (p->modules[i].flags & CT_MODULE_MAPPED)
			j_str(w, NULL, p->modules[i].path);
	j_close(w, ']');
	json_profile(w, &p->prof);
	j_u64(w, "per_call_ops", p->ops);
	j_num(w, "per_call_weights", (double)p->ops_weight, !p->ops_weight_unknown);
	/* per-call mode's rate cap (ops/s; 0 none) and the ops it left out of the timeline: each
	 * kept op carries the weight K it was sampled with (docs/reports.md, "Per-call timeline") */
	j_u64(w, "max_ops_rate", p->hdr.max_ops_rate);
	j_u64(w, "per_call_sampled_out", p->proc.ops_sampled_out);
	j_u64(w, "per_call_max_weight", p->proc.ops_max_weight);
	/* `cryptrace attach` (docs/attach.md): whether the library came late, and the pause */
	j_bool(w, "attached", p->hdr.flags & CT_HDR_ATTACHED);
	j_u64(w, "attach_pause_ns", p->proc.attach_pause_ns);
	j_u64(w, "attach_threads", p->proc.attach_threads);
	j_u64(w, "attach_slots", p->proc.attach_slots);
	/* a route's calls served without libcrypto's EVP in between (docs/routes.md) */
	j_u64(w, "route_direct_calls", p->proc.route_direct_calls);
	j_u64(w, "dropped_ops", p->proc.dropped_ops > p->ops_dropped ? p->proc.dropped_ops : p->ops_dropped);
	j_u64(w, "dropped_events", p->proc.dropped_events);
	j_u64(w, "write_errors", p->proc.write_errors);
	/* what the process is (roles.c), and how much of its life and CPU went into crypto
	 * (figures.c) */
	if (p->win_cut) { /* the two snapshots this process's totals are the difference of */
		j_num(w, "window_from_s", p->win_from_s, true);
		j_num(w, "window_to_s", p->win_to_s, true);
	}
	j_bool(w, "superseded", p->superseded);
	j_cstr(w, "role", p->role);
	const struct rp_proc_figures *f = &p->fig;
	j_num(w, "wall_ns", f->wall_ns, f->wall_known);
	j_num(w, "cpu_ns", f->cpu_ns, f->cpu_known);
	j_u64(w, "crypto_calls", f->crypto_calls);
	j_u64(w, "crypto_bytes", f->crypto_bytes);
	j_num(w, "crypto_wall_ns", f->crypto_wall_ns, f->crypto_wall_known);
	j_num(w, "crypto_cpu_ns", f->crypto_cpu_ns, f->crypto_cpu_known);
	j_share(w, "crypto_wall_share", f->crypto_wall_ns, f->crypto_wall_known, f->wall_ns, f->wall_known);
	j_share(w, "crypto_cpu_share", f->crypto_cpu_ns, f->crypto_cpu_known, f->cpu_ns, f->cpu_known);
	j_num(w, "crypto_throughput_bps", (double)f->crypto_bytes * 1e9 / f->crypto_wall_ns,
	      f->crypto_wall_known && f->crypto_wall_ns > 0);
	j_arr(w, "paths");
	for (size_t i = 0; i < p->npaths; i++) {
		const struct rp_path *pp = &p->paths[i];
		if (!rp_path_selected(m, pp))
			continue;
		j_obj(w, NULL);
		j_u64(w, "path_id", pp->def.path_id);
		j_cstr(w, "api", ct_api_name(pp->def.api));
		j_str(w, "impl", pp->def.impl);
		j_str(w, "cipher", pp->def.cipher);
		j_cstr(w, "dir", ct_dir_name(pp->def.dir));
		json_path_figures(w, pp);
		double cpu = pp->d.user_ns + pp->d.sys_ns;
		j_share(w, "wall_share", pp->d.wall_ns, pp->d.wall_known, f->wall_ns, f->wall_known);
		j_share(w, "cpu_share", cpu, pp->d.cpu_known, f->cpu_ns, f->cpu_known);
		j_num(w, "throughput_wall_bps", (double)pp->st.bytes * 1e9 / pp->d.wall_ns,
		      pp->d.wall_known && pp->d.wall_ns > 0);
		json_creator(w, m, p, pp);
		j_close(w, '}');
	}
	j_close(w, ']');
	j_close(w, '}');
}

static void json_event(struct jw *w, const struct rp_model *m, const struct rp_event *e)
{
	char buf[32];
	j_obj(w, NULL);
	j_cstr(w, "kind", ct_event_kind_name(e->ev.kind));
	j_str(w, "call", e->ev.call);
	j_i64(w, "errno", e->ev.err);
	j_cstr(w, "errno_name", e->ev.err ? rp_errno_name(e->ev.err, buf, sizeof(buf)) : "");
	j_i64(w, "ret", e->ev.ret);
	j_str(w, "detail", e->ev.detail);
	j_callsite(w, m, e->ev.callsite);
	j_u64(w, "count", e->ev.count);
	j_pids(w, "pids", &e->pids);
	j_close(w, '}');
}

void rp_print_json(const struct rp_model *m, FILE *out)
{
	struct jw w = { .f = out };
	j_obj(&w, NULL);
	j_u64(&w, "format_version", 1);
	if (m->window.active) {
		/* the totals below are cut to it: how precisely is in "note" and per process */
		char note[1200];
		rp_window_note(m, note, sizeof(note));
		j_obj(&w, "window");
		j_num(&w, "since_s", m->window.since_s, m->window.has_since);
		j_num(&w, "until_s", m->window.until_s, m->window.has_until);
		j_u64(&w, "flush_interval_ms", m->window.flush_ms);
		j_cstr(&w, "method", "snapshot-difference");
		j_cstr(&w, "note", note);
		j_close(&w, '}');
	} else {
		j_num(&w, "window", 0, false);
	}
	j_arr(&w, "processes");
	for (size_t i = 0; i < m->nprocs; i++)
		if (m->filter.pid < 0 || (long long)m->procs[i].hdr.pid == m->filter.pid)
			json_proc(&w, m, &m->procs[i]); /* superseded files too, flagged */
	j_close(&w, ']');
	j_arr(&w, "paths");
	for (size_t i = 0; i < m->npaths; i++)
		json_path(&w, m, &m->paths[i]);
	j_close(&w, ']');
	j_arr(&w, "events");
	for (size_t i = 0; i < m->nevents; i++)
		json_event(&w, m, &m->events[i]);
	j_close(&w, ']');
	j_arr(&w, "findings");
	for (size_t i = 0; i < m->nfindings; i++) {
		const struct rp_finding *f = &m->findings[i];
		j_obj(&w, NULL);
		j_cstr(&w, "kind", f->kind);
		j_cstr(&w, "severity", rp_severity_name(f->severity));
		j_cstr(&w, "message", f->message);
		j_cstr(&w, "evidence", f->evidence);
		j_cstr(&w, "fix", f->fix);
		if (f->pid)
			j_u64(&w, "pid", f->pid);
		j_close(&w, '}');
	}
	j_close(&w, ']');
	j_arr(&w, "warnings");
	for (size_t i = 0; i < m->nwarnings; i++)
		j_cstr(&w, NULL, m->warnings[i]);
	j_close(&w, ']');
	j_close(&w, '}');
	fputc('\n', out);
}
