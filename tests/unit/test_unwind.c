/* SPDX-License-Identifier: MIT */
/*
 * test_unwind.c - the profile's CFI unwinder (tracer/unwind.c) on crafted .eh_frame and stack
 * bytes: the rows a compiler's prologue gives, a two-frame walk, the FDE index made for an
 * .eh_frame without .eh_frame_hdr, the frame-pointer walk of a file without CFI (Go), and
 * malformed tables and stacks (cut short, a CFA that does not grow), which must end the walk,
 * never read outside.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "unwind.h"

#define EH_VADDR 0x2000u
#define HDR_VADDR 0x3000u

struct bytes {
	uint8_t b[512];
	size_t n;
};

static void put(struct bytes *x, const void *p, size_t n)
{
	memcpy(x->b + x->n, p, n);
	x->n += n;
}
static void put8(struct bytes *x, uint8_t v)
{
	put(x, &v, 1);
}
static void put32(struct bytes *x, uint32_t v)
{
	put(x, &v, 4); /* the test runs on little-endian hosts only (x86-64 CFI) */
}

static uint8_t eh[512], table[64];
static size_t eh_len;
static struct ct_unwind_tables tables;

/* A CIE (zR, pcrel|sdata4, code 1, data -8, ra 16: CFA = rsp + 8, ra at CFA - 8) and two FDEs:
 * f [0x1000, 0x1100): push rbp; mov rbp, rsp (CFA rsp+16, rbp at CFA-16, then CFA rbp+16);
 * g [0x1200, 0x1300): sub rsp, 24 after 4 bytes (CFA rsp+32). */
static void build(void)
{
	struct bytes x = { .n = 0 };
	static const uint8_t cie_body[] = { 0,  0, 0,    0,    1, 'z', 'R',  0, 1, 0x78,
					    16, 1, 0x1b, 0x0c, 7, 8,   0x90, 1, 0, 0 };
	put32(&x, sizeof(cie_body));
	put(&x, cie_body, sizeof(cie_body));
	size_t fdes[2];
	static const uint8_t f_insns[] = { 0x41, 0x0e, 16, 0x86, 2, 0x43, 0x0d, 6, 0, 0, 0 };
	static const uint8_t g_insns[] = { 0x44, 0x0e, 32, 0, 0, 0, 0, 0, 0, 0, 0 };
	const uint8_t *insns[2] = { f_insns, g_insns };
	uint32_t start[2] = { 0x1000, 0x1200 };
	for (int i = 0; i < 2; i++) {
		fdes[i] = x.n;
		put32(&x, 4 + 4 + 4 + 1 + sizeof(f_insns));
		put32(&x, (uint32_t)(x.n)); /* back to the CIE at 0 */
		put32(&x, (uint32_t)(start[i] - (EH_VADDR + x.n)));
		put32(&x, 0x100);
		put8(&x, 0); /* augmentation data length */
		put(&x, insns[i], sizeof(f_insns));
	}
	put32(&x, 0); /* terminator */
	memcpy(eh, x.b, x.n);
	eh_len = x.n;
	struct bytes t = { .n = 0 };
	for (int i = 0; i < 2; i++) {
		put32(&t, start[i] - HDR_VADDR);
		put32(&t, (uint32_t)(EH_VADDR + fdes[i] - HDR_VADDR));
	}
	memcpy(table, t.b, t.n);
	tables = (struct ct_unwind_tables){ eh, eh_len, EH_VADDR, table, 2, HDR_VADDR };
}

static void rows(void **state)
{
	(void)state;
	build();
	struct ct_cfi_row r;
	assert_true(ct_cfi_row_at(&tables, 0x1000, &r));
	assert_int_equal(r.cfa_reg, 7);
	assert_int_equal(r.cfa_off, 8);
	assert_int_equal(r.ra_how, CT_CFI_AT_CFA);
	assert_int_equal(r.ra_off, -8);
	assert_int_equal(r.bp_how, CT_CFI_SAME);
	assert_true(ct_cfi_row_at(&tables, 0x1001, &r));
	assert_int_equal(r.cfa_off, 16);
	assert_int_equal(r.bp_how, CT_CFI_AT_CFA);
	assert_int_equal(r.bp_off, -16);
	assert_true(ct_cfi_row_at(&tables, 0x1004, &r));
	assert_int_equal(r.cfa_reg, 6);
	assert_int_equal(r.cfa_off, 16);
	assert_true(ct_cfi_row_at(&tables, 0x10ff, &r));
	assert_int_equal(r.cfa_reg, 6);
	assert_true(ct_cfi_row_at(&tables, 0x1250, &r));
	assert_int_equal(r.cfa_reg, 7);
	assert_int_equal(r.cfa_off, 32);
	assert_false(ct_cfi_row_at(&tables, 0x0fff, &r));
	assert_false(ct_cfi_row_at(&tables, 0x1100, &r)); /* past f, before g */
	assert_false(ct_cfi_row_at(&tables, 0x1300, &r));
}

static bool locate(void *ctx, uint64_t ip, struct ct_unwind_where *w)
{
	(void)ctx;
	if (ip < 0x1000 || ip >= 0x2000)
		return false;
	*w = (struct ct_unwind_where){ .t = &tables, .vaddr = ip, .file = 7, .off = ip };
	return true;
}

#define SP0 0x7000u

/* f's frame at sp0: 32 bytes of locals, the caller's rbp, the return address into g; then g's
 * 24 bytes and its own return address. */
static void stack_of(uint8_t *s, size_t len, uint64_t g_ret)
{
	memset(s, 0x5a, len);
	uint64_t bp = 0x7777, ra = 0x1250;
	memcpy(s + 32, &bp, 8);
	memcpy(s + 40, &ra, 8);
	memcpy(s + 72, &g_ret, 8);
}

static void walk(void **state)
{
	(void)state;
	build();
	uint8_t s[128];
	struct ct_unwind_frame fr[8];
	struct ct_unwind_regs r = { .ip = 0x1010, .sp = SP0, .bp = SP0 + 32 };
	stack_of(s, sizeof(s), 0); /* g returns to 0: the chain's end */
	assert_int_equal(ct_unwind(&r, s, sizeof(s), locate, NULL, fr, 8), 2);
	assert_int_equal(fr[0].file, 7);
	assert_int_equal(fr[0].off, 0x1010);
	assert_int_equal(fr[1].off, 0x124f); /* the return address minus 1: inside the call */
	/* g returns into f again: the walk goes on while the CFA grows, up to max */
	stack_of(s, sizeof(s), 0x1020);
	assert_int_equal(ct_unwind(&r, s, sizeof(s), locate, NULL, fr, 8), 3);
	assert_int_equal(fr[2].off, 0x101f);
	assert_int_equal(ct_unwind(&r, s, sizeof(s), locate, NULL, fr, 2), 2);
	/* a leaf outside every mapping: no frame */
	struct ct_unwind_regs out = { .ip = 0x9000, .sp = SP0, .bp = 0 };
	assert_int_equal(ct_unwind(&out, s, sizeof(s), locate, NULL, fr, 8), 0);
}

static void hostile(void **state)
{
	(void)state;
	build();
	uint8_t s[128];
	struct ct_unwind_frame fr[8];
	struct ct_unwind_regs r = { .ip = 0x1010, .sp = SP0, .bp = SP0 + 32 };
	stack_of(s, sizeof(s), 0);
	/* a stack copy too short to hold the return address: the leaf alone */
	assert_int_equal(ct_unwind(&r, s, 47, locate, NULL, fr, 8), 1);
	assert_int_equal(ct_unwind(&r, s, 48, locate, NULL, fr, 8), 2);
	/* rbp below sp: the CFA would not grow, so the walk ends */
	struct ct_unwind_regs low = { .ip = 0x1010, .sp = SP0, .bp = SP0 - 64 };
	assert_int_equal(ct_unwind(&low, s, sizeof(s), locate, NULL, fr, 8), 1);
	/* rbp far above the copy: nothing read outside it */
	struct ct_unwind_regs far = { .ip = 0x1010, .sp = SP0, .bp = UINT64_MAX - 4 };
	assert_int_equal(ct_unwind(&far, s, sizeof(s), locate, NULL, fr, 8), 1);
	/* .eh_frame cut at every length: a row or none, never a read past the cut (ASan checks) */
	struct ct_cfi_row row;
	for (size_t n = 0; n < eh_len; n++) {
		uint8_t *cut = malloc(n ? n : 1);
		memcpy(cut, eh, n);
		struct ct_unwind_tables t = tables;
		t.eh = cut;
		t.eh_len = n;
		(void)ct_cfi_row_at(&t, 0x1004, &row);
		(void)ct_cfi_row_at(&t, 0x1250, &row);
		free(cut);
	}
	/* every byte of .eh_frame flipped in turn: no crash, no hang */
	for (size_t i = 0; i < eh_len; i++)
		for (unsigned v = 0; v < 256; v += 51) {
			build();
			eh[i] ^= (uint8_t)v;
			(void)ct_cfi_row_at(&tables, 0x1004, &row);
			(void)ct_unwind(&r, s, sizeof(s), locate, NULL, fr, 8);
		}
	/* an FDE pointer in the table outside .eh_frame */
	build();
	struct ct_unwind_tables t = tables;
	t.eh_len = 8;
	assert_false(ct_cfi_row_at(&t, 0x1004, &row));
	/* a DW_CFA we do not follow (def_cfa_expression) ends the walk at that frame */
	build();
	size_t f_insns_at = 4 + 20 + 4 + 4 + 4 + 4 + 1;
	eh[f_insns_at + 6] = 0x0f; /* at 0x1004, in place of def_cfa_register: an empty expression */
	eh[f_insns_at + 7] = 0;
	assert_false(ct_cfi_row_at(&tables, 0x1004, &row));
	assert_true(ct_cfi_row_at(&tables, 0x1001, &row));
}

/* The index built from .eh_frame alone finds the same rows as .eh_frame_hdr's table. */
static void index_without_hdr(void **state)
{
	(void)state;
	build();
	uint8_t *t;
	uint32_t n;
	assert_true(ct_unwind_index(eh, eh_len, EH_VADDR, &t, &n));
	assert_int_equal(n, 2);
	struct ct_unwind_tables own = { eh, eh_len, EH_VADDR, t, n, EH_VADDR };
	struct ct_cfi_row a, b;
	static const uint64_t pcs[] = { 0x1000, 0x1001, 0x1004, 0x10ff, 0x1250 };
	for (size_t i = 0; i < sizeof(pcs) / sizeof(pcs[0]); i++) {
		assert_true(ct_cfi_row_at(&own, pcs[i], &a));
		assert_true(ct_cfi_row_at(&tables, pcs[i], &b));
		assert_int_equal(a.cfa_reg, b.cfa_reg);
		assert_int_equal(a.cfa_off, b.cfa_off);
		assert_int_equal(a.bp_how, b.bp_how);
	}
	assert_false(ct_cfi_row_at(&own, 0x1100, &a));
	free(t);
	/* cut at every length: an index of the whole FDEs before the cut, or none */
	for (size_t len = 0; len < eh_len; len++) {
		uint8_t *cut = malloc(len ? len : 1);
		memcpy(cut, eh, len);
		if (ct_unwind_index(cut, len, EH_VADDR, &t, &n)) {
			assert_true(n <= 2);
			free(t);
		}
		free(cut);
	}
}

static bool locate_no_cfi(void *ctx, uint64_t ip, struct ct_unwind_where *w)
{
	(void)ctx;
	if (ip < 0x1000 || ip >= 0x2000)
		return false;
	*w = (struct ct_unwind_where){ .t = NULL, .vaddr = ip, .file = 3, .off = ip };
	return true;
}

/* A file without CFI is left through its frame pointers while rbp climbs the stack copy. */
static void frame_pointers(void **state)
{
	(void)state;
	uint8_t s[128];
	struct ct_unwind_frame fr[8];
	memset(s, 0, sizeof(s));
	/* rbp = sp0 + 16: [16] caller's rbp = sp0 + 64, [24] ret 0x1400; [64] rbp 0, [72] ret 0x1500 */
	uint64_t v[] = { SP0 + 64, 0x1400, 0, 0x1500 };
	memcpy(s + 16, &v[0], 16);
	memcpy(s + 64, &v[2], 16);
	struct ct_unwind_regs r = { .ip = 0x1300, .sp = SP0, .bp = SP0 + 16 };
	assert_int_equal(ct_unwind(&r, s, sizeof(s), locate_no_cfi, NULL, fr, 8), 3);
	assert_int_equal(fr[0].off, 0x1300);
	assert_int_equal(fr[1].off, 0x13ff);
	assert_int_equal(fr[2].off, 0x14ff);
	/* an rbp below sp (a register used for data): the leaf alone */
	r.bp = SP0 - 8;
	assert_int_equal(ct_unwind(&r, s, sizeof(s), locate_no_cfi, NULL, fr, 8), 1);
	/* a chain that points back down: it ends there */
	uint64_t down = SP0;
	memcpy(s + 64, &down, 8);
	r.bp = SP0 + 16;
	assert_int_equal(ct_unwind(&r, s, sizeof(s), locate_no_cfi, NULL, fr, 8), 3);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(rows),           cmocka_unit_test(walk),
		cmocka_unit_test(hostile),        cmocka_unit_test(index_without_hdr),
		cmocka_unit_test(frame_pointers),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
