/* SPDX-License-Identifier: MIT */
/*
 * calibrate.c - the in-process AES-NI bound (cycles per byte x1000) that the launcher hands to
 * the preload as CRYPTRACE_AESNI_CPB, so that reports can say how far a path runs from what
 * this CPU can do. Measured by the AES-NI backend (aesni/calib.c: a few ms, once per run, in
 * the launcher so the traced program never pays for it). 0 means unknown: a CPU without AES-NI,
 * no usable TSC, or a build without the backend; then nothing is passed.
 */
#include <stdint.h>

#include "tracer.h"
#include "aesni.h"

uint32_t ct_calibrate_aesni_cpb(void)
{
	return ct_aesni_cpb_milli();
}
