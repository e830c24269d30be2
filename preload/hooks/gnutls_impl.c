/* SPDX-License-Identifier: MIT */
/*
 * gnutls_impl.c - which code GnuTLS runs for a cipher, named from the same state GnuTLS and nettle
 * choose it from. GnuTLS registers its own x86 AES code (lib/accelerated/x86) over nettle's when
 * the CPU is Intel or AMD and has AES-NI (CBC, CCM, GCM) or SSSE3 (vector-permute AES: CBC, GCM);
 * GNUTLS_CPUID_OVERRIDE, a number, replaces the CPU's bits with its own (bit 0: none at all, bit 1
 * AES-NI, bit 2 SSSE3, each kept only if the CPU has it). Everything else goes to nettle, whose
 * Debian build is "fat": it runs AES-NI when CPUID says so, unless NETTLE_FAT_OVERRIDE, a comma
 * list of features ("aesni", "pclmul", "vendor:intel"...), replaces what CPUID said. Both read
 * their variable once at start, as here (with secure_getenv, as GnuTLS does: a setuid program
 * ignores them, and is not traced anyway). The names say which: gnutls:aesni, gnutls:ssse3,
 * nettle:aesni, nettle:generic (nettle's table AES); "nettle" for a cipher other than AES.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include <gnutls/gnutls.h>

#include "gnutls_internal.h"
#include "internal.h"

/* CPUID.1:ECX bits GnuTLS and nettle test */
#define ECX_AES (1u << 25)
#define ECX_SSSE3 (1u << 9)

/* GNUTLS_CPUID_OVERRIDE's bits (GnuTLS's x86-common.c) */
#define GNUTLS_CAP_EMPTY_SET 1u
#define GNUTLS_CAP_AES_NI (1u << 1)
#define GNUTLS_CAP_SSSE3 (1u << 2)

static pthread_once_t st_once = PTHREAD_ONCE_INIT;
static struct {
	bool gnutls_aesni, gnutls_ssse3, nettle_aesni;
	char overrides[160];
} st;

/* The CPU's vendor is Intel or AMD (GnuTLS registers its x86 code on no other), and its CPUID.1
 * ECX; false off x86. */
static bool cpu_leaf1(uint32_t *ecx)
{
#if defined(__x86_64__) || defined(__i386__)
	unsigned a, b, c, d;
	if (!__get_cpuid(0, &a, &b, &c, &d))
		return false;
	bool intel = !memcmp(&b, "Genu", 4) && !memcmp(&d, "ineI", 4) && !memcmp(&c, "ntel", 4);
	bool amd = !memcmp(&b, "Auth", 4) && !memcmp(&d, "enti", 4) && !memcmp(&c, "cAMD", 4);
	if (!__get_cpuid(1, &a, &b, &c, &d))
		return false;
	*ecx = c;
	return intel || amd;
#else
	*ecx = 0;
	return false;
#endif
}

#if defined(__x86_64__) /* nettle's x86-64 fat build is the one named here */
/* Whether NETTLE_FAT_OVERRIDE's comma list names word exactly. */
static bool list_has(const char *list, const char *word)
{
	size_t n = strlen(word);
	for (const char *s = list; s;) {
		const char *sep = strchr(s, ',');
		size_t len = sep ? (size_t)(sep - s) : strlen(s);
		if (len == n && !memcmp(s, word, n))
			return true;
		s = sep ? sep + 1 : NULL;
	}
	return false;
}
#endif

static void read_state_once(void)
{
	uint32_t ecx = 0;
	bool vendor_ok = cpu_leaf1(&ecx);
	const char *g = secure_getenv("GNUTLS_CPUID_OVERRIDE"), *n = secure_getenv("NETTLE_FAT_OVERRIDE");
	/* GnuTLS reads its override with strtol(p, NULL, 0): 0 (or no number) means "the CPU's" */
	unsigned caps = g ? (unsigned)strtol(g, NULL, 0) : 0;
	uint32_t have = ecx;
	if (caps & GNUTLS_CAP_EMPTY_SET)
		have = 0;
	else if (caps)
		have &= ((caps & GNUTLS_CAP_AES_NI) ? ECX_AES : 0) |
			((caps & GNUTLS_CAP_SSSE3) ? ECX_SSSE3 : 0);
	st.gnutls_aesni = vendor_ok && (have & ECX_AES);
	st.gnutls_ssse3 = vendor_ok && (have & ECX_SSSE3);
#if defined(__x86_64__)
	st.nettle_aesni = n ? list_has(n, "aesni") : (ecx & ECX_AES) != 0;
#else
	st.nettle_aesni = false; /* nettle's other fat builds: not named here */
#endif
	st.overrides[0] = 0;
	if (g || n)
		snprintf(st.overrides, sizeof(st.overrides), "%s%.48s%s%s%.48s",
			 g ? "GNUTLS_CPUID_OVERRIDE=" : "", g ? g : "", g && n ? " " : "",
			 n ? "NETTLE_FAT_OVERRIDE=" : "", n ? n : "");
}

static void read_state(void)
{
	pthread_once(&st_once, read_state_once);
}

static bool mode_is(const char *cipher, const char *mode)
{
	/* "aes-128-ccm-8": the mode follows the key size */
	const char *m = strchr(cipher + 4, '-');
	return m && !strncmp(m + 1, mode, strlen(mode));
}

const char *ct_gnutls_impl(const char *cipher)
{
	read_state();
	if (strncmp(cipher, "aes-", 4))
		return "nettle";
	bool cbc = mode_is(cipher, "cbc"), gcm = mode_is(cipher, "gcm"), ccm = mode_is(cipher, "ccm");
	if ((cbc || gcm || ccm) && st.gnutls_aesni)
		return "gnutls:aesni";
	if ((cbc || gcm) && st.gnutls_ssse3)
		return "gnutls:ssse3";
	return st.nettle_aesni ? "nettle:aesni" : "nettle:generic";
}

const char *ct_gnutls_overrides(void)
{
	read_state();
	return st.overrides[0] ? st.overrides : NULL;
}

const char *ct_gnutls_cipher_name(int alg, char *buf, size_t cap)
{
	const char *(*get_name)(gnutls_cipher_algorithm_t) = CT_REAL(gnutls_cipher_get_name);
	const char *name = get_name ? get_name((gnutls_cipher_algorithm_t)alg) : NULL;
	snprintf(buf, cap, "%s", name ? name : "unknown");
	for (char *p = buf; *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	return buf;
}

void ct_gnutls_failed(const char *call, int r, uint32_t path_id)
{
	const char *(*err_name)(int) = CT_REAL(gnutls_strerror_name);
	const char *name = err_name ? err_name(r) : NULL;
	ct_event(CT_EV_CALL_FAILED, call, 0, r, path_id, true, "%s (%d)", name ? name : "GNUTLS_E_?", r);
}
