/* SPDX-License-Identifier: MIT */
/*
 * cpu.h - run-time CPU facts: crypto feature bits from CPUID (never assumed from the build
 * machine), the model string and the TSC frequency. Used by the preload header, the doctor and
 * the AES-NI backend's dispatch.
 */
#ifndef CT_CPU_H
#define CT_CPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* enum ct_cpu_flag bits (trace_format.h); cached after the first call, thread-safe. */
uint32_t ct_cpu_features(void);
/* "AMD EPYC 7B13 64-Core Processor" (CPUID brand string, /proc/cpuinfo elsewhere). */
void ct_cpu_model(char *buf, size_t cap);
/* The CPUID vendor ("GenuineIntel", "AuthenticAMD", "CentaurHauls"...); "" off x86. */
void ct_cpu_vendor(char *buf, size_t cap);
/* A VIA/Zhaoxin PadLock unit with its AES engine present and enabled: what OpenSSL's padlock
 * engine needs to load. */
bool ct_cpu_padlock_ace(void);
/* The environment variable through which OpenSSL takes a capability mask on this architecture
 * (what the trace header's ia32cap field records; its cpu_flags say which CPU it was). */
#if defined(__aarch64__) || defined(__arm__)
#define CT_OPENSSL_CAP_ENV "OPENSSL_armcap"
#else
#define CT_OPENSSL_CAP_ENV "OPENSSL_ia32cap"
#endif
/* Reads the time-stamp counter (0 where there is none). */
static inline uint64_t ct_rdtsc(void)
{
#if defined(__x86_64__) || defined(__i386__)
	uint32_t lo, hi;
	__asm__ __volatile__("rdtsc" : "=a"(lo), "=d"(hi));
	return ((uint64_t)hi << 32) | lo;
#else
	return 0;
#endif
}
/* RDTSCP: waits until every earlier instruction has executed (later ones may start): where
 * the work before it really ends. Only where CPUID says it exists (ct_cpu_has_rdtscp). */
static inline uint64_t ct_rdtscp(void)
{
#if defined(__x86_64__) || defined(__i386__)
	uint32_t lo, hi, aux;
	__asm__ __volatile__("rdtscp" : "=a"(lo), "=d"(hi), "=c"(aux));
	(void)aux;
	return ((uint64_t)hi << 32) | lo;
#else
	return 0;
#endif
}
/* The same order for CPUs without RDTSCP: LFENCE lets no later instruction start before every
 * earlier one completed. */
static inline uint64_t ct_rdtsc_lfence(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__ __volatile__("lfence" ::: "memory");
	return ct_rdtsc();
#else
	return 0;
#endif
}
/* CPUID 0x80000001 EDX bit 27. */
int ct_cpu_has_rdtscp(void);
/* TSC ticks per second, measured once per process against CLOCK_MONOTONIC_RAW to within 0.02 %
 * (0.5 ms of waiting, more where reading the clock is slow); 0 when the TSC is unusable (not
 * invariant, or absent). */
uint64_t ct_tsc_hz(void);
/* Takes hz as this machine's TSC rate instead of measuring it: the launcher measures it once and
 * hands it to every process it runs (CRYPTRACE_TSC_HZ), `cryptrace attach` to the process it
 * stops (the invariant TSC is one clock for every process of the machine). Ignored where the TSC
 * is not invariant or was measured already. */
void ct_tsc_hz_set(uint64_t hz);
/* Whether ct_tsc_hz is the rate ct_tsc_hz_set gave, not one measured here. */
bool ct_tsc_hz_given(void);

#endif
