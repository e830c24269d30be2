/* SPDX-License-Identifier: MIT */
/*
 * export.h - `cryptrace export` (cmd_export.c): the node_exporter textfile collector's file, with
 * counters that never go backwards across process lifetimes. A trace's counters are cumulative
 * for its process's life, but the process exits and its trace is rotated out of the spool: the
 * export state (export_state.c) keeps what finished and vanished traces contributed, so the
 * exported counter is retired + live and only grows. docs/metrics.md says where it lives and why.
 */
#ifndef CT_TRACER_EXPORT_H
#define CT_TRACER_EXPORT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "model.h"
#include "views.h"

struct ct_export_state;

/* An empty state (serve's, in memory); NULL when out of memory. */
struct ct_export_state *ct_export_state_new(void);
/* The state in path (a missing file: an empty state). NULL with msg set when it cannot be read
 * or is not a state file (the caller refuses to go on: counting again from zero would make every
 * counter go backwards). */
struct ct_export_state *ct_export_state_load(const char *path, char *msg, size_t cap);
/* Folds the loaded traces in: a finished trace (END) is retired once, a live one's counters are
 * kept as last seen, a live one no longer in the spool is retired as last seen. */
void ct_export_state_update(struct ct_export_state *s, const struct rp_model *m);
/* The counters to export: retired + live (out: empty, the caller frees it). */
void ct_export_state_totals(const struct ct_export_state *s, struct rp_om_counters *out);
/* Writes it atomically (temp file beside it + rename), 0600. */
bool ct_export_state_save(const struct ct_export_state *s, const char *path, char *msg, size_t cap);
void ct_export_state_free(struct ct_export_state *s);
/* Locks the state file against another export or serve (STATE.lock, flock): each would retire
 * the same traces. Waits up to wait_s seconds (0: not at all); -1 with one line on stderr
 * (prefixed "cryptrace WHO: ") when it is still held or cannot be made, else the fd to close. */
int ct_export_state_lock(const char *state, unsigned wait_s, const char *who);
/* How long export waits for the state: a hand-run export while the timer's runs. */
#define EXPORT_LOCK_WAIT_S 60

/* Loads the traces of dirs (a directory without any is skipped: nothing did crypto yet), folds
 * them into st and prints the exposition of st's counters and the loaded traces' findings, CPU and
 * health to out: OpenMetrics (om) or the text format 0.0.4. Load warnings go to err. */
void ct_export_collect(struct ct_export_state *st, char *const *dirs, int n, bool om, FILE *err, FILE *out);

/* Writes path atomically: fill(f, ctx) into a new temp file beside it, fsync, chmod mode, rename
 * over path. A reader sees the old file or the whole new one, never a part. */
bool ct_write_atomic(const char *path, unsigned mode, void (*fill)(FILE *f, void *ctx), void *ctx, char *msg,
		     size_t cap);

#endif
