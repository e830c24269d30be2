/* SPDX-License-Identifier: MIT */
/*
 * dl_find_object.c - glibc's _dl_find_object, for the unwinder linked into this library where the
 * C library has none (musl; meson's feature test). Debian's libgcc_eh (the _Unwind_Backtrace that
 * callsite.c calls without backtrace()) was built against glibc 2.36 and finds each frame's
 * .eh_frame_hdr by calling _dl_find_object, with no fallback. This one answers from
 * dl_iterate_phdr: the object whose PT_LOAD segment holds pc, and its PT_GNU_EH_FRAME. It reads
 * the loader's list in memory (no syscall, as callsite.c needs in a seccomp sandbox) and is
 * hidden: it binds libgcc_eh's reference inside this library and is never exported, so a
 * program's own libc stays untouched.
 *
 * The layout is glibc's (<dlfcn.h>) where the structure has no dlfo_eh_dbase or dlfo_eh_count
 * (x86-64, aarch64, mips): the architectures this file is built for.
 */
#include <link.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ct_config.h"
#include "dl_find_object.h"

#ifndef CT_HAVE_BACKTRACE /* callsite.c calls _Unwind_Backtrace itself */
#include <dlfcn.h>

#ifndef CT_HAVE__DL_FIND_OBJECT
#if defined(__i386__) || defined(__arm__) || defined(__nios2__)
#error "_dl_find_object's structure has more fields on this architecture: add them here"
#endif

struct dl_find_object {
	unsigned long long dlfo_flags;
	void *dlfo_map_start, *dlfo_map_end;
	struct link_map *dlfo_link_map; /* left NULL: libgcc reads dlfo_eh_frame only */
	void *dlfo_eh_frame;
	unsigned long long dlfo_reserved[7];
};

struct find_query {
	uintptr_t pc;
	struct dl_find_object *out;
};

static int find_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct find_query *q = arg;
	uintptr_t lo = UINTPTR_MAX, hi = 0;
	bool holds = false;
	void *eh_frame = NULL;
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		uintptr_t start = info->dlpi_addr + ph->p_vaddr;
		if (ph->p_type == PT_GNU_EH_FRAME)
			eh_frame = (void *)start;
		if (ph->p_type != PT_LOAD)
			continue;
		if (q->pc - start < ph->p_memsz)
			holds = true;
		if (start < lo)
			lo = start;
		if (start + ph->p_memsz > hi)
			hi = start + ph->p_memsz;
	}
	if (!holds)
		return 0;
	*q->out = (struct dl_find_object){ .dlfo_map_start = (void *)lo,
					   .dlfo_map_end = (void *)hi,
					   .dlfo_eh_frame = eh_frame };
	return 1;
}

__attribute__((visibility("hidden"))) int _dl_find_object(void *pc, struct dl_find_object *result);
__attribute__((visibility("hidden"))) int _dl_find_object(void *pc, struct dl_find_object *result)
{
	struct find_query q = { .pc = (uintptr_t)pc, .out = result };
	return dl_iterate_phdr(find_cb, &q) ? 0 : -1;
}
#endif

/* libgcc aborts when the frame that calls _Unwind_Backtrace has no FDE it can find: a library
 * linked without --eh-frame-hdr (Debian's musl-gcc drops it unless asked) must not unwind. */
bool ct_unwind_self_ok(void)
{
	struct dl_find_object o;
	return _dl_find_object((void *)ct_unwind_self_ok, &o) == 0 && o.dlfo_eh_frame;
}
#endif
