/* SPDX-License-Identifier: MIT */
/*
 * gopclntab.c - a Go program's function names from its pclntab. Debian strips its Go packages
 * (/usr/bin/age), and an ELF symbol table is then all gone; but the Go runtime needs each
 * function's bounds and name for its own tracebacks, so the linker's pclntab stays in the file
 * (a section .gopclntab, or, in a PIE or externally linked program, inside .data.rel.ro with no
 * name at all; then it is found by its header). The layout, as Go's runtime/symtab.go and
 * debug/gosym read it (little-endian):
 *
 *   header: magic u32, two zero bytes, min instruction size (1, 2 or 4), pointer size (4 or 8),
 *           then pointer-sized: nfunc, nfiles, [textStart: 1.18 on], funcnameOffset, cuOffset,
 *           filetabOffset, pctabOffset, pclnOffset (offsets from the header)
 *   at pclnOffset, nfunc + 1 entries sorted by address (the last one is the end of the text):
 *           1.18 on: {entryoff u32 (from textStart), funcoff u32}; 1.16-1.17: {entry, funcoff}
 *           as pointers; funcoff counts from pclnOffset, to the function's _func record
 *   _func:  1.18 on: entryOff u32, nameOff i32; 1.16-1.17: entry pointer, nameOff i32; the
 *           name is a NUL-terminated string at funcnameOffset + nameOff
 *
 * Magics: 0xfffffffa (Go 1.16-1.17), 0xfffffff0 (1.18-1.19), 0xfffffff1 (1.20 on, the same
 * layout). Go 1.2-1.15's 0xfffffffb table is not read (no Go that old is packaged by a
 * distribution still supported). The bytes come from a file a trace named: every offset and
 * count is checked against the bytes there are, and a function's _func record must give the
 * same entry as the table that points to it.
 */
#include "gopclntab.h"

#include <string.h>

/* More functions than any Go program has (a Kubernetes binary has ~100k): a header that claims
 * more is no header. */
#define MAX_FUNCS (1u << 22)

static uint64_t le(const uint8_t *p, unsigned n)
{
	uint64_t v = 0;
	for (unsigned i = n; i-- > 0;)
		v = v << 8 | p[i];
	return v;
}

/* [off, off + n) lies in the table's len bytes. */
static bool inside(const struct rp_gopclntab *t, uint64_t off, uint64_t n)
{
	return off <= t->len && n <= t->len - off;
}

/* The address (1.16-1.17) or offset from textStart (1.18 on) of function-table entry i. */
static uint64_t entry_pc(const struct rp_gopclntab *t, uint64_t i)
{
	const uint8_t *e = t->p + t->functab + i * t->entry_size;
	return t->go >= 118 ? le(e, 4) : le(e, t->ptrsize);
}

bool rp_gopclntab_parse(struct rp_gopclntab *t, const uint8_t *p, size_t len)
{
	memset(t, 0, sizeof(*t));
	if (len < 8 || p[4] || p[5] || (p[6] != 1 && p[6] != 2 && p[6] != 4) || (p[7] != 4 && p[7] != 8))
		return false;
	uint32_t magic = (uint32_t)le(p, 4);
	unsigned go = magic == 0xfffffff1 ? 120 : magic == 0xfffffff0 ? 118 : magic == 0xfffffffa ? 116 : 0;
	unsigned ps = p[7];
	/* the fields after the first 8 bytes, in pointers: nfunc, nfiles, [textStart], 5 offsets */
	unsigned fields = go >= 118 ? 8 : 7;
	if (!go || len < 8 + (size_t)fields * ps)
		return false;
	const uint8_t *f = p + 8;
	uint64_t nfunc = le(f, ps);
	unsigned at = go >= 118 ? 3 : 2; /* funcnameOffset's field */
	*t = (struct rp_gopclntab){
		.p = p,
		.len = len,
		.go = go,
		.ptrsize = ps,
		.nfunc = (uint32_t)nfunc,
		.text = go >= 118 ? le(f + 2 * ps, ps) : 0,
		.funcnames = le(f + at * ps, ps),
		.functab = le(f + (at + 4) * ps, ps),
		.entry_size = go >= 118 ? 8 : 2 * (size_t)ps,
	};
	/* the table and names after the header; nfunc + 1 entries, in address order at both ends */
	uint64_t header = 8 + (uint64_t)fields * ps;
	if (!nfunc || nfunc > MAX_FUNCS || t->funcnames < header || t->functab < header ||
	    !inside(t, t->funcnames, 1) || !inside(t, t->functab, (nfunc + 1) * t->entry_size) ||
	    entry_pc(t, 0) > entry_pc(t, nfunc)) {
		memset(t, 0, sizeof(*t));
		return false;
	}
	/* the first function's record agrees with its entry: what a chance match of the header
	 * bytes would not */
	uint64_t start, end;
	const char *name;
	uint64_t first = (go >= 118 ? t->text : 0) + entry_pc(t, 0);
	if (!rp_gopclntab_function_at(t, first, &start, &end, &name)) {
		memset(t, 0, sizeof(*t));
		return false;
	}
	return true;
}

bool rp_gopclntab_find(struct rp_gopclntab *t, const uint8_t *p, size_t len)
{
	/* the magic's top three bytes and the two zero pads, whichever the low byte */
	static const uint8_t sig[] = { 0xff, 0xff, 0xff, 0x00, 0x00 };
	const uint8_t *q = p + 1, *end = p + len;
	while (q < end && (q = memmem(q, (size_t)(end - q), sig, sizeof(sig))) != NULL) {
		const uint8_t *h = q - 1;
		/* headers are pointer-aligned in the file as in memory */
		if ((size_t)(h - p) % 4 == 0 && rp_gopclntab_parse(t, h, (size_t)(end - h)))
			return true;
		q++;
	}
	memset(t, 0, sizeof(*t));
	return false;
}

bool rp_gopclntab_function_at(const struct rp_gopclntab *t, uint64_t va, uint64_t *start, uint64_t *end,
			      const char **name)
{
	if (!t->p)
		return false;
	uint64_t base = t->go >= 118 ? t->text : 0;
	if (va < base)
		return false;
	uint64_t pc = va - base;
	/* the last entry at or below pc, among the nfunc functions (entry nfunc is the end) */
	uint32_t lo = 0, hi = t->nfunc;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (entry_pc(t, mid) <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return false;
	uint64_t i = lo - 1, fn = entry_pc(t, i), next = entry_pc(t, i + 1);
	if (pc >= next)
		return false;
	const uint8_t *ent = t->p + t->functab + i * t->entry_size;
	uint64_t funcoff = t->go >= 118 ? le(ent + 4, 4) : le(ent + t->ptrsize, t->ptrsize);
	unsigned entry_len = t->go >= 118 ? 4 : t->ptrsize;
	if (funcoff > UINT64_MAX - t->functab || !inside(t, t->functab + funcoff, entry_len + 4))
		return false;
	const uint8_t *rec = t->p + t->functab + funcoff;
	if (le(rec, entry_len) != fn)
		return false;
	int32_t nameoff = (int32_t)(uint32_t)le(rec + entry_len, 4);
	uint64_t at = t->funcnames + (uint64_t)(int64_t)nameoff;
	if (nameoff < 0 || !inside(t, at, 1) || !memchr(t->p + at, 0, t->len - at))
		return false;
	*start = base + fn;
	*end = base + next;
	*name = (const char *)t->p + at;
	return true;
}
