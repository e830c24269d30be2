/* SPDX-License-Identifier: MIT */
/*
 * profile_time.c - a process's CPU profile over time: the PROFILE_TIME records (the launcher's
 * samples by time bin and file offset, tracer/profile.c) read against the offsets the profile
 * found in crypto code (rp_profile_classify), into bins of samples, crypto samples and samples per
 * crypto category: what the Perfetto output draws as counter tracks (perfetto.c).
 */
#include "model.h"

#include <stdlib.h>
#include <string.h>

static int cmp_offcat(const void *a, const void *b)
{
	const struct rp_profile_offcat *x = a, *y = b;
	size_t n = x->path.len < y->path.len ? x->path.len : y->path.len;
	int c = n ? memcmp(x->path.p, y->path.p, n) : 0;
	if (c)
		return c;
	if (x->path.len != y->path.len)
		return x->path.len < y->path.len ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;
}

void rp_profile_time_index(struct rp_profile *pr)
{
	if (pr->ncrypto_offs > 1)
		qsort(pr->crypto_offs, pr->ncrypto_offs, sizeof(*pr->crypto_offs), cmp_offcat);
}

/* The crypto category of a sampled offset, NULL when its code is not crypto. */
static const char *category_at(const struct rp_profile *pr, struct ct_str path, uint64_t off)
{
	if (!pr->ncrypto_offs)
		return NULL;
	struct rp_profile_offcat key = { .path = path, .off = off };
	const struct rp_profile_offcat *o =
		bsearch(&key, pr->crypto_offs, pr->ncrypto_offs, sizeof(*pr->crypto_offs), cmp_offcat);
	return o ? o->category : NULL;
}

struct sample_at {
	uint64_t start_ns; /* the bin's, CLOCK_MONOTONIC */
	int cat;           /* index into the categories; -1: not crypto, -2: crypto, no room */
	uint32_t n;
};

static int cmp_sample_at(const void *a, const void *b)
{
	const struct sample_at *x = a, *y = b;
	return x->start_ns < y->start_ns ? -1 : x->start_ns > y->start_ns;
}

size_t rp_profile_timeline(const struct rp_profile *pr, struct rp_profile_bin **out, const char **cats,
			   size_t *ncats)
{
	*out = NULL;
	*ncats = 0;
	size_t total = 0;
	for (size_t k = 0; k < pr->ntimes; k++)
		total += pr->times[k].count;
	if (!total)
		return 0;
	struct sample_at *s = malloc(total * sizeof(*s));
	if (!s)
		return 0;
	size_t n = 0;
	uint64_t width = 0;
	for (size_t k = 0; k < pr->ntimes; k++) {
		const struct ct_profile_time *t = &pr->times[k];
		uint64_t w = (uint64_t)t->bin_us * 1000u;
		if (w > width)
			width = w; /* records of one run share it; another's: the widest bins hold both */
		for (uint32_t i = 0; i < t->count; i++) {
			uint32_t bin, cnt;
			uint64_t off;
			ct_profile_time_at(t, i, &bin, &off, &cnt);
			const char *c = category_at(pr, t->module, off);
			int ci = -1;
			if (c) {
				for (size_t j = 0; j < *ncats && ci < 0; j++)
					if (!strcmp(cats[j], c))
						ci = (int)j;
				if (ci < 0 && *ncats < RP_PROFILE_TIME_CATS) {
					cats[*ncats] = c;
					ci = (int)(*ncats)++;
				}
				if (ci < 0)
					ci = -2; /* crypto, in a category past the tracks' room */
			}
			s[n++] = (struct sample_at){ t->start_mono_ns + (uint64_t)bin * w, ci, cnt };
		}
	}
	qsort(s, n, sizeof(*s), cmp_sample_at);
	/* into bins of the widest width, from the first sample's bin start */
	uint64_t t0 = s[0].start_ns;
	struct rp_profile_bin *bins = NULL;
	size_t nb = 0, cap = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t start = t0 + (s[i].start_ns - t0) / width * width;
		if (!nb || bins[nb - 1].start_mono_ns != start) {
			if (!rp_grow((void **)&bins, &cap, nb, sizeof(*bins)))
				break;
			bins[nb++] = (struct rp_profile_bin){ .start_mono_ns = start, .dur_ns = width };
		}
		struct rp_profile_bin *b = &bins[nb - 1];
		b->samples += s[i].n;
		if (s[i].cat != -1)
			b->crypto += s[i].n;
		if (s[i].cat >= 0)
			b->cat[s[i].cat] += s[i].n;
	}
	free(s);
	*out = bins;
	return nb;
}
