/* SPDX-License-Identifier: MIT */
/*
 * summary.c - what the reporter offers the launcher besides its printers: loading a set of trace
 * files or directories the way every report does (read, name call sites from symbol tables,
 * demangle, apply the selection), and the short per-path table that ends `cryptrace run`.
 * Returns codes, never exits.
 */
#include "report.h"

#include "model.h"
#include "views.h"

int rp_load_inputs(struct rp_model *m, const char *const *paths, int n, const struct rp_view *v, bool symbols,
		   FILE *err)
{
	int worst = 0;

	m->load_skips_ops = v->has_since || v->has_until;
	for (int i = 0; i < n; i++) {
		int rc = rp_load_path(m, paths[i], err);

		if (rc > worst)
			worst = rc;
	}
	if (symbols)
		rp_symbolize(m);
	rp_profile_classify(m);
	rp_demangle(m);

	char msg[300];

	if (!rp_view_apply(m, v, msg, sizeof(msg))) {
		fprintf(err, "cryptrace report: %s\n", msg);
		return -1;
	}
	return worst;
}

int ct_report_summary(const char *const *paths, int npaths, FILE *out)
{
	struct rp_model m;
	struct rp_view view = { 0 };

	rp_model_init(&m);

	int rc = rp_load_inputs(&m, paths, npaths, &view, true, out);

	if (m.nprocs)
		rp_print_summary(&m, out);
	rp_model_free(&m);
	return rc;
}
