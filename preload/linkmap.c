/* SPDX-License-Identifier: MIT */
/*
 * linkmap.c - the loader's link map of the object that holds an address: what the foreign-caller
 * check (foreign.c) keys its verdicts on and BoringSSL's detection (boringssl.c) reopens by name.
 *
 * glibc answers directly (dladdr1 with RTLD_DL_LINKMAP). Other C libraries (musl) have no
 * dladdr1: there the object is found by dl_iterate_phdr (the segment that holds addr gives its
 * load bias), then its entry in the loader's list, which dlinfo(RTLD_DI_LINKMAP) of the program's
 * handle opens, by that bias. Both read the loader's memory only.
 */
#include "linkmap.h"

#include <dlfcn.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "ct_config.h"

#ifndef CT_HAVE_DLADDR1
struct bias_query {
	uintptr_t addr, bias;
	bool found;
};

static int bias_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct bias_query *q = arg;
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_LOAD && q->addr - (info->dlpi_addr + ph->p_vaddr) < ph->p_memsz) {
			q->bias = info->dlpi_addr;
			q->found = true;
			return 1;
		}
	}
	return 0;
}
#endif

struct link_map *ct_link_map_of(const void *addr)
{
	struct link_map *map = NULL;
#ifdef CT_HAVE_DLADDR1
	Dl_info info;
	if (!addr || !dladdr1(addr, &info, (void **)&map, RTLD_DL_LINKMAP))
		return NULL;
	return map;
#else
	struct bias_query q = { .addr = (uintptr_t)addr };
	if (!addr || !dl_iterate_phdr(bias_cb, &q) || !q.found)
		return NULL;
	void *program = dlopen(NULL, RTLD_LAZY | RTLD_NOLOAD);
	if (!program || dlinfo(program, RTLD_DI_LINKMAP, &map) != 0 || !map)
		return NULL;
	while (map->l_prev)
		map = map->l_prev;
	for (; map; map = map->l_next)
		if (map->l_addr == q.bias)
			return map;
	return NULL;
#endif
}
