/* SPDX-License-Identifier: MIT */
/*
 * profile.h - the launcher's sampling profile of the traced processes (profile.c): user-space
 * CPU sampled with perf_event_open (software cpu-clock, per CPU, inherited by threads and
 * children, started at the command's exec), resolved to (file, offset) while the processes run,
 * and appended to their trace files as PROFILE records when the run is over.
 */
#ifndef CT_TRACER_PROFILE_H
#define CT_TRACER_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

struct ct_profiler;

/* The default sampling rate, per CPU a process runs on. */
#define CT_PROFILE_HZ 250

/* The rate to use: CRYPTRACE_PROFILE_HZ (10..10000) when set to one, else CT_PROFILE_HZ. */
unsigned ct_profile_hz(void);

/* Opens the sampling events on pid, a child that has not exec'd yet (they start at its exec),
 * and a thread that drains them. NULL when perf events are refused or unavailable: *why says
 * why in one line (the run goes on without a profile). */
struct ct_profiler *ct_profile_attach(pid_t pid, unsigned hz, char *why, size_t cap);

/* After the traced processes ended: stops the drain thread after a last drain, and appends each
 * profiled process's samples to its newest trace file in outdir (the files of a process that
 * exec'd get the samples of their own image). Returns the number of processes written; *why
 * says what was left out, if anything. Frees the profiler. */
unsigned ct_profile_finish(struct ct_profiler *p, const char *outdir, char *why, size_t cap);

/* No profile could be taken (why): says so in pid's newest trace file in outdir (a trace-warning
 * event "profile" with the reason), so that the report does not read its absence as idleness. */
void ct_profile_note(const char *outdir, uint32_t pid, const char *why);

#endif
