/* SPDX-License-Identifier: MIT */
/* linkmap.h - the loader's entry for the object that holds an address (linkmap.c). */
#ifndef CT_LINKMAP_H
#define CT_LINKMAP_H

#include <link.h>

/* The link map of the shared object (or the program) whose segments hold addr; NULL if none.
 * No system call, no allocation: it runs inside hooks, sandboxed ones too. */
struct link_map *ct_link_map_of(const void *addr);

#endif
