/* SPDX-License-Identifier: MIT */
/*
 * codefile.c - an ELF file whose code was sampled, read as the profile's classifier needs it
 * (codeclass.c): the vaddr of a file offset, and the bounds of the function holding an address:
 *
 *  - its symbol (.symtab, else .dynsym) when one covers the offset; a file without .symtab is
 *    named by its debug file's .symtab, found by build id (elfsyms.c), or, in a Go program, by
 *    its pclntab (gopclntab.c), which stripping leaves; else
 *  - its FDE in .eh_frame (every function compilers and OpenSSL's perlasm emit has one), found
 *    through .eh_frame_hdr's sorted table.
 *
 * Only regular files are read, mapped read-only, every offset checked; a file whose build id
 * differs from the one recorded is not used (it was replaced since the run).
 */
#include "codefile.h"

#include <stdlib.h>
#include <string.h>

#define MAX_ELF_BYTES (1024u << 20)

/* The vaddr of file offset off, through the PT_LOAD that holds it (UINT64_MAX: none). */
uint64_t rp_codefile_off_to_vaddr(const struct rp_codefile *e, uint64_t off)
{
	for (unsigned i = 0; i < e->phnum; i++) {
		const Elf64_Phdr *p = &e->ph[i];
		if (p->p_type == PT_LOAD && off - p->p_offset < p->p_filesz)
			return p->p_vaddr + (off - p->p_offset);
	}
	return UINT64_MAX;
}

uint64_t rp_codefile_vaddr_to_off(const struct rp_codefile *e, uint64_t va)
{
	for (unsigned i = 0; i < e->phnum; i++) {
		const Elf64_Phdr *p = &e->ph[i];
		if (p->p_type == PT_LOAD && va - p->p_vaddr < p->p_filesz)
			return p->p_offset + (va - p->p_vaddr);
	}
	return UINT64_MAX;
}

int32_t rp_le32s(const uint8_t *p)
{
	return (int32_t)((uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24);
}

int32_t rp_codefile_s32(const struct rp_codefile *e, const uint8_t *p)
{
	return (int32_t)rp_elf_u32(&e->eh, p);
}

/* The PLT's bounds, and a Go pclntab's section (*go_off, *go_len; 0: none), from the section
 * names. */
static void index_sections(struct rp_codefile *e, uint64_t *go_off, uint64_t *go_len)
{
	const struct rp_elf *eh = &e->eh;
	Elf64_Shdr sh, names;
	*go_off = *go_len = 0;
	if (!rp_image_shdr(&e->im, eh, eh->h.e_shstrndx, &names) ||
	    !rp_image_in(&e->im, names.sh_offset, names.sh_size))
		return;
	for (unsigned i = 0; i < eh->h.e_shnum; i++) {
		if (!rp_image_shdr(&e->im, eh, i, &sh) || sh.sh_name >= names.sh_size)
			continue;
		const char *nm = (const char *)e->im.p + names.sh_offset + sh.sh_name;
		size_t n = strnlen(nm, names.sh_size - sh.sh_name);
		if (n == names.sh_size - sh.sh_name)
			continue; /* no NUL inside the table */
		if (!strncmp(nm, ".plt", 4)) {
			if (!e->plt_lo || sh.sh_addr < e->plt_lo)
				e->plt_lo = sh.sh_addr;
			if (sh.sh_addr + sh.sh_size > e->plt_hi)
				e->plt_hi = sh.sh_addr + sh.sh_size;
		}
		/* .gopclntab, or .data.rel.ro.gopclntab in a PIE */
		if (n >= 9 && !strcmp(nm + n - 9, "gopclntab") && sh.sh_type == SHT_PROGBITS &&
		    rp_image_in(&e->im, sh.sh_offset, sh.sh_size)) {
			*go_off = sh.sh_offset;
			*go_len = sh.sh_size;
		}
	}
}

/* The names of the functions: the file's own symbols; without a .symtab, its debug file's (the
 * code still comes from the file itself), else a Go program's pclntab. */
static void index_names(struct rp_codefile *e, struct ct_str build_id)
{
	uint64_t go_off, go_len;
	index_sections(e, &go_off, &go_len);
	rp_elfsyms_index(&e->syms, &e->im, &e->eh);
	if (e->syms.full)
		return;
	char path[4096], id[80];
	struct rp_elf deh;
	if (rp_debugfile_path(build_id, path, sizeof(path)) &&
	    rp_image_map(path, MAX_ELF_BYTES, &e->debug) == RP_IMAGE_OK) {
		if (rp_image_elf(&e->debug, &deh) && rp_image_build_id(&e->debug, &deh, id, sizeof(id)) &&
		    strlen(id) == build_id.len && !memcmp(id, build_id.p, build_id.len))
			rp_elfsyms_index(&e->debug_syms, &e->debug, &deh);
		if (!e->debug_syms.full) {
			memset(&e->debug_syms, 0, sizeof(e->debug_syms));
			rp_image_unmap(&e->debug);
		}
	}
	if (e->debug_syms.full)
		return;
	if (go_len)
		rp_gopclntab_parse(&e->go, e->im.p + go_off, go_len);
	else
		rp_gopclntab_find(&e->go, e->im.p, e->im.len);
}

/* .eh_frame_hdr: version 1, the table encoded datarel|sdata4 (what every linker writes). */
static void index_eh_frame(struct rp_codefile *e)
{
	for (unsigned i = 0; i < e->phnum; i++) {
		const Elf64_Phdr *p = &e->ph[i];
		if (p->p_type != PT_GNU_EH_FRAME || !rp_image_in(&e->im, p->p_offset, p->p_filesz) ||
		    p->p_filesz < 12)
			continue;
		const uint8_t *h = e->im.p + p->p_offset;
		if (h[0] != 1 || h[1] != 0x1b || h[2] != 0x03 || h[3] != 0x3b)
			return;
		uint64_t eh_ptr = p->p_vaddr + 4 + (int64_t)rp_codefile_s32(e, h + 4);
		uint32_t count = rp_elf_u32(&e->eh, h + 8);
		if ((uint64_t)count * 8 > p->p_filesz - 12)
			return;
		e->hdr_table = h + 12;
		e->hdr_count = count;
		e->hdr_vaddr = p->p_vaddr;
		e->eh_vaddr = eh_ptr;
		e->eh_off = rp_codefile_vaddr_to_off(e, eh_ptr);
		return;
	}
}

static bool open_file(struct rp_codefile *e, const char *path, struct ct_str want_id, bool names)
{
	memset(e, 0, sizeof(*e));
	if (rp_image_map(path, MAX_ELF_BYTES, &e->im) != RP_IMAGE_OK)
		return false;
	if (!rp_image_elf(&e->im, &e->eh) ||
	    (e->eh.h.e_phnum && !(e->ph = calloc(e->eh.h.e_phnum, sizeof(*e->ph))))) {
		rp_image_unmap(&e->im);
		return false;
	}
	for (e->phnum = 0; e->phnum < e->eh.h.e_phnum; e->phnum++)
		if (!rp_image_phdr(&e->im, &e->eh, e->phnum, &e->ph[e->phnum])) {
			rp_codefile_close(e);
			return false;
		}
	if (want_id.len) {
		char id[80];
		rp_image_build_id(&e->im, &e->eh, id, sizeof(id));
		if (strlen(id) != want_id.len || memcmp(id, want_id.p, want_id.len) != 0) {
			rp_codefile_close(e);
			return false;
		}
	}
	if (names)
		index_names(e, want_id);
	index_eh_frame(e);
	return true;
}

bool rp_codefile_open(struct rp_codefile *e, const char *path, struct ct_str want_id)
{
	return open_file(e, path, want_id, true);
}

bool rp_codefile_open_frames(struct rp_codefile *e, const char *path)
{
	return open_file(e, path, (struct ct_str){ 0 }, false);
}

bool rp_codefile_function_at(const struct rp_codefile *e, uint64_t va, uint64_t *start, uint64_t *end,
			     const char **name)
{
	if ((*name = rp_elfsyms_function_at(&e->debug_syms, va, start, end)) != NULL ||
	    (*name = rp_elfsyms_function_at(&e->syms, va, start, end)) != NULL ||
	    rp_gopclntab_function_at(&e->go, va, start, end, name))
		return true;
	*name = NULL;
	if (!e->hdr_table || e->eh_off == UINT64_MAX)
		return false;
	/* the last table entry whose start is <= va */
	uint32_t lo = 0, hi = e->hdr_count;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (e->hdr_vaddr + (int64_t)rp_codefile_s32(e, e->hdr_table + 8 * (size_t)mid) <= va)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return false;
	const uint8_t *ent = e->hdr_table + 8 * (size_t)(lo - 1);
	uint64_t fn = e->hdr_vaddr + (int64_t)rp_codefile_s32(e, ent);
	uint64_t fde = e->hdr_vaddr + (int64_t)rp_codefile_s32(e, ent + 4);
	uint64_t fde_off = rp_codefile_vaddr_to_off(e, fde);
	/* FDE: u32 length, u32 CIE pointer, pc_begin and pc_range as sdata4 (pcrel begin) */
	if (fde_off == UINT64_MAX || !rp_image_in(&e->im, fde_off, 16))
		return false;
	const uint8_t *f = e->im.p + fde_off;
	uint64_t begin = fde + 8 + (int64_t)rp_codefile_s32(e, f + 8);
	uint32_t range = (uint32_t)rp_codefile_s32(e, f + 12);
	if (rp_codefile_s32(e, f) == -1 || begin != fn || va - fn >= range)
		return false;
	*start = fn;
	*end = fn + range;
	return true;
}

bool rp_codefile_in_plt(const struct rp_codefile *e, uint64_t va)
{
	return va - e->plt_lo < e->plt_hi - e->plt_lo;
}

void rp_codefile_close(struct rp_codefile *e)
{
	free(e->ph);
	e->ph = NULL;
	e->phnum = 0;
	rp_image_unmap(&e->debug);
	rp_image_unmap(&e->im);
}
