/* SPDX-License-Identifier: MIT */
/*
 * symbols.c - names for the call-site frames the preload could not name. In a traced process,
 * dladdr only sees exported symbols, so a frame in a static function (or in a module whose
 * export table does not cover it) prints as "module+0xoff". The trace names each such module's
 * file and GNU build id (MODULE records); here the offset is looked up in that file's symbol
 * table (.symtab, else .dynsym), or in its installed debug file
 * (/usr/lib/debug/.build-id/xx/yyyy.debug), and the frame becomes "module!function+0xdelta".
 *
 * Only when the build id matches (a file replaced since the trace was taken would give wrong
 * names), and only regular files, mapped read-only with every offset bounds-checked: the paths
 * come from the trace, which may come from anywhere. Each file is parsed at most once.
 */
#include "model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elf_note.h"
#include "elfimage.h"

#define MAX_ELF_BYTES (1024u << 20)
#define MAX_FILES 128

struct elf_file {
	char path[320];
	struct rp_image im; /* im.p NULL: unreadable, remembered as such */
	char build_id[41];
	uint64_t load_vaddr; /* the vaddr of file offset 0: what a frame's offset counts from */
	const Elf64_Sym *syms;
	size_t nsyms;
	const char *strtab;
	size_t strtab_len;
};

struct symbolizer {
	struct elf_file files[MAX_FILES];
	size_t nfiles;
};

/* Maps and indexes path; false when it is not a readable file of at most MAX_ELF_BYTES. A file
 * that is not a 64-bit little-endian ELF stays mapped (it is unmapped with the rest) with
 * nothing to look up. */
static bool elf_open(struct elf_file *f, const char *path)
{
	memset(f, 0, sizeof(*f));
	snprintf(f->path, sizeof(f->path), "%s", path);
	if (rp_image_map(path, MAX_ELF_BYTES, &f->im) != RP_IMAGE_OK)
		return false;
	if (f->im.file_size > MAX_ELF_BYTES || f->im.len < sizeof(Elf64_Ehdr)) {
		rp_image_unmap(&f->im);
		return false;
	}
	const struct rp_image *im = &f->im;
	const Elf64_Ehdr *eh = rp_image_elf64(im);
	if (!eh || eh->e_shentsize != sizeof(Elf64_Shdr) ||
	    !rp_image_in(im, eh->e_shoff, (uint64_t)eh->e_shnum * sizeof(Elf64_Shdr)))
		return true;
	if (eh->e_phentsize == sizeof(Elf64_Phdr) &&
	    rp_image_in(im, eh->e_phoff, (uint64_t)eh->e_phnum * sizeof(Elf64_Phdr))) {
		for (unsigned i = 0; i < eh->e_phnum; i++) {
			Elf64_Phdr ph;
			memcpy(&ph, im->p + eh->e_phoff + i * sizeof(ph), sizeof(ph));
			if (ph.p_type == PT_LOAD && ph.p_offset == 0) {
				f->load_vaddr = ph.p_vaddr;
				break;
			}
		}
	}
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(im->p + eh->e_shoff);
	const Elf64_Shdr *symtab = NULL, *dynsym = NULL;
	for (unsigned i = 0; i < eh->e_shnum; i++) {
		if (sh[i].sh_type == SHT_NOTE && rp_image_in(im, sh[i].sh_offset, sh[i].sh_size))
			ct_elf_build_id(im->p + sh[i].sh_offset, sh[i].sh_size, f->build_id,
					sizeof(f->build_id));
		else if (sh[i].sh_type == SHT_SYMTAB)
			symtab = &sh[i];
		else if (sh[i].sh_type == SHT_DYNSYM)
			dynsym = &sh[i];
	}
	const Elf64_Shdr *use = symtab ? symtab : dynsym;
	if (use && use->sh_link < eh->e_shnum && use->sh_entsize == sizeof(Elf64_Sym) &&
	    rp_image_in(im, use->sh_offset, use->sh_size) &&
	    rp_image_in(im, sh[use->sh_link].sh_offset, sh[use->sh_link].sh_size) &&
	    (use->sh_offset % _Alignof(Elf64_Sym)) == 0) {
		f->syms = (const Elf64_Sym *)(im->p + use->sh_offset);
		f->nsyms = use->sh_size / sizeof(Elf64_Sym);
		f->strtab = (const char *)(im->p + sh[use->sh_link].sh_offset);
		f->strtab_len = sh[use->sh_link].sh_size;
	}
	return true;
}

static const struct elf_file *elf_get(struct symbolizer *s, const char *path)
{
	for (size_t i = 0; i < s->nfiles; i++)
		if (!strcmp(s->files[i].path, path))
			return s->files[i].im.p ? &s->files[i] : NULL;
	if (s->nfiles == MAX_FILES)
		return NULL;
	struct elf_file *f = &s->files[s->nfiles++];
	return elf_open(f, path) ? f : NULL; /* a failed open leaves im.p NULL: remembered */
}

/* The function containing vaddr: its name and start, or NULL. */
static const char *elf_function_at(const struct elf_file *f, uint64_t vaddr, uint64_t *start)
{
	const Elf64_Sym *best = NULL;
	for (size_t i = 0; i < f->nsyms; i++) {
		const Elf64_Sym *y = &f->syms[i];
		if (ELF64_ST_TYPE(y->st_info) != STT_FUNC || y->st_shndx == SHN_UNDEF || !y->st_size)
			continue;
		if (vaddr >= y->st_value && vaddr - y->st_value < y->st_size && y->st_name < f->strtab_len) {
			best = y;
			break;
		}
	}
	if (!best || !memchr(f->strtab + best->st_name, 0, f->strtab_len - best->st_name))
		return NULL;
	*start = best->st_value;
	return f->strtab + best->st_name;
}

/* The file that has names for module m: its installed debug file, else the module itself, when
 * its build id is the one the trace recorded (no id recorded: the module as it is). */
static const struct elf_file *file_for(struct symbolizer *s, const struct ct_module *m)
{
	char path[320];
	if (m->build_id.len > 2 && m->build_id.len < 64) {
		snprintf(path, sizeof(path), "/usr/lib/debug/.build-id/%.2s/%.*s.debug", m->build_id.p,
			 (int)m->build_id.len - 2, m->build_id.p + 2);
		const struct elf_file *d = elf_get(s, path);
		if (d && d->nsyms && rp_str_is(m->build_id, d->build_id))
			return d;
	}
	snprintf(path, sizeof(path), "%.*s", (int)m->path.len, m->path.p);
	const struct elf_file *f = elf_get(s, path);
	if (!f || !f->nsyms)
		return NULL;
	if (m->build_id.len && !rp_str_is(m->build_id, f->build_id))
		return NULL;
	return f;
}

/* "module+0xoff" -> "module!function+0xdelta" when the process's modules can name it. */
struct naming {
	struct symbolizer *s;
	const struct rp_proc *p;
};

static bool name_frame(void *ctx, struct ct_str frame, char *out, size_t cap)
{
	struct symbolizer *s = ((struct naming *)ctx)->s;
	const struct rp_proc *p = ((struct naming *)ctx)->p;
	struct ct_str mod = rp_frame_module(frame);
	if (rp_frame_has_symbol(frame) || mod.len == frame.len)
		return false; /* named already, or no "+0xoff" */
	char num[24];
	size_t nlen = frame.len - mod.len - 1;
	if (nlen < 3 || nlen >= sizeof(num))
		return false;
	memcpy(num, frame.p + mod.len + 1, nlen);
	num[nlen] = 0;
	char *end;
	unsigned long long off = strtoull(num, &end, 16);
	if (*end || off == 0)
		return false;
	for (size_t i = 0; i < p->nmodules; i++) {
		if (!rp_str_eq(p->modules[i].name, mod))
			continue;
		const struct elf_file *f = file_for(s, &p->modules[i]);
		uint64_t start;
		/* a return address: the call is the byte before it */
		const char *fn = f ? elf_function_at(f, f->load_vaddr + off - 1, &start) : NULL;
		if (!fn)
			return false;
		int w = snprintf(out, cap, "%.*s!%s+0x%llx", (int)mod.len, mod.p, fn,
				 (unsigned long long)(f->load_vaddr + off - start));
		return w > 0 && (size_t)w < cap; /* a name cut short is no name */
	}
	return false;
}

static void rename_callsite(struct symbolizer *s, struct rp_proc *p, struct ct_str *cs)
{
	if (!cs->len)
		return;
	struct naming n = { .s = s, .p = p };
	char *named = rp_callsite_rewrite(*cs, name_frame, &n);
	if (!named)
		return;
	if (!rp_proc_own(p, named)) {
		free(named);
		return;
	}
	*cs = ct_str_from(named);
}

void rp_symbolize(struct rp_model *m)
{
	struct symbolizer *s = calloc(1, sizeof(*s));
	if (!s)
		return;
	for (size_t i = 0; i < m->nprocs; i++) {
		struct rp_proc *p = &m->procs[i];
		if (!p->nmodules)
			continue;
		for (size_t k = 0; k < p->npaths; k++)
			rename_callsite(s, p, &p->paths[k].def.callsite);
		for (size_t k = 0; k < p->nevents; k++)
			rename_callsite(s, p, &p->events[k].ev.callsite);
	}
	for (size_t i = 0; i < s->nfiles; i++)
		rp_image_unmap(&s->files[i].im);
	free(s);
}
