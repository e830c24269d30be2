/* SPDX-License-Identifier: MIT */
/*
 * doctor_checklist.c - the doctor's checklist (doctor.h): the probes add checks and
 * recommendations to it, and it prints as one ok/info/warn/fail line per check with its evidence
 * under it and the recommendations last, in 80 columns, or as JSON.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "doctor.h"
#include "tracer.h"

/* ---- building the list -------------------------------------------------------------------- */

struct dr_check *dr_add(struct dr_report *r, const char *id, enum dr_status st, const char *title,
			const char *evidence_fmt, ...)
{
	static struct dr_check spare;
	struct dr_check *c = &spare;

	if (r->nchecks == r->cap) {
		size_t ncap = r->cap ? r->cap * 2 : 32;
		struct dr_check *grown = realloc(r->checks, ncap * sizeof(*grown));

		if (grown) {
			r->checks = grown;
			r->cap = ncap;
		}
	}
	if (r->nchecks < r->cap)
		c = &r->checks[r->nchecks++];
	memset(c, 0, sizeof(*c));
	snprintf(c->id, sizeof(c->id), "%s", id);
	c->status = st;
	snprintf(c->title, sizeof(c->title), "%s", title);

	va_list ap;

	va_start(ap, evidence_fmt);
	vsnprintf(c->evidence, sizeof(c->evidence), evidence_fmt, ap);
	va_end(ap);
	return c;
}

void dr_value(struct dr_check *c, const char *key, bool number, const char *fmt, ...)
{
	if (c->nvalues == DR_MAX_VALUES)
		return;
	struct dr_value *v = &c->values[c->nvalues++];
	va_list ap;

	snprintf(v->key, sizeof(v->key), "%s", key);
	v->number = number;
	va_start(ap, fmt);
	vsnprintf(v->val, sizeof(v->val), fmt, ap);
	va_end(ap);
}

void dr_recommend(struct dr_report *r, const char *fmt, ...)
{
	char buf[512];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	for (int i = 0; i < r->nrecs; i++)
		if (!strcmp(r->recs[i], buf))
			return;
	if (r->nrecs < (int)(sizeof(r->recs) / sizeof(r->recs[0])))
		r->recs[r->nrecs++] = strdup(buf);
}

/* ---- printing ----------------------------------------------------------------------------- */

static const char *status_word(enum dr_status s)
{
	static const char *const names[] = { "ok", "info", "warn", "fail" };

	return names[s];
}

/* Word-wraps text to 80 columns: the first line indented by first spaces, the others by rest. */
static void print_wrapped(FILE *out, const char *text, int first, int rest)
{
	const char *p = text;

	for (int indent = first; *p; indent = rest) {
		int width = 80 - indent, len = (int)strlen(p), cut = len;

		if (len > width) {
			cut = width;
			while (cut > 0 && p[cut] != ' ')
				cut--;
			if (cut == 0)
				cut = width; /* one long word (a path): break it */
		}
		fprintf(out, "%*s%.*s\n", indent, "", cut, p);
		p += cut;
		while (*p == ' ')
			p++;
	}
}

void dr_print_text(const struct dr_report *r, FILE *out)
{
	fputs("cryptrace doctor: how this machine runs AES\n\n", out);
	for (size_t i = 0; i < r->nchecks; i++) {
		const struct dr_check *c = &r->checks[i];
		char head[300];

		snprintf(head, sizeof(head), "[%-4s] %s", status_word(c->status), c->title);
		print_wrapped(out, head, 0, 0);
		if (c->evidence[0])
			print_wrapped(out, c->evidence, 7, 7);
	}
	fputs("\nrecommendations:\n", out);
	if (r->nrecs == 0)
		fputs("  none: AES runs at the speed this machine allows\n", out);
	for (int i = 0; i < r->nrecs; i++) {
		char line[600];

		snprintf(line, sizeof(line), "- %s", r->recs[i]);
		/* The bullet's own continuation lines line up under its text. */
		print_wrapped(out, line, 2, 4);
	}
}

void dr_print_json(const struct dr_report *r, FILE *out)
{
	fputs("{\"checks\":[", out);
	for (size_t i = 0; i < r->nchecks; i++) {
		const struct dr_check *c = &r->checks[i];

		fprintf(out, "%s{\"id\":", i ? "," : "");
		ct_json_str(out, c->id);
		fprintf(out, ",\"status\":\"%s\",\"title\":", status_word(c->status));
		ct_json_str(out, c->title);
		fputs(",\"evidence\":", out);
		ct_json_str(out, c->evidence);
		fputs(",\"values\":{", out);
		for (int k = 0; k < c->nvalues; k++) {
			if (k)
				fputc(',', out);
			ct_json_str(out, c->values[k].key);
			fputc(':', out);
			if (c->values[k].number)
				fputs(c->values[k].val[0] ? c->values[k].val : "null", out);
			else
				ct_json_str(out, c->values[k].val);
		}
		fputs("}}", out);
	}
	fputs("],\"recommendations\":[", out);
	for (int i = 0; i < r->nrecs; i++) {
		if (i)
			fputc(',', out);
		ct_json_str(out, r->recs[i]);
	}
	fputs("]}\n", out);
}
