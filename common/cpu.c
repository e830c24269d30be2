/* SPDX-License-Identifier: MIT */
/* cpu.c - CPUID (x86) or HWCAP (ARM) feature detection, model string and TSC frequency (see cpu.h). */
#include "cpu.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "trace_format.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>

static uint64_t xgetbv0(void)
{
	uint32_t lo, hi;
	__asm__ __volatile__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
	return ((uint64_t)hi << 32) | lo;
}

static uint32_t detect_features(void)
{
	unsigned a, b, c, d;
	uint32_t f = 0;
	if (!__get_cpuid(1, &a, &b, &c, &d))
		return 0;
	if (c & bit_AES)
		f |= CT_CPU_AES;
	if (c & bit_PCLMUL)
		f |= CT_CPU_PCLMULQDQ;
	if (c & (1u << 31))
		f |= CT_CPU_HYPERVISOR;
	/* AVX state must be enabled by the OS (OSXSAVE + XCR0 bits 1,2), or the ymm code faults. */
	int os_avx = (c & bit_OSXSAVE) && (xgetbv0() & 0x6) == 0x6;
	int os_avx512 = os_avx && (xgetbv0() & 0xe6) == 0xe6;
	if (os_avx && (c & bit_AVX))
		f |= CT_CPU_AVX;
	if (__get_cpuid_max(0, NULL) >= 7) {
		__cpuid_count(7, 0, a, b, c, d);
		if (os_avx && (b & bit_AVX2))
			f |= CT_CPU_AVX2;
		if (os_avx512 && (b & bit_AVX512F))
			f |= CT_CPU_AVX512F;
		if (os_avx512 && (b & bit_AVX512VL))
			f |= CT_CPU_AVX512VL;
		if (os_avx512 && (b & bit_AVX512BW))
			f |= CT_CPU_AVX512BW;
		if (b & bit_SHA)
			f |= CT_CPU_SHA;
		if (os_avx && (c & (1u << 9)))
			f |= CT_CPU_VAES;
		if (os_avx && (c & (1u << 10)))
			f |= CT_CPU_VPCLMULQDQ;
		if (c & (1u << 8))
			f |= CT_CPU_GFNI;
	}
	return f;
}

void ct_cpu_model(char *buf, size_t cap)
{
	unsigned regs[12];
	if (cap == 0)
		return;
	buf[0] = 0;
	if ((unsigned)__get_cpuid_max(0x80000000, NULL) < 0x80000004u)
		return;
	for (unsigned i = 0; i < 3; i++)
		__cpuid(0x80000002 + i, regs[4 * i], regs[4 * i + 1], regs[4 * i + 2], regs[4 * i + 3]);
	char brand[49];
	memcpy(brand, regs, 48);
	brand[48] = 0;
	const char *s = brand;
	while (*s == ' ')
		s++;
	snprintf(buf, cap, "%s", s);
	/* trim trailing blanks */
	for (size_t n = strlen(buf); n > 0 && buf[n - 1] == ' '; n--)
		buf[n - 1] = 0;
}

int ct_cpu_has_rdtscp(void)
{
	unsigned a, b, c, d;
	if ((unsigned)__get_cpuid_max(0x80000000, NULL) < 0x80000001u)
		return 0;
	__cpuid(0x80000001, a, b, c, d);
	return (d >> 27) & 1;
}

void ct_cpu_vendor(char *buf, size_t cap)
{
	unsigned a, b, c, d;
	if (cap == 0)
		return;
	buf[0] = 0;
	if (!__get_cpuid(0, &a, &b, &c, &d))
		return;
	char v[13];
	memcpy(v, &b, 4);
	memcpy(v + 4, &d, 4);
	memcpy(v + 8, &c, 4);
	v[12] = 0;
	snprintf(buf, cap, "%s", v);
}

/* VIA and Zhaoxin report the PadLock unit in Centaur's extended leaves: 0xC0000001 EDX bit 6
 * (ACE present) and 7 (enabled), which OpenSSL's padlock engine checks the same way. */
bool ct_cpu_padlock_ace(void)
{
	char vendor[16];
	unsigned a, b, c, d;
	ct_cpu_vendor(vendor, sizeof(vendor));
	if (strcmp(vendor, "CentaurHauls") && strcmp(vendor, "  Shanghai  "))
		return false;
	__cpuid(0xC0000000, a, b, c, d);
	if (a < 0xC0000001)
		return false;
	__cpuid(0xC0000001, a, b, c, d);
	return (d & 0xC0) == 0xC0;
}

static int tsc_invariant(void)
{
	unsigned a, b, c, d;
	if ((unsigned)__get_cpuid_max(0x80000000, NULL) < 0x80000007u)
		return 0;
	__cpuid(0x80000007, a, b, c, d);
	return (d >> 8) & 1;
}
#else
int ct_cpu_has_rdtscp(void)
{
	return 0;
}

#if defined(__aarch64__) || defined(__arm__)
#include <sys/auxv.h>

/* The kernel's word for what EL0 may use (arch/arm64/include/uapi/asm/hwcap.h, and for 32-bit
 * ARM the second word, arch/arm/include/uapi/asm/hwcap.h): the same bits OpenSSL's armcap reads.
 * /proc/cpuinfo says the same in words, but not under qemu-user nor in a chroot without /proc. */
#ifdef __aarch64__
#define CT_HWCAP_WORD AT_HWCAP
#define CT_HWCAP_AES (1ul << 3)
#define CT_HWCAP_PMULL (1ul << 4)
#define CT_HWCAP_SHA2 (1ul << 6)
#else
#define CT_HWCAP_WORD AT_HWCAP2
#define CT_HWCAP_AES (1ul << 0)
#define CT_HWCAP_PMULL (1ul << 1)
#define CT_HWCAP_SHA2 (1ul << 3)
#endif

static uint32_t detect_features(void)
{
	const unsigned long hw = getauxval(CT_HWCAP_WORD);
	uint32_t f = 0;
	if (hw & CT_HWCAP_AES)
		f |= CT_CPU_ARM_AES;
	if (hw & CT_HWCAP_PMULL)
		f |= CT_CPU_ARM_PMULL;
	if (hw & CT_HWCAP_SHA2)
		f |= CT_CPU_SHA;
	return f;
}
#else
static uint32_t detect_features(void)
{
	return 0; /* no AES instructions this code knows of */
}
#endif

#ifdef __aarch64__
/* MIDR_EL1's implementer and part, for the cores seen most (the kernel's cputype.h). */
static const struct {
	uint32_t impl_part; /* implementer << 12 | part */
	const char *name;
} arm_parts[] = {
	{ 0x41d03, "ARM Cortex-A53" },  { 0x41d04, "ARM Cortex-A35" },  { 0x41d05, "ARM Cortex-A55" },
	{ 0x41d07, "ARM Cortex-A57" },  { 0x41d08, "ARM Cortex-A72" },  { 0x41d09, "ARM Cortex-A73" },
	{ 0x41d0a, "ARM Cortex-A75" },  { 0x41d0b, "ARM Cortex-A76" },  { 0x41d0c, "ARM Neoverse-N1" },
	{ 0x41d0d, "ARM Cortex-A77" },  { 0x41d40, "ARM Neoverse-V1" }, { 0x41d41, "ARM Cortex-A78" },
	{ 0x41d44, "ARM Cortex-X1" },   { 0x41d46, "ARM Cortex-A510" }, { 0x41d47, "ARM Cortex-A710" },
	{ 0x41d49, "ARM Neoverse-N2" }, { 0x41d4f, "ARM Neoverse-V2" }, { 0x41d80, "ARM Cortex-A520" },
	{ 0x41d81, "ARM Cortex-A720" }, { 0x46001, "Fujitsu A64FX" },   { 0x48d01, "HiSilicon TSV110" },
	{ 0x51800, "Qualcomm Kryo" },   { 0xc0ac3, "Ampere-1" },
};
#endif

/* aarch64: MIDR_EL1, which the kernel lets user space read when HWCAP_CPUID says so (it traps
 * the MRS and answers); the part name from a short table, else the register itself. */
void ct_cpu_model(char *buf, size_t cap)
{
#ifdef __aarch64__
	if (getauxval(AT_HWCAP) & (1ul << 11)) { /* HWCAP_CPUID */
		uint64_t midr;
		__asm__ __volatile__("mrs %0, midr_el1" : "=r"(midr));
		const unsigned impl = (unsigned)(midr >> 24) & 0xff, part = (unsigned)(midr >> 4) & 0xfff;
		for (size_t i = 0; i < sizeof(arm_parts) / sizeof(arm_parts[0]); i++)
			if (arm_parts[i].impl_part == (impl << 12 | part)) {
				snprintf(buf, cap, "%s (MIDR 0x%08x)", arm_parts[i].name, (unsigned)midr);
				return;
			}
		snprintf(buf, cap, "ARM implementer 0x%02x part 0x%03x (MIDR 0x%08x)", impl, part,
			 (unsigned)midr);
		return;
	}
#endif
	snprintf(buf, cap, "%s", "unknown");
}

void ct_cpu_vendor(char *buf, size_t cap)
{
	if (cap)
		buf[0] = 0;
}

bool ct_cpu_padlock_ace(void)
{
	return false;
}

static int tsc_invariant(void)
{
	return 0;
}
#endif

uint32_t ct_cpu_features(void)
{
	static uint32_t cached;
	static int done;
	if (__atomic_load_n(&done, __ATOMIC_ACQUIRE))
		return cached;
	uint32_t f = detect_features();
	__atomic_store_n(&cached, f, __ATOMIC_RELAXED);
	__atomic_store_n(&done, 1, __ATOMIC_RELEASE);
	return f;
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC_RAW, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static uint64_t tsc_hz_cached; /* 1: no usable TSC */

/* A TSC read and, in *mono, the raw monotonic time it was taken at: the midpoint of the clock
 * reads around it, from the tightest of up to 16 such brackets (the first within 200 ns ends
 * the search: a vDSO read takes 20-60 ns; where the clock is a system call, as under some
 * hypervisors, the best of 16 is taken). *half_ns is half the bracket: how far the midpoint can
 * be from the true time of the TSC read. A preemption inside a bracket widens it, so it is
 * either read again or bounded by *half_ns, never silently wrong. */
static uint64_t tsc_at_mono(uint64_t *mono, uint64_t *half_ns)
{
	uint64_t best = UINT64_MAX, tsc = 0;
	for (int i = 0; i < 16 && best > 200; i++) {
		uint64_t a = mono_ns(), t = ct_rdtsc(), b = mono_ns();
		if (b >= a && b - a < best) {
			best = b - a;
			tsc = t;
			*mono = a + (b - a) / 2;
		}
	}
	if (best == UINT64_MAX) { /* the clock went backwards 16 times: not a clock to trust */
		*mono = mono_ns();
		best = 2000000;
		tsc = ct_rdtsc();
	}
	*half_ns = best / 2;
	return tsc;
}

static bool tsc_hz_given;

void ct_tsc_hz_set(uint64_t hz)
{
	uint64_t none = 0;
	if (hz > 1 && tsc_invariant() &&
	    __atomic_compare_exchange_n(&tsc_hz_cached, &none, hz, false, __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		__atomic_store_n(&tsc_hz_given, true, __ATOMIC_RELAXED);
}

bool ct_tsc_hz_given(void)
{
	return __atomic_load_n(&tsc_hz_given, __ATOMIC_RELAXED);
}

/* The window's least length, and how small its error must be against it. */
#define TSC_WINDOW_MIN_NS 500000u
#define TSC_WINDOW_MAX_NS 20000000u
#define TSC_ERROR_PARTS 5000u /* 0.02 %: each end's half-bracket at most 1/10000 of the window */

uint64_t ct_tsc_hz(void)
{
	uint64_t hz = __atomic_load_n(&tsc_hz_cached, __ATOMIC_RELAXED);
	if (hz)
		return hz == 1 ? 0 : hz;
	if (!tsc_invariant()) {
		__atomic_store_n(&tsc_hz_cached, 1, __ATOMIC_RELAXED);
		return 0;
	}
	/* One window against the raw monotonic clock, each end a bracketed TSC read (tsc_at_mono):
	 * the rate's error is at most the two ends' half-brackets over the window, so the window
	 * lasts until that is under 0.02 % (0.5 ms with a vDSO clock; up to 20 ms where reading
	 * the clock is slow). What happens inside the window (a preemption) moves both clocks
	 * alike. Three 1 ms windows without this bound, as before, kept every traced process 3 ms;
	 * under `cryptrace run` a process takes the launcher's rate (CRYPTRACE_TSC_HZ) instead. */
	uint64_t n0, h0, t0 = tsc_at_mono(&n0, &h0), n1, h1, t1;
	do {
		t1 = tsc_at_mono(&n1, &h1);
	} while (n1 - n0 < TSC_WINDOW_MAX_NS &&
		 (n1 - n0 < TSC_WINDOW_MIN_NS || (h0 + h1) * TSC_ERROR_PARTS > n1 - n0));
	hz = n1 > n0 && t1 > t0 ? (uint64_t)((double)(t1 - t0) * 1e9 / (double)(n1 - n0)) : 0;
	__atomic_store_n(&tsc_hz_cached, hz ? hz : 1, __ATOMIC_RELAXED);
	return hz;
}
