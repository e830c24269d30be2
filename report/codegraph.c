/* SPDX-License-Identifier: MIT */
/*
 * codegraph.c - a file's functions classified with their neighbours. Some code has nothing of
 * its own to name it: a helper the compiler did not inline (sntrup761's division by q, 70 % of
 * ssh's key exchange, takes q in a register; the ladder's field multiply) or a perlasm function
 * that ends in another's shared reduction (x25519_fe64_mul). Each function is classified once
 * (codeclass.c: code, then symbol); one it did not name takes the category of the tail it jumps
 * into, else the category every direct caller in the file has.
 */
#include "codegraph.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

enum { FN_UNKNOWN, FN_BUSY, FN_DONE };

struct fn_entry {
	uint64_t start, end;
	const char *name;
	bool global; /* an exported (or global) symbol: called from outside, callers say nothing */
	uint8_t state;
	char category[24], impl[40];
};

struct call_site {
	uint64_t target, site; /* a function's first byte, the call instruction's vaddr */
};

struct rp_code_file_class {
	const struct rp_codefile *f;
	char module[64];
	struct rp_code_consts k;
	struct fn_entry *fns; /* the functions looked at so far, sorted by start */
	size_t nfns, cap_fns;
	struct call_site *calls; /* sorted by target; built at the first question about callers */
	size_t ncalls;
	bool calls_built;
};

/* Callers are followed this deep: sntrup761's division helper sits two calls below the
 * function that holds q. */
#define CALLER_DEPTH 3

static int by_target(const void *a, const void *b)
{
	const struct call_site *x = a, *y = b;
	return x->target < y->target   ? -1
	       : x->target > y->target ? 1
				       : (x->site > y->site) - (x->site < y->site);
}

/* The first function in fns whose start is > va. */
static size_t fn_after(const struct rp_code_file_class *fc, uint64_t va)
{
	size_t lo = 0, hi = fc->nfns;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (fc->fns[mid].start <= va)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static bool symbol_global(const struct rp_codefile *f, uint64_t start)
{
	Elf64_Sym y;
	for (size_t i = 0; rp_elfsyms_get(&f->syms, i, &y); i++)
		if (ELF64_ST_TYPE(y.st_info) == STT_FUNC && y.st_shndx != SHN_UNDEF && y.st_value == start &&
		    ELF64_ST_BIND(y.st_info) != STB_LOCAL)
			return true;
	return false;
}

/* The index in fns of the function holding va (added when new), or SIZE_MAX when no symbol or
 * FDE covers va. */
static size_t fn_get(struct rp_code_file_class *fc, uint64_t va)
{
	size_t at = fn_after(fc, va);
	if (at && va < fc->fns[at - 1].end)
		return at - 1;
	struct fn_entry fn = { .state = FN_UNKNOWN };
	if (!rp_codefile_function_at(fc->f, va, &fn.start, &fn.end, &fn.name) ||
	    !rp_grow((void **)&fc->fns, &fc->cap_fns, fc->nfns, sizeof(*fc->fns)))
		return SIZE_MAX;
	fn.global = fn.name && symbol_global(fc->f, fn.start);
	at = fn_after(fc, fn.start);
	memmove(&fc->fns[at + 1], &fc->fns[at], (fc->nfns - at) * sizeof(*fc->fns));
	fc->fns[at] = fn;
	fc->nfns++;
	return at;
}

struct rp_code_file_class *rp_code_file_class_new(const struct rp_codefile *f, const char *module)
{
	struct rp_code_file_class *fc = calloc(1, sizeof(*fc));
	if (!fc)
		return NULL;
	fc->f = f;
	snprintf(fc->module, sizeof(fc->module), "%s", module);
	rp_code_consts_find(f, &fc->k);
	return fc;
}

/* The start of FDE i of .eh_frame_hdr's table (sorted by start). */
static uint64_t fde_start(const struct rp_codefile *f, uint32_t i)
{
	return f->hdr_vaddr + (int64_t)rp_codefile_s32(f, f->hdr_table + 8 * (size_t)i);
}

static bool is_fde_start(const struct rp_codefile *f, uint64_t va)
{
	uint32_t lo = 0, hi = f->hdr_count;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		uint64_t s = fde_start(f, mid);
		if (s == va)
			return true;
		if (s < va)
			lo = mid + 1;
		else
			hi = mid;
	}
	return false;
}

/* Every direct call (E8) and jump (E9, a tail call) of the file's executable segments into a
 * function's first byte (an FDE's start). A byte E8 inside another instruction that happens to
 * point at a function start adds a false caller: that can only stop a function from inheriting. */
static void build_calls(struct rp_code_file_class *fc)
{
	const struct rp_codefile *f = fc->f;
	size_t cap = 0;
	fc->calls_built = true;
	if (!f->hdr_table)
		return;
	for (unsigned s = 0; s < f->phnum; s++) {
		const Elf64_Phdr *ph = &f->ph[s];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & PF_X) ||
		    !rp_image_in(&f->im, ph->p_offset, ph->p_filesz))
			continue;
		const uint8_t *p = f->im.p + ph->p_offset;
		for (uint64_t i = 0; i + 5 <= ph->p_filesz; i++) {
			if (p[i] != 0xe8 && p[i] != 0xe9)
				continue;
			uint64_t site = ph->p_vaddr + i, target = site + 5 + (int64_t)rp_le32s(p + i + 1);
			if (!is_fde_start(f, target))
				continue;
			if (!rp_grow((void **)&fc->calls, &cap, fc->ncalls, sizeof(*fc->calls)))
				return;
			fc->calls[fc->ncalls++] = (struct call_site){ target, site };
		}
	}
	if (fc->ncalls)
		qsort(fc->calls, fc->ncalls, sizeof(*fc->calls), by_target);
}

static void classify_fn(struct rp_code_file_class *fc, size_t i, int depth);

/* A function its code and symbol did not name: the category every direct caller has. */
static void classify_by_callers(struct rp_code_file_class *fc, size_t i, int depth)
{
	if (fc->fns[i].global || depth <= 0)
		return;
	if (!fc->calls_built)
		build_calls(fc);
	uint64_t start = fc->fns[i].start;
	size_t lo = 0, hi = fc->ncalls;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (fc->calls[mid].target < start)
			lo = mid + 1;
		else
			hi = mid;
	}
	char cat[24] = "", impl[40] = "";
	bool any = false;
	for (size_t c = lo; c < fc->ncalls && fc->calls[c].target == start; c++) {
		size_t j = fn_get(fc, fc->calls[c].site); /* may move fns: indexes only */
		if (j == SIZE_MAX)
			return; /* a call from code no function holds */
		i = fn_after(fc, start) - 1;
		if (j == i)
			continue; /* recursion */
		uint64_t caller_start = fc->fns[j].start;
		classify_fn(fc, j, depth - 1);
		const struct fn_entry *caller = &fc->fns[fn_after(fc, caller_start) - 1];
		if (!caller->category[0] || (any && strcmp(cat, caller->category)))
			return;
		if (!any)
			snprintf(impl, sizeof(impl), "%s", caller->impl);
		else if (strcmp(impl, caller->impl))
			impl[0] = 0;
		snprintf(cat, sizeof(cat), "%s", caller->category);
		any = true;
	}
	if (!any)
		return;
	i = fn_after(fc, start) - 1;
	snprintf(fc->fns[i].category, sizeof(fc->fns[i].category), "%s", cat);
	snprintf(fc->fns[i].impl, sizeof(fc->fns[i].impl), "%s", impl);
}

/* A function that ends by jumping into the middle of another shares that one's tail (perlasm's
 * shared reductions: x25519_fe64_mul ends in fe64_sqr's, fe51_mul in fe51_sqr's): of its
 * category. Only a JMP rel32 that is the function's last instruction counts. */
static bool classify_by_tail(struct rp_code_file_class *fc, size_t i, int depth)
{
	const struct fn_entry *fn = &fc->fns[i];
	uint64_t start = fn->start, so = rp_codefile_vaddr_to_off(fc->f, fn->end - 5);
	if (depth <= 0 || fn->end - fn->start < 5 || so == UINT64_MAX || !rp_image_in(&fc->f->im, so, 5) ||
	    fc->f->im.p[so] != 0xe9)
		return false;
	uint64_t target = fn->end + (int64_t)rp_le32s(fc->f->im.p + so + 1);
	size_t j = fn_get(fc, target);
	if (j == SIZE_MAX || fc->fns[j].start == target || fc->fns[j].start == start)
		return false;
	uint64_t tail_start = fc->fns[j].start;
	classify_fn(fc, j, depth - 1);
	const struct fn_entry *tail = &fc->fns[fn_after(fc, tail_start) - 1];
	struct fn_entry *me = &fc->fns[fn_after(fc, start) - 1];
	if (!tail->category[0])
		return false;
	if (me != tail) {
		memcpy(me->category, tail->category, sizeof(me->category));
		memcpy(me->impl, tail->impl, sizeof(me->impl));
	}
	return true;
}

static void classify_fn(struct rp_code_file_class *fc, size_t i, int depth)
{
	struct fn_entry *fn = &fc->fns[i];
	if (fn->state != FN_UNKNOWN)
		return; /* done, or on the way (a cycle of calls) */
	uint64_t start = fn->start;
	fn->state = FN_BUSY;
	bool coded = rp_code_classify(fc->f, &fc->k, fn->start, fn->end, fn->name, fc->module, fn->category,
				      sizeof(fn->category), fn->impl, sizeof(fn->impl));
	/* "bignum" is what multiply-and-carry code is when nothing names it better: a tail shared
	 * with Curve25519 or P-256 code does */
	if (!coded || !strcmp(fn->category, "bignum")) {
		char cat[sizeof(fn->category)], impl[sizeof(fn->impl)];
		memcpy(cat, fn->category, sizeof(cat));
		memcpy(impl, fn->impl, sizeof(impl));
		bool tail = classify_by_tail(fc, i, depth);
		fn = &fc->fns[fn_after(fc, start) - 1];
		if (coded && (!tail || !strcmp(fn->category, "bignum"))) {
			memcpy(fn->category, cat, sizeof(cat));
			memcpy(fn->impl, impl, sizeof(impl));
		} else if (!coded && !tail) {
			/* the tail's lookup may have added functions before this one: its index anew */
			classify_by_callers(fc, fn_after(fc, start) - 1, depth);
		}
	}
	fn = &fc->fns[fn_after(fc, start) - 1];
	/* an answer found below full depth may be short of what full depth finds: asked again */
	fn->state = depth == CALLER_DEPTH || fn->category[0] ? FN_DONE : FN_UNKNOWN;
}

size_t rp_code_file_class_count(const struct rp_code_file_class *fc)
{
	return (fc->f->hdr_table ? fc->f->hdr_count : 0) + fc->f->syms.nsyms;
}

bool rp_code_file_class_at(struct rp_code_file_class *fc, size_t i, struct rp_code_fn *out)
{
	const struct rp_codefile *f = fc->f;
	size_t nfde = f->hdr_table ? f->hdr_count : 0;
	if (i < nfde)
		return rp_code_file_class_lookup(fc, fde_start(f, (uint32_t)i), out);
	Elf64_Sym y;
	memset(out, 0, sizeof(*out));
	return rp_elfsyms_get(&f->syms, i - nfde, &y) && ELF64_ST_TYPE(y.st_info) == STT_FUNC &&
	       y.st_shndx != SHN_UNDEF && y.st_size && rp_code_file_class_lookup(fc, y.st_value, out) &&
	       out->start == y.st_value;
}

bool rp_code_file_class_lookup(struct rp_code_file_class *fc, uint64_t va, struct rp_code_fn *out)
{
	memset(out, 0, sizeof(*out));
	size_t i = fn_get(fc, va);
	if (i == SIZE_MAX)
		return false;
	uint64_t start = fc->fns[i].start;
	classify_fn(fc, i, CALLER_DEPTH);
	const struct fn_entry *fn = &fc->fns[fn_after(fc, start) - 1];
	out->start = fn->start;
	out->end = fn->end;
	out->name = fn->name;
	snprintf(out->category, sizeof(out->category), "%s", fn->category);
	snprintf(out->impl, sizeof(out->impl), "%s", fn->impl);
	return true;
}

void rp_code_file_class_free(struct rp_code_file_class *fc)
{
	if (!fc)
		return;
	free(fc->fns);
	free(fc->calls);
	free(fc);
}
