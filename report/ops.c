/* SPDX-License-Identifier: MIT */
/*
 * ops.c - per-call operations, thread names and the timed sequence of STATS snapshots, read again
 * from each process's trace files (records.c), for the timeline outputs. The model itself keeps
 * only counts: a per-call trace can hold billions of operations, and only the HTML timeline and
 * the Perfetto export walk them, a window of them when asked for one.
 */
#include "views.h"

#include <stdlib.h>

/* The ops of one batch that started in [from, to) to op_fn. */
static uint64_t batch_ops(const struct ct_ops_batch *b, uint64_t from, uint64_t to, rp_op_fn op_fn, void *ctx)
{
	uint64_t seen = 0;
	for (uint32_t i = 0; i < b->count; i++) {
		struct ct_op op;
		ct_decode_op_at(b, i, &op);
		if (op.start_mono_ns < from || op.start_mono_ns >= to)
			continue;
		seen++;
		op_fn(ctx, b->tid, &op);
	}
	return seen;
}

uint64_t rp_proc_scan(const struct rp_proc *p, uint64_t from_mono_ns, uint64_t to_mono_ns, rp_op_fn op_fn,
		      rp_thread_fn thread_fn, void *ctx)
{
	struct rp_records it;
	uint64_t seen = 0;
	struct ct_record *rec = malloc(2 * sizeof(*rec));
	if (!rec)
		return 0;
	rp_records_open(&it, p);
	/* batches are read unless their ops all started outside the window (a thread's ops are in
	 * time order in its batch): a window of a long per-call trace reads little more than itself */
	while (rp_records_next(&it, rec, true) == CT_READ_OK) {
		if (rec->type == CT_REC_THREAD && thread_fn) {
			thread_fn(ctx, rec->u.thread.tid, rec->u.thread.name);
		} else if (rec->type == CT_REC_OPS && op_fn && rec->u.ops.count &&
			   it.s.skipped_last_ns >= from_mono_ns && it.s.skipped_first_ns < to_mono_ns &&
			   ct_stream_load_skipped(&it.s, rec + 1) == CT_READ_OK) {
			seen += batch_ops(&rec[1].u.ops, from_mono_ns, to_mono_ns, op_fn, ctx);
		}
	}
	rp_records_close(&it);
	free(rec);
	return seen;
}

/* The writer flushes changed STATS, then EVENTs, THREADs, OPS, and a PROC record whose mono_ns
 * dates the flush: STATS seen since the previous PROC belong to the next one. */
bool rp_proc_snapshots(const struct rp_proc *p, rp_snapshot_fn fn, rp_flush_fn flush_fn, void *ctx)
{
	struct rp_records it;
	struct ct_record *rec = malloc(sizeof(*rec));
	struct ct_path_stats *pending = NULL;
	size_t npending = 0, cap = 0;
	bool ok = rec != NULL;
	if (!ok)
		return false;
	rp_records_open(&it, p);
	/* OPS batches, nearly all of a per-call trace, are passed over unread */
	while (rp_records_next(&it, rec, true) == CT_READ_OK) {
		if (rec->type == CT_REC_STATS) {
			if (!(ok = rp_grow((void **)&pending, &cap, npending, sizeof(*pending))))
				break;
			pending[npending++] = rec->u.stats;
		} else if (rec->type == CT_REC_PROC || rec->type == CT_REC_END) {
			uint64_t t = rec->type == CT_REC_PROC ? rec->u.proc.mono_ns : rec->u.end.mono_ns;
			for (size_t i = 0; i < npending; i++)
				fn(ctx, t, &pending[i]);
			npending = 0;
			if (flush_fn)
				flush_fn(ctx, t, rec);
		}
	}
	rp_records_close(&it);
	free(pending);
	free(rec);
	return ok;
}
