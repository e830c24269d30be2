/* SPDX-License-Identifier: MIT */
/* errno_name.h - errno values by their symbolic names, on any C library (errno_name.c). */
#ifndef CT_ERRNO_NAME_H
#define CT_ERRNO_NAME_H

#include <stddef.h>

/* "EINVAL", or the number in decimal written into buf. */
const char *ct_errno_name(int err, char *buf, size_t cap);
/* "EINVAL", or NULL for 0 and values without a name (glibc's strerrorname_np, on any libc). */
const char *ct_strerrorname(int err);

#endif
