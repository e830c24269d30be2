/* SPDX-License-Identifier: MIT */
/*
 * codefile.h - an ELF file whose code the profile sampled (codefile.c): its loadable segments,
 * symbols (its own, its debug file's, or a Go program's pclntab), .eh_frame_hdr and PLT, for
 * finding the function that holds a sampled address.
 */
#ifndef CT_REPORT_CODEFILE_H
#define CT_REPORT_CODEFILE_H

#include <stdbool.h>
#include <stdint.h>

#include "trace_format.h"
#include "elfimage.h"
#include "elfsyms.h"
#include "gopclntab.h"

struct rp_codefile {
	struct rp_image im;
	struct rp_elf eh;
	Elf64_Phdr *ph; /* the program headers, decoded (allocated) */
	unsigned phnum;
	struct rp_elfsyms syms; /* the file's own */
	/* without a .symtab: its debug file's (found by build id), else a Go program's pclntab */
	struct rp_image debug;
	struct rp_elfsyms debug_syms;
	struct rp_gopclntab go;
	/* .eh_frame_hdr's table, and the sections it points into */
	const uint8_t *hdr_table;
	uint32_t hdr_count;
	uint64_t hdr_vaddr;
	uint64_t eh_vaddr, eh_off, eh_size;
	/* the PLT (.plt, .plt.sec, .plt.got): one FDE covers it, and it is calls on their way */
	uint64_t plt_lo, plt_hi;
};

/* Maps path and indexes it; false when it is no readable ELF file, or (want_id not
 * empty) its build id is not want_id. On true, rp_codefile_close unmaps it. */
bool rp_codefile_open(struct rp_codefile *e, const char *path, struct ct_str want_id);
/* The same without the names (no symbols, debug file or pclntab: rp_codefile_function_at then
 * answers .eh_frame's bounds only), for an unwinder that needs the frames alone. */
bool rp_codefile_open_frames(struct rp_codefile *e, const char *path);
void rp_codefile_close(struct rp_codefile *e);

/* The vaddr of a file offset, and back (UINT64_MAX: in no PT_LOAD). */
uint64_t rp_codefile_off_to_vaddr(const struct rp_codefile *e, uint64_t off);
uint64_t rp_codefile_vaddr_to_off(const struct rp_codefile *e, uint64_t va);

/* [*start, *end) of the function holding va, and *name when a symbol (or the Go pclntab)
 * covers it (else NULL: bounds from .eh_frame). */
bool rp_codefile_function_at(const struct rp_codefile *e, uint64_t va, uint64_t *start, uint64_t *end,
			     const char **name);

/* va lies in the PLT (calls on their way to another function). */
bool rp_codefile_in_plt(const struct rp_codefile *e, uint64_t va);

/* A little-endian signed 32-bit value (x86 instructions). */
int32_t rp_le32s(const uint8_t *p);

/* A signed 32-bit value in the file's byte order (.eh_frame_hdr, .eh_frame). */
int32_t rp_codefile_s32(const struct rp_codefile *e, const uint8_t *p);

#endif
