/* SPDX-License-Identifier: MIT */
/*
 * elfsyms.c - function names from an ELF file's symbol table (.symtab, else .dynsym), and the
 * path of its separate debug file, found by build id as gdb finds it: Debian's -dbgsym packages
 * install /usr/lib/debug/.build-id/xx/yyyy.debug, whose .symtab names the static functions a
 * stripped library or program lost. The file and its tables come from a trace: every offset is
 * checked against the mapping, and a name must end inside its string table.
 */
#include "elfsyms.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The default debug-file directory, as gdb's and Debian's -dbgsym packages have it. */
#define DEBUG_DIR "/usr/lib/debug"

void rp_elfsyms_index(struct rp_elfsyms *s, const struct rp_image *im, const struct rp_elf *eh)
{
	memset(s, 0, sizeof(*s));
	Elf64_Shdr sh, use = { 0 }, link;
	bool have = false;
	size_t size = rp_elf_sym_size(eh);
	for (unsigned i = 0; i < eh->h.e_shnum; i++) {
		if (!rp_image_shdr(im, eh, i, &sh) || sh.sh_entsize != size)
			continue;
		if (sh.sh_type == SHT_SYMTAB || (sh.sh_type == SHT_DYNSYM && !have)) {
			use = sh;
			have = true;
		}
		if (sh.sh_type == SHT_SYMTAB)
			break;
	}
	if (!have || !rp_image_in(im, use.sh_offset, use.sh_size) ||
	    !rp_image_shdr(im, eh, use.sh_link, &link) || !rp_image_in(im, link.sh_offset, link.sh_size))
		return;
	s->im = *im;
	s->eh = *eh;
	s->off = use.sh_offset;
	s->entsize = size;
	s->nsyms = use.sh_size / size;
	s->strtab = (const char *)im->p + link.sh_offset;
	s->strtab_len = link.sh_size;
	s->full = use.sh_type == SHT_SYMTAB;
}

bool rp_elfsyms_get(const struct rp_elfsyms *s, size_t i, Elf64_Sym *y)
{
	return i < s->nsyms && rp_image_sym(&s->im, &s->eh, s->off + (uint64_t)i * s->entsize, y);
}

bool rp_elfsyms_lookup(const struct rp_elfsyms *s, const char *name, uint64_t *value)
{
	Elf64_Sym y;
	size_t n = strlen(name) + 1;
	for (size_t i = 0; rp_elfsyms_get(s, i, &y); i++) {
		unsigned type = ELF64_ST_TYPE(y.st_info);
		if ((type != STT_FUNC && type != STT_OBJECT) || y.st_shndx == SHN_UNDEF ||
		    y.st_name >= s->strtab_len || s->strtab_len - y.st_name < n ||
		    memcmp(s->strtab + y.st_name, name, n))
			continue;
		*value = y.st_value;
		return true;
	}
	return false;
}

const char *rp_elfsyms_function_at(const struct rp_elfsyms *s, uint64_t va, uint64_t *start, uint64_t *end)
{
	Elf64_Sym y;
	for (size_t i = 0; rp_elfsyms_get(s, i, &y); i++) {
		if (ELF64_ST_TYPE(y.st_info) != STT_FUNC || y.st_shndx == SHN_UNDEF || !y.st_size ||
		    va - y.st_value >= y.st_size || y.st_name >= s->strtab_len ||
		    !memchr(s->strtab + y.st_name, 0, s->strtab_len - y.st_name))
			continue;
		*start = y.st_value;
		*end = y.st_value + y.st_size;
		return s->strtab + y.st_name;
	}
	return NULL;
}

bool rp_debugfile_path(struct ct_str build_id, char *out, size_t cap)
{
	if (build_id.len < 4 || build_id.len > 128)
		return false;
	for (uint32_t i = 0; i < build_id.len; i++)
		if (!strchr("0123456789abcdef", build_id.p[i]) || !build_id.p[i])
			return false;
	const char *dir = getenv("CRYPTRACE_DEBUG_DIR");
	if (!dir || !*dir)
		dir = DEBUG_DIR;
	int n = snprintf(out, cap, "%s/.build-id/%.2s/%.*s.debug", dir, build_id.p, (int)build_id.len - 2,
			 build_id.p + 2);
	return n > 0 && (size_t)n < cap;
}
