/* SPDX-License-Identifier: MIT */
/*
 * gcrypt_late.h - a libgcrypt handle opened before `cryptrace attach`: its algorithm and mode
 * (gcrypt_late.c).
 */
#ifndef CT_PRELOAD_GCRYPT_LATE_H
#define CT_PRELOAD_GCRYPT_LATE_H

#include <stdbool.h>

/* The algorithm and mode of the libgcrypt cipher handle h, read from the handle (guards raised by
 * the caller); false when they cannot be read safely. */
bool ct_gcrypt_handle_algo_mode(const void *h, int *algo, int *mode);

#endif
