/* SPDX-License-Identifier: MIT */
/*
 * dispatch.c - picks the kernel table from CPUID (x86) or HWCAP (aarch64) once, capped by
 * CRYPTRACE_AESNI_MAX or by ct_aesni_set_max_level() (so the tests can run the AES-NI path on a
 * VAES machine too).
 */
#include <stdlib.h>
#include <string.h>

#include "aes_internal.h"
#include "cpu.h"
#include "trace_format.h"

static int cached_level = -1; /* enum ct_aesni_level, -1 until first use */
static int api_cap = CT_AESNI_VAES512;

/* A level's rank, which is how caps compare across architectures (aesni.h). */
static int rank(enum ct_aesni_level l)
{
	switch (l) {
	case CT_AESNI_XMM:
	case CT_AESNI_ARMV8_CE:
		return 1;
	case CT_AESNI_VAES:
		return 2;
	case CT_AESNI_VAES512:
		return 3;
	default:
		return 0;
	}
}

/* This build's level of a rank (the highest it has at or below it). */
static enum ct_aesni_level level_at_rank(int r)
{
#if CT_AES_HAVE_X86_KERNELS
	return r >= 3 ? CT_AESNI_VAES512 : r == 2 ? CT_AESNI_VAES : r == 1 ? CT_AESNI_XMM : CT_AESNI_NONE;
#elif CT_AES_HAVE_CE_KERNELS
	return r >= 1 ? CT_AESNI_ARMV8_CE : CT_AESNI_NONE;
#else
	(void)r;
	return CT_AESNI_NONE;
#endif
}

enum ct_aesni_level ct_aesni_base_level(void)
{
	return level_at_rank(1);
}

size_t ct_aesni_build_levels(enum ct_aesni_level out[], size_t cap)
{
	size_t n = 0;
	for (int r = 1; r <= 3 && n < cap; r++) {
		const enum ct_aesni_level l = level_at_rank(r);
		if (l != CT_AESNI_NONE && rank(l) == r)
			out[n++] = l;
	}
	return n;
}

static enum ct_aesni_level cpu_level(void)
{
	const uint32_t f = ct_cpu_features();
#if CT_AES_HAVE_X86_KERNELS
	const uint32_t wide = CT_CPU_VAES | CT_CPU_VPCLMULQDQ | CT_CPU_AVX2;
	const uint32_t wider = wide | CT_CPU_AVX512F | CT_CPU_AVX512VL | CT_CPU_AVX512BW;

	/* GCM needs carry-less multiply too; a CPU with AES-NI but no PCLMULQDQ (only seen in odd
	 * virtual machines) is left to OpenSSL rather than served half-way. */
	if (!(f & CT_CPU_AES) || !(f & CT_CPU_PCLMULQDQ))
		return CT_AESNI_NONE;
	if ((f & wider) == wider)
		return CT_AESNI_VAES512;
	if ((f & wide) == wide)
		return CT_AESNI_VAES;
	return CT_AESNI_XMM;
#elif CT_AES_HAVE_CE_KERNELS
	/* The same rule on ARM: AES without PMULL (HWCAP_AES alone) is left to OpenSSL. */
	const uint32_t ce = CT_CPU_ARM_AES | CT_CPU_ARM_PMULL;
	return (f & ce) == ce ? CT_AESNI_ARMV8_CE : CT_AESNI_NONE;
#else
	(void)f;
	return CT_AESNI_NONE;
#endif
}

static enum ct_aesni_level env_cap(void)
{
	/* secure_getenv: a setuid program's environment must not steer it. */
	const char *s = secure_getenv("CRYPTRACE_AESNI_MAX");
	if (!s || !*s)
		return CT_AESNI_VAES512;
	if (!strcmp(s, "none") || !strcmp(s, "0"))
		return CT_AESNI_NONE;
	if (!strcmp(s, "aesni") || !strcmp(s, "xmm") || !strcmp(s, "armv8-ce") || !strcmp(s, "1"))
		return CT_AESNI_XMM;
	if (!strcmp(s, "vaes") || !strcmp(s, "ymm") || !strcmp(s, "2"))
		return CT_AESNI_VAES;
	return CT_AESNI_VAES512;
}

static enum ct_aesni_level compute_level(void)
{
	int r = rank(cpu_level());
	const int e = rank(env_cap());
	const int a = rank((enum ct_aesni_level)__atomic_load_n(&api_cap, __ATOMIC_RELAXED));
	if (e < r)
		r = e;
	if (a < r)
		r = a;
	return level_at_rank(r);
}

enum ct_aesni_level ct_aesni_level(void)
{
	int l = __atomic_load_n(&cached_level, __ATOMIC_ACQUIRE);
	if (l < 0) {
		/* Idempotent: two threads racing here compute the same value. */
		l = compute_level();
		__atomic_store_n(&cached_level, l, __ATOMIC_RELEASE);
	}
	return (enum ct_aesni_level)l;
}

static const struct ct_aes_kernels *table_of_level(void);

enum ct_aesni_level ct_aesni_set_max_level(enum ct_aesni_level cap)
{
	__atomic_store_n(&api_cap, (int)cap, __ATOMIC_RELAXED);
	const int l = compute_level();
	__atomic_store_n(&cached_level, l, __ATOMIC_RELEASE);
	__atomic_store_n(&ct_aes_active_table, table_of_level(), __ATOMIC_RELEASE);
	return (enum ct_aesni_level)l;
}

bool ct_aesni_available(void)
{
	return ct_aesni_level() != CT_AESNI_NONE;
}

const char *ct_aesni_level_name(enum ct_aesni_level level)
{
	switch (level) {
	case CT_AESNI_XMM:
		return "aesni";
	case CT_AESNI_VAES:
		return "vaes";
	case CT_AESNI_VAES512:
		return "vaes512";
	case CT_AESNI_ARMV8_CE:
		return "armv8-ce";
	default:
		return "none";
	}
}

const struct ct_aes_kernels *ct_aes_active_table;

static const struct ct_aes_kernels *table_of_level(void)
{
	switch (ct_aesni_level()) {
#if CT_AES_HAVE_X86_KERNELS
	case CT_AESNI_VAES512:
		return &ct_aes_kernels_vaes512;
	case CT_AESNI_VAES:
		return &ct_aes_kernels_vaes;
	case CT_AESNI_XMM:
		return &ct_aes_kernels_xmm;
#endif
#if CT_AES_HAVE_CE_KERNELS
	case CT_AESNI_ARMV8_CE:
		return &ct_aes_kernels_ce;
#endif
	default:
		/* Capped to none after keys were set (a test, or a route turned off mid-run): the
		 * contexts that exist keep working on the base level; only new keys are refused. */
#if CT_AES_HAVE_X86_KERNELS || CT_AES_HAVE_CE_KERNELS
		return cpu_level() != CT_AESNI_NONE ? &ct_aes_base_kernels : NULL;
#else
		return NULL;
#endif
	}
}

/* The first call, and every call while no table can serve (NULL is not published: a later cap
 * change is seen). Racing threads publish the same table. */
const struct ct_aes_kernels *ct_aes_active_kernels_slow(void)
{
	const struct ct_aes_kernels *kt = table_of_level();
	if (kt)
		__atomic_store_n(&ct_aes_active_table, kt, __ATOMIC_RELEASE);
	return kt;
}
