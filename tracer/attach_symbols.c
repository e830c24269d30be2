/* SPDX-License-Identifier: MIT */
/*
 * attach_symbols.c - where a function of a library is in another process: the library's file
 * as the process maps it (/proc/PID/maps), read through /proc/PID/map_files (the very file
 * mapped, even one deleted or replaced on disk since, by a package upgrade or a rebuild), else
 * /proc/PID/root (the process may live in another mount namespace), its dynamic symbol table read by the reporter's ELF readers
 * (report/elfsyms.c), and the load bias from the mapping of the file's first page.
 */
#include "attach.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "elfimage.h"
#include "elfsyms.h"

#define IMAGE_CAP (256u << 20) /* a libc is a few MB; a bound on what we map */

struct mapped_file {
	char path[4096];
	uint64_t first_start, first_end; /* the mapping of file offset 0 */
	bool found;
};

/* The next file mapping of a /proc/PID/maps stream: its range, file offset and path (in line;
 * " (deleted)" cut off). False at the end. */
struct maps_entry {
	uint64_t start, end, off;
	const char *path, *base;
};

static bool next_file_mapping(FILE *f, char *line, size_t cap, struct maps_entry *e)
{
	while (fgets(line, (int)cap, f)) {
		int name_at = 0;
		if (sscanf(line, "%" SCNx64 "-%" SCNx64 " %*s %" SCNx64 " %*s %*s %n", &e->start, &e->end,
			   &e->off, &name_at) < 3 ||
		    !name_at || line[name_at] != '/')
			continue;
		char *path = line + name_at;
		path[strcspn(path, "\n")] = 0;
		size_t len = strlen(path);
		if (len > 10 && !strcmp(path + len - 10, " (deleted)"))
			path[len - 10] = 0;
		e->path = path;
		e->base = strrchr(path, '/') + 1;
		return true;
	}
	return false;
}

static FILE *open_maps(pid_t pid)
{
	char maps[64];
	snprintf(maps, sizeof(maps), "/proc/%d/maps", (int)pid);
	return fopen(maps, "re");
}

/* The first file in pid's maps whose base name starts with prefix, and where its first page is. */
static bool find_mapped(pid_t pid, const char *prefix, struct mapped_file *mf)
{
	FILE *f = open_maps(pid);
	memset(mf, 0, sizeof(*mf));
	if (!f)
		return false;
	char line[4096 + 256];
	size_t plen = strlen(prefix);
	struct maps_entry e;
	while (next_file_mapping(f, line, sizeof(line), &e)) {
		if (strncmp(e.base, prefix, plen) != 0)
			continue;
		if (mf->found && strcmp(mf->path, e.path) != 0)
			continue; /* another file of the same name: the first one is ours */
		if (!mf->found) {
			snprintf(mf->path, sizeof(mf->path), "%s", e.path);
			mf->found = true;
		}
		if (e.off == 0 && !mf->first_start) {
			mf->first_start = e.start;
			mf->first_end = e.end;
		}
	}
	fclose(f);
	return mf->found && mf->first_start;
}

size_t ct_remote_mappings(pid_t pid, struct ct_remote_mapping **out)
{
	*out = NULL;
	FILE *f = open_maps(pid);
	if (!f)
		return 0;
	char line[4096 + 256];
	struct maps_entry e;
	size_t n = 0, cap = 0;
	while (next_file_mapping(f, line, sizeof(line), &e)) {
		if (n == cap) {
			size_t c = cap ? 2 * cap : 64;
			struct ct_remote_mapping *m = realloc(*out, c * sizeof(*m));
			if (!m)
				break;
			*out = m;
			cap = c;
		}
		char *path = strdup(e.path);
		if (!path)
			break;
		(*out)[n++] =
			(struct ct_remote_mapping){ e.start, e.end, e.off, path, path + (e.base - e.path) };
	}
	fclose(f);
	return n;
}

void ct_remote_mappings_free(struct ct_remote_mapping *m, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(m[i].path);
	free(m);
}

bool ct_remote_maps_file(pid_t pid, const char *prefix)
{
	struct mapped_file mf;
	return find_mapped(pid, prefix, &mf);
}

uint64_t ct_remote_symbol(pid_t pid, const char *prefix, const char *name, char *path, size_t cap)
{
	struct mapped_file mf;
	if (!find_mapped(pid, prefix, &mf))
		return 0;
	if (path)
		snprintf(path, cap, "%s", mf.path);
	char file[4096 + 64];
	snprintf(file, sizeof(file), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)pid, mf.first_start,
		 mf.first_end);
	struct rp_image im;
	if (rp_image_map(file, IMAGE_CAP, &im) != RP_IMAGE_OK) {
		snprintf(file, sizeof(file), "/proc/%d/root%s", (int)pid, mf.path);
		if (rp_image_map(file, IMAGE_CAP, &im) != RP_IMAGE_OK)
			return 0;
	}
	uint64_t addr = 0, value;
	struct rp_elf eh;
	struct rp_elfsyms syms;
	if (rp_image_elf(&im, &eh)) {
		/* the bias: where the first PT_LOAD's page went */
		uint64_t first_vaddr = UINT64_MAX;
		Elf64_Phdr ph;
		for (unsigned i = 0; i < eh.h.e_phnum && rp_image_phdr(&im, &eh, i, &ph); i++)
			if (ph.p_type == PT_LOAD && ph.p_vaddr < first_vaddr)
				first_vaddr = ph.p_vaddr & ~(uint64_t)0xfff;
		rp_elfsyms_index(&syms, &im, &eh);
		if (first_vaddr != UINT64_MAX && rp_elfsyms_lookup(&syms, name, &value) && value)
			addr = mf.first_start - first_vaddr + value;
	}
	rp_image_unmap(&im);
	return addr;
}
