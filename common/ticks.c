/* SPDX-License-Identifier: MIT */
/* ticks.c - which tick counter this CPU has and its rate (see ticks.h). */
#include "ticks.h"

bool ct_ticks_probe(struct ct_ticks_info *info)
{
#if defined(__x86_64__) || defined(__i386__)
	*info = (struct ct_ticks_info){ .name = "TSC", .hz = ct_tsc_hz(), .cycles = true };
#elif defined(__aarch64__)
	uint64_t hz;
	__asm__ __volatile__("mrs %0, cntfrq_el0" : "=r"(hz));
	/* The firmware sets CNTFRQ_EL0; the architecture only says what it should hold. */
	*info = (struct ct_ticks_info){ .name = "CNTVCT_EL0", .hz = (uint32_t)hz, .cycles = false };
#else
	*info = (struct ct_ticks_info){ .name = "none", .hz = 0, .cycles = false };
#endif
	return info->hz != 0;
}
