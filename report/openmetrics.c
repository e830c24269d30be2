/* SPDX-License-Identifier: MIT */
/*
 * openmetrics.c - `cryptrace report --openmetrics`: the loaded traces as metrics a Prometheus
 * server scrapes (docs/metrics.md). Counters per (api, impl, cipher, direction, executable): calls,
 * bytes and seconds in the cipher calls; findings as gauges by kind, severity and executable; the
 * CPU's AES instructions and the AES-NI bound; the reader's own health. No pid, no argv, no call
 * site in a label: a fleet's series stay as many as its executables and cipher paths, not its
 * processes. Label values come from traced programs (untrusted): escaped by rp_om_label, each
 * cut at RP_OM_LABEL_MAX bytes, and the series capped at RP_OM_MAX_SERIES.
 *
 * Two dialects of one text: OpenMetrics 1.0 (counter families named without `_total`, UNIT lines,
 * `# EOF`), and the Prometheus text format 0.0.4 that node_exporter's textfile collector reads
 * (`cryptrace export`: families named as their samples, no UNIT, no EOF).
 */
#include "views.h"

#include <stdlib.h>
#include <string.h>

#define RP_OM_LABEL_MAX 160
#define RP_OM_MAX_SERIES 4096

static int counter_cmp(const void *a, const void *b)
{
	return strcmp(((const struct rp_om_counter *)a)->labels, ((const struct rp_om_counter *)b)->labels);
}

/* A trace is data its user may have forged: a count near 2^64 must not wrap the sum around, which
 * would make a counter go backwards (a reset to Prometheus) for everyone's series it joins. */
static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

bool rp_om_add(struct rp_om_counters *c, const char *labels, uint64_t calls, uint64_t bytes, double seconds)
{
	for (size_t i = 0; i < c->n; i++) {
		struct rp_om_counter *x = &c->v[i];
		if (strcmp(x->labels, labels) == 0) {
			x->calls = sat_add(x->calls, calls);
			x->bytes = sat_add(x->bytes, bytes);
			x->seconds += seconds;
			return true;
		}
	}
	if (c->n >= RP_OM_MAX_SERIES) {
		c->dropped++;
		return false;
	}
	char *copy = strdup(labels);
	if (!copy || !rp_grow((void **)&c->v, &c->cap, c->n, sizeof(*c->v))) {
		free(copy);
		c->dropped++;
		return false;
	}
	c->v[c->n++] = (struct rp_om_counter){ copy, calls, bytes, seconds };
	return true;
}

void rp_om_counters_free(struct rp_om_counters *c)
{
	for (size_t i = 0; i < c->n; i++)
		free(c->v[i].labels);
	free(c->v);
	memset(c, 0, sizeof(*c));
}

static void label(FILE *f, const char *name, struct ct_str v, bool first)
{
	fprintf(f, "%s%s=\"", first ? "" : ",", name);
	rp_om_label(f, v.p, v.len < RP_OM_LABEL_MAX ? v.len : RP_OM_LABEL_MAX);
	fputc('"', f);
}

/* The label text of a path of process p: api="evp",impl="...",cipher="...",direction="...",
 * executable="..." (malloc'ed; NULL when out of memory). */
static char *path_labels(const struct rp_proc *p, const struct rp_path *pp)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	if (!f)
		return NULL;
	label(f, "api", ct_str_from(ct_api_name(pp->def.api)), true);
	label(f, "impl", pp->def.impl, false);
	label(f, "cipher", pp->def.cipher, false);
	label(f, "direction", ct_str_from(ct_dir_name(pp->def.dir)), false);
	label(f, "executable", p->hdr.exe, false);
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	return buf;
}

void rp_om_proc_counters(const struct rp_model *m, const struct rp_proc *p, struct rp_om_counters *c)
{
	for (size_t i = 0; i < p->npaths; i++) {
		const struct rp_path *pp = &p->paths[i];
		if (!rp_path_selected(m, pp))
			continue;
		char *labels = path_labels(p, pp);
		if (!labels) {
			c->dropped++;
			continue;
		}
		bool known;
		double ns = rp_path_cost_ns(pp, &known);
		rp_om_add(c, labels, pp->st.calls, pp->st.bytes, known ? ns / 1e9 : 0);
		free(labels);
	}
}

/* HELP and TYPE (and UNIT) of a family; a counter's samples end in _total, its OpenMetrics
 * family name does not. */
static void family(FILE *f, bool om, const char *name, const char *type, const char *unit, const char *help)
{
	bool counter = strcmp(type, "counter") == 0;
	const char *suffix = counter && !om ? "_total" : "";
	fprintf(f, "# HELP %s%s %s\n# TYPE %s%s %s\n", name, suffix, help, name, suffix, type);
	if (om && unit)
		fprintf(f, "# UNIT %s %s\n", name, unit);
}

static void num(FILE *f, double v)
{
	fprintf(f, "%.9g\n", v);
}

static void print_counters(FILE *f, bool om, const struct rp_om_counter *v, size_t n)
{
	static const struct {
		const char *name, *unit, *help;
	} fam[3] = {
		{ "cryptrace_cipher_calls", NULL,
		  "Cipher calls intercepted (data calls, set-ups, AAD, finals, tags, kernel operations)" },
		{ "cryptrace_cipher_bytes", "bytes", "Bytes the cipher calls encrypted or decrypted" },
		{ "cryptrace_cipher_seconds", "seconds",
		  "Estimated time in the cipher calls (wall; CPU for TLS record calls, which wait for "
		  "the peer; 0 for a path none of whose calls was timed)" },
	};
	for (int k = 0; k < 3; k++) {
		family(f, om, fam[k].name, "counter", fam[k].unit, fam[k].help);
		for (size_t i = 0; i < n; i++) {
			fprintf(f, "%s_total{%s} ", fam[k].name, v[i].labels);
			if (k == 0)
				fprintf(f, "%llu\n", (unsigned long long)v[i].calls);
			else if (k == 1)
				fprintf(f, "%llu\n", (unsigned long long)v[i].bytes);
			else
				num(f, v[i].seconds);
		}
	}
}

/* The executable of the process a finding names, or the one all its processes are (empty:
 * several, or the whole run). */
static struct ct_str finding_exe(const struct rp_model *m, const struct rp_finding *fd)
{
	for (size_t i = 0; fd->pid && i < m->nprocs; i++)
		if (m->procs[i].hdr.pid == fd->pid && rp_proc_shown(m, &m->procs[i]))
			return m->procs[i].hdr.exe;
	if (!fd->pid && fd->exe.p && !fd->exe_mixed)
		return fd->exe;
	return ct_str_from("");
}

static void print_findings(FILE *f, bool om, const struct rp_model *m)
{
	family(f, om, "cryptrace_findings", "gauge", NULL,
	       "Findings of `cryptrace report` on the traces read, by kind, severity and the "
	       "executable they name (empty: several, or the whole run)");
	struct rp_om_counters c = { 0 };
	for (size_t i = 0; i < m->nfindings; i++) {
		const struct rp_finding *fd = &m->findings[i];
		char *buf = NULL;
		size_t len = 0;
		FILE *s = open_memstream(&buf, &len);
		if (!s)
			continue;
		label(s, "kind", ct_str_from(fd->kind), true);
		label(s, "severity", ct_str_from(rp_severity_name(fd->severity)), false);
		label(s, "executable", finding_exe(m, fd), false);
		if (fclose(s) == 0)
			rp_om_add(&c, buf, 1, 0, 0);
		free(buf);
	}
	if (c.n > 1)
		qsort(c.v, c.n, sizeof(*c.v), counter_cmp);
	for (size_t i = 0; i < c.n; i++)
		fprintf(f, "cryptrace_findings{%s} %llu\n", c.v[i].labels, (unsigned long long)c.v[i].calls);
	rp_om_counters_free(&c);
}

/* The CPU of the newest process: whether it has AES instructions, and the AES-NI bound measured
 * when it was traced (cycles per byte, the software-aes finding's yardstick). */
static void print_cpu(FILE *f, bool om, const struct rp_model *m)
{
	const struct rp_proc *newest = NULL;
	uint32_t bound = 0;
	for (size_t i = 0; i < m->nprocs; i++) {
		const struct rp_proc *p = &m->procs[i];
		if (!p->has_hdr)
			continue;
		uint32_t b = p->hdr.aesni_cpb_milli ? p->hdr.aesni_cpb_milli : p->proc.aesni_cpb_milli;
		if (!newest || p->hdr.start_realtime_ns >= newest->hdr.start_realtime_ns) {
			newest = p;
			if (b)
				bound = b;
		}
	}
	if (!newest)
		return;
	family(f, om, "cryptrace_cpu_aes_instructions", "gauge", NULL,
	       "1 when the traced CPU has AES instructions (AES-NI, the ARMv8 Crypto Extensions), "
	       "else 0");
	fprintf(f, "cryptrace_cpu_aes_instructions %d\n",
		(newest->hdr.cpu_flags & (CT_CPU_AES | CT_CPU_ARM_AES)) != 0);
	if (bound) {
		family(f, om, "cryptrace_cpu_aes_bound_cycles_per_byte", "gauge", NULL,
		       "AES on the CPU's AES instructions, calibrated when the newest trace was taken "
		       "(TSC cycles per byte)");
		fprintf(f, "cryptrace_cpu_aes_bound_cycles_per_byte %.3f\n", bound / 1000.0);
	}
}

static void print_health(FILE *f, bool om, const struct rp_model *m, const struct rp_om_health *h)
{
	uint64_t damaged = 0, ops = 0, events = 0;
	for (size_t i = 0; i < m->nprocs; i++) {
		const struct rp_proc *p = &m->procs[i];
		damaged += p->read_status != CT_READ_EOF;
		ops += p->proc.dropped_ops > p->ops_dropped ? p->proc.dropped_ops : p->ops_dropped;
		events += p->proc.dropped_events;
	}
	family(f, om, "cryptrace_trace_files", "gauge", NULL,
	       "Trace files of the report: read (each process's first file), damaged (read up to the "
	       "damage), unreadable (not a trace, or unreadable: nothing kept)");
	fprintf(f, "cryptrace_trace_files{state=\"read\"} %zu\n", m->nprocs);
	fprintf(f, "cryptrace_trace_files{state=\"damaged\"} %llu\n", (unsigned long long)damaged);
	fprintf(f, "cryptrace_trace_files{state=\"unreadable\"} %llu\n",
		(unsigned long long)m->files_unreadable);
	family(f, om, "cryptrace_trace_dropped", "gauge", NULL,
	       "Records the traced processes dropped (per-call operations that found their ring "
	       "full, events beyond the event table)");
	fprintf(f, "cryptrace_trace_dropped{record=\"ops\"} %llu\n", (unsigned long long)ops);
	fprintf(f, "cryptrace_trace_dropped{record=\"events\"} %llu\n", (unsigned long long)events);
	family(f, om, "cryptrace_series_dropped", "gauge", NULL,
	       "Counter series left out: more distinct label sets than the exposition's cap");
	fprintf(f, "cryptrace_series_dropped %llu\n", (unsigned long long)h->series_dropped);
}

void rp_print_openmetrics(const struct rp_model *m, const struct rp_om_counters *given, bool om,
			  const struct rp_om_health *h, FILE *out)
{
	struct rp_om_counters own = { 0 };
	const struct rp_om_counters *c = given;
	struct rp_om_health health = h ? *h : (struct rp_om_health){ 0 };
	if (!c) {
		for (size_t i = 0; i < m->nprocs; i++)
			if (rp_proc_shown(m, &m->procs[i]))
				rp_om_proc_counters(m, &m->procs[i], &own);
		c = &own;
	}
	health.series_dropped += c->dropped;
	/* sorted copy: the caller's set stays as it was */
	struct rp_om_counter *v = c->n ? malloc(c->n * sizeof(*v)) : NULL;
	size_t n = v ? c->n : 0;
	if (v) {
		memcpy(v, c->v, n * sizeof(*v));
		qsort(v, n, sizeof(*v), counter_cmp);
	}
	health.series_dropped += c->n - n;
	print_counters(out, om, v, n);
	free(v);
	print_findings(out, om, m);
	print_cpu(out, om, m);
	print_health(out, om, m, &health);
	if (om)
		fputs("# EOF\n", out);
	rp_om_counters_free(&own);
}
