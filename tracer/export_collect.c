/* SPDX-License-Identifier: MIT */
/*
 * export_collect.c - one exposition of a host's spool, for `cryptrace export` (a file every
 * minute) and `cryptrace serve` (each scrape): the traces loaded as untrusted data (the bounded
 * streaming reader, no symbol files read), folded into the export state so that counters never
 * go backwards (export_state.c), printed by report/openmetrics.c.
 */
#include <stdlib.h>
#include <string.h>

#include "export.h"
#include "report.h"

void ct_export_collect(struct ct_export_state *st, char *const *dirs, int n, bool om, FILE *err, FILE *out)
{
	struct rp_model m;
	rp_model_init(&m);
	struct rp_view view = { 0 };
	const char **paths = calloc(n > 0 ? (size_t)n : 1, sizeof(*paths));
	int np = 0;
	/* a spool with no trace yet is normal (no process did crypto since the last rotation):
	 * skipped, not an error on every run */
	for (int i = 0; paths && i < n; i++)
		if (rp_dir_has_traces(dirs[i]))
			paths[np++] = dirs[i];
	/* no symbols: labels name no call site, and reading every module's symbol files on each
	 * run would cost more than the export */
	rp_load_inputs(&m, paths, np, &view, false, err);
	free(paths);
	ct_export_state_update(st, &m);
	struct rp_om_counters totals = { 0 };
	ct_export_state_totals(st, &totals);
	rp_print_openmetrics(&m, &totals, om, NULL, out);
	rp_om_counters_free(&totals);
	rp_model_free(&m);
}
