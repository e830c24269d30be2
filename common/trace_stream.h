/* SPDX-License-Identifier: MIT */
/*
 * trace_stream.h - a trace file read record by record in bounded memory: a read-ahead window of
 * a few MiB, never the file. The records decode as ct_reader_next decodes them (same statuses,
 * same messages, offsets in the file), so a reader can switch between the two.
 *
 * Per-call OPS batches are almost all of a per-call trace's bytes, and most readers need only
 * their counts: ct_stream_next(..., skip_ops = true) reads an OPS record's header and the first
 * bytes of its payload (thread, count, drops, and the start of its first and last operation)
 * and moves past the rest without reading it. Its CRC is then not checked; a damaged length is
 * still caught (the next record's header is checked). ct_stream_load_skipped reads it whole
 * after all (CRC checked), e.g. when its operations fall in the time window asked for.
 */
#ifndef CT_TRACE_STREAM_H
#define CT_TRACE_STREAM_H

#include "trace_format.h"

struct ct_stream {
	struct ct_reader r; /* decodes inside the window; status and error are the stream's */
	int fd;             /* -1: reading mem */
	const uint8_t *mem;
	uint64_t end;      /* where the stream ends: the file's size when opened, or the limit */
	uint64_t next;     /* the file offset of the next record */
	uint64_t good_end; /* the end of the last whole record read (or skipped) */
	uint8_t *win;      /* read-ahead: the file's bytes [win_off, win_off + win_len) */
	size_t win_cap, win_len;
	uint64_t win_off;
	/* the OPS record the last ct_stream_next skipped (skipped_at 0: none) */
	uint64_t skipped_at;
	uint64_t skipped_first_ns, skipped_last_ns; /* its first and last op's start */
};

/* Opens the stream on fd (not closed by the stream), reading up to byte `limit` (UINT64_MAX: to
 * the file's size now; a file still being written is read as far as it was). Checks the
 * preamble: CT_READ_OK, or an error status with s->r.error set. */
enum ct_read_status ct_stream_open_fd(struct ct_stream *s, int fd, uint64_t limit);
/* The same over a buffer (not copied). */
enum ct_read_status ct_stream_open_mem(struct ct_stream *s, const uint8_t *buf, size_t len);
/* The next record, as ct_reader_next; rec points into the stream's window until the next call.
 * With skip_ops, an OPS record's payload is not read: rec->u.ops has its tid, count and dropped
 * and no ops (ops_data NULL), and skipped_* say where it is and when its ops started. */
enum ct_read_status ct_stream_next(struct ct_stream *s, struct ct_record *rec, bool skip_ops);
/* Reads the OPS record the last ct_stream_next skipped, whole and CRC-checked, into rec. An error
 * here (a damaged batch) is returned but does not stop the stream. */
enum ct_read_status ct_stream_load_skipped(struct ct_stream *s, struct ct_record *rec);
/* The raw bytes (header, payload, CRC) of the record the last ct_stream_next returned, read
 * whole; NULL after a skipped one. Valid until the next call. */
const uint8_t *ct_stream_raw(const struct ct_stream *s, const struct ct_record *rec, size_t *len);
void ct_stream_close(struct ct_stream *s);

#endif
