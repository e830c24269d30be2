/* SPDX-License-Identifier: MIT */
/*
 * records.c - a process's records read again from its trace files (or the buffer it was loaded
 * from), file after file, through trace_stream.c's bounded window: what the timeline outputs and
 * the time window read instead of keeping the files in memory.
 */
#include "model.h"

#include <fcntl.h>
#include <unistd.h>

void rp_records_open(struct rp_records *it, const struct rp_proc *p)
{
	*it = (struct rp_records){ .p = p, .fd = -1 };
}

static void close_part(struct rp_records *it)
{
	if (it->open)
		ct_stream_close(&it->s);
	if (it->fd >= 0)
		close(it->fd);
	it->fd = -1;
	it->open = false;
}

void rp_records_close(struct rp_records *it)
{
	close_part(it);
}

static enum ct_read_status open_part(struct rp_records *it)
{
	const struct rp_proc *p = it->p;
	if (p->map) {
		it->open = true;
		return ct_stream_open_mem(&it->s, p->map, p->map_len);
	}
	const struct rp_trace_part *part = &p->parts[it->part];
	it->fd = open(part->file, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (it->fd < 0)
		return CT_READ_TRUNCATED;
	it->open = true;
	return ct_stream_open_fd(&it->s, it->fd, part->end);
}

enum ct_read_status rp_records_next(struct rp_records *it, struct ct_record *rec, bool skip_ops)
{
	size_t nparts = it->p->map ? 1 : it->p->nparts;
	while (it->part < nparts) {
		enum ct_read_status st = it->open ? CT_READ_OK : open_part(it);
		if (st == CT_READ_OK)
			st = ct_stream_next(&it->s, rec, skip_ops);
		if (st == CT_READ_OK)
			return st;
		close_part(it);
		/* a file's damage was reported when it was loaded: the next file continues */
		if (++it->part == nparts)
			return st;
	}
	return CT_READ_EOF;
}
