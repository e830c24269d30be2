/* SPDX-License-Identifier: MIT */
/*
 * profile.c - what the sampled code is, per process. The launcher's PROFILE records
 * (tracer/profile.c) give, per process and file, sample counts by file offset; each offset is put
 * in its function (codefile.c) and the function classified by its machine code (codeclass.c).
 */
#include "model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codeclass.h"
#include "codefile.h"

/* ---- per process ------------------------------------------------------------------------- */

static struct rp_profile_item *item_for(struct rp_profile *pr, size_t *cap, const struct rp_profile_item *key)
{
	for (size_t i = 0; i < pr->nitems; i++) {
		struct rp_profile_item *it = &pr->items[i];
		if (!strcmp(it->category, key->category) && !strcmp(it->impl, key->impl) &&
		    !strcmp(it->module, key->module) && !strcmp(it->function, key->function) &&
		    rp_str_eq(it->path, key->path))
			return it;
	}
	if (!rp_grow((void **)&pr->items, cap, pr->nitems, sizeof(*pr->items)))
		return NULL;
	struct rp_profile_item *it = &pr->items[pr->nitems++];
	*it = *key;
	it->samples = 0;
	return it;
}

static int by_samples(const void *a, const void *b)
{
	const struct rp_profile_item *x = a, *y = b;
	return x->samples < y->samples ? 1 : x->samples > y->samples ? -1 : strcmp(x->function, y->function);
}

static void classify_module(struct rp_profile *pr, size_t *cap, const struct ct_profile *mod)
{
	char path[4096];
	snprintf(path, sizeof(path), "%.*s", (int)mod->module.len, mod->module.p);
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	struct rp_codefile e;
	struct rp_code_consts k = { 0 };
	bool open = rp_codefile_open(&e, path, mod->build_id);
	if (open)
		rp_code_consts_find(&e, &k);
	/* the functions classified so far (a function holds many sampled offsets) */
	struct done {
		uint64_t start, end;
		struct rp_profile_item key;
	} *done = NULL;
	size_t ndone = 0, cap_done = 0;
	for (uint32_t i = 0; i < mod->count; i++) {
		uint64_t off;
		uint32_t n;
		ct_profile_entry_at(mod, i, &off, &n);
		struct rp_profile_item key = { .samples = 0 };
		snprintf(key.module, sizeof(key.module), "%.63s", base);
		key.path = mod->module;
		uint64_t va = open ? rp_codefile_off_to_vaddr(&e, off) : UINT64_MAX, start, end;
		const char *name = NULL;
		const struct done *d = NULL;
		for (size_t k = 0; k < ndone && !d && va != UINT64_MAX; k++)
			if (va - done[k].start < done[k].end - done[k].start)
				d = &done[k];
		if (d) {
			key = d->key;
		} else if (va != UINT64_MAX && rp_codefile_in_plt(&e, va)) {
			snprintf(key.function, sizeof(key.function), "(PLT)");
		} else if (va != UINT64_MAX && rp_codefile_function_at(&e, va, &start, &end, &name)) {
			rp_code_classify(&e, &k, start, end, name, base, key.category, sizeof(key.category),
					 key.impl, sizeof(key.impl));
			if (name)
				snprintf(key.function, sizeof(key.function), "%s", name);
			else
				snprintf(key.function, sizeof(key.function), "+0x%llx",
					 (unsigned long long)start);
			if (rp_grow((void **)&done, &cap_done, ndone, sizeof(*done)))
				done[ndone++] = (struct done){ start, end, key };
		} else {
			snprintf(key.function, sizeof(key.function), "%s",
				 open ? "?" : "(file not readable)");
		}
		struct rp_profile_item *it = item_for(pr, cap, &key);
		if (it)
			it->samples += n;
		if (key.category[0] && rp_grow((void **)&pr->crypto_offs, &pr->cap_crypto_offs,
					       pr->ncrypto_offs, sizeof(*pr->crypto_offs))) {
			struct rp_profile_offcat *o = &pr->crypto_offs[pr->ncrypto_offs++];
			o->path = mod->module;
			o->off = off;
			snprintf(o->category, sizeof(o->category), "%s", key.category);
		}
	}
	free(done);
	if (open)
		rp_codefile_close(&e);
}

void rp_profile_classify(struct rp_model *m)
{
	for (size_t i = 0; i < m->nprocs; i++) {
		struct rp_profile *pr = &m->procs[i].prof;
		if (!pr->has || pr->items)
			continue;
		size_t cap = 0;
		for (size_t k = 0; k < pr->nmods; k++)
			classify_module(pr, &cap, &pr->mods[k]);
		if (pr->nitems)
			qsort(pr->items, pr->nitems, sizeof(*pr->items), by_samples);
		rp_profile_time_index(pr);
		pr->crypto_samples = 0;
		for (size_t k = 0; k < pr->nitems; k++)
			if (pr->items[k].category[0])
				pr->crypto_samples += pr->items[k].samples;
	}
}
