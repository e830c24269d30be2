/* SPDX-License-Identifier: MIT */
/* calib.h - the AES-NI bound measured in the traced process when none was passed in (calib.c). */
#ifndef CT_PRELOAD_CALIB_H
#define CT_PRELOAD_CALIB_H

#include <stdint.h>

#pragma GCC visibility push(hidden)

/* Called by the flusher (flush lock held, hooks blocked) for the PROC record: the bound in
 * cycles/byte x1000, measured once when the process first has an in-process AES path and is
 * allowed to (calib.c), else 0. */
uint32_t ct_calib_at_flush(void);

#pragma GCC visibility pop

#endif
