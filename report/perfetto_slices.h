/* SPDX-License-Identifier: MIT */
/*
 * perfetto_slices.h - how `report --perfetto` draws per-call operations: one track per (thread,
 * path), on which consecutive operations become one slice while each starts less than the
 * resolution after the slice's first one did (or before the slice so far has ended, so that
 * slices never overlap on a track). The same rule counts slices for every resolution of the
 * ladder in a first pass (so that `--resolution auto` can choose the finest one that fits the
 * file's budget) and builds the slices written in the second pass. Pure logic: no output.
 */
#ifndef CT_REPORT_PERFETTO_SLICES_H
#define CT_REPORT_PERFETTO_SLICES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"

/* The ladder auto chooses from: 0 (every operation its own slice), then 1-2-5 steps from 1 ns to
 * 10 s. */
#define PF_RUNGS 32
uint64_t pf_rung_ns(unsigned k);

/* A slice being built: its operations' span on the process's CLOCK_MONOTONIC and their sums. */
struct pf_slice {
	bool open;
	uint64_t anchor_ns;        /* the first operation's start: the resolution counts from it */
	uint64_t start_ns, end_ns; /* earliest start, latest end */
	uint64_t ops;              /* operations represented: the sum of the kept ones' weights */
	uint64_t kept;             /* operations recorded */
	uint64_t bytes;            /* bytes x weight */
};

/* Adds op to s when it belongs there under resolution res_ns (always when s is not open yet).
 * False: s is finished, the caller writes it and starts the next with pf_slice_start. */
bool pf_slice_add(struct pf_slice *s, const struct ct_op *op, uint64_t res_ns);
void pf_slice_start(struct pf_slice *s, const struct ct_op *op);

struct pf_track {
	uint32_t tid, path_id;
	struct pf_slice all;                      /* every operation of the track */
	uint64_t anchor[PF_RUNGS], end[PF_RUNGS]; /* first pass: each rung's open slice */
	uint64_t slices[PF_RUNGS];                /* first pass: slices at each rung */
	struct pf_slice cur;                      /* second pass: the slice being built */
	uint32_t out_tid;                         /* its tid in the output (one per track) */
	char *head, *tail;                        /* its constant JSON around the numbers */
	size_t slice_max;                         /* bytes one of its slices takes at most */
};

/* The tracks of one process, found by (tid, path) through a hash (a churning thread pool makes
 * thousands). */
struct pf_tracks {
	struct pf_track *t;
	size_t n, cap;
	uint32_t *slot; /* index + 1 into t, 0: empty */
	size_t nslots;
};
/* The track of (tid, path_id), added when new; NULL when out of memory. */
struct pf_track *pf_track_of(struct pf_tracks *ts, uint32_t tid, uint32_t path_id);
/* First pass: counts op into every rung's slices and into the track's totals. */
void pf_track_count(struct pf_track *t, const struct ct_op *op);
void pf_tracks_free(struct pf_tracks *ts);

#endif
