/* SPDX-License-Identifier: MIT */
/*
 * compare_figures.c - the runs of `cryptrace compare` put together: the rows (every cipher and
 * direction any run saw, busiest first), and per row and route the median and min-max over the
 * rounds of wall and CPU throughput, calls, and the ratio to the first route's wall throughput
 * in the same round (rounds are interleaved, so a ratio compares runs made side by side).
 */
#include <stdlib.h>
#include <string.h>

#include "compare.h"

struct cmp_run *cmp_run_at(const struct cmp_state *s, int round, int route)
{
	return &s->runs[round * s->o->nroutes + route];
}

struct cmp_fig *cmp_find_fig(const struct cmp_run *r, const char *cipher, unsigned dir)
{
	for (size_t i = 0; i < r->nfigs; i++)
		if (r->figs[i].dir == dir && !strcmp(r->figs[i].cipher, cipher))
			return &r->figs[i];
	return NULL;
}

/* The figure of row k in round i under route r, or NULL. */
static const struct cmp_fig *key_fig(const struct cmp_state *s, int i, int r, const struct cmp_key *k)
{
	return cmp_find_fig(cmp_run_at(s, i, r), k->cipher, k->dir);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static struct stat3 stat_of(double *v, int n)
{
	struct stat3 s = { 0 };

	if (n <= 0)
		return s;
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	s.known = true;
	s.min = v[0];
	s.max = v[n - 1];
	s.med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	return s;
}

static int cmp_key_weight(const void *a, const void *b)
{
	const struct cmp_key *x = a, *y = b;

	return x->weight < y->weight ? 1 : x->weight > y->weight ? -1 : strcmp(x->cipher, y->cipher);
}

void cmp_collect_keys(struct cmp_state *s)
{
	int nruns = s->o->rounds * s->o->nroutes;

	for (int i = 0; i < nruns; i++) {
		const struct cmp_run *r = &s->runs[i];

		for (size_t j = 0; j < r->nfigs; j++) {
			const struct cmp_fig *f = &r->figs[j];
			struct cmp_key *k = NULL;

			for (size_t q = 0; q < s->nkeys && !k; q++)
				if (s->keys[q].dir == f->dir && !strcmp(s->keys[q].cipher, f->cipher))
					k = &s->keys[q];
			if (!k) {
				struct cmp_key *grown = realloc(s->keys, (s->nkeys + 1) * sizeof(*grown));

				if (!grown)
					continue;
				s->keys = grown;
				k = &s->keys[s->nkeys++];
				memset(k, 0, sizeof(*k));
				snprintf(k->cipher, sizeof(k->cipher), "%s", f->cipher);
				k->dir = f->dir;
			}
			if (f->bytes > k->weight)
				k->weight = f->bytes;
		}
	}
	if (s->nkeys > 1)
		qsort(s->keys, s->nkeys, sizeof(*s->keys), cmp_key_weight);
	/* Paths that moved under 0.1% of the busiest one's bytes (DRBG, key setup) are noise in a
	 * comparison; they stay in the traces and are counted as hidden. */
	size_t keep = 0;

	for (size_t i = 0; i < s->nkeys; i++)
		if (keep < CMP_MAX_ROWS && s->keys[i].weight * 1000 >= s->keys[0].weight)
			keep++;
	s->hidden = (int)(s->nkeys - keep);
	s->nkeys = keep;
}

void cmp_cell_of(const struct cmp_state *s, const struct cmp_key *k, int bucket, int route,
		 struct cmp_cell *c)
{
	double wall[CMP_MAX_ROUNDS], cpu[CMP_MAX_ROUNDS], calls[CMP_MAX_ROUNDS];
	double ratio[CMP_MAX_ROUNDS];
	int nw = 0, nc = 0, nn = 0, nr = 0;

	memset(c, 0, sizeof(*c));
	for (int i = 0; i < s->o->rounds; i++) {
		const struct cmp_fig *f = key_fig(s, i, route, k), *f0 = key_fig(s, i, 0, k);

		if (!f)
			continue;
		c->present = true;
		if (!c->impl[0])
			snprintf(c->impl, sizeof(c->impl), "%s", f->impl);
		c->routed |= f->routed;

		double bytes = (double)(bucket < 0 ? f->bytes : f->bbytes[bucket]);
		double wns = bucket < 0 ? f->wall_ns : f->bwall_ns[bucket];

		calls[nn++] = (double)(bucket < 0 ? f->calls : f->bcalls[bucket]);
		if (f->wall_known && wns > 0 && bytes > 0) {
			wall[nw++] = bytes * 1e9 / wns;
			if (f0 && f0->wall_known) {
				double b0 = (double)(bucket < 0 ? f0->bytes : f0->bbytes[bucket]);
				double w0 = bucket < 0 ? f0->wall_ns : f0->bwall_ns[bucket];

				if (b0 > 0 && w0 > 0)
					ratio[nr++] = (bytes / wns) / (b0 / w0);
			}
		}
		if (bucket < 0 && f->cpu_known && f->cpu_ns > 0 && bytes > 0)
			cpu[nc++] = bytes * 1e9 / f->cpu_ns;
	}
	c->wall_bps = stat_of(wall, nw);
	c->cpu_bps = stat_of(cpu, nc);
	c->calls = stat_of(calls, nn);
	c->ratio = stat_of(ratio, nr);
}

bool cmp_busiest_buckets(const struct cmp_state *s, const struct cmp_key *k, bool *used)
{
	bool any = false;

	for (int i = 0; i < s->o->rounds; i++) {
		for (int r = 0; r < s->o->nroutes; r++) {
			const struct cmp_fig *f = key_fig(s, i, r, k);

			for (unsigned b = 0; f && b < CT_SIZE_BUCKETS; b++) {
				if (f->bcalls[b]) {
					used[b] = true;
					any = true;
				}
			}
		}
	}
	return any;
}

double cmp_median_elapsed(const struct cmp_state *s, int route)
{
	double v[CMP_MAX_ROUNDS];

	for (int i = 0; i < s->o->rounds; i++)
		v[i] = cmp_run_at(s, i, route)->elapsed_s;
	return stat_of(v, s->o->rounds).med;
}
