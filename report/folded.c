/* SPDX-License-Identifier: MIT */
/*
 * folded.c - `cryptrace report --folded`: folded stacks for flamegraph.pl, one
 * "process;outer frame;...;inner frame;[path] weight" line per distinct stack. The frames are a
 * path's call site (its first context init), the leaf names the path, and the weight is the
 * path's bytes (default) or its wall time in ns, so the widest towers are where the crypto
 * work was set up. Identical stacks (the same role in several processes) are added up.
 */
#include "model.h"

#include <stdlib.h>
#include <string.h>

struct fold_line {
	char *stack;
	uint64_t weight;
};

struct fold_set {
	struct fold_line *v;
	size_t n, cap;
};

/* flamegraph.pl splits frames on ';' and the weight off at the last blank: keep both out. */
static void put_frame(char *buf, size_t cap, size_t *len, const char *s, size_t n)
{
	if (*len && *len + 1 < cap)
		buf[(*len)++] = ';';
	for (size_t i = 0; i < n && *len + 1 < cap; i++) {
		char c = s[i];
		buf[(*len)++] = c == ';' ? ':' : ((unsigned char)c < 0x20 || c == 0x7f) ? '?' : c;
	}
	buf[*len] = '\0';
}

static void fold_add(struct fold_set *set, const char *stack, uint64_t weight)
{
	for (size_t i = 0; i < set->n; i++)
		if (!strcmp(set->v[i].stack, stack)) {
			set->v[i].weight += weight;
			return;
		}
	if (!rp_grow((void **)&set->v, &set->cap, set->n, sizeof(*set->v)))
		return;
	char *copy = strdup(stack);
	if (!copy)
		return;
	set->v[set->n++] = (struct fold_line){ .stack = copy, .weight = weight };
}

static int cmp_line(const void *a, const void *b)
{
	return strcmp(((const struct fold_line *)a)->stack, ((const struct fold_line *)b)->stack);
}

static void fold_path(struct fold_set *set, const struct rp_proc *p, const struct rp_path *pp,
		      enum rp_folded_weight weight)
{
	uint64_t w = weight == RP_FOLD_TIME ? (pp->d.wall_known ? (uint64_t)(pp->d.wall_ns + 0.5) : 0)
					    : pp->st.bytes;
	if (!w)
		return;
	char stack[4096], leaf[256];
	size_t len = 0;
	stack[0] = '\0';
	put_frame(stack, sizeof(stack), &len, p->role, strlen(p->role));
	struct ct_str cs = pp->def.callsite;
	unsigned n = rp_str_nparts(cs, '\n');
	for (unsigned k = n; k > 0; k--) { /* recorded innermost first; folded is root first */
		struct ct_str f = rp_str_part(cs, '\n', k - 1);
		put_frame(stack, sizeof(stack), &len, f.p, f.len);
	}
	int ln = snprintf(leaf, sizeof(leaf), "[%s %.*s %.*s %s]", ct_api_name(pp->def.api),
			  (int)pp->def.impl.len, pp->def.impl.p, (int)pp->def.cipher.len, pp->def.cipher.p,
			  ct_dir_name(pp->def.dir));
	put_frame(stack, sizeof(stack), &len, leaf, ln > 0 ? (size_t)ln : 0);
	fold_add(set, stack, w);
}

void rp_print_folded(const struct rp_model *m, enum rp_folded_weight weight, FILE *out)
{
	struct fold_set set = { 0 };
	for (size_t i = 0; i < m->nprocs; i++) {
		const struct rp_proc *p = &m->procs[i];
		if (!rp_proc_shown(m, p))
			continue;
		for (size_t k = 0; k < p->npaths; k++)
			if (rp_path_selected(m, &p->paths[k]))
				fold_path(&set, p, &p->paths[k], weight);
	}
	if (set.n > 1)
		qsort(set.v, set.n, sizeof(*set.v), cmp_line);
	for (size_t i = 0; i < set.n; i++) {
		/* flamegraph.pl takes the last blank-separated field as the weight: no trailing blank */
		fprintf(out, "%s %llu\n", set.v[i].stack, (unsigned long long)set.v[i].weight);
		free(set.v[i].stack);
	}
	free(set.v);
}
