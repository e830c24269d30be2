/* SPDX-License-Identifier: MIT */
/*
 * unwind_files.c - a file's unwind tables for the unwinder (unwind_files.h): the file mapped
 * by the reporter's ELF reader (report/codefile.c, which finds .eh_frame_hdr), .eh_frame bounded
 * by the loadable segment that holds it.
 */
#include "unwind_files.h"

#include <stdlib.h>
#include <string.h>

/* .eh_frame by its section header, for a file without .eh_frame_hdr (a static executable: GCC
 * passes --eh-frame-hdr to the linker for dynamic links only): an index of its FDEs. */
static bool index_eh_frame_section(struct ct_file_cfi *c)
{
	const struct rp_codefile *e = &c->cf;
	Elf64_Shdr names, sh;
	if (!rp_image_shdr(&e->im, &e->eh, e->eh.h.e_shstrndx, &names) ||
	    !rp_image_in(&e->im, names.sh_offset, names.sh_size))
		return false;
	for (unsigned i = 0; i < e->eh.h.e_shnum; i++) {
		if (!rp_image_shdr(&e->im, &e->eh, i, &sh) || sh.sh_type != SHT_PROGBITS ||
		    sh.sh_name >= names.sh_size || names.sh_size - sh.sh_name < sizeof(".eh_frame") ||
		    memcmp(e->im.p + names.sh_offset + sh.sh_name, ".eh_frame", sizeof(".eh_frame")) != 0 ||
		    !rp_image_in(&e->im, sh.sh_offset, sh.sh_size))
			continue;
		c->t = (struct ct_unwind_tables){ .eh = e->im.p + sh.sh_offset,
						  .eh_len = (size_t)sh.sh_size,
						  .eh_vaddr = sh.sh_addr,
						  .hdr_vaddr = sh.sh_addr };
		if (!ct_unwind_index(c->t.eh, c->t.eh_len, c->t.eh_vaddr, &c->own_table, &c->t.count))
			return false;
		c->t.table = c->own_table;
		return true;
	}
	return false;
}

const struct ct_unwind_tables *ct_file_cfi_tables(struct ct_file_cfi *c, const char *path)
{
	if (c->tried)
		return c->ok ? &c->t : NULL;
	c->tried = true;
	if (!rp_codefile_open_frames(&c->cf, path))
		return NULL;
	const struct rp_codefile *e = &c->cf;
	if (e->eh.h.e_machine != EM_X86_64 || !e->eh.is64) { /* the unwinder reads x86-64 CFI only */
		rp_codefile_close(&c->cf);
		return NULL;
	}
	if (!e->hdr_table)
		c->ok = index_eh_frame_section(c);
	for (unsigned i = 0; e->hdr_table && e->eh_off != UINT64_MAX && i < e->phnum && !c->ok; i++) {
		const Elf64_Phdr *ph = &e->ph[i];
		if (ph->p_type != PT_LOAD || e->eh_off - ph->p_offset >= ph->p_filesz)
			continue;
		uint64_t end = ph->p_offset + ph->p_filesz;
		if (end > e->im.len)
			end = e->im.len;
		if (e->eh_off >= end)
			break;
		c->t = (struct ct_unwind_tables){ .eh = e->im.p + e->eh_off,
						  .eh_len = (size_t)(end - e->eh_off),
						  .eh_vaddr = e->eh_vaddr,
						  .table = e->hdr_table,
						  .count = e->hdr_count,
						  .hdr_vaddr = e->hdr_vaddr };
		c->ok = true;
	}
	if (!c->ok)
		rp_codefile_close(&c->cf);
	return c->ok ? &c->t : NULL;
}

uint64_t ct_file_cfi_vaddr(const struct ct_file_cfi *c, uint64_t off)
{
	return c->ok ? rp_codefile_off_to_vaddr(&c->cf, off) : UINT64_MAX;
}

void ct_file_cfi_close(struct ct_file_cfi *c)
{
	if (c->ok)
		rp_codefile_close(&c->cf);
	free(c->own_table);
	memset(c, 0, sizeof(*c));
}
