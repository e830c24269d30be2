/* SPDX-License-Identifier: MIT */
/*
 * profile_aes.c - `software-aes` from the CPU profile: AES code without AES instructions (table
 * lookups, or vpaes's SSSE3 shuffles) took a real share of a process's sampled CPU on a CPU that
 * has AES-NI, in a library or program the hooks cannot see (GnuTLS and nettle, libgcrypt, a
 * static executable, Go). The hooked libcrypto's own software AES is software_aes.c's finding
 * (from its paths' speed and the mask), so its module is left out here. One finding per module
 * and implementation, listing the processes, with the fix that library takes.
 */
#include "findings.h"

#include <stdio.h>
#include <string.h>

/* A process's software AES counts from PROFILE_AES_MIN_SHARE of its sampled CPU and
 * PROFILE_AES_MIN_SAMPLES samples: less is start-up work (a key schedule, a self-test). On a CPU
 * with AES-NI no library picks software AES by itself, so any share past that is a setting to
 * undo; from PROFILE_AES_WARN_SHARE it is a warning, below it information (the gain is small:
 * gnutls-cli's software AES is under 5 % of its CPU, beside its byte-at-a-time output). */
#define PROFILE_AES_MIN_SHARE 0.01
#define PROFILE_AES_WARN_SHARE 0.05
#define PROFILE_AES_MIN_SAMPLES 20

static bool software_impl(const char *impl)
{
	return !strncmp(impl, "tables", 6) || !strncmp(impl, "vpaes", 5);
}

/* GnuTLS's paths in this process (its cipher API or its TLS records): then its AES, in libgnutls
 * or in nettle under it, is software_aes.c's to say, named from GnuTLS's own state. */
static bool has_gnutls_paths(const struct rp_proc *p)
{
	for (size_t k = 0; k < p->npaths; k++)
		if (p->paths[k].def.api == CT_API_GNUTLS || p->paths[k].def.api == CT_API_TLS)
			return true;
	return false;
}

/* A module the hooks trace in this process (a software AES there is software_aes.c's to say, from
 * the paths): its libcrypto, libgcrypt when its cipher calls were traced, and GnuTLS with nettle
 * when GnuTLS's calls were. */
static bool hooked_module(const struct rp_proc *p, const char *module)
{
	if ((!strncmp(module, "libgnutls", 9) || !strncmp(module, "libnettle", 9)) && has_gnutls_paths(p))
		return true;
	if (!strncmp(module, "libgcrypt", 9)) {
		for (size_t k = 0; k < p->npaths; k++)
			if (p->paths[k].def.api == CT_API_GCRYPT && p->paths[k].st.calls)
				return true;
		return false;
	}
	return !strncmp(module, "libcrypto.so", 12) && p->proc.crypto_libs.len &&
	       rp_str_find(p->proc.crypto_libs, module).p != NULL;
}

static void fix_for(struct rp_finding *f, const char *module)
{
	if (!strncmp(module, "libgnutls", 9) || !strncmp(module, "libnettle", 9))
		CAT(fix,
		    "GnuTLS and nettle pick their AES code from the CPU's features unless told "
		    "otherwise: unset GNUTLS_CPUID_OVERRIDE and NETTLE_FAT_OVERRIDE in the program's "
		    "environment (a value that leaves out AES-NI selects this code).");
	else if (!strncmp(module, "libgcrypt", 9))
		CAT(fix,
		    "libgcrypt disables hardware features listed in /etc/gcrypt/hwf.deny (and by "
		    "the program's GCRYCTL_DISABLE_HWF calls): remove intel-aesni there.");
	else if (!strncmp(module, "libcrypto", 9))
		CAT(fix,
		    "This OpenSSL does not use AES-NI: unset OPENSSL_ia32cap in its environment "
		    "(bit 57 masks AES-NI), or use a build with assembly (not no-asm).");
	else
		CAT(fix,
		    "The program's own AES does not use AES-NI: build it with AES-NI support, or "
		    "call a library that has it (OpenSSL's EVP, GnuTLS, libgcrypt).");
}

void rp_eval_profile_aes(struct rp_model *m)
{
	for (size_t i = 0; i < m->nprocs; i++) {
		const struct rp_proc *p = &m->procs[i];
		const struct rp_profile *pr = &p->prof;
		if (!rp_proc_shown(m, p) || !pr->samples || !(p->hdr.cpu_flags & CT_CPU_AES))
			continue;
		for (size_t k = 0; k < pr->nitems; k++) {
			const struct rp_profile_item *it = &pr->items[k];
			if (strcmp(it->category, "AES") || !software_impl(it->impl) ||
			    hooked_module(p, it->module))
				continue;
			/* this module's software AES in this process, all its functions */
			uint64_t n = 0;
			bool seen_before = false;
			for (size_t j = 0; j < pr->nitems; j++) {
				const struct rp_profile_item *o = &pr->items[j];
				if (!strcmp(o->category, "AES") && !strcmp(o->impl, it->impl) &&
				    !strcmp(o->module, it->module)) {
					n += o->samples;
					seen_before |= j < k;
				}
			}
			if (seen_before || n < PROFILE_AES_MIN_SAMPLES ||
			    (double)n < PROFILE_AES_MIN_SHARE * (double)pr->samples)
				continue;
			double share = (double)n / (double)pr->samples;
			bool small = share < PROFILE_AES_WARN_SHARE;
			struct rp_finding *f =
				rp_finding_add(m, "software-aes", small ? RP_INFO : RP_WARNING, p->hdr.pid);
			if (!f)
				return;
			CAT(message,
			    "The CPU has AES instructions, but pid %u (%.*s) ran AES without them in %s: "
			    "%s, %.1f%% of its sampled CPU (%llu samples of %llu, %.3f s). The hooks do not "
			    "see this library's work; the CPU profile named the code (by its instructions or its symbol).%s",
			    p->hdr.pid, S(rp_str_basename(p->hdr.exe)), it->module, it->impl, 100.0 * share,
			    (unsigned long long)n, (unsigned long long)pr->samples,
			    (double)n * pr->period_us / 1e6,
			    small ? " It is a small part of this process's CPU: undoing it gains little here."
				  : "");
			CAT(evidence, "profile: %s %s %s in %s, %llu samples at %u us; CPU flags: aes",
			    it->category, it->impl, it->function, it->module, (unsigned long long)n,
			    pr->period_us);
			fix_for(f, it->module);
		}
	}
}
