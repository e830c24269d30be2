/* SPDX-License-Identifier: MIT */
/*
 * boringssl.c - telling BoringSSL's libcrypto apart and naming the AES code it runs (boringssl.h).
 * BoringSSL picks its AES at each key set-up from a capability word it fills once from CPUID and
 * the OPENSSL_ia32cap environment variable (crypto/cpu_intel.c): AES-NI when the word has
 * CPUID.1:ECX.AES, else the vector-permute code (vpaes) when it has SSSE3, else constant-time C.
 * The word itself is hidden (OPENSSL_ia32cap_P is not exported), so we rebuild it the same way and
 * check the result against what the library does export: EVP_has_aes_hardware(), which says
 * whether it uses AES-NI (with PCLMUL, for GCM). When the two disagree we name no level.
 */
#include <dlfcn.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "boringssl.h"
#include "internal.h"
#include "linkmap.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#define CAP_PCLMUL (1ull << 33)

uint64_t ct_boringssl_cap_word(uint64_t cpuid_word, const char *env)
{
	if (!env || !*env)
		return cpuid_word;
	bool invert = env[0] == '~', set = env[0] == '|';
	const char *s = env + (invert || set);
	bool hex = s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
	const char *digits = hex ? s + 2 : s;
	char *end;
	unsigned long long v = strtoull(digits, &end, hex ? 16 : 10);
	if (end == digits)
		return cpuid_word; /* nothing parsed: BoringSSL leaves the word alone */
	return invert ? cpuid_word & ~(uint64_t)v : set ? cpuid_word | (uint64_t)v : (uint64_t)v;
}

/* The shared library that holds addr, opened without loading anything (NULL if none). Its link
 * map's own name is what dlopen matches without a system call (dladdr would give the main
 * program's argv[0], which dlopen looks for on disk: a sandbox may kill the process for that);
 * the main program is never a BoringSSL libcrypto. */
static void *library_of(const void *addr)
{
	struct link_map *map = ct_link_map_of(addr);
	if (!map || !map->l_name || !map->l_name[0])
		return NULL;
	return dlopen(map->l_name, RTLD_NOLOAD | RTLD_LAZY);
}

static bool is_boringssl(void *lib)
{
	const char *(*ver)(int) = lib ? (const char *(*)(int))dlsym(lib, "OpenSSL_version") : NULL;
	const char *v = ver ? ver(0 /* OPENSSL_VERSION */) : NULL;
	return v && strncmp(v, "BoringSSL", 9) == 0;
}

/* The AES level from the rebuilt capability word, checked against the library's own answer. */
static const char *aes_level(void *lib)
{
	int (*has_asm)(void) = (int (*)(void))dlsym(lib, "CRYPTO_has_asm");
	if (has_asm && !has_asm())
		return "boringssl:nohw"; /* built without assembly: no AES-NI, no vpaes */
#if defined(__x86_64__) || defined(__i386__)
	unsigned a, b, c, d;
	if (!__get_cpuid(1, &a, &b, &c, &d))
		return "boringssl";
	uint64_t word = ct_boringssl_cap_word(((uint64_t)c << 32) | d, ct_config_ia32cap());
	bool aesni = word & CT_BSSL_CAP_AESNI;
	int (*has_hw)(void) = (int (*)(void))dlsym(lib, "EVP_has_aes_hardware");
	/* it says yes exactly when AES-NI and PCLMUL (for GCM) are both in its word: any other
	 * answer means our reading of that word is wrong */
	if (has_hw && (has_hw() == 1) != (aesni && (word & CAP_PCLMUL)))
		return "boringssl";
	return aesni ? "boringssl:aesni" : (word & CT_BSSL_CAP_SSSE3) ? "boringssl:vpaes" : "boringssl:nohw";
#else
	return "boringssl";
#endif
}

const char *ct_boringssl_impl(const void *addr, const char *cipher)
{
	int saved = errno;
	void *lib = library_of(addr);
	const char *impl = NULL;
	if (is_boringssl(lib))
		impl = cipher && strncasecmp(cipher, "aes", 3) == 0 ? aes_level(lib) : "boringssl";
	if (lib)
		dlclose(lib);
	errno = saved;
	return impl;
}
