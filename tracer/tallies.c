/* SPDX-License-Identifier: MIT */
/*
 * tallies.c - the profile's sample counts and its timeline's bins (tallies.h says what they are
 * for).
 */
#include "tallies.h"

#include <stdlib.h>

uint64_t ct_tally_hash(uint32_t image, uint32_t file, uint64_t off)
{
	uint64_t h = off * 0x9e3779b97f4a7c15ull ^ ((uint64_t)image << 32 | file) * 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 29);
}

static size_t tally_slot(const struct tally *t, size_t cap, uint32_t image, uint32_t file, uint64_t off,
			 uint32_t bin)
{
	size_t j = (ct_tally_hash(image, file, off) ^ bin * 0x9e3779b97f4a7c15ull) & (cap - 1);
	while (t[j].n && !(t[j].image == image && t[j].file == file && t[j].off == off && t[j].bin == bin))
		j = (j + 1) & (cap - 1);
	return j;
}

bool ct_tallies_rebuild(struct tallies *ts, size_t cap, unsigned shift)
{
	struct tally *t = calloc(cap, sizeof(*t));
	if (!t)
		return false;
	size_t used = 0;
	for (size_t i = 0; i < ts->cap; i++) {
		struct tally o = ts->t[i];
		if (!o.n)
			continue;
		o.bin >>= shift;
		size_t j = tally_slot(t, cap, o.image, o.file, o.off, o.bin);
		if (!t[j].n) {
			t[j] = o;
			used++;
		} else {
			t[j].n += o.n;
		}
	}
	free(ts->t);
	*ts = (struct tallies){ t, cap, used };
	return true;
}

bool ct_tallies_add(struct tallies *ts, uint32_t image, uint32_t file, uint64_t off, uint32_t bin,
		    size_t max_cap)
{
	if (ts->used * 2 >= ts->cap &&
	    ((ts->cap && 2 * ts->cap > max_cap) || !ct_tallies_rebuild(ts, ts->cap ? 2 * ts->cap : 4096, 0)))
		return false;
	size_t j = tally_slot(ts->t, ts->cap, image, file, off, bin);
	if (!ts->t[j].n) {
		ts->t[j] = (struct tally){ .image = image, .file = file, .off = off, .bin = bin };
		ts->used++;
	}
	ts->t[j].n++;
	return true;
}

void ct_timeline_add(struct timeline *t, uint32_t image, uint32_t file, uint64_t off, uint64_t ns)
{
	if (!t->bin_ns) {
		t->start_ns = ns;
		t->bin_ns = TL_BIN_NS;
	}
	while (t->c.used + 1 >= TL_MAX_ENTRIES && t->bin_ns < TL_BIN_MAX_NS) {
		if (!ct_tallies_rebuild(&t->c, t->c.cap, 1))
			break;
		t->bin_ns <<= 1;
	}
	uint32_t bin = (uint32_t)((ns > t->start_ns ? ns - t->start_ns : 0) / t->bin_ns);
	if (!ct_tallies_add(&t->c, image, file, off, bin, 2 * TL_MAX_ENTRIES))
		t->left_out++;
}
