/* SPDX-License-Identifier: MIT */
/*
 * report.h - the reporter's entry points for the `cryptrace` launcher (tracer/): loading the
 * inputs of a report (the `report` command, tracer/cmd_report.c, then calls the printers of
 * views.h) and the short summary printed at the end of `cryptrace run`.
 * Library code: never exits, never aborts; errors come back as return codes.
 */
#ifndef CT_REPORT_H
#define CT_REPORT_H

#include <stdbool.h>
#include <stdio.h>

struct rp_model;
struct rp_view;

/* Loads trace files or directories (a directory: every *.ctrace file in it) into m, names call
 * sites from symbol tables when symbols is true, demangles them and applies the selection v.
 * Returns the worst load status: 0 all read, 1 some input was damaged (everything before the
 * damage is loaded, with a one-line warning on err), 2 unreadable or foreign input; -1 when the
 * selection is impossible (a line on err says why). */
int rp_load_inputs(struct rp_model *m, const char *const *paths, int n, const struct rp_view *v, bool symbols,
		   FILE *err);

/* A short `strace -c`-like per-path table of the given trace files or directories, for the end
 * of `cryptrace run`. Returns the load status (0, 1, 2, as rp_load_inputs). */
int ct_report_summary(const char *const *paths, int npaths, FILE *out);

/* The call name of the trace-warning event the launcher appends, with END, to the trace of its
 * child when that child exited without running its exit handlers (tracer/end_trace.c). */
#define RP_EXIT_UNSEEN_CALL "exit-unseen"

#endif
