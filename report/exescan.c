/* SPDX-License-Identifier: MIT */
/*
 * exescan.c - crypto libraries linked into an executable (see exescan.h). The file is mapped
 * read-only and searched for two kinds of marks per library:
 *
 *  - texts only the library's own code holds (a source path in its error records, its assembler
 *    modules' credit lines, its version banner): they prove the code is in the file, in a static
 *    or a dynamic executable alike;
 *  - functions it defines (EVP_EncryptUpdate, gcry_cipher_open...). A dynamic executable or a
 *    shared object names the functions it imports too, so there they count only as symbols
 *    defined in its .symtab or .dynsym; in a file that imports nothing (a static executable)
 *    the name's presence is enough.
 *
 * Forks share marks (BoringSSL and LibreSSL keep OpenSSL's function names and assembler), so a
 * fork's own mark wins over OpenSSL's. Nothing here runs the file or trusts its layout: every
 * offset is checked against the mapping.
 */
#include "exescan.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "elfimage.h"

/* Go binaries run to tens of MB; nothing that large is a plausible executable beyond this. */
#define SCAN_MAX_BYTES (512ull << 20)

enum lib_id {
	L_OPENSSL,
	L_BORINGSSL,
	L_LIBRESSL,
	L_GCRYPT,
	L_MBEDTLS,
	L_WOLFSSL,
	L_NETTLE,
	L_SODIUM,
	L_GO,
	L_RING,
	L_COUNT
};

static const char *const lib_names[L_COUNT] = {
	[L_OPENSSL] = "OpenSSL",  [L_BORINGSSL] = "BoringSSL", [L_LIBRESSL] = "LibreSSL",
	[L_GCRYPT] = "libgcrypt", [L_MBEDTLS] = "Mbed TLS",    [L_WOLFSSL] = "wolfSSL",
	[L_NETTLE] = "nettle",    [L_SODIUM] = "libsodium",    [L_GO] = "Go's crypto/aes",
	[L_RING] = "ring (Rust)",
};

enum mark_kind { TEXT, SYMBOL };

static const struct mark {
	enum lib_id lib;
	enum mark_kind kind;
	const char *s; /* a SYMBOL ending in '*' is a prefix */
} marks[] = {
	{ L_OPENSSL, TEXT, "crypto/evp/evp_enc.c" },
	{ L_OPENSSL, TEXT, "CRYPTOGAMS by <appro@openssl.org>" },
	{ L_OPENSSL, SYMBOL, "EVP_EncryptUpdate" },
	{ L_OPENSSL, SYMBOL, "AES_set_encrypt_key" },
	{ L_BORINGSSL, TEXT, "BoringSSL" },
	{ L_BORINGSSL, SYMBOL, "BORINGSSL_self_test" },
	{ L_LIBRESSL, TEXT, "LibreSSL 2." },
	{ L_LIBRESSL, TEXT, "LibreSSL 3." },
	{ L_LIBRESSL, TEXT, "LibreSSL 4." },
	{ L_GCRYPT, TEXT, "Libgcrypt warning" },
	{ L_GCRYPT, SYMBOL, "gcry_cipher_open" },
	{ L_MBEDTLS, SYMBOL, "mbedtls_aes_crypt_cbc" },
	{ L_MBEDTLS, SYMBOL, "mbedtls_cipher_setup" },
	{ L_WOLFSSL, SYMBOL, "wc_AesCbcEncrypt" },
	{ L_WOLFSSL, SYMBOL, "wolfSSL_Init" },
	{ L_NETTLE, SYMBOL, "nettle_aes128_encrypt" },
	{ L_NETTLE, SYMBOL, "nettle_aes_encrypt" },
	{ L_SODIUM, SYMBOL, "sodium_init" },
	{ L_GO, TEXT, "crypto/aes.newCipher" },
	{ L_GO, TEXT, "crypto/aes.(*aesCipher" },
	{ L_RING, SYMBOL, "ring_core_*" },
};

static const void *find(const struct rp_image *im, const char *s)
{
	return memmem(im->p, im->len, s, strlen(s));
}

/* ---- ELF: defined and imported symbols (either class, either byte order) ---------------- */

static bool name_matches(const char *want, const char *name, size_t max)
{
	size_t n = strlen(want);
	if (n && want[n - 1] == '*')
		return n - 1 <= max && !strncmp(name, want, n - 1);
	return n < max && !memcmp(name, want, n + 1);
}

/* A symbol of the file's .symtab or .dynsym: one defined under the name sym (a trailing '*' a
 * prefix), or with sym NULL any import (an undefined named symbol of its .dynsym). */
static bool has_symbol(const struct rp_image *im, const char *sym)
{
	struct rp_elf eh;
	if (!rp_image_elf(im, &eh))
		return false;
	size_t size = rp_elf_sym_size(&eh);
	for (unsigned i = 0; i < eh.h.e_shnum; i++) {
		Elf64_Shdr sh, str;
		if (!rp_image_shdr(im, &eh, i, &sh) ||
		    (sh.sh_type != SHT_DYNSYM && (!sym || sh.sh_type != SHT_SYMTAB)) ||
		    sh.sh_entsize < size || !rp_image_in(im, sh.sh_offset, sh.sh_size) ||
		    !rp_image_shdr(im, &eh, sh.sh_link, &str) || !rp_image_in(im, str.sh_offset, str.sh_size))
			continue;
		for (uint64_t off = 0; off + size <= sh.sh_size; off += sh.sh_entsize) {
			Elf64_Sym s;
			if (!rp_image_sym(im, &eh, sh.sh_offset + off, &s))
				break;
			if (!sym && s.st_shndx == SHN_UNDEF && s.st_name && s.st_name < str.sh_size)
				return true;
			if (!sym || s.st_shndx == SHN_UNDEF || s.st_name >= str.sh_size)
				continue;
			const char *name = (const char *)im->p + str.sh_offset + s.st_name;
			if (name_matches(sym, name, str.sh_size - s.st_name))
				return true;
		}
	}
	return false;
}

/* ---- versions --------------------------------------------------------------------------- */

/* The printable text from at up to a NUL or control byte, at most cap-1 bytes. */
static void text_at(const struct rp_image *im, const uint8_t *at, char *buf, size_t cap)
{
	size_t n = 0;
	while (at + n < im->p + im->len && n + 1 < cap && at[n] >= 0x20 && at[n] < 0x7f)
		n++;
	memcpy(buf, at, n);
	buf[n] = '\0';
}

/* "OpenSSL 3.0.19 27 Jan 2026" when the banner is linked in; else the major version from the
 * engines directory built into it ("engines-3", "engines-1.1"). */
static void openssl_version(const struct rp_image *im, char *buf, size_t cap)
{
	const uint8_t *p = im->p, *end = im->p + im->len;
	buf[0] = '\0';
	while (p < end) {
		const uint8_t *hit = memmem(p, (size_t)(end - p), "OpenSSL ", 8);
		if (!hit)
			break;
		if (hit + 10 < end && hit[8] >= '0' && hit[8] <= '9' && hit[9] == '.') {
			text_at(im, hit, buf, cap);
			return;
		}
		p = hit + 8;
	}
	if (find(im, "engines-3"))
		snprintf(buf, cap, "OpenSSL 3.x");
	else if (find(im, "engines-1.1"))
		snprintf(buf, cap, "OpenSSL 1.1");
}

static void prefixed_version(const struct rp_image *im, const char *prefix, char *buf, size_t cap)
{
	const uint8_t *hit = find(im, prefix);
	buf[0] = '\0';
	if (hit)
		text_at(im, hit, buf, cap);
}

/* ---- the scan --------------------------------------------------------------------------- */

static void cat(char *buf, size_t cap, const char *s)
{
	size_t n = strlen(buf);
	if (n + 1 < cap)
		snprintf(buf + n, cap - n, "%s", s);
}

enum rp_exe_state rp_exe_scan(const char *path, struct rp_exe_scan *s)
{
	memset(s, 0, sizeof(*s));
	struct rp_image im;
	switch (rp_image_map(path, SCAN_MAX_BYTES, &im)) {
	case RP_IMAGE_MISSING:
		return s->state = RP_EXE_MISSING;
	case RP_IMAGE_UNREADABLE:
		return s->state = RP_EXE_UNREADABLE;
	case RP_IMAGE_OK:
		break;
	}
	if (im.len < SELFMAG || memcmp(im.p, ELFMAG, SELFMAG)) {
		rp_image_unmap(&im);
		return s->state = RP_EXE_NOT_ELF;
	}
	s->state = RP_EXE_SCANNED;
	/* a file that imports nothing (a static executable) holds only its own functions' names; a
	 * shared object has no PT_INTERP either, but the names it imports are in it too */
	bool imports = has_symbol(&im, NULL);

	const char *why[L_COUNT] = { 0 };
	bool symbol[L_COUNT] = { false };
	for (size_t i = 0; i < sizeof(marks) / sizeof(marks[0]); i++) {
		const struct mark *mk = &marks[i];
		if (why[mk->lib])
			continue;
		bool hit;
		if (mk->kind == TEXT)
			hit = find(&im, mk->s) != NULL;
		else if (!imports && mk->s[strlen(mk->s) - 1] != '*')
			hit = find(&im, mk->s) != NULL; /* a stripped static file has no symbol table */
		else
			hit = has_symbol(&im, mk->s);
		if (hit) {
			why[mk->lib] = mk->s;
			symbol[mk->lib] = mk->kind == SYMBOL;
		}
	}
	if (why[L_BORINGSSL] || why[L_LIBRESSL])
		why[L_OPENSSL] = NULL;

	for (int l = 0; l < L_COUNT; l++) {
		if (!why[l])
			continue;
		char name[80] = "";
		if (l == L_OPENSSL)
			openssl_version(&im, name, sizeof(name));
		else if (l == L_LIBRESSL)
			prefixed_version(&im, "LibreSSL ", name, sizeof(name));
		else if (l == L_MBEDTLS)
			prefixed_version(&im, "Mbed TLS ", name, sizeof(name));
		if (!name[0])
			snprintf(name, sizeof(name), "%s", lib_names[l]);
		if (s->libs[0])
			cat(s->libs, sizeof(s->libs), ", ");
		cat(s->libs, sizeof(s->libs), name);
		char ev[160];
		snprintf(ev, sizeof(ev), "%s%s: %s '%s'", s->evidence[0] ? "; " : "", lib_names[l],
			 symbol[l] ? (!imports ? "symbol name" : "defined symbol") : "text", why[l]);
		cat(s->evidence, sizeof(s->evidence), ev);
	}
	rp_image_unmap(&im);
	return s->state;
}

void rp_exe_scan_describe(const char *path, const struct rp_exe_scan *s, char *buf, size_t cap)
{
	switch (s->state) {
	case RP_EXE_MISSING:
		snprintf(buf, cap,
			 "the executable %s is not on this host, so it was not examined for a "
			 "statically linked crypto library",
			 path);
		break;
	case RP_EXE_UNREADABLE:
		snprintf(buf, cap,
			 "the executable %s could not be read to look for a statically linked "
			 "crypto library",
			 path);
		break;
	case RP_EXE_NOT_ELF:
		snprintf(buf, cap, "%s is not an ELF executable (a script: its interpreter did the work)",
			 path);
		break;
	case RP_EXE_SCANNED:
		if (s->libs[0])
			snprintf(buf, cap,
				 "its executable %s has %s linked in statically (%s): calls "
				 "inside one file never go through the dynamic linker, so LD_PRELOAD "
				 "cannot intercept them",
				 path, s->libs, s->evidence);
		else
			snprintf(buf, cap,
				 "its executable %s holds no crypto library cryptrace recognises "
				 "(OpenSSL, BoringSSL, LibreSSL, libgcrypt, Mbed TLS, wolfSSL, nettle, "
				 "libsodium, Go, ring)",
				 path);
		break;
	}
}
