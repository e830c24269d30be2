/* SPDX-License-Identifier: MIT */
/*
 * folded.c - `cryptrace report --folded`: folded stacks for flamegraph.pl, one
 * "process;outer frame;...;inner frame;[path] weight" line per distinct stack. The frames are a
 * path's call site (its first context init), the leaf names the path, and the weight is the
 * path's bytes (default) or its wall time in ns, so the widest towers are where the crypto
 * work was set up. Identical stacks (the same role in several processes) are added up.
 *
 * Weighed by samples, the lines are the CPU profile's call stacks instead (tracer/profile.c
 * unwinds them): "process;root frame;...;leaf samples", a frame named by its function's symbol,
 * else "module+0x<function start>", and a function whose instructions are crypto code by its
 * class, "libcrypto.so.3:[SHA-256 SHA-NI]". A profile without stacks gives its leaves alone.
 */
#include "model.h"

#include <stdio.h>
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

/* A profile frame's name in a folded line: the leaf's by the class of its code when it is crypto
 * (that is what the flame graph is read for), a caller's by its symbol first (a caller that
 * dispatches to AES code may read the same tables and classify so), else its class. */
static int frame_label(const struct rp_profile_item *k, bool leaf, char *buf, size_t cap)
{
	bool named = k->function[0] && !strchr("+?(", k->function[0]);
	if (k->category[0] && (leaf || !named))
		return snprintf(buf, cap, "%s:[%s%s%s]", k->module, k->category, k->impl[0] ? " " : "",
				k->impl);
	if (!strcmp(k->function, "(PLT)"))
		return snprintf(buf, cap, "%s:(PLT)", k->module);
	if (k->function[0] == '+')
		return snprintf(buf, cap, "%s%s", k->module, k->function);
	if (k->function[0] == '?' || k->function[0] == '(')
		return snprintf(buf, cap, "%s:%s", k->module, k->function);
	return snprintf(buf, cap, "%s", k->function);
}

static void put_profile_frame(char *stack, size_t cap, size_t *len, struct rp_frame_names *nm, size_t mod,
			      uint64_t off, bool leaf)
{
	struct rp_profile_item k;
	char label[256];
	rp_frame_name(nm, mod, off, &k);
	int n = frame_label(&k, leaf, label, sizeof(label));
	put_frame(stack, cap, len, label,
		  n > 0 ? ((size_t)n < sizeof(label) ? (size_t)n : sizeof(label) - 1) : 0);
}

/* The process's sampled stacks, root first; its leaves alone when it has none. */
static void fold_profile(struct fold_set *set, const struct rp_proc *p)
{
	const struct rp_profile *pr = &p->prof;
	struct rp_frame_names *nm = rp_frame_names_new(pr);
	char stack[8192];
	size_t base_len = 0;
	stack[0] = '\0';
	put_frame(stack, sizeof(stack), &base_len, p->role, strlen(p->role));
	for (size_t r = 0; nm && r < pr->nstacks; r++) {
		const struct rp_profile_stackrec *sr = &pr->stacks[r];
		size_t at = 0;
		struct ct_stack st;
		while (ct_profile_stack_next(&sr->r, &at, &st)) {
			size_t len = base_len;
			stack[len] = '\0';
			for (uint16_t d = st.depth; d > 0; d--) { /* recorded innermost first */
				uint32_t mod;
				uint64_t off;
				ct_stack_frame_at(&st, d - 1, &mod, &off);
				put_profile_frame(stack, sizeof(stack), &len, nm, sr->mod_base + mod, off,
						  d == 1);
			}
			if (st.samples && st.depth)
				fold_add(set, stack, st.samples);
		}
	}
	for (size_t k = 0; nm && !pr->nstacks && k < pr->nmods; k++)
		for (uint32_t i = 0; i < pr->mods[k].count; i++) {
			uint64_t off;
			uint32_t n;
			size_t len = base_len;
			stack[len] = '\0';
			ct_profile_entry_at(&pr->mods[k], i, &off, &n);
			put_profile_frame(stack, sizeof(stack), &len, nm, k, off, true);
			fold_add(set, stack, n);
		}
	rp_frame_names_free(nm);
}

void rp_print_folded(const struct rp_model *m, enum rp_folded_weight weight, FILE *out)
{
	struct fold_set set = { 0 };
	for (size_t i = 0; i < m->nprocs; i++) {
		const struct rp_proc *p = &m->procs[i];
		if (!rp_proc_shown(m, p))
			continue;
		if (weight == RP_FOLD_SAMPLES) {
			if (p->prof.has)
				fold_profile(&set, p);
			continue;
		}
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
