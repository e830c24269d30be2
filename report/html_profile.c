/* SPDX-License-Identifier: MIT */
/*
 * html_profile.c - the HTML report's CPU profile section: per process with a profile, a bar
 * chart of its sampled CPU by crypto category, implementation and module (the text report's
 * crypto lines added up per implementation), the rest as "other code", and the hooks/profile
 * cross-check (profile_check.c) in a sentence. Each bar carries its share in data-share and its
 * samples in data-samples (svg.c's share bars), so tests read them from the DOM.
 */
#include "svg.h"

#include <stdlib.h>
#include <string.h>

#define PROFILE_BARS_MAX 12 /* crypto bars per process; the rest are summed in one */

bool rp_model_has_profile(const struct rp_model *m)
{
	for (size_t i = 0; i < m->nprocs; i++)
		if (m->procs[i].prof.has && m->procs[i].prof.samples && rp_proc_shown(m, &m->procs[i]))
			return true;
	return false;
}

/* The crypto items of one process added up by (category, impl, module), most samples first. */
static size_t crypto_bars(const struct rp_profile *pr, struct rp_bar *bars, size_t cap)
{
	size_t n = 0;
	for (size_t k = 0; k < pr->nitems; k++) {
		const struct rp_profile_item *it = &pr->items[k];
		if (!it->category[0])
			continue;
		char label[sizeof(bars->label)];
		snprintf(label, sizeof(label), "%s %s (%s)", it->category, it->impl[0] ? it->impl : "-",
			 it->module);
		size_t j = 0;
		while (j < n && strcmp(bars[j].label, label))
			j++;
		if (j == n) {
			if (n == cap)
				j = cap - 1; /* the last bar holds the rest */
			else {
				snprintf(bars[n].label, sizeof(bars[n].label), "%s", label);
				bars[n++].value = 0;
			}
		}
		bars[j].value += (double)it->samples;
	}
	/* items come most samples first, but a group's first item need not be its largest */
	for (size_t a = 1; a < n; a++)
		for (size_t b = a; b > 0 && bars[b].value > bars[b - 1].value; b--) {
			struct rp_bar t = bars[b];
			bars[b] = bars[b - 1];
			bars[b - 1] = t;
		}
	return n;
}

/* The hooks/profile verdict in a sentence; module names come from the trace: escaped. */
static void check_sentence(const struct rp_hooks_check *c, FILE *f)
{
	if (!c->made)
		return;
	fprintf(f, "<p class=\"note hooks-check\" data-verdict=\"%s\">",
		c->verdict > 0   ? "profile-above"
		: c->verdict < 0 ? "hooks-above"
				 : "agree");
	if (!c->verdict) {
		fprintf(f,
			"Hooks and profile agree: %.3f s in the hooked cipher calls; the profile saw %.3f s "
			"&plusmn; %.3f s of cipher code, %.3f s &plusmn; %.3f s with the rest of ",
			c->hooks_s, c->profile_s, c->error_s, c->profile_max_s, c->error_max_s);
		rp_html_cstr(f, c->hooked_module);
		fputs(" and the hooks.", f);
	} else if (c->verdict > 0) {
		fprintf(f,
			"Hooks and profile disagree: the profile saw %.3f s &plusmn; %.3f s of cipher code, "
			"the hooked cipher calls took %.3f s: cipher work ran outside them",
			c->profile_s, c->error_s, c->hooks_s);
		if (c->outside_s > 0) {
			fprintf(f, " (%.3f s in ", c->outside_s);
			rp_html_str(f, c->outside_path.p, c->outside_path.len);
			fputs(", which the hooks do not see)", f);
		}
		if (c->profile_s - c->outside_s > c->hooks_s + c->error_s) {
			fputs(" (in ", f);
			rp_html_cstr(f, c->hooked_module);
			fputs(" itself, from calls that did not pass the hooks)", f);
		}
		fputc('.', f);
	} else {
		fprintf(f,
			"Hooks and profile disagree: the hooked cipher calls took %.3f s of CPU, more than "
			"all the code they run (%.3f s &plusmn; %.3f s in ",
			c->hooks_s, c->profile_max_s, c->error_max_s);
		rp_html_cstr(f, c->hooked_module);
		fputs(", its modules and the hooks): time in the calls not spent in that code.", f);
	}
	fputs("</p>\n", f);
}

void rp_html_profile(const struct rp_model *m, FILE *f)
{
	if (!rp_model_has_profile(m))
		return;
	fputs("<section id=\"profile\"><h2>CPU profile</h2>\n", f);
	struct rp_bar bars[PROFILE_BARS_MAX + 1];
	for (size_t i = 0; i < m->nprocs; i++) {
		const struct rp_proc *p = &m->procs[i];
		const struct rp_profile *pr = &p->prof;
		if (!pr->has || !pr->samples || !rp_proc_shown(m, p))
			continue;
		struct ct_str exe = rp_str_basename(p->hdr.exe);
		fprintf(f, "<h3 data-pid=\"%u\">pid %u ", p->hdr.pid, p->hdr.pid);
		rp_html_str(f, exe.p, exe.len);
		fprintf(f, ": %llu samples, %.3f s of user CPU, crypto code %.1f%%</h3>\n",
			(unsigned long long)pr->samples, (double)pr->samples * rp_profile_sample_s(pr),
			100.0 * (double)pr->crypto_samples / (double)pr->samples);
		memset(bars, 0, sizeof(bars));
		size_t n = crypto_bars(pr, bars, PROFILE_BARS_MAX);
		for (size_t k = 0; k < n; k++)
			bars[k].color = rp_svg_color(k);
		uint64_t other = pr->samples > pr->crypto_samples ? pr->samples - pr->crypto_samples : 0;
		if (other) {
			snprintf(bars[n].label, sizeof(bars[n].label), "other code");
			bars[n].value = (double)other;
			bars[n++].color = "#b8bfcb";
		}
		fprintf(f, "<div class=\"cpu-profile\" data-pid=\"%u\" data-samples=\"%llu\">\n", p->hdr.pid,
			(unsigned long long)pr->samples);
		rp_svg_bars_class(bars, n, "chart cpu-shares", f);
		fputs("</div>\n", f);
		check_sentence(&pr->check, f);
	}
	fputs("<p class=\"note\">Shares of each process's user-space CPU sampled by the launcher "
	      "(perf cpu-clock), by what the code is: named by its instructions and constants, not by "
	      "the nearest symbol (docs/profile.md).</p></section>\n",
	      f);
}
