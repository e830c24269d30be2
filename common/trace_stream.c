/* SPDX-License-Identifier: MIT */
/* trace_stream.c - a trace read record by record through a bounded window (trace_stream.h). */
#include "trace_stream.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The window holds the largest record (1 MiB of payload) with room to spare; a refill reads at
 * least READAHEAD bytes, little enough that the refill after a skipped batch reads little of the
 * next one's payload. */
#define WINDOW_CAP ((size_t)CT_MAX_PAYLOAD * 2 + 4096)
#define READAHEAD ((size_t)256 << 10)
/* tid, count, dropped: the batch header in front of the 20-byte ops */
#define OPS_BATCH_HEAD 16

static enum ct_read_status fail(struct ct_stream *s, enum ct_read_status st, const char *fmt,
				unsigned long long at)
{
	s->r.status = st;
	snprintf(s->r.error, sizeof(s->r.error), fmt, at);
	return st;
}

/* Makes [at, at + need) (cut at the end) be in the window. False on a read error (errno). A file
 * that turns out shorter than it was (cut while we read) ends where the reads end. */
static bool fill(struct ct_stream *s, uint64_t at, size_t need)
{
	if (at >= s->end)
		return true;
	if (need > s->end - at)
		need = (size_t)(s->end - at);
	if (at >= s->win_off && at + need <= s->win_off + s->win_len)
		return true;
	if (s->fd < 0)
		return true; /* a buffer is one window: nothing more to read */
	size_t keep = 0;
	if (at >= s->win_off && at < s->win_off + s->win_len) {
		keep = (size_t)(s->win_off + s->win_len - at);
		memmove(s->win, s->win + (at - s->win_off), keep);
	}
	s->win_off = at;
	s->win_len = keep;
	size_t want = need > READAHEAD ? need : READAHEAD;
	if (want > s->win_cap)
		want = s->win_cap;
	if (want > s->end - at)
		want = (size_t)(s->end - at);
	while (s->win_len < want) {
		ssize_t n = pread(s->fd, s->win + s->win_len, want - s->win_len, (off_t)(at + s->win_len));
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return false;
		if (n == 0) {
			s->end = at + s->win_len;
			break;
		}
		s->win_len += (size_t)n;
	}
	return true;
}

static enum ct_read_status open_common(struct ct_stream *s)
{
	if (!fill(s, 0, CT_PREAMBLE_SIZE))
		return fail(s, CT_READ_TRUNCATED, "trace unreadable at byte %llu", 0);
	struct ct_reader pre;
	enum ct_read_status st = ct_reader_init(&pre, s->win, s->win_len);
	s->r = (struct ct_reader){ .version = pre.version, .status = st };
	if (st != CT_READ_OK) {
		/* a file of fewer bytes than the preamble is read whole: the message is the same */
		memcpy(s->r.error, pre.error, sizeof(s->r.error));
		return st;
	}
	s->next = s->good_end = pre.off;
	return CT_READ_OK;
}

enum ct_read_status ct_stream_open_fd(struct ct_stream *s, int fd, uint64_t limit)
{
	memset(s, 0, sizeof(*s));
	s->fd = fd;
	off_t size = lseek(fd, 0, SEEK_END);
	s->end = size < 0 ? 0 : (uint64_t)size;
	if (limit < s->end)
		s->end = limit;
	/* nothing past end is read: a small trace (a fleet's spool holds thousands) gets a small
	 * window, not 2 MiB each */
	s->win_cap = s->end < WINDOW_CAP ? (size_t)s->end : WINDOW_CAP;
	s->win = malloc(s->win_cap ? s->win_cap : 1);
	if (!s->win) {
		s->r.status = CT_READ_TRUNCATED;
		snprintf(s->r.error, sizeof(s->r.error), "out of memory");
		return s->r.status;
	}
	return open_common(s);
}

enum ct_read_status ct_stream_open_mem(struct ct_stream *s, const uint8_t *buf, size_t len)
{
	memset(s, 0, sizeof(*s));
	s->fd = -1;
	s->mem = buf;
	s->win = (uint8_t *)buf; /* read only: fill never writes into a buffer's window */
	s->win_len = s->win_cap = buf ? len : 0;
	s->end = s->win_len;
	return open_common(s);
}

void ct_stream_close(struct ct_stream *s)
{
	if (s->fd >= 0)
		free(s->win);
	s->win = NULL;
}

/* 8 bytes at file offset at, from the window or one small read. */
static bool read_u64_at(struct ct_stream *s, uint64_t at, uint64_t *v)
{
	uint8_t b[8];
	if (at >= s->win_off && at + 8 <= s->win_off + s->win_len) {
		*v = ct_get_le64(s->win + (at - s->win_off));
		return true;
	}
	if (s->fd < 0 || pread(s->fd, b, 8, (off_t)at) != 8)
		return false;
	*v = ct_get_le64(b);
	return true;
}

/* An OPS record at s->next of payload plen, wholly inside the stream: its header fields, its
 * ops' first and last start, and the stream moved past it. False to read it the usual way. */
static bool skip_ops_record(struct ct_stream *s, uint32_t plen, struct ct_record *rec)
{
	uint64_t at = s->next, payload = at + CT_RECORD_HEADER_SIZE;
	if (plen < OPS_BATCH_HEAD || !fill(s, at, CT_RECORD_HEADER_SIZE + OPS_BATCH_HEAD + 8) ||
	    s->win_off + s->win_len < payload + OPS_BATCH_HEAD)
		return false;
	const uint8_t *h = s->win + (payload - s->win_off);
	uint32_t count = ct_get_le32(h + 4);
	/* only a batch of the layouts this reader knows (ops, then one weight byte per op or not) is
	 * skipped: a damaged type or count field almost never matches, and is then read whole and
	 * caught by its CRC; a newer writer's longer batch is read whole too */
	uint64_t ops_bytes = (uint64_t)count * CT_OP_WIRE_SIZE;
	if (plen != OPS_BATCH_HEAD + ops_bytes && plen != OPS_BATCH_HEAD + ops_bytes + count)
		return false;
	uint64_t first = 0, last = 0;
	if (count &&
	    (!read_u64_at(s, payload + OPS_BATCH_HEAD, &first) ||
	     !read_u64_at(s, payload + OPS_BATCH_HEAD + (uint64_t)(count - 1) * CT_OP_WIRE_SIZE, &last)))
		return false;
	memset(rec, 0, sizeof(*rec));
	rec->type = CT_REC_OPS;
	rec->offset = at;
	rec->u.ops.tid = ct_get_le32(h);
	rec->u.ops.count = count;
	rec->u.ops.dropped = ct_get_le64(h + 8);
	s->skipped_at = at;
	s->skipped_first_ns = first;
	s->skipped_last_ns = last;
	s->next = s->good_end = at + CT_RECORD_HEADER_SIZE + plen + CT_RECORD_TRAILER_SIZE;
	s->r.records++;
	return true;
}

enum ct_read_status ct_stream_next(struct ct_stream *s, struct ct_record *rec, bool skip_ops)
{
	s->skipped_at = 0;
	while (s->r.status == CT_READ_OK) {
		if (s->next >= s->end) {
			s->r.status = CT_READ_EOF;
			break;
		}
		if (!fill(s, s->next, CT_RECORD_HEADER_SIZE))
			return fail(s, CT_READ_TRUNCATED,
				    "trace unreadable at byte %llu: everything before it was read",
				    (unsigned long long)s->next);
		uint64_t total = 0;
		if (s->win_off + s->win_len >= s->next + CT_RECORD_HEADER_SIZE) {
			const uint8_t *h = s->win + (s->next - s->win_off);
			uint32_t plen = ct_get_le32(h + 4);
			if (ct_get_le16(h) == CT_REC_OPS && skip_ops && ct_get_le16(h + 2) == 0 &&
			    plen <= CT_MAX_PAYLOAD &&
			    s->next + CT_RECORD_HEADER_SIZE + plen + CT_RECORD_TRAILER_SIZE <= s->end &&
			    skip_ops_record(s, plen, rec))
				return CT_READ_OK;
			total = plen <= CT_MAX_PAYLOAD
					? CT_RECORD_HEADER_SIZE + (uint64_t)plen + CT_RECORD_TRAILER_SIZE
					: CT_RECORD_HEADER_SIZE;
		}
		/* a record that runs past the end is read to the end: the reader tells a cut file
		 * from a damaged length by what follows inside the claimed span */
		if (total && !fill(s, s->next, (size_t)total))
			return fail(s, CT_READ_TRUNCATED,
				    "trace unreadable at byte %llu: everything before it was read",
				    (unsigned long long)s->next);
		s->r.buf = s->win;
		s->r.len = s->win_len;
		s->r.base = s->win_off;
		s->r.off = (size_t)(s->next - s->win_off);
		enum ct_read_status st = ct_reader_next_one(&s->r, rec);
		if (st != CT_READ_OK)
			return st;
		s->next = s->good_end = s->r.base + s->r.off;
		if (rec->type)
			return CT_READ_OK;
		/* a record type from a newer writer, passed over: on to the next */
	}
	return s->r.status;
}

const uint8_t *ct_stream_raw(const struct ct_stream *s, const struct ct_record *rec, size_t *len)
{
	if (s->skipped_at || rec->offset < s->win_off || rec->offset >= s->next)
		return NULL;
	*len = (size_t)(s->next - rec->offset);
	return s->win + (rec->offset - s->win_off);
}

enum ct_read_status ct_stream_load_skipped(struct ct_stream *s, struct ct_record *rec)
{
	uint64_t at = s->skipped_at;
	if (!at)
		return CT_READ_CORRUPT;
	size_t total = (size_t)(s->next - at);
	struct ct_reader one;
	if (!fill(s, at, total) || at < s->win_off || at + total > s->win_off + s->win_len)
		return CT_READ_TRUNCATED;
	return ct_decode_one(&one, s->win + (at - s->win_off), total, at, s->r.version, rec);
}
