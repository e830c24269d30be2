/* SPDX-License-Identifier: MIT */
/*
 * mapped.c - every shared object the process mapped, written as MODULE records flagged
 * CT_MODULE_MAPPED. A crypto library linked statically into a shared object is invisible to the
 * hooks (pip's cryptography wheel carries OpenSSL inside _rust.abi3.so, which Python dlopens
 * late); the report can only name what did the work if it knows what was mapped, so each object
 * is named once per trace file, at the first flush after it appeared. dl_iterate_phdr reads the
 * loader's list in memory (no syscall: safe in a seccomp sandbox), and its load counter lets a
 * flush that finds nothing new stop after the first object.
 */
#include <link.h>
#include <stddef.h>
#include <string.h>

#include "elf_note.h"
#include "mapped.h"
#include "trace_format.h"

/* Objects named in this trace file (FNV-1a of the path). A process that maps more than this
 * names the first ones only; the report says what it found among those. */
#define MAX_MAPPED 1024

static uint64_t named[MAX_MAPPED];
static unsigned nnamed;
static unsigned long long seen_adds = ~0ull, seen_subs = ~0ull;

struct walk {
	uint8_t *buf;
	size_t cap, used;
	bool full;    /* a record did not fit: the rest at the next call */
	bool counted; /* this libc reports load counters (dlpi_adds, dlpi_subs) */
	unsigned long long adds, subs;
};

static uint64_t path_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
	return h;
}

static bool is_named(uint64_t h)
{
	for (unsigned i = 0; i < nnamed; i++)
		if (named[i] == h)
			return true;
	return false;
}

static int counters_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct walk *w = arg;
	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
		w->adds = info->dlpi_adds;
		w->subs = info->dlpi_subs;
		w->counted = true;
	}
	return 1;
}

/* The object this code is in: never named (the reporter knows what cryptrace is). */
static bool is_self(const struct dl_phdr_info *info)
{
	uintptr_t me = (uintptr_t)&is_self;
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t lo = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_LOAD && me >= lo && me < lo + ph->p_memsz)
			return true;
	}
	return false;
}

static int object_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct walk *w = arg;
	const char *path = info->dlpi_name;
	/* the main program ("": its file is in the header) and the vDSO (no file) */
	if (!path || path[0] != '/' || is_self(info))
		return 0;
	uint64_t h = path_hash(path);
	if (is_named(h) || nnamed == MAX_MAPPED)
		return 0;
	char build_id[41] = "";
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_NOTE && ct_elf_build_id((const uint8_t *)(info->dlpi_addr + ph->p_vaddr),
							     ph->p_memsz, build_id, sizeof(build_id)))
			break;
	}
	const char *base = strrchr(path, '/') + 1;
	struct ct_module rec = { .name = ct_str_from(base),
				 .path = ct_str_from(path),
				 .build_id = ct_str_from(build_id),
				 .flags = CT_MODULE_MAPPED };
	size_t n = ct_encode_module(w->buf + w->used, w->cap - w->used, &rec);
	if (!n) {
		w->full = true;
		return 1;
	}
	w->used += n;
	named[nnamed++] = h;
	return 0;
}

size_t ct_mapped_encode(uint8_t *buf, size_t cap, bool all)
{
	struct walk w = { .buf = buf, .cap = cap };
	dl_iterate_phdr(counters_cb, &w);
	if (all) {
		nnamed = 0;
		seen_adds = seen_subs = ~0ull;
	} else if (w.counted && w.adds == seen_adds && w.subs == seen_subs) {
		return 0;
	}
	dl_iterate_phdr(object_cb, &w);
	if (!w.full) { /* everything mapped now is named: nothing to do until the next dlopen */
		seen_adds = w.adds;
		seen_subs = w.subs;
	}
	return w.used;
}
