/* SPDX-License-Identifier: MIT */
/*
 * calibrate.c - what the launcher measures of this machine once per run and hands to every
 * process it runs, so that none of them pays for it (tracer.h, docs/environment.md):
 *  - the in-process AES-NI bound, cycles per byte x1000 (CRYPTRACE_AESNI_CPB), measured by the
 *    AES-NI backend (aesni/calib.c, a few ms), so that reports can say how far a path runs from
 *    what this CPU can do; 0 without AES-NI, a usable TSC, or the backend;
 *  - the invariant TSC's rate (CRYPTRACE_TSC_HZ, common/cpu.c): one clock for every process of
 *    the machine, which each traced process would otherwise wait 0.5 ms or more to measure at
 *    its start (every ssh, every openssl run); 0 where the TSC is not the clock.
 */
#include <stdint.h>

#include "tracer.h"
#include "aesni.h"
#include "cpu.h"

struct ct_machine_rates ct_calibrate(void)
{
	return (struct ct_machine_rates){
		.aesni_cpb_milli = ct_aesni_cpb_milli(),
		.tsc_hz = ct_tsc_hz(), /* 0 off x86: aarch64's counter states its own rate */
	};
}
