/* SPDX-License-Identifier: MIT */
/*
 * views.h - the reporter's "look at it" outputs (HTML, Perfetto trace-event JSON, CSV, diff) and
 * the selection they share with the text and JSON reports: --path, --since/--until, the time base,
 * per-call operations read back from the kept trace bytes, and the figures per size bucket. Every
 * output draws from the merged model (model.h) that the text report prints; nothing here derives
 * a figure differently.
 */
#ifndef CT_REPORT_VIEWS_H
#define CT_REPORT_VIEWS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "model.h"

/* Selection beyond model.h's rp_filter (pid, cipher, api, sizes). */
struct rp_view {
	const char *path_sel; /* --path: a merged path number (1-based, as numbered by the
				 * report without --path) or a glob on "api/impl/cipher/dir" or
				 * on any one of those parts */
	bool has_since, has_until;
	double since_s, until_s; /* --since/--until: seconds from the first process start */
	bool allow_empty;        /* --diff: a --path glob may match nothing on one side */
	bool has_resolution;     /* --resolution DUR (else auto: perfetto.c chooses) */
	uint64_t resolution_ns;  /* --perfetto: consecutive operations of a thread and path
				  * starting within it of a slice's first are one slice */
};

/* ---- select.c */
/* Applies the time window (window.c: path totals cut to it, events outside it dropped) and
 * --path to the loaded processes (drops per-process paths that are not selected, and events of
 * dropped paths), then merges and evaluates findings. Returns false with msg set when --path
 * names no path. */
bool rp_view_apply(struct rp_model *m, const struct rp_view *v, char *msg, size_t cap);
/* "evp/provider:default/aes-128-cbc/encrypt" */
void rp_path_label(const struct rp_path *p, char *buf, size_t cap);
/* The time base: CLOCK_REALTIME of the earliest process start. */
uint64_t rp_model_t0(const struct rp_model *m);
/* Seconds from t0 of a moment on process p's CLOCK_MONOTONIC. */
double rp_time_s(uint64_t t0, const struct rp_proc *p, uint64_t mono_ns);
bool rp_view_time_ok(const struct rp_view *v, double t0_s, double t1_s);
/* The per-process path with this id when the report selects it (pid, api, cipher, --path). */
const struct rp_path *rp_view_proc_path(const struct rp_model *m, const struct rp_proc *p, uint32_t path_id);
/* Same path (the identity merge.c adds paths up by): api, impl, cipher, dir, key, entry, route. */
bool rp_path_same(const struct ct_path_def *a, const struct ct_path_def *b);
/* Merged path index (0-based) of a per-process path, or -1. */
long rp_merged_index(const struct rp_model *m, const struct rp_path *pp);
bool rp_size_selected(const struct rp_model *m, uint64_t size);
bool rp_proc_selected(const struct rp_model *m, const struct rp_proc *p);

/* Figures per size bucket, the text report's method: wall from the bucket's timings, CPU as the
 * path's CPU share of wall applied to the bucket. < 0: unknown. */
double rp_bucket_wall_bps(const struct rp_path *p, unsigned b);
double rp_bucket_cpu_bps(const struct rp_path *p, unsigned b);
double rp_path_wall_bps(const struct rp_path *p);
double rp_path_cpu_bps(const struct rp_path *p);
/* Failures and fallbacks: what the HTML lists and Perfetto marks. */
bool rp_event_is_failure(const struct ct_event *e);

/* ---- window.c: cuts every process's path totals to --since/--until (no-op without them) */
void rp_window_apply(struct rp_model *m, const struct rp_view *v);

/* ---- ops.c: per-call operations (CT_REC_OPS) and thread names, read again from each process's
 * trace files (so the model does not hold millions of ops). */
typedef void (*rp_op_fn)(void *ctx, uint32_t tid, const struct ct_op *op);
typedef void (*rp_thread_fn)(void *ctx, uint32_t tid, struct ct_str name); /* name: during the call */
/* Calls op_fn for every op that started in [from_mono_ns, to_mono_ns) (op_fn NULL: none; 0 and
 * UINT64_MAX: all; a batch wholly outside is not read) and thread_fn for every thread record;
 * returns the ops passed to op_fn. */
uint64_t rp_proc_scan(const struct rp_proc *p, uint64_t from_mono_ns, uint64_t to_mono_ns, rp_op_fn op_fn,
		      rp_thread_fn thread_fn, void *ctx);
/* Cumulative STATS snapshots with the time of the PROC (or END) record that closed their flush:
 * fn for each snapshot of a flush, in the order written, then flush_fn (NULL: none) with the
 * dating record itself. false when memory ran out (the flushes up to there were given). */
typedef void (*rp_snapshot_fn)(void *ctx, uint64_t mono_ns, const struct ct_path_stats *st);
typedef void (*rp_flush_fn)(void *ctx, uint64_t mono_ns, const struct ct_record *dating);
bool rp_proc_snapshots(const struct rp_proc *p, rp_snapshot_fn fn, rp_flush_fn flush_fn, void *ctx);

/* ---- perfetto_slices.c: --resolution DUR, DUR a number with ns, us, ms or s, or "auto" */
bool rp_parse_resolution(const char *s, bool *is_auto, uint64_t *ns);
/* "5us", "0ns": the largest unit that divides ns */
void rp_format_resolution(uint64_t ns, char *buf, size_t cap);

/* ---- escape.c: strings from traced programs, made safe for each output */
void rp_html_str(FILE *f, const char *s, size_t len); /* text and attribute values */
void rp_html_cstr(FILE *f, const char *s);
void rp_json_str(FILE *f, const char *s, size_t len);  /* with the quotes */
void rp_csv_field(FILE *f, const char *s, size_t len); /* RFC 4180 */
void rp_om_label(FILE *f, const char *s, size_t len);  /* OpenMetrics label value, no quotes */
void rp_json_num(FILE *f, double v, bool known);       /* null when unknown or not finite */

/* ---- outputs */
/* html.c: a number cell of the HTML tables, v with this many decimals, or "-" when not known */
void rp_html_cell_num(FILE *f, double v, int decimals, bool known);
/* the kernel-interface section of the HTML report (html_kernel.c) */
void rp_html_kernel(const struct rp_model *m, FILE *f);
/* the CPU profile section of the HTML report (html_profile.c), when a shown process has a
 * profile (rp_model_has_profile) */
void rp_html_profile(const struct rp_model *m, FILE *f);
bool rp_model_has_profile(const struct rp_model *m);
void rp_print_html(const struct rp_model *m, const struct rp_view *v, FILE *out);
void rp_print_perfetto(const struct rp_model *m, const struct rp_view *v, FILE *out);
void rp_print_csv(const struct rp_model *m, FILE *out);
/* openmetrics.c: counters per (api, impl, cipher, direction, executable), findings, the CPU's AES
 * and the reader's health, in OpenMetrics (om) or the Prometheus text format 0.0.4 that
 * node_exporter's textfile collector reads (docs/metrics.md). */
struct rp_om_counter {
	char *labels; /* the label text, escaped: api="evp",impl="...",...: the series' identity */
	uint64_t calls, bytes;
	double seconds;
};
struct rp_om_counters {
	struct rp_om_counter *v;
	size_t n, cap;
	uint64_t dropped; /* label sets beyond the cap (or out of memory): left out */
};
struct rp_om_health {
	uint64_t series_dropped; /* beyond the counters' own (a merged set's) */
};
/* Adds to the series with these labels (a new one when absent); false when it was dropped. */
bool rp_om_add(struct rp_om_counters *c, const char *labels, uint64_t calls, uint64_t bytes, double seconds);
/* Adds process p's selected paths. */
void rp_om_proc_counters(const struct rp_model *m, const struct rp_proc *p, struct rp_om_counters *c);
void rp_om_counters_free(struct rp_om_counters *c);
/* counters NULL: those of every shown process of m; h may be NULL. */
void rp_print_openmetrics(const struct rp_model *m, const struct rp_om_counters *counters, bool om,
			  const struct rp_om_health *h, FILE *out);
/* diff.c: a and b already loaded, filtered and merged. */
void rp_print_diff(const struct rp_model *a, const struct rp_model *b, const char *name_a, const char *name_b,
		   bool json, FILE *out);

#endif
