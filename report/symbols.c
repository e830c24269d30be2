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

#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_ELF_BYTES (1024u << 20)
#define MAX_FILES 128

struct elf_file {
	char path[320];
	const uint8_t *map;
	size_t len;
	char build_id[41];
	uint64_t load_vaddr;      /* the vaddr of file offset 0: what a frame's offset counts from */
	const Elf64_Sym *syms;
	size_t nsyms;
	const char *strtab;
	size_t strtab_len;
};

struct symbolizer {
	struct elf_file files[MAX_FILES];
	size_t nfiles;
};

static bool in_file(const struct elf_file *f, uint64_t off, uint64_t len)
{
	return off <= f->len && len <= f->len - off;
}

static void read_build_id(struct elf_file *f, const Elf64_Shdr *sh)
{
	if (!in_file(f, sh->sh_offset, sh->sh_size))
		return;
	const uint8_t *p = f->map + sh->sh_offset;
	size_t left = sh->sh_size;
	while (left >= sizeof(Elf64_Nhdr)) {
		Elf64_Nhdr n;
		memcpy(&n, p, sizeof(n));
		size_t namesz = ((size_t)n.n_namesz + 3) & ~(size_t)3;
		size_t descsz = ((size_t)n.n_descsz + 3) & ~(size_t)3;
		if (namesz > left - sizeof(n) || descsz > left - sizeof(n) - namesz)
			return;
		if (n.n_type == NT_GNU_BUILD_ID && n.n_namesz == 4 && !memcmp(p + sizeof(n), "GNU", 4)) {
			const uint8_t *d = p + sizeof(n) + namesz;
			size_t k = 0;
			for (uint32_t j = 0; j < n.n_descsz && k + 2 < sizeof(f->build_id); j++, k += 2)
				snprintf(f->build_id + k, 3, "%02x", d[j]);
			f->build_id[k] = 0;
			return;
		}
		p += sizeof(n) + namesz + descsz;
		left -= sizeof(n) + namesz + descsz;
	}
}

/* Maps and indexes path; false when it is not a readable 64-bit little-endian ELF file. */
static bool elf_open(struct elf_file *f, const char *path)
{
	memset(f, 0, sizeof(*f));
	snprintf(f->path, sizeof(f->path), "%s", path);
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return false;
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < (off_t)sizeof(Elf64_Ehdr) ||
	    (uint64_t)st.st_size > MAX_ELF_BYTES) {
		close(fd);
		return false;
	}
	void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	close(fd);
	if (m == MAP_FAILED)
		return false;
	f->map = m;
	f->len = (size_t)st.st_size;
	Elf64_Ehdr eh;
	memcpy(&eh, f->map, sizeof(eh));
	if (memcmp(eh.e_ident, ELFMAG, SELFMAG) || eh.e_ident[EI_CLASS] != ELFCLASS64 ||
	    eh.e_ident[EI_DATA] != ELFDATA2LSB || eh.e_shentsize != sizeof(Elf64_Shdr) ||
	    !in_file(f, eh.e_shoff, (uint64_t)eh.e_shnum * sizeof(Elf64_Shdr)))
		return true; /* mapped (so it is unmapped later) but nothing to look up */
	if (eh.e_phentsize == sizeof(Elf64_Phdr) &&
	    in_file(f, eh.e_phoff, (uint64_t)eh.e_phnum * sizeof(Elf64_Phdr))) {
		for (unsigned i = 0; i < eh.e_phnum; i++) {
			Elf64_Phdr ph;
			memcpy(&ph, f->map + eh.e_phoff + i * sizeof(ph), sizeof(ph));
			if (ph.p_type == PT_LOAD && ph.p_offset == 0) {
				f->load_vaddr = ph.p_vaddr;
				break;
			}
		}
	}
	const Elf64_Shdr *sh = (const Elf64_Shdr *)(f->map + eh.e_shoff);
	const Elf64_Shdr *symtab = NULL, *dynsym = NULL;
	for (unsigned i = 0; i < eh.e_shnum; i++) {
		if (sh[i].sh_type == SHT_NOTE)
			read_build_id(f, &sh[i]);
		else if (sh[i].sh_type == SHT_SYMTAB)
			symtab = &sh[i];
		else if (sh[i].sh_type == SHT_DYNSYM)
			dynsym = &sh[i];
	}
	const Elf64_Shdr *use = symtab ? symtab : dynsym;
	if (use && use->sh_link < eh.e_shnum && use->sh_entsize == sizeof(Elf64_Sym) &&
	    in_file(f, use->sh_offset, use->sh_size) &&
	    in_file(f, sh[use->sh_link].sh_offset, sh[use->sh_link].sh_size) &&
	    (use->sh_offset % _Alignof(Elf64_Sym)) == 0) {
		f->syms = (const Elf64_Sym *)(f->map + use->sh_offset);
		f->nsyms = use->sh_size / sizeof(Elf64_Sym);
		f->strtab = (const char *)(f->map + sh[use->sh_link].sh_offset);
		f->strtab_len = sh[use->sh_link].sh_size;
	}
	return true;
}

static const struct elf_file *elf_get(struct symbolizer *s, const char *path)
{
	for (size_t i = 0; i < s->nfiles; i++)
		if (!strcmp(s->files[i].path, path))
			return s->files[i].map ? &s->files[i] : NULL;
	if (s->nfiles == MAX_FILES)
		return NULL;
	struct elf_file *f = &s->files[s->nfiles++];
	if (!elf_open(f, path)) {
		f->map = NULL; /* remembered as unreadable */
		return NULL;
	}
	return f;
}

/* The function containing vaddr: its name and start, or NULL. */
static const char *elf_function_at(const struct elf_file *f, uint64_t vaddr, uint64_t *start)
{
	const Elf64_Sym *best = NULL;
	for (size_t i = 0; i < f->nsyms; i++) {
		const Elf64_Sym *y = &f->syms[i];
		if (ELF64_ST_TYPE(y->st_info) != STT_FUNC || y->st_shndx == SHN_UNDEF || !y->st_size)
			continue;
		if (vaddr >= y->st_value && vaddr - y->st_value < y->st_size &&
		    y->st_name < f->strtab_len) {
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
static bool name_frame(struct symbolizer *s, const struct rp_proc *p, struct ct_str frame,
		       char *out, size_t cap)
{
	if (memchr(frame.p, '!', frame.len))
		return false;
	const char *plus = memchr(frame.p, '+', frame.len);
	if (!plus)
		return false;
	struct ct_str mod = { .p = frame.p, .len = (uint32_t)(plus - frame.p) };
	char num[24];
	size_t nlen = frame.len - (size_t)(plus + 1 - frame.p);
	if (nlen < 3 || nlen >= sizeof(num))
		return false;
	memcpy(num, plus + 1, nlen);
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
		snprintf(out, cap, "%.*s!%s+0x%llx", (int)mod.len, mod.p, fn,
			 (unsigned long long)(f->load_vaddr + off - start));
		return true;
	}
	return false;
}

/* A call-site string with every frame the modules can name renamed; NULL when none was. */
static char *name_callsite(struct symbolizer *s, const struct rp_proc *p, struct ct_str cs)
{
	unsigned n = rp_str_nparts(cs, '\n');
	size_t cap = (size_t)cs.len + 256u * n + 1, used = 0;
	char *buf = malloc(cap);
	bool changed = false;
	if (!buf)
		return NULL;
	for (unsigned i = 0; i < n; i++) {
		struct ct_str f = rp_str_part(cs, '\n', i);
		char named[256];
		int w;
		if (name_frame(s, p, f, named, sizeof(named))) {
			w = snprintf(buf + used, cap - used, "%s%s", i ? "\n" : "", named);
			changed = true;
		} else {
			w = snprintf(buf + used, cap - used, "%s%.*s", i ? "\n" : "", (int)f.len, f.p);
		}
		if (w < 0 || (size_t)w >= cap - used)
			break;
		used += (size_t)w;
	}
	if (!changed) {
		free(buf);
		return NULL;
	}
	return buf;
}

static void rename_callsite(struct symbolizer *s, struct rp_proc *p, struct ct_str *cs)
{
	if (!cs->len)
		return;
	char *named = name_callsite(s, p, *cs);
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
		if (s->files[i].map)
			munmap((void *)s->files[i].map, s->files[i].len);
	free(s);
}
