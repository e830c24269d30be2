/* SPDX-License-Identifier: MIT */
/*
 * doctor.c - `cryptrace doctor`: answers "is this machine's crypto set up right?" in a few
 * seconds. Runs the probes (CPU here; libcrypto, engines and providers in doctor_libcrypto.c;
 * AF_ALG, /dev/crypto and the kernel/in-process crossover in doctor_kernel.c), then prints one
 * ok/warn/fail line per check with its evidence, and the recommendations, in 80 columns or JSON.
 */
#include <getopt.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu.h"
#include "doctor.h"
#include "trace_format.h"
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

/* ---- CPU ---------------------------------------------------------------------------------- */

static const struct {
	uint32_t bit;
	const char *name;
} cpu_flag_names[] = {
	{ CT_CPU_AES, "aes" },         { CT_CPU_VAES, "vaes" },
	{ CT_CPU_PCLMULQDQ, "pclmulqdq" }, { CT_CPU_VPCLMULQDQ, "vpclmulqdq" },
	{ CT_CPU_AVX2, "avx2" },       { CT_CPU_AVX512F, "avx512f" },
	{ CT_CPU_SHA, "sha" },         { CT_CPU_GFNI, "gfni" },
	{ CT_CPU_ARM_AES, "arm-aes" }, { CT_CPU_ARM_PMULL, "arm-pmull" },
};

void dr_probe_cpu(struct dr_report *r)
{
	char model[96], have[160] = "", lack[160] = "";
	uint32_t f = ct_cpu_features();
	bool arm = false;

#if defined(__aarch64__) || defined(__arm__)
	arm = true;
#endif
	r->cpu_flags = f;
	ct_cpu_model(model, sizeof(model));
	for (size_t i = 0; i < sizeof(cpu_flag_names) / sizeof(cpu_flag_names[0]); i++) {
		bool is_arm = cpu_flag_names[i].bit >= CT_CPU_ARM_AES;

		if (is_arm != arm)
			continue;
		char *to = (f & cpu_flag_names[i].bit) ? have : lack;
		size_t len = strlen(to);

		snprintf(to + len, sizeof(have) - len, "%s%s", len ? " " : "", cpu_flag_names[i].name);
	}

	bool aes = f & (CT_CPU_AES | CT_CPU_ARM_AES);
	bool vm = f & CT_CPU_HYPERVISOR;
	struct dr_check *c;

	if (aes)
		c = dr_add(r, "cpu", DR_OK, "CPU has AES instructions", "%s; has: %s%s%s%s", model,
			   have, lack[0] ? "; lacks: " : "", lack, vm ? "; running in a VM" : "");
	else if (vm)
		c = dr_add(r, "cpu", DR_FAIL, "CPU shows no AES instructions (in a VM)",
			   "%s; has: %s; lacks: %s; running in a VM; the VM's CPU model may hide aes",
			   model, have[0] ? have : "none", lack);
	else /* a fact about the hardware, not something to change here */
		c = dr_add(r, "cpu", DR_INFO, "CPU has no AES instructions",
			   "%s; has: %s; lacks: %s: AES runs in software everywhere", model,
			   have[0] ? have : "none", lack);
	dr_value(c, "model", false, "%s", model);
	dr_value(c, "flags", false, "%s", have);
	dr_value(c, "hypervisor", true, "%s", vm ? "true" : "false");
	if (!aes && vm)
		dr_recommend(r, "the VM's CPU model hides AES-NI: give the guest the host's CPU model "
				"(qemu/libvirt: -cpu host or host-passthrough)");
}

/* ---- printing ----------------------------------------------------------------------------- */

static const char *status_word(enum dr_status s)
{
	static const char *const names[] = { "ok", "info", "warn", "fail" };

	return names[s];
}

/* Word-wraps text to 80 columns, every line indented by indent spaces. */
static void print_wrapped(FILE *out, const char *text, int indent)
{
	const int width = 80 - indent;
	const char *p = text;

	while (*p) {
		int len = (int)strlen(p);
		int cut = len;

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

static void print_text(const struct dr_report *r, FILE *out)
{
	fputs("cryptrace doctor: how this machine runs AES\n\n", out);
	for (size_t i = 0; i < r->nchecks; i++) {
		const struct dr_check *c = &r->checks[i];
		char head[300];

		snprintf(head, sizeof(head), "[%-4s] %s", status_word(c->status), c->title);
		print_wrapped(out, head, 0);
		if (c->evidence[0])
			print_wrapped(out, c->evidence, 7);
	}
	fputs("\nrecommendations:\n", out);
	if (r->nrecs == 0)
		fputs("  none: AES runs at the speed this machine allows\n", out);
	for (int i = 0; i < r->nrecs; i++) {
		char line[600];

		snprintf(line, sizeof(line), "- %s", r->recs[i]);
		/* The bullet's own continuation lines line up under its text. */
		const char *p = line;
		int first = 1;

		while (*p) {
			int width = 80 - (first ? 2 : 4), len = (int)strlen(p), cut = len;

			if (len > width) {
				cut = width;
				while (cut > 0 && p[cut] != ' ')
					cut--;
				if (cut == 0)
					cut = width;
			}
			fprintf(out, "%*s%.*s\n", first ? 2 : 4, "", cut, p);
			p += cut;
			while (*p == ' ')
				p++;
			first = 0;
		}
	}
}

static void print_json(const struct dr_report *r, FILE *out)
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

/* ---- main --------------------------------------------------------------------------------- */

int ct_doctor_main(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "json", no_argument, NULL, 'j' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	bool json = false;
	int c;

	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'j':
			json = true;
			break;
		case 'h':
			ct_usage_doctor(stdout);
			return 0;
		default:
			fprintf(stderr, "cryptrace doctor: unknown option '%s' (try: cryptrace help "
					"doctor)\n", argv[optind - 1]);
			return CT_EXIT_USAGE;
		}
	}
	if (optind < argc) {
		fprintf(stderr, "cryptrace doctor: unexpected argument '%s'\n", argv[optind]);
		return CT_EXIT_USAGE;
	}

	struct dr_report r = { 0 };

	dr_probe_cpu(&r);
	dr_probe_libcrypto(&r);
	dr_probe_afalg(&r);
	dr_probe_cryptodev(&r);
	dr_probe_crossover(&r);

	if (json)
		print_json(&r, stdout);
	else
		print_text(&r, stdout);

	int status = 0;

	for (size_t i = 0; i < r.nchecks; i++)
		if (r.checks[i].status == DR_FAIL)
			status = 1;
	for (int i = 0; i < r.nrecs; i++)
		free(r.recs[i]);
	free(r.checks);
	return status;
}
