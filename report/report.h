/* SPDX-License-Identifier: MIT */
/*
 * report.h - the reporter's public entry points, used by the `cryptrace` launcher (tracer/):
 * `cryptrace report ...` and the short summary printed at the end of `cryptrace run`.
 * Library code: never exits, never aborts; errors come back as return codes.
 */
#ifndef CT_REPORT_H
#define CT_REPORT_H

#include <stdio.h>

/* `cryptrace report [options] FILE|DIR...`; argv[0] is "report".
 * Returns 0 on success, 1 when some input was damaged (everything before the damage is still
 * reported, with a one-line warning on stderr), 2 on usage errors or unreadable/foreign input. */
int ct_report_main(int argc, char **argv);

/* A short `strace -c`-like per-path table of the given trace files or directories, for the end
 * of `cryptrace run`. Same return codes as ct_report_main. */
int ct_report_summary(const char *const *paths, int npaths, FILE *out);

/* The call name of the trace-warning event the launcher appends, with END, to the trace of its
 * child when that child exited without running its exit handlers (tracer/end_trace.c). */
#define RP_EXIT_UNSEEN_CALL "exit-unseen"

#endif
