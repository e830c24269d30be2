/* SPDX-License-Identifier: MIT */
/*
 * compare_print.c - what `cryptrace compare` prints: a table per figure with a row per path (or
 * per request-size bucket of the busiest path, --by-size) and a column per route, or one JSON
 * object with the same figures and every run's exit status and directory.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "redact.h"
#include "tracer.h"

static void fmt_mbs(char *buf, size_t cap, struct stat3 v)
{
	if (!v.known)
		snprintf(buf, cap, "-");
	else
		snprintf(buf, cap, "%.1f", v.med / 1e6);
}

static void fmt_calls(char *buf, size_t cap, struct stat3 v)
{
	if (!v.known)
		snprintf(buf, cap, "-");
	else if (v.med < 1e6)
		snprintf(buf, cap, "%.0f", v.med);
	else if (v.med < 1e9)
		snprintf(buf, cap, "%.2fM", v.med / 1e6);
	else
		snprintf(buf, cap, "%.2fG", v.med / 1e9);
}

static const char *bucket_label(int b, char *buf, size_t cap)
{
	uint64_t lo = ct_size_bucket_low((unsigned)b);

	if (lo >= 1024 * 1024)
		snprintf(buf, cap, "%lluM", (unsigned long long)(lo >> 20));
	else if (lo >= 1024)
		snprintf(buf, cap, "%lluk", (unsigned long long)(lo >> 10));
	else
		snprintf(buf, cap, "%llu", (unsigned long long)lo);
	return buf;
}

/*
 * The text tables: rows are paths (cipher and direction), or the request-size buckets of the
 * busiest path with --by-size; columns are routes. One table per figure (wall MB/s, CPU MB/s,
 * calls, the ratio to the first route with its min-max over rounds on the line below), so that a
 * row of 4 routes fits 80 columns: 2 + 22 + 4 x (1 + 13) = 80. More routes continue in further
 * tables of 4, each repeating the row labels.
 */
#define TXT_WIDTH 80
#define TXT_LABEL_W 22
#define TXT_CELL_W 13
#define TXT_ROUTES_PER_TABLE 4

enum txt_figure { FIG_WALL, FIG_CPU, FIG_CALLS, FIG_RATIO };

struct txt_row {
	const struct cmp_key *k;
	int bucket; /* -1: the whole path */
	char label[64];
};

static void txt_cell(const struct cmp_state *s, const struct txt_row *row, int route, enum txt_figure fig,
		     char *main, char *range, size_t cap)
{
	struct cmp_cell c;

	cmp_cell_of(s, row->k, row->bucket, route, &c);
	range[0] = '\0';
	if (!c.present) {
		snprintf(main, cap, "absent");
		return;
	}
	switch (fig) {
	case FIG_WALL:
		fmt_mbs(main, cap, c.wall_bps);
		break;
	case FIG_CPU:
		fmt_mbs(main, cap, c.cpu_bps);
		break;
	case FIG_CALLS:
		fmt_calls(main, cap, c.calls);
		break;
	case FIG_RATIO:
		if (!c.ratio.known) {
			snprintf(main, cap, "-");
		} else {
			snprintf(main, cap, "%.2f", c.ratio.med);
			if (route && s->o->rounds > 1)
				snprintf(range, cap, "%.2f-%.2f", c.ratio.min, c.ratio.max);
		}
		break;
	}
}

static void print_table(const struct cmp_state *s, const struct txt_row *rows, size_t nrows,
			enum txt_figure fig, const char *title, FILE *out)
{
	const struct cmp_options *o = s->o;

	for (int g = 0; g < o->nroutes; g += TXT_ROUTES_PER_TABLE) {
		int end = g + TXT_ROUTES_PER_TABLE < o->nroutes ? g + TXT_ROUTES_PER_TABLE : o->nroutes;

		if (o->nroutes > TXT_ROUTES_PER_TABLE && end - g > 1)
			fprintf(out, "\n%s, routes %d-%d of %d\n", title, g + 1, end, o->nroutes);
		else if (o->nroutes > TXT_ROUTES_PER_TABLE)
			fprintf(out, "\n%s, route %d of %d\n", title, end, o->nroutes);
		else
			fprintf(out, "\n%s\n", title);
		fprintf(out, "  %-*s", TXT_LABEL_W, rows[0].bucket < 0 ? "path" : "requests of");
		for (int r = g; r < end; r++)
			fprintf(out, " %*.*s", TXT_CELL_W, TXT_CELL_W, o->routes[r].label);
		fputc('\n', out);
		for (size_t i = 0; i < nrows; i++) {
			char main[TXT_ROUTES_PER_TABLE][32], range[TXT_ROUTES_PER_TABLE][32];
			bool any_range = false;

			for (int r = g; r < end; r++) {
				txt_cell(s, &rows[i], r, fig, main[r - g], range[r - g], sizeof(main[0]));
				any_range |= range[r - g][0] != '\0';
			}
			fprintf(out, "  %-*.*s", TXT_LABEL_W, TXT_LABEL_W, rows[i].label);
			for (int r = g; r < end; r++)
				fprintf(out, " %*.*s", TXT_CELL_W, TXT_CELL_W, main[r - g]);
			fputc('\n', out);
			if (!any_range)
				continue;
			fprintf(out, "  %-*s", TXT_LABEL_W, "");
			for (int r = g; r < end; r++)
				fprintf(out, " %*.*s", TXT_CELL_W, TXT_CELL_W, range[r - g]);
			fputc('\n', out);
		}
	}
}

/* Prints text at column col of a line that already holds col characters, wrapped at commas or
 * spaces so that no line passes TXT_WIDTH; continuation lines start at col too. */
static void print_in_column(const char *text, int col, FILE *out)
{
	int room = TXT_WIDTH - col;
	const char *p = text;

	if (room < 16)
		room = 16;
	while (strlen(p) > (size_t)room) {
		int cut = room;

		while (cut > room / 2 && p[cut - 1] != ',' && p[cut - 1] != ' ')
			cut--;
		if (cut <= room / 2)
			cut = room;
		int keep = cut;

		while (keep > 0 && p[keep - 1] == ' ')
			keep--;
		fprintf(out, "%.*s\n%*s", keep, p, col, "");
		p += cut;
		while (*p == ' ')
			p++;
	}
	fprintf(out, "%s\n", p);
}

/* A path longer than the line: its tail, which names the run, after "...". */
static void print_path_line(const char *lead, const char *path, FILE *out)
{
	size_t room = TXT_WIDTH - strlen(lead);

	if (strlen(path) <= room)
		fprintf(out, "%s%s\n", lead, path);
	else
		fprintf(out, "%s...%s\n", lead, path + strlen(path) - (room - 3));
}

void cmp_print_text(const struct cmp_state *s, FILE *out)
{
	const struct cmp_options *o = s->o;
	char head[128];

	snprintf(head, sizeof(head), "cryptrace compare: %d round%s x %d route%s, traces in ", o->rounds,
		 o->rounds == 1 ? "" : "s", o->nroutes, o->nroutes == 1 ? "" : "s");
	if (strlen(head) + strlen(s->outdir) <= TXT_WIDTH) {
		fprintf(out, "%s%s\n", head, s->outdir);
	} else {
		head[strlen(head) - 1] = '\0';
		fprintf(out, "%s\n", head);
		print_path_line("  ", s->outdir, out);
	}
	fprintf(out, "\n  %-10s %-14s %-6s %s\n", "route", "run time (med)", "exit", "spec");
	for (int r = 0; r < o->nroutes; r++) {
		char t[32];

		snprintf(t, sizeof(t), "%.2fs", cmp_median_elapsed(s, r));
		fprintf(out, "  %-10.10s %-14s %-6d ", o->routes[r].label, t, cmp_run_at(s, 0, r)->status);
		print_in_column(o->routes[r].spec ? o->routes[r].spec : "(none)", 35, out);
	}
	if (s->nkeys == 0) {
		fprintf(out, "\nno cipher work was traced in any run\n");
		return;
	}

	struct txt_row rows[CMP_MAX_ROWS];
	size_t nrows = 0;

	for (size_t i = 0; i < s->nkeys && nrows < CMP_MAX_ROWS; i++, nrows++) {
		rows[nrows] = (struct txt_row){ .k = &s->keys[i], .bucket = -1 };
		snprintf(rows[nrows].label, sizeof(rows[nrows].label), "%s %s", s->keys[i].cipher,
			 ct_dir_name(s->keys[i].dir));
	}
	char ratio_title[96];

	if (o->rounds > 1)
		snprintf(ratio_title, sizeof(ratio_title),
			 "wall MB/s vs %s (median ratio; min-max "
			 "over rounds below)",
			 o->routes[0].label);
	else
		snprintf(ratio_title, sizeof(ratio_title), "wall MB/s vs %s (ratio)", o->routes[0].label);
	print_table(s, rows, nrows, FIG_WALL, "wall MB/s (median over rounds)", out);
	print_table(s, rows, nrows, FIG_CPU, "CPU MB/s (user+sys, median over rounds)", out);
	print_table(s, rows, nrows, FIG_CALLS, "calls (median over rounds)", out);
	if (o->nroutes > 1)
		print_table(s, rows, nrows, FIG_RATIO, ratio_title, out);

	fprintf(out, "\nimplementation per route\n");
	for (size_t i = 0; i < nrows; i++) {
		char line[1024];
		size_t len = 0;

		len += (size_t)snprintf(line, sizeof(line), "%s:", rows[i].label);
		for (int r = 0; r < o->nroutes && len < sizeof(line); r++) {
			struct cmp_cell c;

			cmp_cell_of(s, rows[i].k, -1, r, &c);
			len += (size_t)snprintf(line + len, sizeof(line) - len, " %s=%s%s",
						o->routes[r].label, c.present ? c.impl : "absent",
						r + 1 < o->nroutes ? "," : "");
		}
		fputs("  ", out);
		print_in_column(line, 2, out);
	}
	if (s->hidden)
		fprintf(out,
			"\n(%d path%s under 0.1%% of the busiest one's bytes not shown;\n"
			" see cryptrace report DIR/<route>/<round>)\n",
			s->hidden, s->hidden == 1 ? "" : "s");
	if (o->by_size) {
		bool used[CT_SIZE_BUCKETS] = { false };
		struct txt_row brows[CT_SIZE_BUCKETS];
		size_t nb = 0;

		cmp_busiest_buckets(s, &s->keys[0], used);
		for (int b = 0; b < CT_SIZE_BUCKETS; b++) {
			char lab[16];

			if (!used[b])
				continue;
			brows[nb] = (struct txt_row){ .k = &s->keys[0], .bucket = b };
			snprintf(brows[nb].label, sizeof(brows[nb].label), "%s+ bytes",
				 bucket_label(b, lab, sizeof(lab)));
			nb++;
		}
		if (nb) {
			char t[128];

			fprintf(out, "\n%s %s by request size (buckets [N, 2N) named by N)\n",
				s->keys[0].cipher, ct_dir_name(s->keys[0].dir));
			print_table(s, brows, nb, FIG_WALL, "wall MB/s", out);
			print_table(s, brows, nb, FIG_CALLS, "calls", out);
			snprintf(t, sizeof(t), "wall MB/s vs %s", o->routes[0].label);
			if (o->nroutes > 1)
				print_table(s, brows, nb, FIG_RATIO, t, out);
		}
	}
	fprintf(out,
		"\nMB/s: median over rounds of the bytes per wall / user+sys CPU second in the\n"
		"calls; vs %s: median per-round ratio of wall MB/s%s\n",
		o->routes[0].label, o->rounds > 1 ? " (min-max below it)" : "");
}

static void json_stat(FILE *out, const char *name, struct stat3 v, bool range)
{
	fprintf(out, "\"%s\":", name);
	if (!v.known) {
		fputs("null", out);
		return;
	}
	if (!range) {
		ct_json_num(out, v.med, true);
		return;
	}
	fputs("{\"median\":", out);
	ct_json_num(out, v.med, true);
	fputs(",\"min\":", out);
	ct_json_num(out, v.min, true);
	fputs(",\"max\":", out);
	ct_json_num(out, v.max, true);
	fputc('}', out);
}

static void json_cells(const struct cmp_state *s, const struct cmp_key *k, int bucket, FILE *out)
{
	fputs("[", out);
	for (int r = 0; r < s->o->nroutes; r++) {
		struct cmp_cell c;

		cmp_cell_of(s, k, bucket, r, &c);
		fprintf(out, "%s{\"route\":", r ? "," : "");
		ct_json_str(out, s->o->routes[r].label);
		fprintf(out, ",\"present\":%s,\"impl\":", c.present ? "true" : "false");
		ct_json_str(out, c.impl);
		fprintf(out, ",\"routed\":%s,", c.routed ? "true" : "false");
		json_stat(out, "wall_bps", c.wall_bps, true);
		fputc(',', out);
		json_stat(out, "cpu_bps", c.cpu_bps, true);
		fputc(',', out);
		json_stat(out, "calls", c.calls, false);
		fputc(',', out);
		json_stat(out, "ratio", c.ratio, true);
		fputc('}', out);
	}
	fputs("]", out);
}

/* CMD as the traces record it: a password or key typed on it reads <redacted> (redact.h). */
static void print_command(char **cmd, FILE *out)
{
	size_t len = 0, at = 0;

	for (int i = 0; cmd[i]; i++)
		len += strlen(cmd[i]) + 1;

	char *in = malloc(len + 1), *shown = malloc(len * 11 + 16);
	size_t n = 0;

	if (in && shown) {
		for (int i = 0; cmd[i]; i++) {
			memcpy(in + at, cmd[i], strlen(cmd[i]) + 1);
			at += strlen(cmd[i]) + 1;
		}
		n = ct_argv_redact(in, len, false, shown, len * 11 + 16, NULL);
	}
	for (size_t i = 0, k = 0; i < n; k++) {
		const char *e = memchr(shown + i, 0, n - i);
		size_t w = e ? (size_t)(e - (shown + i)) : n - i;
		char *arg = strndup(shown + i, w);

		if (k)
			fputc(',', out);
		ct_json_str(out, arg ? arg : "");
		free(arg);
		i += w + 1;
	}
	free(in);
	free(shown);
}

void cmp_print_json(const struct cmp_state *s, const char **errors, int nerrors, FILE *out)
{
	const struct cmp_options *o = s->o;

	fputs("{\"command\":[", out);
	print_command(o->cmd, out);
	fprintf(out, "],\"rounds\":%d,\"outdir\":", o->rounds);
	ct_json_str(out, s->outdir);
	fputs(",\"routes\":[", out);
	for (int r = 0; r < o->nroutes; r++) {
		fprintf(out, "%s{\"name\":", r ? "," : "");
		ct_json_str(out, o->routes[r].label);
		fputs(",\"spec\":", out);
		if (o->routes[r].spec)
			ct_json_str(out, o->routes[r].spec);
		else
			fputs("null", out);
		fputs(",\"median_run_s\":", out);
		ct_json_num(out, cmp_median_elapsed(s, r), true);
		fputs(",\"runs\":[", out);
		for (int i = 0; i < o->rounds; i++) {
			const struct cmp_run *run = cmp_run_at(s, i, r);

			fprintf(out, "%s{\"round\":%d,\"exit\":%d,\"run_s\":", i ? "," : "", i + 1,
				run->status);
			ct_json_num(out, run->elapsed_s, true);
			fprintf(out, ",\"traces\":%d,\"routes_inactive\":%s,\"dir\":", run->ntraces,
				run->routes_inactive ? "true" : "false");
			ct_json_str(out, run->dir);
			fputc('}', out);
		}
		fputs("]}", out);
	}
	fputs("],\"paths\":[", out);
	for (size_t i = 0; i < s->nkeys; i++) {
		fprintf(out, "%s{\"cipher\":", i ? "," : "");
		ct_json_str(out, s->keys[i].cipher);
		fprintf(out, ",\"dir\":\"%s\",\"routes\":", ct_dir_name(s->keys[i].dir));
		json_cells(s, &s->keys[i], -1, out);
		fputc('}', out);
	}
	fprintf(out, "],\"hidden_paths\":%d,\"by_size\":", s->hidden);
	if (o->by_size && s->nkeys) {
		bool used[CT_SIZE_BUCKETS] = { false };
		bool first = true;

		cmp_busiest_buckets(s, &s->keys[0], used);
		fputs("{\"cipher\":", out);
		ct_json_str(out, s->keys[0].cipher);
		fprintf(out, ",\"dir\":\"%s\",\"buckets\":[", ct_dir_name(s->keys[0].dir));
		for (int b = 0; b < CT_SIZE_BUCKETS; b++) {
			if (!used[b])
				continue;
			fprintf(out, "%s{\"min_size\":%llu,\"routes\":", first ? "" : ",",
				(unsigned long long)ct_size_bucket_low((unsigned)b));
			json_cells(s, &s->keys[0], b, out);
			fputc('}', out);
			first = false;
		}
		fputs("]}", out);
	} else {
		fputs("null", out);
	}
	fputs(",\"errors\":[", out);
	for (int i = 0; i < nerrors; i++) {
		if (i)
			fputc(',', out);
		ct_json_str(out, errors[i]);
	}
	fputs("]}\n", out);
}
