/* SPDX-License-Identifier: MIT */
/*
 * peek.h - reading the process's own memory where a wrong address must not kill it (see peek.c).
 */
#ifndef CT_PRELOAD_PEEK_H
#define CT_PRELOAD_PEEK_H

#include <stdbool.h>
#include <stddef.h>

/* Copies n bytes at addr into out; false (out unspecified) where addr..addr+n is not readable
 * or the kernel refuses the read (a seccomp policy). Never faults. */
bool ct_peek(const void *addr, void *out, size_t n);

/* Whether the NUL-terminated string at addr is s (at most 64 bytes read). Never faults. */
bool ct_peek_str_is(const void *addr, const char *s);

#endif
