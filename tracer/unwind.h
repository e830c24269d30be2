/* SPDX-License-Identifier: MIT */
/*
 * unwind.h - the profile's x86-64 call-stack unwinder (unwind.c): a sample's user registers (ip,
 * sp, bp) and a bounded copy of its stack, walked with the .eh_frame CFI of the files the
 * addresses fall in, into (file, offset) frames. The stack bytes are read here and nowhere else.
 */
#ifndef CT_TRACER_UNWIND_H
#define CT_TRACER_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One file's unwind tables, as mapped from the file (untrusted: every read is bounds-checked). */
struct ct_unwind_tables {
	const uint8_t *eh; /* .eh_frame, from its start to the end of the bytes that follow it */
	size_t eh_len;
	uint64_t eh_vaddr;
	const uint8_t *table; /* .eh_frame_hdr's sorted (location, FDE) pairs, datarel sdata4 */
	uint32_t count;
	uint64_t hdr_vaddr;
};

/* Where an address lies: its file's tables (NULL: none), its vaddr in that file, and what a
 * frame records of it. */
struct ct_unwind_where {
	const struct ct_unwind_tables *t;
	uint64_t vaddr;
	uint32_t file;
	uint64_t off;
};

/* Finds ip in the process's mappings; false when it is in none. */
typedef bool (*ct_unwind_locate)(void *ctx, uint64_t ip, struct ct_unwind_where *w);

struct ct_unwind_regs {
	uint64_t ip, sp, bp;
};

struct ct_unwind_frame {
	uint32_t file;
	uint64_t off; /* the leaf's ip; a caller's return address minus 1 (inside its call) */
};

/* The rule a CFI row gives for a register. */
enum ct_cfi_how { CT_CFI_SAME = 0, CT_CFI_AT_CFA = 1, CT_CFI_UNDEFINED = 2, CT_CFI_UNKNOWN = 3 };

/* The CFI row at a pc: CFA = reg + off (reg 6 rbp or 7 rsp), and where rbp and the return
 * address were saved (at CFA + their offset). */
struct ct_cfi_row {
	unsigned cfa_reg;
	int64_t cfa_off;
	enum ct_cfi_how bp_how, ra_how;
	int64_t bp_off, ra_off;
	bool signal_frame;
};

/* The row of the FDE covering vaddr in t; false when no FDE covers it or its CFI is not one
 * this unwinder follows (expressions, 64-bit lengths, an unknown instruction). */
bool ct_cfi_row_at(const struct ct_unwind_tables *t, uint64_t vaddr, struct ct_cfi_row *row);

/* An .eh_frame_hdr-style table (datarel sdata4 pairs, relative to eh_vaddr, sorted) for an
 * .eh_frame that has none (a static executable linked without --eh-frame-hdr): *table is
 * malloc'd, the caller frees it; false when there is no FDE or no memory. */
bool ct_unwind_index(const uint8_t *eh, size_t eh_len, uint64_t eh_vaddr, uint8_t **table, uint32_t *count);

/* Walks the stack from r: the frames, innermost first (at most max); 0 when the ip lies in no
 * mapping. stack holds the stack_len bytes from r->sp up. A frame in a file without unwind
 * tables (where->t NULL: Go's binaries, which keep frame pointers instead) is left through its
 * rbp chain; elsewhere a frame without CFI ends the walk. */
unsigned ct_unwind(const struct ct_unwind_regs *r, const uint8_t *stack, size_t stack_len,
		   ct_unwind_locate locate, void *ctx, struct ct_unwind_frame *out, unsigned max);
/* The same, with *end (may be NULL) the registers of the last frame walked, where the walk
 * stopped: a caller may go on from there by a guess of its own. */
unsigned ct_unwind_to(const struct ct_unwind_regs *r, const uint8_t *stack, size_t stack_len,
		      ct_unwind_locate locate, void *ctx, struct ct_unwind_frame *out, unsigned max,
		      struct ct_unwind_regs *end);

#endif
