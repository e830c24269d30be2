/* SPDX-License-Identifier: MIT */
/*
 * unwind.c - the profile's call stacks, unwound in the launcher while it drains the samples: a
 * sample's user rip, rsp and rbp and a bounded copy of the stack above rsp (perf's REGS_USER
 * and STACK_USER), walked frame by frame with the .eh_frame CFI of the file each address lies
 * in. This is what `perf record --call-graph dwarf` does after the fact; done at drain time, no
 * stack byte is ever kept or written: only the (file, offset) frames leave this file.
 *
 * Why a small CFI interpreter of our own rather than libunwind's remote API: unwinding an
 * x86-64 frame needs three rules (CFA = rsp|rbp + offset, rbp and the return address saved at
 * CFA + offset), which is all compilers and OpenSSL's perlasm emit outside the PLT and signal
 * frames; libunwind's remote mode would need the same accessors plus its find_proc_info glue
 * (dwarf_search_unwind_table over tables we map ourselves, as perf does), runs a general DWARF
 * expression machine over bytes that come from files we do not control, and its behaviour on
 * malformed input is not ours to bound. Here every read of the file and of the stack copy is
 * checked, a rule we do not follow (an expression, a register rule) ends the walk, and the walk
 * ends when the CFA does not grow: a malformed table or a hostile stack gives a short stack,
 * never a wrong read.
 */
#include "unwind.h"

#include <stdlib.h>
#include <string.h>

#define X86_RBP 6
#define X86_RSP 7
#define MAX_REMEMBER 16

/* ---- reading untrusted bytes ------------------------------------------------------------- */

struct cur {
	const uint8_t *p;
	size_t len, at;
	bool bad;
};

static bool take(struct cur *c, size_t n, const uint8_t **out)
{
	if (c->bad || n > c->len - c->at) {
		c->bad = true;
		return false;
	}
	*out = c->p + c->at;
	c->at += n;
	return true;
}

static uint64_t rd_le(struct cur *c, size_t n)
{
	const uint8_t *b;
	uint64_t v = 0;
	if (!take(c, n, &b))
		return 0;
	for (size_t i = n; i-- > 0;)
		v = v << 8 | b[i];
	return v;
}

static uint64_t rd_uleb(struct cur *c)
{
	uint64_t v = 0;
	for (unsigned shift = 0;; shift += 7) {
		const uint8_t *b;
		if (!take(c, 1, &b))
			return 0;
		if (shift < 64)
			v |= (uint64_t)(*b & 0x7f) << shift;
		if (!(*b & 0x80))
			return v;
		if (shift > 63) {
			c->bad = true;
			return 0;
		}
	}
}

static int64_t rd_sleb(struct cur *c)
{
	uint64_t v = 0;
	unsigned shift = 0;
	const uint8_t *b;
	do {
		if (!take(c, 1, &b) || shift > 63) {
			c->bad = true;
			return 0;
		}
		v |= (uint64_t)(*b & 0x7f) << shift;
		shift += 7;
	} while (*b & 0x80);
	if (shift < 64 && (*b & 0x40))
		v |= ~(uint64_t)0 << shift;
	return (int64_t)v;
}

/* A DW_EH_PE-encoded pointer at c (base: the vaddr of c's first byte, for pcrel). */
static uint64_t rd_encoded(struct cur *c, uint8_t enc, uint64_t base)
{
	uint64_t field = base + c->at, v;
	switch (enc & 0x0f) {
	case 0x00:
		v = rd_le(c, 8);
		break;
	case 0x01:
		v = rd_uleb(c);
		break;
	case 0x02:
		v = rd_le(c, 2);
		break;
	case 0x03:
		v = rd_le(c, 4);
		break;
	case 0x04:
		v = rd_le(c, 8);
		break;
	case 0x09:
		v = (uint64_t)rd_sleb(c);
		break;
	case 0x0a:
		v = (uint64_t)(int64_t)(int16_t)rd_le(c, 2);
		break;
	case 0x0b:
		v = (uint64_t)(int64_t)(int32_t)rd_le(c, 4);
		break;
	case 0x0c:
		v = rd_le(c, 8);
		break;
	default:
		c->bad = true;
		return 0;
	}
	switch (enc & 0x70) {
	case 0x00:
		return v;
	case 0x10:
		return v + field;
	default:
		c->bad = true;
		return 0; /* datarel, textrel, funcrel, indirect: not in .eh_frame FDEs */
	}
}

/* ---- the CFI program --------------------------------------------------------------------- */

struct rule {
	enum ct_cfi_how how;
	int64_t off;
};

struct state {
	unsigned cfa_reg;
	int64_t cfa_off;
	bool cfa_ok;
	struct rule bp, ra;
};

struct cie {
	uint64_t code_align;
	int64_t data_align;
	uint64_t ra_reg;
	uint8_t fde_enc;
	bool has_z, signal;
	struct cur insns;
};

static struct rule *rule_of(struct state *s, const struct cie *ci, uint64_t reg)
{
	return reg == X86_RBP ? &s->bp : reg == ci->ra_reg ? &s->ra : NULL;
}

static void set_rule(struct state *s, const struct cie *ci, uint64_t reg, enum ct_cfi_how how, int64_t off)
{
	struct rule *r = rule_of(s, ci, reg);
	if (r)
		*r = (struct rule){ how, off };
}

/* Runs c's instructions from loc while loc <= pc; false on one it does not follow. */
static bool run_cfi(struct cur *c, const struct cie *ci, const struct state *init, struct state *s,
		    uint64_t loc, uint64_t pc, uint64_t base)
{
	struct state saved[MAX_REMEMBER];
	unsigned nsaved = 0;
	while (c->at < c->len && !c->bad) {
		uint8_t op = (uint8_t)rd_le(c, 1), low = op & 0x3f;
		uint64_t reg, delta = 0;
		int64_t off;
		switch (op >> 6) {
		case 1: /* DW_CFA_advance_loc */
			delta = low;
			break;
		case 2: /* DW_CFA_offset */
			set_rule(s, ci, low, CT_CFI_AT_CFA, (int64_t)rd_uleb(c) * ci->data_align);
			continue;
		case 3: /* DW_CFA_restore */
			if (rule_of(s, ci, low))
				*rule_of(s, ci, low) = *rule_of((struct state *)init, ci, low);
			continue;
		default:
			break;
		}
		if (op >> 6 == 0) {
			switch (op) {
			case 0x00: /* nop */
				continue;
			case 0x01: /* set_loc */
				loc = rd_encoded(c, ci->fde_enc, base);
				if (loc > pc)
					return !c->bad;
				continue;
			case 0x02:
				delta = rd_le(c, 1);
				break;
			case 0x03:
				delta = rd_le(c, 2);
				break;
			case 0x04:
				delta = rd_le(c, 4);
				break;
			case 0x05: /* offset_extended */
				reg = rd_uleb(c);
				set_rule(s, ci, reg, CT_CFI_AT_CFA, (int64_t)rd_uleb(c) * ci->data_align);
				continue;
			case 0x06: /* restore_extended */
				reg = rd_uleb(c);
				if (rule_of(s, ci, reg))
					*rule_of(s, ci, reg) = *rule_of((struct state *)init, ci, reg);
				continue;
			case 0x07:
				set_rule(s, ci, rd_uleb(c), CT_CFI_UNDEFINED, 0);
				continue;
			case 0x08:
				set_rule(s, ci, rd_uleb(c), CT_CFI_SAME, 0);
				continue;
			case 0x09: /* register: a value in another register, which we do not track */
				reg = rd_uleb(c);
				rd_uleb(c);
				set_rule(s, ci, reg, CT_CFI_UNKNOWN, 0);
				continue;
			case 0x0a:
				if (nsaved == MAX_REMEMBER)
					return false;
				saved[nsaved++] = *s;
				continue;
			case 0x0b:
				if (!nsaved)
					return false;
				*s = saved[--nsaved]; /* the whole row, CFA included, as GCC's unwinder does */
				continue;
			case 0x0c: /* def_cfa */
				s->cfa_reg = (unsigned)rd_uleb(c);
				s->cfa_off = (int64_t)rd_uleb(c);
				s->cfa_ok = true;
				continue;
			case 0x0d:
				s->cfa_reg = (unsigned)rd_uleb(c);
				continue;
			case 0x0e:
				s->cfa_off = (int64_t)rd_uleb(c);
				continue;
			case 0x0f: /* def_cfa_expression: the PLT's, a signal frame's */
				s->cfa_ok = false;
				off = (int64_t)rd_uleb(c);
				c->at = (uint64_t)off > c->len - c->at ? c->len : c->at + (size_t)off;
				continue;
			case 0x10: /* expression */
			case 0x16: /* val_expression */
				reg = rd_uleb(c);
				off = (int64_t)rd_uleb(c);
				if ((uint64_t)off > c->len - c->at)
					return false;
				c->at += (size_t)off;
				set_rule(s, ci, reg, CT_CFI_UNKNOWN, 0);
				continue;
			case 0x11: /* offset_extended_sf */
				reg = rd_uleb(c);
				set_rule(s, ci, reg, CT_CFI_AT_CFA, rd_sleb(c) * ci->data_align);
				continue;
			case 0x12: /* def_cfa_sf */
				s->cfa_reg = (unsigned)rd_uleb(c);
				s->cfa_off = rd_sleb(c) * ci->data_align;
				s->cfa_ok = true;
				continue;
			case 0x13:
				s->cfa_off = rd_sleb(c) * ci->data_align;
				continue;
			case 0x14: /* val_offset */
			case 0x15: /* val_offset_sf */
				reg = rd_uleb(c);
				op == 0x14 ? (void)rd_uleb(c) : (void)rd_sleb(c);
				set_rule(s, ci, reg, CT_CFI_UNKNOWN, 0);
				continue;
			case 0x2e: /* GNU_args_size */
				rd_uleb(c);
				continue;
			case 0x2f: /* GNU_negative_offset_extended */
				reg = rd_uleb(c);
				set_rule(s, ci, reg, CT_CFI_AT_CFA, -(int64_t)rd_uleb(c) * ci->data_align);
				continue;
			default:
				return false;
			}
		}
		loc += delta * ci->code_align;
		if (loc > pc)
			break;
	}
	return !c->bad;
}

/* The CIE at eh offset at. */
static bool parse_cie(const struct ct_unwind_tables *t, size_t at, struct cie *ci)
{
	struct cur c = { t->eh, t->eh_len, at, false };
	uint64_t len = rd_le(&c, 4);
	if (c.bad || len == 0 || len == 0xffffffffu || len > t->eh_len - c.at)
		return false;
	size_t end = c.at + (size_t)len;
	c.len = end;
	if (rd_le(&c, 4) != 0)
		return false; /* not a CIE */
	uint8_t version = (uint8_t)rd_le(&c, 1);
	if (version != 1 && version != 3 && version != 4)
		return false;
	const uint8_t *aug = c.p + c.at;
	size_t auglen = 0;
	while (c.at + auglen < c.len && aug[auglen])
		auglen++;
	if (c.at + auglen >= c.len)
		return false;
	c.at += auglen + 1;
	if (version == 4 && (rd_le(&c, 1) != 8 || rd_le(&c, 1) != 0))
		return false;
	memset(ci, 0, sizeof(*ci));
	ci->code_align = rd_uleb(&c);
	ci->data_align = rd_sleb(&c);
	ci->ra_reg = version == 1 ? rd_le(&c, 1) : rd_uleb(&c);
	if (auglen && aug[0] == 'z') {
		uint64_t alen = rd_uleb(&c);
		if (c.bad || alen > c.len - c.at)
			return false;
		size_t aend = c.at + (size_t)alen;
		ci->has_z = true;
		for (size_t i = 1; i < auglen && !c.bad; i++) {
			switch (aug[i]) {
			case 'R':
				ci->fde_enc = (uint8_t)rd_le(&c, 1);
				break;
			case 'L':
				rd_le(&c, 1);
				break;
			case 'P': {
				uint8_t penc = (uint8_t)rd_le(&c, 1);
				rd_encoded(&c, penc & 0x7f, t->eh_vaddr); /* skipped: not used */
				break;
			}
			case 'S':
				ci->signal = true;
				break;
			default:
				i = auglen;
				break; /* the rest is skipped by its length */
			}
		}
		c.bad = false;
		c.at = aend;
	} else if (auglen) {
		return false; /* "eh" and older forms: not emitted on x86-64 */
	}
	ci->insns = (struct cur){ c.p, c.len, c.at, c.bad };
	return !c.bad;
}

/* The FDE covering vaddr, from .eh_frame_hdr's sorted table (the last entry at or below it). */
static bool find_fde(const struct ct_unwind_tables *t, uint64_t vaddr, size_t *fde_at)
{
	uint32_t lo = 0, hi = t->count;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		struct cur c = { t->table, (size_t)t->count * 8, (size_t)mid * 8, false };
		if (t->hdr_vaddr + (uint64_t)(int64_t)(int32_t)rd_le(&c, 4) <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return false;
	struct cur c = { t->table, (size_t)t->count * 8, (size_t)(lo - 1) * 8 + 4, false };
	uint64_t fde = t->hdr_vaddr + (uint64_t)(int64_t)(int32_t)rd_le(&c, 4);
	if (fde - t->eh_vaddr >= t->eh_len)
		return false;
	*fde_at = (size_t)(fde - t->eh_vaddr);
	return true;
}

bool ct_cfi_row_at(const struct ct_unwind_tables *t, uint64_t vaddr, struct ct_cfi_row *row)
{
	size_t at;
	if (!t || !t->eh || !t->table || !find_fde(t, vaddr, &at))
		return false;
	struct cur c = { t->eh, t->eh_len, at, false };
	uint64_t len = rd_le(&c, 4);
	if (c.bad || len < 8 || len == 0xffffffffu || len > t->eh_len - c.at)
		return false;
	c.len = c.at + (size_t)len;
	uint64_t cie_ptr = rd_le(&c, 4);
	if (!cie_ptr || cie_ptr > c.at - 4)
		return false;
	struct cie ci;
	if (!parse_cie(t, c.at - 4 - (size_t)cie_ptr, &ci) || !ci.has_z)
		return false;
	uint64_t begin = rd_encoded(&c, ci.fde_enc, t->eh_vaddr);
	uint64_t range = rd_encoded(&c, ci.fde_enc & 0x0f, t->eh_vaddr);
	if (c.bad || vaddr - begin >= range)
		return false;
	uint64_t alen = rd_uleb(&c);
	if (c.bad || alen > c.len - c.at)
		return false;
	c.at += (size_t)alen;
	struct state init = { .cfa_reg = X86_RSP, .cfa_off = 8, .cfa_ok = false }, s;
	struct cur ci_insns = ci.insns;
	if (!run_cfi(&ci_insns, &ci, &init, &init, begin, UINT64_MAX, t->eh_vaddr))
		return false;
	s = init;
	if (!run_cfi(&c, &ci, &init, &s, begin, vaddr, t->eh_vaddr) || !s.cfa_ok ||
	    (s.cfa_reg != X86_RSP && s.cfa_reg != X86_RBP))
		return false;
	*row = (struct ct_cfi_row){ .cfa_reg = s.cfa_reg,
				    .cfa_off = s.cfa_off,
				    .bp_how = s.bp.how,
				    .bp_off = s.bp.off,
				    .ra_how = s.ra.how,
				    .ra_off = s.ra.off,
				    .signal_frame = ci.signal };
	return true;
}

/* ---- a table for an .eh_frame without .eh_frame_hdr ------------------------------------- */

struct fde_start {
	uint64_t pc;
	uint32_t at;
};

static int by_pc(const void *a, const void *b)
{
	const struct fde_start *x = a, *y = b;
	return x->pc < y->pc ? -1 : x->pc > y->pc;
}

bool ct_unwind_index(const uint8_t *eh, size_t eh_len, uint64_t eh_vaddr, uint8_t **table, uint32_t *count)
{
	const struct ct_unwind_tables t = { .eh = eh, .eh_len = eh_len, .eh_vaddr = eh_vaddr };
	struct fde_start *v = NULL;
	size_t n = 0, cap = 0;
	struct cur c = { eh, eh_len, 0, false };
	while (eh_len - c.at >= 8) {
		size_t at = c.at;
		uint64_t len = rd_le(&c, 4), id = rd_le(&c, 4);
		if (!len || len == 0xffffffffu || len > eh_len - at - 4 || len < 4)
			break;
		c.at = at + 4 + (size_t)len;
		struct cie ci;
		if (!id || id > at + 4 || at > UINT32_MAX || !parse_cie(&t, at + 4 - (size_t)id, &ci))
			continue; /* a CIE, or an FDE we could not read anyway */
		struct cur f = { eh, at + 4 + (size_t)len, at + 8, false };
		uint64_t pc = rd_encoded(&f, ci.fde_enc, eh_vaddr);
		int64_t rel = (int64_t)(pc - eh_vaddr);
		if (f.bad || rel != (int32_t)rel)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : 256;
			struct fde_start *g = realloc(v, cap * sizeof(*v));
			if (!g) {
				free(v);
				return false;
			}
			v = g;
		}
		v[n++] = (struct fde_start){ pc, (uint32_t)at };
	}
	if (!n || n > UINT32_MAX / 8 || !(*table = malloc(n * 8))) {
		free(v);
		return false;
	}
	qsort(v, n, sizeof(*v), by_pc);
	for (size_t i = 0; i < n; i++) {
		uint32_t pc = (uint32_t)(int32_t)(int64_t)(v[i].pc - eh_vaddr);
		for (int k = 0; k < 4; k++) {
			(*table)[8 * i + (size_t)k] = (uint8_t)(pc >> (8 * k));
			(*table)[8 * i + 4 + (size_t)k] = (uint8_t)(v[i].at >> (8 * k));
		}
	}
	*count = (uint32_t)n;
	free(v);
	return true;
}

/* ---- the walk ---------------------------------------------------------------------------- */

static bool stack_u64(const uint8_t *stack, size_t len, uint64_t sp0, uint64_t addr, uint64_t *v)
{
	if (addr < sp0 || addr - sp0 > len || len - (addr - sp0) < 8)
		return false;
	memcpy(v, stack + (addr - sp0), 8);
	return true;
}

unsigned ct_unwind(const struct ct_unwind_regs *r, const uint8_t *stack, size_t stack_len,
		   ct_unwind_locate locate, void *ctx, struct ct_unwind_frame *out, unsigned max)
{
	return ct_unwind_to(r, stack, stack_len, locate, ctx, out, max, NULL);
}

unsigned ct_unwind_to(const struct ct_unwind_regs *r, const uint8_t *stack, size_t stack_len,
		      ct_unwind_locate locate, void *ctx, struct ct_unwind_frame *out, unsigned max,
		      struct ct_unwind_regs *end)
{
	struct ct_unwind_regs cur = *r;
	bool bp_known = true;
	unsigned n = 0;
	while (n < max) {
		uint64_t pc = n ? cur.ip - 1 : cur.ip;
		struct ct_unwind_where w;
		if (!locate(ctx, pc, &w))
			break;
		out[n++] = (struct ct_unwind_frame){ w.file, w.off };
		struct ct_cfi_row row;
		if (n < max && !w.t) {
			/* no CFI in this file: its frame pointer chain, [rbp] the caller's rbp and
			 * [rbp + 8] the return address, while it climbs the stack */
			uint64_t ra, bp;
			if (!bp_known || cur.bp < cur.sp || cur.bp + 16 <= cur.sp ||
			    !stack_u64(stack, stack_len, r->sp, cur.bp, &bp) ||
			    !stack_u64(stack, stack_len, r->sp, cur.bp + 8, &ra) || !ra)
				break;
			cur = (struct ct_unwind_regs){ ra, cur.bp + 16, bp };
			continue;
		}
		if (n == max || !w.t || !ct_cfi_row_at(w.t, w.vaddr, &row) || row.signal_frame ||
		    row.ra_how != CT_CFI_AT_CFA || (row.cfa_reg == X86_RBP && !bp_known))
			break;
		uint64_t cfa = (row.cfa_reg == X86_RSP ? cur.sp : cur.bp) + (uint64_t)row.cfa_off, ra,
			 bp = cur.bp;
		if (cfa <= cur.sp || !stack_u64(stack, stack_len, r->sp, cfa + (uint64_t)row.ra_off, &ra))
			break;
		if (row.bp_how == CT_CFI_AT_CFA)
			bp_known = stack_u64(stack, stack_len, r->sp, cfa + (uint64_t)row.bp_off, &bp);
		else if (row.bp_how != CT_CFI_SAME)
			bp_known = false;
		if (!ra)
			break;
		cur = (struct ct_unwind_regs){ ra, cfa, bp };
	}
	if (end)
		*end = cur;
	return n;
}
