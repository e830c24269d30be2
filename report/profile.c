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

#include "codegraph.h"
#include "codefile.h"
#include "pltcall.h"

/* ---- per process ------------------------------------------------------------------------- */

static struct rp_profile_item *find_item(struct rp_profile *pr, const struct rp_profile_item *key)
{
	for (size_t i = 0; i < pr->nitems; i++) {
		struct rp_profile_item *it = &pr->items[i];
		if (!strcmp(it->category, key->category) && !strcmp(it->impl, key->impl) &&
		    !strcmp(it->module, key->module) && !strcmp(it->function, key->function) &&
		    !strcmp(it->via, key->via) && rp_str_eq(it->path, key->path))
			return it;
	}
	return NULL;
}

static struct rp_profile_item *item_for(struct rp_profile *pr, size_t *cap, const struct rp_profile_item *key)
{
	struct rp_profile_item *found = find_item(pr, key);
	if (found)
		return found;
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

/* ---- naming a module's offsets ----------------------------------------------------------- */

/* One module's file, opened at its first offset, and the functions classified so far (a
 * function holds many sampled offsets). */
struct mod_names {
	const struct ct_profile *mod;
	bool tried, open;
	char base[64];
	struct rp_codefile e;
	/* each function classified once, with what its callers are (codegraph.c) */
	struct rp_code_file_class *fc;
};

struct rp_frame_names {
	struct mod_names *m;
	size_t n;
};

static void name_offset(struct mod_names *mn, uint64_t off, struct rp_profile_item *key)
{
	if (!mn->tried) {
		char path[4096];
		mn->tried = true;
		snprintf(path, sizeof(path), "%.*s", (int)mn->mod->module.len, mn->mod->module.p);
		const char *base = strrchr(path, '/');
		snprintf(mn->base, sizeof(mn->base), "%.63s", base ? base + 1 : path);
		mn->open = rp_codefile_open(&mn->e, path, mn->mod->build_id);
		if (mn->open)
			mn->fc = rp_code_file_class_new(&mn->e, mn->base);
	}
	*key = (struct rp_profile_item){ .samples = 0 };
	snprintf(key->module, sizeof(key->module), "%s", mn->base);
	key->path = mn->mod->module;
	uint64_t va = mn->open ? rp_codefile_off_to_vaddr(&mn->e, off) : UINT64_MAX;
	struct rp_code_fn fn;
	if (va != UINT64_MAX && rp_codefile_in_plt(&mn->e, va)) {
		snprintf(key->function, sizeof(key->function), "(PLT)");
	} else if (va != UINT64_MAX && mn->fc && rp_code_file_class_lookup(mn->fc, va, &fn)) {
		snprintf(key->category, sizeof(key->category), "%s", fn.category);
		snprintf(key->impl, sizeof(key->impl), "%s", fn.impl);
		if (fn.name)
			snprintf(key->function, sizeof(key->function), "%s", fn.name);
		else
			snprintf(key->function, sizeof(key->function), "+0x%llx",
				 (unsigned long long)fn.start);
	} else {
		snprintf(key->function, sizeof(key->function), "%s", mn->open ? "?" : "(file not readable)");
	}
}

struct rp_frame_names *rp_frame_names_new(const struct rp_profile *pr)
{
	struct rp_frame_names *nm = calloc(1, sizeof(*nm));
	if (nm && pr->nmods && !(nm->m = calloc(pr->nmods, sizeof(*nm->m)))) {
		free(nm);
		return NULL;
	}
	for (size_t i = 0; nm && i < pr->nmods; i++)
		nm->m[i].mod = &pr->mods[i];
	if (nm)
		nm->n = pr->nmods;
	return nm;
}

void rp_frame_name(struct rp_frame_names *nm, size_t mod, uint64_t off, struct rp_profile_item *key)
{
	if (mod < nm->n) {
		name_offset(&nm->m[mod], off, key);
		return;
	}
	*key = (struct rp_profile_item){ .samples = 0 };
	snprintf(key->module, sizeof(key->module), "?");
	snprintf(key->function, sizeof(key->function), "?");
}

void rp_frame_names_free(struct rp_frame_names *nm)
{
	if (!nm)
		return;
	for (size_t i = 0; i < nm->n; i++) {
		rp_code_file_class_free(nm->m[i].fc);
		if (nm->m[i].open)
			rp_codefile_close(&nm->m[i].e);
	}
	free(nm->m);
	free(nm);
}

/* ---- HMAC: a digest's samples whose stacks pass through an HMAC function ------------------ */

/* libcrypto's exported HMAC entry points (HMAC, HMAC_Update/Final/Init_ex, HMAC_CTX_copy,
 * PKCS5_PBKDF2_HMAC) and the EVP_MAC ones that run HMAC (EVP_Q_mac: HMAC()'s body in 3.x;
 * EVP_MAC_*: a SHA digest under EVP_MAC is HMAC, KMAC runs SHA-3). HMAC_Update and
 * EVP_MAC_update end in tail calls, so a stack may show only their caller: a caller without a
 * name of its own (borg's Cython HMAC_Update caller) is read for the function it called through
 * the PLT. */
static bool is_hmac_function(const char *f)
{
	return strstr(f, "HMAC") || !strncmp(f, "EVP_Q_mac", 9) || !strncmp(f, "EVP_MAC_", 8);
}

/* The imported function the caller frame (mod, off: its return address - 1) called. */
static bool frame_callee(struct rp_frame_names *nm, size_t mod, uint64_t off, char *buf, size_t cap)
{
	struct rp_profile_item k;
	if (mod >= nm->n)
		return false;
	name_offset(&nm->m[mod], off, &k); /* opens the file */
	uint64_t va = nm->m[mod].open ? rp_codefile_off_to_vaddr(&nm->m[mod].e, off + 1) : UINT64_MAX;
	return va != UINT64_MAX && rp_plt_callee(&nm->m[mod].e, va, buf, cap);
}

const char *rp_profile_item_label(const struct rp_profile_item *it, char *buf, size_t cap)
{
	if (!it->via[0])
		return it->category;
	size_t n = (size_t)snprintf(buf, cap, "%s-", it->via);
	for (const char *c = it->category; *c && n + 1 < cap; c++)
		if (*c != '-') /* HMAC-SHA256, as RFC 4868 names it */
			buf[n++] = *c;
	buf[n < cap ? n : cap - 1] = '\0';
	return buf;
}

/* Moves the samples of digest leaves whose stacks pass through HMAC to items "via HMAC". */
static void attribute_hmac(struct rp_profile *pr, size_t *cap)
{
	struct rp_frame_names *nm = pr->nstacks ? rp_frame_names_new(pr) : NULL;
	for (size_t r = 0; nm && r < pr->nstacks; r++) {
		const struct rp_profile_stackrec *sr = &pr->stacks[r];
		size_t at = 0;
		struct ct_stack st;
		while (ct_profile_stack_next(&sr->r, &at, &st)) {
			uint32_t mod;
			uint64_t off;
			struct rp_profile_item leaf, fr;
			if (!st.depth || !st.samples)
				continue;
			ct_stack_frame_at(&st, 0, &mod, &off);
			rp_frame_name(nm, sr->mod_base + mod, off, &leaf);
			if (strncmp(leaf.category, "SHA", 3) != 0)
				continue;
			bool hmac = false;
			for (uint16_t d = 1; d < st.depth && !hmac; d++) {
				char callee[128];
				ct_stack_frame_at(&st, d, &mod, &off);
				rp_frame_name(nm, sr->mod_base + mod, off, &fr);
				/* a tail-called HMAC function sits right above the digest's own frames */
				hmac = is_hmac_function(fr.function) ||
				       (d <= 4 && strchr("+?", fr.function[0]) &&
					frame_callee(nm, sr->mod_base + mod, off, callee, sizeof(callee)) &&
					is_hmac_function(callee));
			}
			struct rp_profile_item *plain = hmac ? find_item(pr, &leaf) : NULL;
			if (!plain)
				continue;
			uint64_t moved = plain->samples < st.samples ? plain->samples : st.samples;
			plain->samples -= moved;
			snprintf(leaf.via, sizeof(leaf.via), "HMAC");
			struct rp_profile_item *it = item_for(pr, cap, &leaf);
			if (it)
				it->samples += moved;
		}
	}
	rp_frame_names_free(nm);
	size_t k = 0; /* items whose samples all moved go */
	for (size_t i = 0; i < pr->nitems; i++)
		if (pr->items[i].samples)
			pr->items[k++] = pr->items[i];
	pr->nitems = k;
}

static void classify_module(struct rp_profile *pr, size_t *cap, const struct ct_profile *mod)
{
	struct mod_names mn = { .mod = mod };
	for (uint32_t i = 0; i < mod->count; i++) {
		uint64_t off;
		uint32_t n;
		ct_profile_entry_at(mod, i, &off, &n);
		struct rp_profile_item key;
		name_offset(&mn, off, &key);
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
	rp_code_file_class_free(mn.fc);
	if (mn.open)
		rp_codefile_close(&mn.e);
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
		attribute_hmac(pr, &cap);
		if (pr->nitems)
			qsort(pr->items, pr->nitems, sizeof(*pr->items), by_samples);
		rp_profile_time_index(pr);
		pr->crypto_samples = 0;
		for (size_t k = 0; k < pr->nitems; k++)
			if (pr->items[k].category[0])
				pr->crypto_samples += pr->items[k].samples;
	}
}

const char *const rp_profile_group_names[RP_PROFILE_GROUPS] = { "public key", "bulk", "digest", "other" };

const char *rp_profile_item_group(const struct rp_profile_item *it)
{
	return rp_code_group(it->category);
}

void rp_profile_group_samples(const struct rp_profile *pr, uint64_t n[RP_PROFILE_GROUPS])
{
	memset(n, 0, RP_PROFILE_GROUPS * sizeof(*n));
	for (size_t i = 0; i < pr->nitems; i++) {
		const char *g = rp_profile_item_group(&pr->items[i]);
		for (size_t k = 0; g[0] && k < RP_PROFILE_GROUPS; k++)
			if (!strcmp(g, rp_profile_group_names[k]) || k == RP_PROFILE_GROUPS - 1) {
				n[k] += pr->items[i].samples;
				break;
			}
	}
}
