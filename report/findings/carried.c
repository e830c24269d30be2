/* SPDX-License-Identifier: MIT */
/*
 * carried.c - the crypto a process carries that the hooks cannot see, for nothing-intercepted:
 *
 *  - a crypto library other than OpenSSL's libcrypto that it mapped, named by what does the
 *    cipher work: a TLS library before the crypto library beneath it (wget maps libnettle and
 *    libgnutls, and GnuTLS runs AES-GCM in its own accelerated code, not in nettle);
 *  - a crypto library linked statically into its executable or into any shared object it mapped
 *    (the preload names every mapped object: pip's cryptography wheel carries OpenSSL inside
 *    _rust.abi3.so, which Python dlopens long after start).
 *
 * Files are scanned with exescan.c, each at most once while it is unchanged.
 */
#include "carried.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

/* Crypto libraries other than libcrypto, most specific first: the TLS library a program links
 * does its ciphers itself or hands them to the crypto library listed after it. GnuTLS and
 * libgcrypt are hooked (nothing_intercepted.c says so of a process that loaded them without a
 * path); the others the hooks do not see. */
static const struct rp_unhooked {
	const char *prefix, *name, *how;
} unhooked[] = {
	{ "libgnutls.so", "GnuTLS",
	  "runs AES in its own accelerated code (other ciphers in nettle, "
	  "beneath it)" },
	{ "libnss3.so", "NSS", "runs its ciphers in its own freebl library" },
	{ "libwolfssl.so", "wolfSSL", "does its cipher work inside itself" },
	{ "libmbedtls.so", "Mbed TLS", "does its cipher work in libmbedcrypto" },
	{ "libmbedcrypto.so", "Mbed TLS", "does its cipher work inside itself" },
	{ "libgcrypt.so", "libgcrypt", "does its cipher work inside itself" },
	{ "libsodium.so", "libsodium", "does its cipher work inside itself" },
	{ "libnettle.so", "nettle", "does its cipher work inside itself" },
	{ "libkcapi.so", "libkcapi", "hands its cipher work to the kernel through AF_ALG" },
};

bool rp_unhooked_lib(const struct rp_proc *p, struct ct_str *path, const char **name, const char **how)
{
	size_t best = sizeof(unhooked) / sizeof(unhooked[0]);
	for (unsigned k = 0, n = rp_str_nparts(p->proc.crypto_libs, '\n'); k < n; k++) {
		struct ct_str l = rp_str_part(p->proc.crypto_libs, '\n', k);
		for (size_t r = 0; r < best; r++)
			if (rp_str_starts(rp_str_basename(l), unhooked[r].prefix)) {
				best = r;
				*path = l;
				*name = unhooked[r].name;
				*how = unhooked[r].how;
				break;
			}
	}
	return best < sizeof(unhooked) / sizeof(unhooked[0]);
}

/* ---- scans of files, cached while unchanged */

#define SCAN_CACHE 128
static struct {
	char path[512];
	dev_t dev;
	ino_t ino;
	off_t size;
	time_t mtime;
	struct rp_exe_scan scan;
	bool used;
} cache[SCAN_CACHE];
static unsigned cache_next;

const struct rp_exe_scan *rp_scan_file(const char *path)
{
	static struct rp_exe_scan missing;
	struct stat st;
	if (!path[0] || stat(path, &st) != 0) {
		rp_exe_scan(path, &missing); /* says missing or unreadable */
		return &missing;
	}
	for (unsigned i = 0; i < SCAN_CACHE; i++)
		if (cache[i].used && !strcmp(cache[i].path, path) && cache[i].dev == st.st_dev &&
		    cache[i].ino == st.st_ino && cache[i].size == st.st_size && cache[i].mtime == st.st_mtime)
			return &cache[i].scan;
	unsigned i = cache_next++ % SCAN_CACHE;
	snprintf(cache[i].path, sizeof(cache[i].path), "%s", path);
	cache[i].dev = st.st_dev;
	cache[i].ino = st.st_ino;
	cache[i].size = st.st_size;
	cache[i].mtime = st.st_mtime;
	cache[i].used = true;
	rp_exe_scan(path, &cache[i].scan);
	return &cache[i].scan;
}

/* Mapped objects not worth a look: the C runtime (no crypto in it), the shared crypto
 * libraries themselves (libcrypto is hooked; the others are named by rp_unhooked_lib, and their
 * own symbols would read as "linked in"), and OpenSSL's own provider and engine modules (the
 * legacy provider holds OpenSSL's assembler, but its ciphers are reached through libcrypto's
 * EVP calls, which are hooked). */
static bool not_a_carrier(struct ct_str name, struct ct_str path)
{
	static const char *const openssl_dirs[] = { "/ossl-modules/", "/engines-3/", "/engines-1.1/" };
	for (size_t i = 0; i < sizeof(openssl_dirs) / sizeof(openssl_dirs[0]); i++)
		if (memmem(path.p, path.len, openssl_dirs[i], strlen(openssl_dirs[i])))
			return true;
	static const char *const skip[] = {
		"libc.so",       "libm.so",        "ld-linux",      "ld64.so",      "libpthread.so",
		"libdl.so",      "librt.so",       "libgcc_s.so",   "libstdc++.so", "libz.so",
		"libutil.so",    "libresolv.so",   "libnss_",       "libcrypto.so", "libssl.so",
		"libgnutls",     "libnettle.so",   "libhogweed.so", "libgcrypt.so", "libgpg-error.so",
		"libnss3.so",    "libsoftokn3.so", "libfreebl",     "libsodium.so", "libmbed",
		"libwolfssl.so", "libkcapi.so",    "libcryptrace",
	};
	for (size_t i = 0; i < sizeof(skip) / sizeof(skip[0]); i++)
		if (rp_str_starts(name, skip[i]))
			return true;
	return false;
}

bool rp_proc_carrier(const struct rp_proc *p, struct rp_carrier *c)
{
	memset(c, 0, sizeof(*c));
	if (p->has_hdr && p->hdr.exe.len) {
		snprintf(c->path, sizeof(c->path), "%.*s", (int)p->hdr.exe.len, p->hdr.exe.p);
		c->scan = rp_scan_file(c->path);
		c->is_exe = true;
		if (c->scan->state == RP_EXE_SCANNED && c->scan->libs[0])
			return true;
	}
	for (size_t i = 0; i < p->nmodules; i++) {
		const struct ct_module *mod = &p->modules[i];
		if (!(mod->flags & CT_MODULE_MAPPED) || !mod->path.len || not_a_carrier(mod->name, mod->path))
			continue;
		char path[512];
		snprintf(path, sizeof(path), "%.*s", (int)mod->path.len, mod->path.p);
		const struct rp_exe_scan *s = rp_scan_file(path);
		if (s->state == RP_EXE_SCANNED && s->libs[0]) {
			snprintf(c->path, sizeof(c->path), "%s", path);
			c->scan = s;
			c->is_exe = false;
			return true;
		}
	}
	return false;
}

bool rp_proc_lists_mapped(const struct rp_proc *p)
{
	for (size_t i = 0; i < p->nmodules; i++)
		if (p->modules[i].flags & CT_MODULE_MAPPED)
			return true;
	return false;
}
