/* SPDX-License-Identifier: MIT */
/*
 * gcrypt_late.c - a libgcrypt handle opened before `cryptrace attach` loaded the library: its
 * algorithm and mode, read from the handle at its first call after the attach (docs/attach.md),
 * as an EVP context made before the attach is classified from its cipher. libgcrypt has no call
 * that returns a handle's algorithm or mode; its handle keeps both as ints, after a magic number
 * at its start. Where they are is not taken on faith from one version's source: handles that the
 * library opens here for three known (algorithm, mode) pairs show it (the first int that holds
 * the three algorithms, the first that holds the three modes), once per process; a handle is then
 * read only when it starts with a magic number those handles had, every read a ct_peek (which
 * cannot fault), and its values are used only when libgcrypt names the algorithm and the mode is
 * one of its modes. Anything else: the handle stays unclassified and its calls pass uncounted,
 * as before.
 */
#include <gcrypt.h>
#include <stdint.h>
#include <string.h>

#include "gcrypt_late.h"
#include "internal.h"
#include "once.h"
#include "peek.h"

#define SCAN_BYTES 512 /* the handle's fields come before its cipher context */
#define MODE_MAX 64    /* libgcrypt's modes are small numbers (GCRY_CIPHER_MODE_*) */

static const struct {
	int algo, mode;
	unsigned flags;
} refs[] = {
	{ GCRY_CIPHER_AES, GCRY_CIPHER_MODE_CBC, 0 },
	{ GCRY_CIPHER_AES256, GCRY_CIPHER_MODE_CTR, 0 },
	{ GCRY_CIPHER_AES192, GCRY_CIPHER_MODE_GCM, 0 },
};
#define NREFS (sizeof(refs) / sizeof(refs[0]))

static _Atomic int layout_state; /* ct_once: found */
static size_t algo_off, mode_off;
static uint32_t magic[2]; /* of a plain handle, of a GCRY_CIPHER_SECURE one (0: none seen) */

typedef gcry_error_t (*open_fn)(gcry_cipher_hd_t *, int, int, unsigned int);
typedef void (*close_fn)(gcry_cipher_hd_t);

static int32_t int_at(const uint8_t *p, size_t off)
{
	int32_t v;
	memcpy(&v, p + off, sizeof(v));
	return v;
}

/* The offsets of the algorithm and the mode in the handles of refs (read into img). */
static bool offsets_from(uint8_t img[NREFS][SCAN_BYTES])
{
	algo_off = mode_off = 0;
	for (size_t off = sizeof(int32_t); off + sizeof(int32_t) <= SCAN_BYTES; off += sizeof(int32_t)) {
		bool is_algo = true, is_mode = true;
		for (size_t r = 0; r < NREFS; r++) {
			is_algo &= int_at(img[r], off) == refs[r].algo;
			is_mode &= int_at(img[r], off) == refs[r].mode;
		}
		if (is_algo && !algo_off)
			algo_off = off;
		if (is_mode && !mode_off)
			mode_off = off;
	}
	return algo_off && mode_off;
}

static bool find_layout(void *unused)
{
	(void)unused;
	open_fn open = (open_fn)ct_resolve("gcry_cipher_open");
	close_fn close = (close_fn)ct_resolve("gcry_cipher_close");
	if (!open || !close)
		return false;
	static uint8_t img[NREFS][SCAN_BYTES];
	gcry_cipher_hd_t h[NREFS] = { 0 };
	bool ok = true;
	for (size_t r = 0; r < NREFS; r++) {
		ok = ok && !open(&h[r], refs[r].algo, refs[r].mode, refs[r].flags) && h[r] &&
		     ct_peek(h[r], img[r], SCAN_BYTES);
		ok = ok && int_at(img[r], 0) == int_at(img[0], 0);
	}
	ok = ok && offsets_from(img);
	if (ok)
		magic[0] = (uint32_t)int_at(img[0], 0);
	for (size_t r = 0; r < NREFS; r++)
		if (h[r])
			close(h[r]);
	/* a secure handle (GCRY_CIPHER_SECURE) starts with a magic of its own */
	gcry_cipher_hd_t s = NULL;
	uint8_t head[sizeof(int32_t)];
	if (ok && !open(&s, GCRY_CIPHER_AES, GCRY_CIPHER_MODE_CBC, GCRY_CIPHER_SECURE) && s &&
	    ct_peek(s, head, sizeof(head)))
		magic[1] = (uint32_t)int_at(head, 0);
	if (s)
		close(s);
	if (!ok)
		ct_log(1,
		       "libgcrypt: the layout of a cipher handle was not found: handles opened before "
		       "the attach stay uncounted");
	return ok;
}

bool ct_gcrypt_handle_algo_mode(const void *h, int *algo, int *mode)
{
	if (!h || !ct_once(&layout_state, find_layout, NULL))
		return false;
	uint8_t img[SCAN_BYTES];
	size_t n = (algo_off > mode_off ? algo_off : mode_off) + sizeof(int32_t);
	if (!ct_peek(h, img, n))
		return false;
	uint32_t m = (uint32_t)int_at(img, 0);
	if (m != magic[0] && (!magic[1] || m != magic[1]))
		return false;
	*algo = int_at(img, algo_off);
	*mode = int_at(img, mode_off);
	const char *(*algo_name)(int) = (const char *(*)(int))ct_resolve("gcry_cipher_algo_name");
	const char *name = algo_name ? algo_name(*algo) : NULL;
	return name && strcmp(name, "?") && *mode > 0 && *mode < MODE_MAX;
}
