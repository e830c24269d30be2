/* SPDX-License-Identifier: MIT */
/*
 * svg.c - the HTML report's charts as inline SVG, drawn from the merged model: throughput against
 * request size (log2 x, log10 y, wall and CPU series), latency histograms, share bars and the
 * per-thread timeline of per-call operations. No script: tooltips are SVG <title>s, and every
 * throughput point carries its figures as data-* attributes so tests can read them from the DOM.
 */
#include "svg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const palette[] = {
	"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
	"#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#79706e",
};

const char *rp_svg_color(size_t i)
{
	return palette[i % (sizeof(palette) / sizeof(palette[0]))];
}

struct axis {
	double lo, hi; /* in log units when log */
	bool log;
	double base;
	double px0, px1;
};

static double ax_pos(const struct axis *a, double v)
{
	double x = a->log ? log(v) / log(a->base) : v;
	if (a->hi <= a->lo)
		return (a->px0 + a->px1) / 2;
	return a->px0 + (x - a->lo) / (a->hi - a->lo) * (a->px1 - a->px0);
}

static void fmt_size(char *buf, size_t cap, double v)
{
	if (v >= 1024.0 * 1024 * 1024)
		snprintf(buf, cap, "%gG", v / (1024.0 * 1024 * 1024));
	else if (v >= 1024.0 * 1024)
		snprintf(buf, cap, "%gM", v / (1024.0 * 1024));
	else if (v >= 1024)
		snprintf(buf, cap, "%gK", v / 1024);
	else
		snprintf(buf, cap, "%g", v);
}

static void fmt_rate(char *buf, size_t cap, double bps)
{
	if (bps >= 1e9)
		snprintf(buf, cap, "%g GB/s", bps / 1e9);
	else if (bps >= 1e6)
		snprintf(buf, cap, "%g MB/s", bps / 1e6);
	else if (bps >= 1e3)
		snprintf(buf, cap, "%g kB/s", bps / 1e3);
	else
		snprintf(buf, cap, "%g B/s", bps);
}

void rp_svg_rate(char *buf, size_t cap, double bps)
{
	if (bps < 0)
		snprintf(buf, cap, "-");
	else if (bps >= 1e9)
		snprintf(buf, cap, "%.2f GB/s", bps / 1e9);
	else
		snprintf(buf, cap, "%.1f MB/s", bps / 1e6);
}

/* ---- throughput against request size */

static double mean_size(const struct rp_path *p, unsigned b)
{
	const struct ct_size_bucket *sb = &p->st.size[b];
	return sb->calls ? (double)sb->bytes / (double)sb->calls : (double)ct_size_bucket_low(b);
}

void rp_svg_throughput(const struct rp_model *m, FILE *f)
{
	const double W = 1100, H = 340, L = 78, R = 20, T = 12, B = 46;
	double xmin = INFINITY, xmax = 0, ymin = INFINITY, ymax = 0;
	for (size_t i = 0; i < m->npaths; i++) {
		const struct rp_path *p = &m->paths[i];
		for (unsigned b = 1; b < CT_SIZE_BUCKETS; b++) {
			double w = rp_bucket_wall_bps(p, b), c = rp_bucket_cpu_bps(p, b);
			if (w <= 0)
				continue;
			double s = mean_size(p, b);
			xmin = fmin(xmin, s);
			xmax = fmax(xmax, s);
			ymin = fmin(ymin, c > 0 ? fmin(w, c) : w);
			ymax = fmax(ymax, c > 0 ? fmax(w, c) : w);
		}
	}
	if (xmax <= 0) {
		fputs("<p class=\"none\">No timed calls with data: nothing to plot.</p>\n", f);
		return;
	}
	struct axis xa = { .log = true, .base = 2, .px0 = L, .px1 = W - R };
	struct axis ya = { .log = true, .base = 10, .px0 = H - B, .px1 = T };
	xa.lo = floor(log2(xmin)) - 0.5;
	xa.hi = ceil(log2(xmax)) + 0.5;
	ya.lo = floor(log10(ymin));
	ya.hi = ceil(log10(ymax));
	if (ya.hi - ya.lo < 1)
		ya.hi = ya.lo + 1;
	fprintf(f,
		"<svg class=\"chart\" id=\"throughput-chart\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" "
		"aria-label=\"Throughput against request size\">\n",
		W, H);
	/* grid and axes */
	fputs("<g class=\"grid\">\n", f);
	for (double d = ya.lo; d <= ya.hi + 1e-9; d++) {
		for (int k = 1; k < 10; k++) {
			double v = pow(10, d) * k;
			if (log10(v) > ya.hi + 1e-9)
				break;
			double y = ax_pos(&ya, v);
			fprintf(f, "<line class=\"%s\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>\n",
				k == 1 ? "major" : "minor", L, W - R, y, y);
			if (k == 1 || (ya.hi - ya.lo <= 2 && (k == 2 || k == 5))) {
				char lab[32];
				fmt_rate(lab, sizeof(lab), v);
				fprintf(f, "<text class=\"ylab\" x=\"%.1f\" y=\"%.1f\">%s</text>\n", L - 6,
					y + 4, lab);
			}
		}
	}
	int xstep = (int)ceil((xa.hi - xa.lo) / 14);
	if (xstep < 1)
		xstep = 1;
	for (int e = (int)ceil(xa.lo); e <= (int)floor(xa.hi); e += xstep) {
		double x = ax_pos(&xa, ldexp(1, e));
		char lab[32];
		fmt_size(lab, sizeof(lab), ldexp(1, e));
		fprintf(f, "<line class=\"major\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>\n", x, x,
			T, H - B);
		fprintf(f, "<text class=\"xlab\" x=\"%.1f\" y=\"%.1f\">%s</text>\n", x, H - B + 16, lab);
	}
	fputs("</g>\n", f);
	fprintf(f, "<rect class=\"frame\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>\n", L, T,
		W - R - L, H - B - T);
	fprintf(f,
		"<text class=\"axis-title\" x=\"%.1f\" y=\"%.1f\">request size (bytes, log2 scale; "
		"points at the mean size of each power-of-two bucket)</text>\n",
		(L + W - R) / 2, H - 10);
	fprintf(f,
		"<text class=\"axis-title\" transform=\"translate(14 %.1f) rotate(-90)\">throughput "
		"(log scale)</text>\n",
		(T + H - B) / 2);
	/* series: lines first, then the points on top */
	for (size_t i = 0; i < m->npaths; i++) {
		const struct rp_path *p = &m->paths[i];
		const char *col = rp_svg_color(i);
		for (int series = 0; series < 2; series++) {
			bool started = false;
			for (unsigned b = 1; b < CT_SIZE_BUCKETS; b++) {
				double v = series ? rp_bucket_cpu_bps(p, b) : rp_bucket_wall_bps(p, b);
				if (v <= 0)
					continue;
				if (!started)
					fprintf(f, "<polyline class=\"%s\" stroke=\"%s\" points=\"",
						series ? "cpu" : "wall", col);
				fprintf(f, "%s%.1f,%.1f", started ? " " : "", ax_pos(&xa, mean_size(p, b)),
					ax_pos(&ya, v));
				started = true;
			}
			if (started)
				fputs("\"/>\n", f);
		}
		char label[512];
		rp_path_label(p, label, sizeof(label));
		for (unsigned b = 1; b < CT_SIZE_BUCKETS; b++) {
			double w = rp_bucket_wall_bps(p, b), c = rp_bucket_cpu_bps(p, b);
			if (w <= 0)
				continue;
			double x = ax_pos(&xa, mean_size(p, b));
			char ws[32], cs[32], sz[32];
			rp_svg_rate(ws, sizeof(ws), w);
			rp_svg_rate(cs, sizeof(cs), c);
			fmt_size(sz, sizeof(sz), (double)ct_size_bucket_low(b));
			fprintf(f, "<g class=\"pt\" data-path=\"%zu\" data-label=\"", i + 1);
			rp_html_cstr(f, label);
			fprintf(f,
				"\" data-size=\"%llu\" data-calls=\"%llu\" data-bytes=\"%llu\" "
				"data-wall-bps=\"%.17g\" data-cpu-bps=\"",
				(unsigned long long)ct_size_bucket_low(b),
				(unsigned long long)p->st.size[b].calls,
				(unsigned long long)p->st.size[b].bytes, w);
			if (c > 0)
				fprintf(f, "%.17g", c);
			fputs("\"><title>#", f);
			fprintf(f, "%zu ", i + 1);
			rp_html_cstr(f, label);
			fprintf(f, "\nrequests of %s+ bytes (mean %.0f): %llu calls\nwall %s, CPU %s</title>",
				sz, mean_size(p, b), (unsigned long long)p->st.size[b].calls, ws, cs);
			fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4.5\" fill=\"%s\"/>", x,
				ax_pos(&ya, w), col);
			if (c > 0)
				fprintf(f,
					"<rect class=\"cpu-mark\" x=\"%.1f\" y=\"%.1f\" width=\"8\" height=\"8\" "
					"stroke=\"%s\"/>",
					x - 4, ax_pos(&ya, c) - 4, col);
			fputs("</g>\n", f);
		}
	}
	fputs("</svg>\n", f);
}

/* ---- latency histogram of one path */

void rp_svg_latency(const struct rp_path *p, size_t index, FILE *f)
{
	const double W = 460, H = 190, L = 46, R = 10, T = 10, B = 40;
	unsigned first = CT_LAT_BUCKETS, last = 0;
	uint64_t maxc = 0, total = 0;
	for (unsigned b = 0; b < CT_LAT_BUCKETS; b++) {
		if (!p->st.lat[b])
			continue;
		if (first == CT_LAT_BUCKETS)
			first = b;
		last = b;
		total += p->st.lat[b];
		if (p->st.lat[b] > maxc)
			maxc = p->st.lat[b];
	}
	if (!total)
		return;
	/* whole powers of two on each side, so ticks fall on bucket edges */
	first = first >= 4 ? (first / 4) * 4 - 4 : 0;
	last = (last / 4) * 4 + 8 < CT_LAT_BUCKETS ? (last / 4) * 4 + 8 : CT_LAT_BUCKETS;
	unsigned nb = last - first;
	double bw = (W - L - R) / nb;
	fprintf(f,
		"<svg class=\"chart lat\" viewBox=\"0 0 %.0f %.0f\" role=\"img\" aria-label=\"latency\">\n",
		W, H);
	for (int k = 0; k <= 4; k++) {
		double y = T + (H - B - T) * (1 - k / 4.0);
		fprintf(f, "<line class=\"%s\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>",
			k ? "minor" : "major", L, W - R, y, y);
		fprintf(f, "<text class=\"ylab\" x=\"%.1f\" y=\"%.1f\">%.0f%%</text>\n", L - 4, y + 4,
			100.0 * (double)maxc / (double)total * k / 4);
	}
	unsigned step = 4 * ((nb + 27) / 28); /* at most ~7 labels */
	for (unsigned b = first; b <= last; b += step) {
		double x = L + (b - first) * bw;
		char lab[32];
		double ns = (double)ct_lat_bucket_low(b < CT_LAT_BUCKETS ? b : CT_LAT_BUCKETS - 1);
		if (ns >= 1e9)
			snprintf(lab, sizeof(lab), "%.3gs", ns / 1e9);
		else if (ns >= 1e6)
			snprintf(lab, sizeof(lab), "%.3gms", ns / 1e6);
		else if (ns >= 1e3)
			snprintf(lab, sizeof(lab), "%.3gus", ns / 1e3);
		else
			snprintf(lab, sizeof(lab), "%.0fns", ns);
		fprintf(f, "<line class=\"tick\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>", x, x,
			H - B, H - B + 4);
		fprintf(f, "<text class=\"xlab\" x=\"%.1f\" y=\"%.1f\">%s</text>\n", x, H - B + 16, lab);
	}
	for (unsigned b = first; b < last; b++) {
		if (!p->st.lat[b])
			continue;
		double h = (H - B - T) * (double)p->st.lat[b] / (double)maxc;
		fprintf(f,
			"<rect class=\"bar\" data-lat-low=\"%llu\" data-count=\"%llu\" x=\"%.1f\" "
			"y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"><title>%llu ns and up: %llu "
			"calls (%.1f%%)</title></rect>\n",
			(unsigned long long)ct_lat_bucket_low(b), (unsigned long long)p->st.lat[b],
			L + (b - first) * bw + 0.5, H - B - h, bw > 2 ? bw - 1 : bw, h, rp_svg_color(index),
			(unsigned long long)ct_lat_bucket_low(b), (unsigned long long)p->st.lat[b],
			100.0 * (double)p->st.lat[b] / (double)total);
	}
	const uint64_t marks[2] = { p->d.p50_ns, p->d.p99_ns };
	for (int k = 0; k < 2; k++) {
		unsigned b = ct_lat_bucket(marks[k]);
		if (b < first || b >= last)
			continue;
		double x = L + (b - first) * bw;
		fprintf(f,
			"<line class=\"pmark\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>"
			"<text class=\"pmark-lab\" x=\"%.1f\" y=\"%.1f\">%s</text>\n",
			x, x, T, H - B, x + 3, T + 10 + k * 12, k ? "p99" : "p50");
	}
	fprintf(f,
		"<text class=\"axis-title\" x=\"%.1f\" y=\"%.1f\">latency per call (log scale), share "
		"of timed calls</text>\n</svg>\n",
		(L + W - R) / 2, H - 6);
}

/* ---- share bars */

void rp_svg_bars(const struct rp_bar *bars, size_t n, FILE *f)
{
	rp_svg_bars_class(bars, n, "chart bars", f);
}

void rp_svg_bars_class(const struct rp_bar *bars, size_t n, const char *cls, FILE *f)
{
	const double W = 960, rowh = 24, L = 380, R = 80;
	double total = 0;
	for (size_t i = 0; i < n; i++)
		total += bars[i].value;
	if (total <= 0 || !n) {
		fputs("<p class=\"none\">No timed calls: shares unknown.</p>\n", f);
		return;
	}
	fprintf(f, "<svg class=\"%s\" viewBox=\"0 0 %.0f %.0f\" role=\"img\">\n", cls, W, rowh * n + 6);
	for (size_t i = 0; i < n; i++) {
		double share = bars[i].value / total;
		double y = 3 + rowh * i;
		fprintf(f,
			"<g class=\"share\" data-share=\"%.6f\"><text class=\"barlab\" x=\"%.1f\" "
			"y=\"%.1f\">",
			share, L - 8, y + 16);
		rp_html_cstr(f, bars[i].label);
		fprintf(f,
			"</text><rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\">"
			"<title>",
			L, y + 3, fmax(1, (W - L - R) * share), rowh - 6, bars[i].color);
		rp_html_cstr(f, bars[i].label);
		fprintf(f,
			": %.1f%%</title></rect><text class=\"barval\" x=\"%.1f\" y=\"%.1f\">%.1f%%"
			"</text></g>\n",
			100 * share, L + (W - L - R) * share + 6, y + 16, 100 * share);
	}
	fputs("</svg>\n", f);
}

/* ---- timeline of per-call operations */

struct tl {
	const struct rp_model *m;
	const struct rp_view *v;
	const struct rp_proc *p;
	uint64_t t0;
	double lo, hi; /* seconds from t0 */
	uint32_t *tids;
	size_t ntids, cap_tids;
	size_t ncols, nseries;
	double *busy; /* [tid][col][series] seconds */
	uint64_t ops;
};

static long tl_series(const struct tl *t, uint32_t path_id)
{
	const struct rp_path *pp = rp_view_proc_path(t->m, t->p, path_id);
	if (!pp)
		return -1;
	long i = rp_merged_index(t->m, pp);
	if (i < 0)
		return -1;
	return i < (long)t->nseries - 1 ? i : (long)t->nseries - 1;
}

static bool tl_op_ok(struct tl *t, const struct ct_op *op, double *s, double *e)
{
	*s = rp_time_s(t->t0, t->p, op->start_mono_ns);
	*e = *s + op->dur_ns / 1e9;
	return rp_view_time_ok(t->v, *s, *e) && rp_size_selected(t->m, op->bytes) &&
	       tl_series(t, op->path_id) >= 0;
}

static void tl_range(void *ctx, uint32_t tid, const struct ct_op *op)
{
	struct tl *t = ctx;
	double s, e;
	if (!tl_op_ok(t, op, &s, &e))
		return;
	t->lo = fmin(t->lo, s);
	t->hi = fmax(t->hi, e);
	t->ops += op->weight ? op->weight : 1; /* a sampled op stands for `weight` ops (--max-ops-rate) */
	for (size_t i = 0; i < t->ntids; i++)
		if (t->tids[i] == tid)
			return;
	if (!rp_grow((void **)&t->tids, &t->cap_tids, t->ntids, sizeof(*t->tids)))
		return;
	t->tids[t->ntids++] = tid;
}

static void tl_fill(void *ctx, uint32_t tid, const struct ct_op *op)
{
	struct tl *t = ctx;
	double s, e;
	if (!tl_op_ok(t, op, &s, &e))
		return;
	size_t lane = 0;
	while (lane < t->ntids && t->tids[lane] != tid)
		lane++;
	if (lane == t->ntids)
		return;
	long series = tl_series(t, op->path_id);
	double colw = (t->hi - t->lo) / (double)t->ncols;
	double weight = op->weight ? op->weight : 1; /* its time counts as many times as it stands for */
	/* spread the op's time over the columns it covers */
	while (s < e) {
		size_t c = (size_t)((s - t->lo) / colw);
		if (c >= t->ncols)
			c = t->ncols - 1;
		double cend = t->lo + colw * (double)(c + 1);
		double part = fmin(e, cend) - s;
		if (part <= 0 || c == t->ncols - 1)
			part = e - s;
		t->busy[(lane * t->ncols + c) * t->nseries + (size_t)series] += part * weight;
		s += part;
	}
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* The names of the drawn lanes' threads (the newest THREAD record of each tid wins). */
#define LANE_NAME_MAX 24 /* the longest name a lane's label shows */
struct tnames {
	const uint32_t *tid;             /* the lanes' tids */
	char (*name)[LANE_NAME_MAX + 1]; /* one per lane, copied: a record's strings do not outlive it */
	size_t n;
};

static void tl_thread(void *ctx, uint32_t tid, struct ct_str name)
{
	struct tnames *tn = ctx;
	for (size_t i = 0; i < tn->n; i++)
		if (tn->tid[i] == tid) {
			size_t len = name.len > LANE_NAME_MAX ? LANE_NAME_MAX : name.len;
			memcpy(tn->name[i], name.p, len);
			tn->name[i][len] = 0;
			return;
		}
}

bool rp_svg_timeline(const struct rp_model *m, const struct rp_view *v, const struct rp_proc *p, FILE *f)
{
	struct tl t = {
		.m = m, .v = v, .p = p, .t0 = rp_model_t0(m), .lo = INFINITY, .hi = -INFINITY, .ncols = 720
	};
	t.nseries = m->npaths < 10 ? m->npaths + 1 : 11;
	rp_proc_scan(p, 0, UINT64_MAX, tl_range, NULL, &t);
	if (!t.ops || !t.ntids) {
		free(t.tids);
		return false;
	}
	if (t.hi <= t.lo)
		t.hi = t.lo + 1e-6;
	if (t.ntids > 64)
		t.ntids = 64; /* ops of later threads are not drawn; the caption says so */
	qsort(t.tids, t.ntids, sizeof(*t.tids), cmp_u32);
	t.busy = calloc(t.ntids * t.ncols * t.nseries, sizeof(double));
	if (!t.busy) {
		free(t.tids);
		return false;
	}
	struct tnames tn = { .tid = t.tids, .name = calloc(t.ntids, sizeof(*tn.name)), .n = t.ntids };
	rp_proc_scan(p, 0, UINT64_MAX, tl_fill, NULL, &t);
	if (tn.name)
		rp_proc_scan(p, 0, UINT64_MAX, NULL, tl_thread, &tn);
	const double L = 150, R = 20, T = 8, laneh = 22, W = 960;
	double H = T + laneh * (double)t.ntids + 40;
	double colw_px = (W - L - R) / (double)t.ncols, colw_s = (t.hi - t.lo) / (double)t.ncols;
	fprintf(f,
		"<svg class=\"chart timeline\" data-pid=\"%u\" data-ops=\"%llu\" viewBox=\"0 0 %.0f %.0f\" "
		"role=\"img\">\n",
		p->hdr.pid, (unsigned long long)t.ops, W, H);
	for (size_t lane = 0; lane < t.ntids; lane++) {
		double y = T + laneh * (double)lane;
		const char *nm = tn.name ? tn.name[lane] : "";
		fprintf(f, "<text class=\"barlab\" x=\"%.1f\" y=\"%.1f\">tid %u ", L - 6, y + 15,
			t.tids[lane]);
		rp_html_str(f, nm, strlen(nm));
		fprintf(f,
			"</text><rect class=\"lane\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\"/>\n",
			L, y + 1, W - L - R, laneh - 2);
		for (size_t c = 0; c < t.ncols; c++) {
			double yb = y + laneh - 1;
			for (size_t s = 0; s < t.nseries; s++) {
				double b = t.busy[(lane * t.ncols + c) * t.nseries + s];
				if (b <= 0)
					continue;
				double h = (laneh - 2) * fmin(1, b / colw_s);
				if (h < 0.6)
					h = 0.6;
				yb -= h;
				fprintf(f,
					"<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"%s\"/>",
					L + colw_px * (double)c, yb, colw_px + 0.05, h,
					s + 1 == t.nseries && m->npaths >= 10 ? "#999" : rp_svg_color(s));
			}
		}
		fputc('\n', f);
	}
	double yaxis = T + laneh * (double)t.ntids;
	for (int k = 0; k <= 6; k++) {
		double x = L + (W - L - R) * k / 6.0;
		double ts = t.lo + (t.hi - t.lo) * k / 6.0;
		char lab[32];
		if (t.hi - t.lo < 0.01)
			snprintf(lab, sizeof(lab), "%.3fms", ts * 1e3);
		else if (t.hi - t.lo < 10)
			snprintf(lab, sizeof(lab), "%.3fs", ts);
		else
			snprintf(lab, sizeof(lab), "%.1fs", ts);
		fprintf(f,
			"<line class=\"tick\" x1=\"%.1f\" x2=\"%.1f\" y1=\"%.1f\" y2=\"%.1f\"/>"
			"<text class=\"xlab\" x=\"%.1f\" y=\"%.1f\">%s</text>\n",
			x, x, yaxis, yaxis + 4, x, yaxis + 16, lab);
	}
	fprintf(f,
		"<text class=\"axis-title\" x=\"%.1f\" y=\"%.1f\">seconds from the first process start "
		"(bar height: share of the column's time spent in calls)</text>\n</svg>\n",
		(L + W - R) / 2, H - 4);
	free(tn.name);
	free(t.busy);
	free(t.tids);
	return true;
}
