/* SPDX-License-Identifier: MIT */
/*
 * diff.c - `cryptrace report --diff A B`: the before/after view for a fix. Two merged models (each
 * one trace, a directory or a set) compared path by path (the identity the merge uses): calls,
 * bytes, wall and CPU throughput with the ratio B/A, share of the side's cipher wall time, by
 * request size, new and vanished paths, and findings that appeared, vanished or stayed.
 */
#include "views.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { D_BOTH, D_NEW, D_VANISHED };

struct drow {
	const struct rp_path *a, *b;
	int status;
};

static double wall_total(const struct rp_model *m)
{
	double t = 0;
	for (size_t i = 0; i < m->npaths; i++)
		if (m->paths[i].d.wall_known)
			t += m->paths[i].d.wall_ns;
	return t;
}

static double share(const struct rp_path *p, double total)
{
	return p && p->d.wall_known && total > 0 ? p->d.wall_ns / total : -1;
}

static double ratio(double a, double b)
{
	return a > 0 && b > 0 ? b / a : -1;
}

static size_t build_rows(const struct rp_model *a, const struct rp_model *b, struct drow *rows)
{
	size_t n = 0;
	for (size_t i = 0; i < a->npaths; i++) {
		const struct rp_path *match = NULL;
		for (size_t k = 0; k < b->npaths && !match; k++)
			if (rp_path_same(&a->paths[i].def, &b->paths[k].def))
				match = &b->paths[k];
		rows[n++] =
			(struct drow){ .a = &a->paths[i], .b = match, .status = match ? D_BOTH : D_VANISHED };
	}
	for (size_t k = 0; k < b->npaths; k++) {
		bool seen = false;
		for (size_t i = 0; i < a->npaths && !seen; i++)
			seen = rp_path_same(&a->paths[i].def, &b->paths[k].def);
		if (!seen)
			rows[n++] = (struct drow){ .b = &b->paths[k], .status = D_NEW };
	}
	return n;
}

static bool has_kind(const struct rp_model *m, const char *kind)
{
	for (size_t i = 0; i < m->nfindings; i++)
		if (!strcmp(m->findings[i].kind, kind))
			return true;
	return false;
}

static size_t nprocs_shown(const struct rp_model *m)
{
	size_t n = 0;
	for (size_t i = 0; i < m->nprocs; i++)
		n += rp_proc_selected(m, &m->procs[i]);
	return n;
}

/* ---- text */

static void t_rate(FILE *f, double v)
{
	if (v > 0)
		fprintf(f, "%9.1f", v / 1e6);
	else
		fprintf(f, "%9s", "-");
}

static void t_ratio(FILE *f, double r)
{
	if (r > 0)
		fprintf(f, "  x%-6.2f", r);
	else
		fprintf(f, "  %-7s", "");
}

static void t_share(FILE *f, double s)
{
	if (s >= 0)
		fprintf(f, "%5.1f%%", 100 * s);
	else
		fprintf(f, "%6s", "-");
}

static void text_findings(const struct rp_model *from, const struct rp_model *other, FILE *f,
			  const char *what, bool want_in_other)
{
	for (size_t i = 0; i < from->nfindings; i++) {
		const struct rp_finding *x = &from->findings[i];
		bool dup = false; /* one line per kind */
		for (size_t k = 0; k < i && !dup; k++)
			dup = !strcmp(from->findings[k].kind, x->kind);
		if (dup || has_kind(other, x->kind) != want_in_other)
			continue;
		fprintf(f, "  %-9s [%s] %s: ", what, rp_severity_name(x->severity), x->kind);
		size_t len = strlen(x->message);
		fprintf(f, "%.*s%s\n", (int)(len > 160 ? 160 : len), x->message, len > 160 ? "..." : "");
	}
}

static void print_text(const struct rp_model *a, const struct rp_model *b, const char *na, const char *nb,
		       struct drow *rows, size_t n, FILE *f)
{
	char b1[32], b2[32];
	double ta = wall_total(a), tb = wall_total(b);
	fprintf(f,
		"cryptrace report --diff\n  A: %s (%zu process(es), %zu path(s))\n  B: %s (%zu process(es), "
		"%zu path(s))\n\n",
		na, nprocs_shown(a), a->npaths, nb, nprocs_shown(b), b->npaths);
	if (a->window.active) { /* the same --since/--until, from each side's own first start */
		char note[1200];
		rp_window_note(a, note, sizeof(note));
		fprintf(f, "A: %s\n", note);
		rp_window_note(b, note, sizeof(note));
		fprintf(f, "B: %s\n\n", note);
	}
	fputs("Paths (MB/s A -> B, xR = B/A; share = the path's part of its side's wall time in cipher "
	      "calls)\n",
	      f);
	/* header cells end where their columns' figures end */
	fprintf(f, "  %-44s%24s%23s%31s%30s%17s\n", "PATH", "CALLS A -> B", "BYTES A -> B",
		"WALL MB/s A -> B  xB/A   ", "CPU MB/s A -> B  xB/A   ", "SHARE A -> B");
	static const char *const tag[] = { "", "[new] ", "[vanished] " };
	for (size_t i = 0; i < n; i++) {
		const struct rp_path *p = rows[i].a ? rows[i].a : rows[i].b;
		char label[512], name[600];
		rp_path_label(p, label, sizeof(label));
		snprintf(name, sizeof(name), "%s%s", tag[rows[i].status], label);
		fprintf(f, "  %-44s", name);
		if (strlen(name) > 44)
			fprintf(f, "\n  %-44s", "");
		const struct rp_path *pa = rows[i].a, *pb = rows[i].b;
		fprintf(f, " %10s -> %9s", pa ? rp_fmt_count(b1, sizeof(b1), (double)pa->st.calls) : "-",
			pb ? rp_fmt_count(b2, sizeof(b2), (double)pb->st.calls) : "-");
		fprintf(f, " %9s -> %9s", pa ? rp_fmt_bytes(b1, sizeof(b1), (double)pa->st.bytes) : "-",
			pb ? rp_fmt_bytes(b2, sizeof(b2), (double)pb->st.bytes) : "-");
		double wa = pa ? rp_path_wall_bps(pa) : -1, wb = pb ? rp_path_wall_bps(pb) : -1;
		double ca = pa ? rp_path_cpu_bps(pa) : -1, cb = pb ? rp_path_cpu_bps(pb) : -1;
		fputc(' ', f);
		t_rate(f, wa);
		fputs(" ->", f);
		t_rate(f, wb);
		t_ratio(f, ratio(wa, wb));
		t_rate(f, ca);
		fputs(" ->", f);
		t_rate(f, cb);
		t_ratio(f, ratio(ca, cb));
		fputc(' ', f);
		t_share(f, share(pa, ta));
		fputs(" -> ", f);
		t_share(f, share(pb, tb));
		fputc('\n', f);
	}
	bool header = false;
	for (size_t i = 0; i < n; i++) {
		const struct rp_path *pa = rows[i].a, *pb = rows[i].b;
		if (rows[i].status != D_BOTH)
			continue;
		for (unsigned s = 0; s < CT_SIZE_BUCKETS; s++) {
			double wa = rp_bucket_wall_bps(pa, s), wb = rp_bucket_wall_bps(pb, s);
			if (wa <= 0 && wb <= 0)
				continue;
			if (!header) {
				fputs("\nBy request size (paths in both; wall MB/s A -> B, CPU MB/s A -> B)\n",
				      f);
				header = true;
			}
			char label[512];
			rp_path_label(pa, label, sizeof(label));
			fprintf(f, "  %-44s %8llu+ B ", label, (unsigned long long)ct_size_bucket_low(s));
			t_rate(f, wa);
			fputs(" ->", f);
			t_rate(f, wb);
			t_ratio(f, ratio(wa, wb));
			double ca = rp_bucket_cpu_bps(pa, s), cb = rp_bucket_cpu_bps(pb, s);
			t_rate(f, ca);
			fputs(" ->", f);
			t_rate(f, cb);
			t_ratio(f, ratio(ca, cb));
			fputc('\n', f);
		}
	}
	fputs("\nFindings\n", f);
	if (!a->nfindings && !b->nfindings)
		fputs("  none on either side\n", f);
	text_findings(a, b, f, "vanished", false);
	text_findings(b, a, f, "appeared", false);
	text_findings(b, a, f, "in both", true);
}

/* ---- JSON */

static void j_side(FILE *f, const struct rp_path *p, double total)
{
	if (!p) {
		fputs("null", f);
		return;
	}
	fprintf(f, "{\"calls\":%llu,\"bytes\":%llu,\"wall_ns\":", (unsigned long long)p->st.calls,
		(unsigned long long)p->st.bytes);
	rp_json_num(f, p->d.wall_ns, p->d.wall_known);
	fputs(",\"throughput_wall_bps\":", f);
	rp_json_num(f, rp_path_wall_bps(p), rp_path_wall_bps(p) > 0);
	fputs(",\"throughput_cpu_bps\":", f);
	rp_json_num(f, rp_path_cpu_bps(p), rp_path_cpu_bps(p) > 0);
	fputs(",\"share\":", f);
	rp_json_num(f, share(p, total), share(p, total) >= 0);
	fputc('}', f);
}

static void j_findings(FILE *f, const struct rp_model *from, const struct rp_model *other, bool want_in_other)
{
	bool first = true;
	fputc('[', f);
	for (size_t i = 0; i < from->nfindings; i++) {
		const struct rp_finding *x = &from->findings[i];
		if (has_kind(other, x->kind) != want_in_other)
			continue;
		fprintf(f, "%s{\"kind\":", first ? "" : ",");
		first = false;
		rp_json_str(f, x->kind, strlen(x->kind));
		fprintf(f, ",\"severity\":\"%s\",\"pid\":%u,\"message\":", rp_severity_name(x->severity),
			x->pid);
		rp_json_str(f, x->message, strlen(x->message));
		fputc('}', f);
	}
	fputc(']', f);
}

/* "a_<what>_bps":a,"b_<what>_bps":b,"ratio_<what>":a/b, each null when unknown. */
static void j_compare(FILE *f, const char *what, double a, double b)
{
	fprintf(f, "\"a_%s_bps\":", what);
	rp_json_num(f, a, a > 0);
	fprintf(f, ",\"b_%s_bps\":", what);
	rp_json_num(f, b, b > 0);
	fprintf(f, ",\"ratio_%s\":", what);
	rp_json_num(f, ratio(a, b), ratio(a, b) > 0);
}

/* One side's inputs, processes, paths and time window. */
static void json_side(FILE *f, const struct rp_model *m, const char *name)
{
	char note[1200];
	fputs("{\"inputs\":", f);
	rp_json_str(f, name, strlen(name));
	fprintf(f, ",\"processes\":%zu,\"paths\":%zu,\"window\":", nprocs_shown(m), m->npaths);
	rp_window_note(m, note, sizeof(note));
	if (note[0])
		rp_json_str(f, note, strlen(note));
	else
		fputs("null", f);
	fputc('}', f);
}

static void print_json(const struct rp_model *a, const struct rp_model *b, const char *na, const char *nb,
		       struct drow *rows, size_t n, FILE *f)
{
	static const char *const st[] = { "both", "new", "vanished" };
	double ta = wall_total(a), tb = wall_total(b);
	fputs("{\"a\":", f);
	json_side(f, a, na);
	fputs(",\"b\":", f);
	json_side(f, b, nb);
	fputs(",\"paths\":[", f);
	for (size_t i = 0; i < n; i++) {
		const struct rp_path *pa = rows[i].a, *pb = rows[i].b, *p = pa ? pa : pb;
		char label[512];
		rp_path_label(p, label, sizeof(label));
		fprintf(f, "%s\n{\"path\":", i ? "," : "");
		rp_json_str(f, label, strlen(label));
		fprintf(f, ",\"api\":\"%s\",\"impl\":", ct_api_name(p->def.api));
		rp_json_str(f, p->def.impl.p, p->def.impl.len);
		fputs(",\"cipher\":", f);
		rp_json_str(f, p->def.cipher.p, p->def.cipher.len);
		fprintf(f, ",\"dir\":\"%s\",\"key_bits\":%u,\"entry\":\"%s\",\"status\":\"%s\",\"a\":",
			ct_dir_name(p->def.dir), p->def.key_bits, ct_entry_name(p->def.entry),
			st[rows[i].status]);
		j_side(f, pa, ta);
		fputs(",\"b\":", f);
		j_side(f, pb, tb);
		double rw = pa && pb ? ratio(rp_path_wall_bps(pa), rp_path_wall_bps(pb)) : -1;
		double rc = pa && pb ? ratio(rp_path_cpu_bps(pa), rp_path_cpu_bps(pb)) : -1;
		fputs(",\"ratio_wall\":", f);
		rp_json_num(f, rw, rw > 0);
		fputs(",\"ratio_cpu\":", f);
		rp_json_num(f, rc, rc > 0);
		fputs(",\"sizes\":[", f);
		bool first = true;
		for (unsigned s = 0; s < CT_SIZE_BUCKETS; s++) {
			double wa = pa ? rp_bucket_wall_bps(pa, s) : -1,
			       wb = pb ? rp_bucket_wall_bps(pb, s) : -1;
			double ca = pa ? rp_bucket_cpu_bps(pa, s) : -1,
			       cb = pb ? rp_bucket_cpu_bps(pb, s) : -1;
			if (wa <= 0 && wb <= 0)
				continue;
			fprintf(f, "%s{\"bucket_low\":%llu,", first ? "" : ",",
				(unsigned long long)ct_size_bucket_low(s));
			first = false;
			j_compare(f, "wall", wa, wb);
			fputc(',', f);
			j_compare(f, "cpu", ca, cb);
			fputc('}', f);
		}
		fputs("]}", f);
	}
	fputs("\n],\"findings\":{\"vanished\":", f);
	j_findings(f, a, b, false);
	fputs(",\"appeared\":", f);
	j_findings(f, b, a, false);
	fputs(",\"in_both\":", f);
	j_findings(f, b, a, true);
	fputs("}}\n", f);
}

void rp_print_diff(const struct rp_model *a, const struct rp_model *b, const char *name_a, const char *name_b,
		   bool json, FILE *out)
{
	struct drow *rows = calloc(a->npaths + b->npaths + 1, sizeof(*rows));
	if (!rows)
		return;
	size_t n = build_rows(a, b, rows);
	if (json)
		print_json(a, b, name_a, name_b, rows, n, out);
	else
		print_text(a, b, name_a, name_b, rows, n, out);
	free(rows);
}
