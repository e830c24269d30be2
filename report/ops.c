/* SPDX-License-Identifier: MIT */
/*
 * ops.c - per-call operations, thread names and the timed sequence of STATS snapshots, read again
 * from the trace bytes each rp_proc keeps (p->map), for the timeline outputs. The model itself
 * keeps only counts: a per-call trace can hold millions of operations, and only the HTML
 * timeline and the Perfetto export walk them, once each.
 */
#include "views.h"

#include <stdlib.h>

uint64_t rp_proc_scan(const struct rp_proc *p, uint64_t from_mono_ns, uint64_t to_mono_ns, rp_op_fn op_fn,
		      rp_thread_fn thread_fn, void *ctx)
{
	struct ct_reader r;
	uint64_t seen = 0;
	if (!p->map || ct_reader_init(&r, p->map, p->map_len) != CT_READ_OK)
		return 0;
	struct ct_record *rec = malloc(sizeof(*rec));
	if (!rec)
		return 0;
	while (ct_reader_next(&r, rec) == CT_READ_OK) {
		if (rec->type == CT_REC_THREAD && thread_fn) {
			thread_fn(ctx, rec->u.thread.tid, rec->u.thread.name);
		} else if (rec->type == CT_REC_OPS) {
			const struct ct_ops_batch *b = &rec->u.ops;
			for (uint32_t i = 0; i < b->count; i++) {
				struct ct_op op;
				ct_decode_op_at(b, i, &op);
				if (op.start_mono_ns < from_mono_ns || op.start_mono_ns >= to_mono_ns)
					continue;
				seen++;
				if (op_fn)
					op_fn(ctx, b->tid, &op);
			}
		}
	}
	free(rec);
	return seen;
}

/* The writer flushes changed STATS, then EVENTs, THREADs, OPS, and a PROC record whose mono_ns
 * dates the flush: STATS seen since the previous PROC belong to the next one. */
void rp_proc_snapshots(const struct rp_proc *p, rp_snapshot_fn fn, void *ctx)
{
	struct ct_reader r;
	if (!p->map || ct_reader_init(&r, p->map, p->map_len) != CT_READ_OK)
		return;
	struct ct_record *rec = malloc(sizeof(*rec));
	struct ct_path_stats *pending = NULL;
	size_t npending = 0, cap = 0;
	if (!rec)
		return;
	while (ct_reader_next(&r, rec) == CT_READ_OK) {
		if (rec->type == CT_REC_STATS) {
			if (!rp_grow((void **)&pending, &cap, npending, sizeof(*pending)))
				break;
			pending[npending++] = rec->u.stats;
		} else if (rec->type == CT_REC_PROC || rec->type == CT_REC_END) {
			uint64_t t = rec->type == CT_REC_PROC ? rec->u.proc.mono_ns : rec->u.end.mono_ns;
			for (size_t i = 0; i < npending; i++)
				fn(ctx, t, &pending[i]);
			npending = 0;
		}
	}
	free(pending);
	free(rec);
}
