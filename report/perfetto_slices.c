/* SPDX-License-Identifier: MIT */
/*
 * perfetto_slices.c - the slicing rule of `report --perfetto` (perfetto_slices.h), the ladder of
 * resolutions, the track table, and --resolution's parser and printer (views.h).
 */
#include "perfetto_slices.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "views.h"

static const uint64_t rung_ns[PF_RUNGS] = {
	0ull,          1ull,          2ull,          5ull,          10ull,        20ull,        50ull,
	100ull,        200ull,        500ull,        1000ull,       2000ull,      5000ull,      10000ull,
	20000ull,      50000ull,      100000ull,     200000ull,     500000ull,    1000000ull,   2000000ull,
	5000000ull,    10000000ull,   20000000ull,   50000000ull,   100000000ull, 200000000ull, 500000000ull,
	1000000000ull, 2000000000ull, 5000000000ull, 10000000000ull
};

uint64_t pf_rung_ns(unsigned k)
{
	return k < PF_RUNGS ? rung_ns[k] : UINT64_MAX;
}

void pf_slice_start(struct pf_slice *s, const struct ct_op *op)
{
	uint64_t w = op->weight ? op->weight : 1;
	*s = (struct pf_slice){
		.open = true,
		.anchor_ns = op->start_mono_ns,
		.start_ns = op->start_mono_ns,
		.end_ns = op->start_mono_ns + op->dur_ns,
		.ops = w,
		.kept = 1,
		.bytes = (uint64_t)op->bytes * w,
	};
}

/* An operation that starts before the slice ended (a nested call, or clocks that disagree) joins
 * it whatever the resolution: the next slice then starts at or after this one's end. */
static bool joins(uint64_t anchor, uint64_t end, uint64_t start, uint64_t res_ns)
{
	return start < end || start - anchor < res_ns;
}

bool pf_slice_add(struct pf_slice *s, const struct ct_op *op, uint64_t res_ns)
{
	if (!s->open) {
		pf_slice_start(s, op);
		return true;
	}
	if (!joins(s->anchor_ns, s->end_ns, op->start_mono_ns, res_ns))
		return false;
	uint64_t w = op->weight ? op->weight : 1, end = op->start_mono_ns + op->dur_ns;
	if (op->start_mono_ns < s->start_ns)
		s->start_ns = op->start_mono_ns;
	if (end > s->end_ns)
		s->end_ns = end;
	s->ops += w;
	s->kept++;
	s->bytes += (uint64_t)op->bytes * w;
	return true;
}

void pf_track_count(struct pf_track *t, const struct ct_op *op)
{
	uint64_t start = op->start_mono_ns, end = start + op->dur_ns;
	bool first = !t->all.open;
	if (!pf_slice_add(&t->all, op, UINT64_MAX))
		pf_slice_start(&t->all, op); /* not reached: everything joins at an infinite resolution */
	for (unsigned k = 0; k < PF_RUNGS; k++) {
		if (first || !joins(t->anchor[k], t->end[k], start, rung_ns[k])) {
			t->anchor[k] = start;
			t->end[k] = end;
			t->slices[k]++;
		} else if (end > t->end[k]) {
			t->end[k] = end;
		}
	}
}

static size_t slot_of(uint32_t tid, uint32_t path_id, size_t nslots)
{
	uint64_t h = ((uint64_t)tid << 32 | path_id) * 0x9e3779b97f4a7c15ull;
	return (size_t)(h >> 32) & (nslots - 1);
}

static bool rehash(struct pf_tracks *ts, size_t nslots)
{
	uint32_t *slot = calloc(nslots, sizeof(*slot));
	if (!slot)
		return false;
	for (size_t i = 0; i < ts->n; i++) {
		size_t s = slot_of(ts->t[i].tid, ts->t[i].path_id, nslots);
		while (slot[s])
			s = (s + 1) & (nslots - 1);
		slot[s] = (uint32_t)(i + 1);
	}
	free(ts->slot);
	ts->slot = slot;
	ts->nslots = nslots;
	return true;
}

struct pf_track *pf_track_of(struct pf_tracks *ts, uint32_t tid, uint32_t path_id)
{
	if (ts->nslots) {
		size_t s = slot_of(tid, path_id, ts->nslots);
		for (; ts->slot[s]; s = (s + 1) & (ts->nslots - 1)) {
			struct pf_track *t = &ts->t[ts->slot[s] - 1];
			if (t->tid == tid && t->path_id == path_id)
				return t;
		}
	}
	if (ts->n >= UINT32_MAX - 1)
		return NULL;
	/* at most half full, so that a probe ends soon */
	if ((ts->n + 1) * 2 > ts->nslots && !rehash(ts, ts->nslots ? ts->nslots * 2 : 64))
		return NULL;
	if (!rp_grow((void **)&ts->t, &ts->cap, ts->n, sizeof(*ts->t)))
		return NULL;
	struct pf_track *t = &ts->t[ts->n++];
	*t = (struct pf_track){ .tid = tid, .path_id = path_id };
	size_t s = slot_of(tid, path_id, ts->nslots);
	while (ts->slot[s])
		s = (s + 1) & (ts->nslots - 1);
	ts->slot[s] = (uint32_t)ts->n;
	return t;
}

void pf_tracks_free(struct pf_tracks *ts)
{
	for (size_t i = 0; i < ts->n; i++) {
		free(ts->t[i].head);
		free(ts->t[i].tail);
	}
	free(ts->t);
	free(ts->slot);
	*ts = (struct pf_tracks){ 0 };
}

static const struct {
	const char *name;
	uint64_t ns;
} units[] = { { "ns", 1 }, { "us", 1000 }, { "ms", 1000000 }, { "s", 1000000000 } };

bool rp_parse_resolution(const char *s, bool *is_auto, uint64_t *ns)
{
	if (!s || !*s)
		return false;
	if (!strcmp(s, "auto")) {
		*is_auto = true;
		*ns = 0;
		return true;
	}
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || end == s || !(v >= 0) || *s == '-' || *s == '+')
		return false;
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(end, units[i].name))
			continue;
		double n = v * (double)units[i].ns;
		/* whole nanoseconds, at most a day: a timeline finer or coarser says nothing more */
		if (n > 86400e9 || n != (double)(int64_t)n)
			return false;
		*is_auto = false;
		*ns = (uint64_t)n;
		return true;
	}
	return false;
}

void rp_format_resolution(uint64_t ns, char *buf, size_t cap)
{
	size_t u = sizeof(units) / sizeof(units[0]);
	while (u > 1 && (ns % units[u - 1].ns || !ns))
		u--;
	snprintf(buf, cap, "%llu%s", (unsigned long long)(ns / units[u - 1].ns), units[u - 1].name);
}
