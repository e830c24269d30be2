/* SPDX-License-Identifier: MIT */
/*
 * calibrate.c - the in-process AES-NI bound (cycles per byte x1000) that the launcher hands to
 * the preload as CRYPTRACE_AESNI_CPB, so that reports can say how far a path runs from what
 * this CPU can do. This build has no in-process AES-NI backend to measure with, so the bound is
 * unknown (0) and nothing is passed; the backend replaces this function when it lands.
 */
#include <stdint.h>

#include "tracer.h"

uint32_t ct_calibrate_aesni_cpb(void)
{
	return 0;
}
