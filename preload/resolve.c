/* SPDX-License-Identifier: MIT */
/*
 * resolve.c - finding the real functions. dlsym(RTLD_NEXT) covers the usual case (libcrypto
 * linked by the program). A libcrypto dlopen'd RTLD_LOCAL (python's _ssl, plugins) is invisible
 * to RTLD_NEXT, so we then look for a mapped libcrypto with dl_iterate_phdr and ask it directly,
 * with RTLD_NOLOAD so that we never load a library the program did not. With two libcryptos
 * mapped (OpenSSL's, and BoringSSL's in a plugin), a function only one of them has (BoringSSL's
 * EVP_AEAD_*) is found in whichever has it. GnuTLS's functions (gnutls_*) are looked for the
 * same way in a mapped libgnutls: a plugin may bring it in RTLD_LOCAL too.
 */
#include <dlfcn.h>
#include <link.h>
#include <string.h>

#include "gotpatch.h"
#include "internal.h"

struct find_lib {
	char path[512];
	unsigned skip;      /* mapped libraries to pass over before the one wanted */
	const char *prefix; /* the file name's start: "libcrypto.so" unless set */
};

static int find_lib_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct find_lib *f = arg;
	const char *name = info->dlpi_name;
	if (!name || !*name)
		return 0;
	const char *base = strrchr(name, '/');
	base = base ? base + 1 : name;
	const char *prefix = f->prefix ? f->prefix : "libcrypto.so";
	if (strncmp(base, prefix, strlen(prefix)) != 0)
		return 0;
	size_t n = strlen(name);
	if (n >= sizeof(f->path))
		return 0;
	if (f->skip) {
		f->skip--;
		return 0;
	}
	memcpy(f->path, name, n + 1);
	return 1;
}

/* The dlopen handle of a mapped libcrypto, or NULL. Not cached: a library may come and go. */
void *ct_libcrypto_handle(void)
{
	struct find_lib f = { .path = "" };
	if (!dl_iterate_phdr(find_lib_cb, &f))
		return NULL;
	return dlopen(f.path, RTLD_NOLOAD | RTLD_LAZY);
}

bool ct_libcrypto_mapped(void)
{
	struct find_lib f = { .path = "" };
	return dl_iterate_phdr(find_lib_cb, &f) != 0;
}

/* The most mapped libcryptos asked for a name RTLD_NEXT did not find. */
#define RESOLVE_MAX_LIBCRYPTOS 4

void *ct_resolve(const char *name)
{
	/* loaded late (`cryptrace attach`): what the import slots held before we took them */
	void *got = ct_got_real(name);
	if (got)
		return got;
	int saved = errno;
	void *p = dlsym(RTLD_NEXT, name);
	/* the library that defines the name: a late library (attach) is searched before none of them */
	const char *prefix = !strncmp(name, "gnutls_", 7) ? "libgnutls.so"
			     : !strncmp(name, "gcry_", 5) ? "libgcrypt.so"
							  : "libcrypto.so";
	for (unsigned i = 0; !p && i < RESOLVE_MAX_LIBCRYPTOS; i++) {
		struct find_lib f = { .path = "", .skip = i, .prefix = prefix };
		if (!dl_iterate_phdr(find_lib_cb, &f))
			break;
		void *h = dlopen(f.path, RTLD_NOLOAD | RTLD_LAZY);
		if (h) {
			p = dlsym(h, name);
			dlclose(h); /* drops only the reference RTLD_NOLOAD took */
		}
	}
	errno = saved;
	return p;
}
