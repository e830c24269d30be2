/* SPDX-License-Identifier: MIT */
/*
 * symbols.c - names for the call-site frames the preload could not name. In a traced process,
 * dladdr only sees exported symbols, so a frame in a static function (or in a module whose
 * export table does not cover it) prints as "module+0xoff". The trace names each such module's
 * file and GNU build id (MODULE records); here the offset is looked up in that file's symbol
 * table (.symtab, else .dynsym), or in its installed debug file
 * (/usr/lib/debug/.build-id/xx/yyyy.debug: elfsyms.c), and the frame becomes
 * "module!function+0xdelta".
 *
 * Only when the build id matches (a file replaced since the trace was taken would give wrong
 * names), and only regular files, mapped read-only with every offset bounds-checked: the paths
 * come from the trace, which may come from anywhere. Each file is parsed at most once.
 */
#include "model.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elfimage.h"
#include "elfsyms.h"

#define MAX_ELF_BYTES (1024u << 20)
#define MAX_FILES 128

struct elf_file {
	char path[320];
	struct rp_image im; /* im.p NULL: unreadable, remembered as such */
	char build_id[41];
	uint64_t load_vaddr; /* the vaddr of file offset 0: what a frame's offset counts from */
	struct rp_elfsyms syms;
};

struct symbolizer {
	struct elf_file files[MAX_FILES];
	size_t nfiles;
};

/* Maps and indexes path; false when it is not a readable file of at most MAX_ELF_BYTES. A file
 * that is no ELF file (of either class and byte order: a trace from an i386 or a mips target is
 * reported here too) stays mapped (it is unmapped with the rest) with nothing to look up. */
static bool elf_open(struct elf_file *f, const char *path)
{
	memset(f, 0, sizeof(*f));
	snprintf(f->path, sizeof(f->path), "%s", path);
	if (rp_image_map(path, MAX_ELF_BYTES, &f->im) != RP_IMAGE_OK)
		return false;
	if (f->im.file_size > MAX_ELF_BYTES) {
		rp_image_unmap(&f->im);
		return false;
	}
	const struct rp_image *im = &f->im;
	struct rp_elf eh;
	Elf64_Shdr sh;
	Elf64_Phdr ph;
	if (!rp_image_elf(im, &eh) || (eh.h.e_shnum && !rp_image_shdr(im, &eh, eh.h.e_shnum - 1, &sh)))
		return true;
	for (unsigned i = 0; rp_image_phdr(im, &eh, i, &ph); i++)
		if (ph.p_type == PT_LOAD && ph.p_offset == 0) {
			f->load_vaddr = ph.p_vaddr;
			break;
		}
	rp_image_build_id(im, &eh, f->build_id, sizeof(f->build_id));
	rp_elfsyms_index(&f->syms, im, &eh);
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

/* The file that has names for module m: its installed debug file, else the module itself, when
 * its build id is the one the trace recorded (no id recorded: the module as it is). */
static const struct elf_file *file_for(struct symbolizer *s, const struct ct_module *m)
{
	char path[320];
	if (rp_debugfile_path(m->build_id, path, sizeof(path))) {
		const struct elf_file *d = elf_get(s, path);
		if (d && d->syms.nsyms && rp_str_is(m->build_id, d->build_id))
			return d;
	}
	snprintf(path, sizeof(path), "%.*s", (int)m->path.len, m->path.p);
	const struct elf_file *f = elf_get(s, path);
	if (!f || !f->syms.nsyms)
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
		uint64_t start, end;
		/* a return address: the call is the byte before it */
		const char *fn = f ? rp_elfsyms_function_at(&f->syms, f->load_vaddr + off - 1, &start, &end)
				   : NULL;
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
