/* SPDX-License-Identifier: MIT */
/*
 * ticks.h - the tick counter calls are timed with, per architecture: the time-stamp counter on
 * x86 (RDTSC; it counts at the CPU's nominal clock, so its ticks are the report's cycles), the
 * generic timer's virtual count on aarch64 (CNTVCT_EL0 at CNTFRQ_EL0, a fixed 1 MHz-1 GHz clock
 * that is not the CPU's: its ticks are not cycles). Elsewhere there is none and the preload
 * reads CLOCK_MONOTONIC in ns. The MIPS count register is left out on purpose: it is 32 bits
 * wide (it wraps within seconds at a few hundred MHz, where spans and deadlines need a 64-bit
 * count) and RDHWR $2 traps unless the kernel enabled it; where it is usable, the vDSO's
 * clock_gettime reads it for us.
 */
#ifndef CT_TICKS_H
#define CT_TICKS_H

#include <stdbool.h>
#include <stdint.h>

#include "cpu.h"

/* The counter now (0 where there is none). */
static inline uint64_t ct_ticks(void)
{
#if defined(__x86_64__) || defined(__i386__)
	return ct_rdtsc();
#elif defined(__aarch64__)
	uint64_t v;
	__asm__ __volatile__("mrs %0, cntvct_el0" : "=r"(v));
	return v;
#else
	return 0;
#endif
}

/* The counter once every earlier instruction has completed: where the work of a call that just
 * returned really ends (RDTSCP where the CPU has it, else LFENCE + RDTSC; ISB + CNTVCT_EL0). */
static inline uint64_t ct_ticks_ordered(bool has_rdtscp)
{
#if defined(__x86_64__) || defined(__i386__)
	return has_rdtscp ? ct_rdtscp() : ct_rdtsc_lfence();
#elif defined(__aarch64__)
	(void)has_rdtscp;
	uint64_t v;
	__asm__ __volatile__("isb\n\tmrs %0, cntvct_el0" : "=r"(v)::"memory");
	return v;
#else
	(void)has_rdtscp;
	return 0;
#endif
}

/* (a * b) >> 32, the low 64 bits of it, exactly: tick -> ns conversion with a 32.32 fixed-point
 * factor. One MUL where the compiler has 128-bit integers (64-bit targets); three 32x32->64
 * multiplies and a 64x32 one on 32-bit targets, where a 128-bit product does not exist. */
static inline uint64_t ct_mul_shr32(uint64_t a, uint64_t b)
{
#ifdef __SIZEOF_INT128__
	return (uint64_t)(((unsigned __int128)a * b) >> 32);
#else
	const uint64_t al = (uint32_t)a, ah = a >> 32, bl = (uint32_t)b, bh = b >> 32;
	/* a*b = ah*bh*2^64 + (ah*bl + al*bh)*2^32 + al*bl; >> 32 and mod 2^64 drops the first. */
	return ((ah * bh) << 32) + ah * bl + al * bh + ((al * bl) >> 32);
#endif
}

/* The counter this process times with. */
struct ct_ticks_info {
	const char *name; /* "TSC", "CNTVCT_EL0" */
	uint64_t hz;      /* ticks per second */
	bool cycles;      /* it counts at the CPU's clock: ticks per byte are cycles per byte */
};
/* Fills info and returns true when this CPU has a usable counter (x86: an invariant TSC, its
 * rate from CPUID or measured; aarch64: CNTFRQ_EL0 set); false: time with CLOCK_MONOTONIC. */
bool ct_ticks_probe(struct ct_ticks_info *info);

#endif
