/* SPDX-License-Identifier: MIT */
/*
 * gnutls_late.c - a GnuTLS cipher or AEAD handle made before `cryptrace attach` loaded the
 * library: its cipher, read from the handle at its first call after the attach (docs/attach.md),
 * as an EVP context made before the attach is classified from its cipher. GnuTLS has no call
 * that returns a handle's algorithm; the handle points at GnuTLS's table entry of its cipher,
 * which holds the algorithm number and a pointer to its name. Where these are is not taken on
 * faith from one version's source: two handles of each kind that the library makes here for
 * known ciphers show it (the word of the handle that points at an entry, the int of the entry
 * that is the algorithm, the word that points at the name gnutls_cipher_get_name gives), once per
 * process. A handle is then read with ct_peek only (which cannot fault), and its algorithm used
 * only when the entry's name is the one GnuTLS gives that algorithm. Anything else: the handle
 * stays unclassified and its calls pass uncounted, as before. (TLS sessions need none of this:
 * gnutls_record.c asks the session for its cipher at every call.)
 */
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <stdint.h>
#include <string.h>

#include "gnutls_internal.h"
#include "internal.h"
#include "once.h"
#include "peek.h"

#define HANDLE_WORDS 8 /* where in the handle the entry's pointer may be */
#define ENTRY_BYTES 32 /* where in the entry the algorithm and the name's pointer may be */

struct layout {
	size_t entry_off; /* in the handle: the entry's pointer */
	size_t alg_off;   /* in the entry: the algorithm (int) */
	size_t name_off;  /* in the entry: the name's pointer */
};

/* [0] cipher handles, [1] AEAD handles */
static _Atomic int layout_state[2]; /* ct_once: found */
static struct layout layouts[2];

typedef const char *(*name_fn)(gnutls_cipher_algorithm_t);

/* The entry of handle h by the layout's first field, into entry. */
static bool entry_of(const void *h, size_t entry_off, uint8_t entry[ENTRY_BYTES])
{
	const void *e;
	return ct_peek((const uint8_t *)h + entry_off, &e, sizeof(e)) && ct_peek(e, entry, ENTRY_BYTES);
}

/* Whether handle h of algorithm alg reads so with layout l. */
static bool reads_as(const void *h, const struct layout *l, int alg, name_fn name)
{
	uint8_t entry[ENTRY_BYTES];
	int32_t a;
	const void *np;
	const char *want = name((gnutls_cipher_algorithm_t)alg);
	if (!want || !entry_of(h, l->entry_off, entry))
		return false;
	memcpy(&a, entry + l->alg_off, sizeof(a));
	memcpy(&np, entry + l->name_off, sizeof(np));
	return a == alg && ct_peek_str_is(np, want);
}

/* The layout both handles h[0] (of alg[0]) and h[1] (of alg[1]) read as. */
static bool layout_from(void *const h[2], const int alg[2], name_fn name, struct layout *out)
{
	for (size_t eo = 0; eo < HANDLE_WORDS * sizeof(void *); eo += sizeof(void *))
		for (size_t ao = 0; ao + sizeof(int32_t) <= ENTRY_BYTES; ao += sizeof(int32_t))
			for (size_t no = 0; no + sizeof(void *) <= ENTRY_BYTES; no += sizeof(void *)) {
				struct layout l = { eo, ao, no };
				if (reads_as(h[0], &l, alg[0], name) && reads_as(h[1], &l, alg[1], name)) {
					*out = l;
					return true;
				}
			}
	return false;
}

static bool find_layout(bool aead, name_fn name)
{
	static const unsigned char key[32], iv[16]; /* zeros: these handles encrypt nothing */
	gnutls_datum_t k16 = { (unsigned char *)key, 16 }, k32 = { (unsigned char *)key, 32 };
	gnutls_datum_t iv16 = { (unsigned char *)iv, 16 }, iv12 = { (unsigned char *)iv, 12 };
	void *h[2] = { NULL, NULL };
	int alg[2];
	bool made;
	if (aead) {
		int (*init)(gnutls_aead_cipher_hd_t *, gnutls_cipher_algorithm_t, const gnutls_datum_t *) =
			CT_REAL(gnutls_aead_cipher_init);
		void (*deinit)(gnutls_aead_cipher_hd_t) = CT_REAL(gnutls_aead_cipher_deinit);
		if (!init || !deinit)
			return false;
		alg[0] = GNUTLS_CIPHER_AES_256_GCM;
		alg[1] = GNUTLS_CIPHER_AES_128_GCM;
		made = init((gnutls_aead_cipher_hd_t *)&h[0], (gnutls_cipher_algorithm_t)alg[0], &k32) >= 0 &&
		       init((gnutls_aead_cipher_hd_t *)&h[1], (gnutls_cipher_algorithm_t)alg[1], &k16) >= 0;
		made = made && layout_from(h, alg, name, &layouts[1]);
		for (int i = 0; i < 2; i++)
			if (h[i])
				deinit(h[i]);
		return made;
	}
	int (*init)(gnutls_cipher_hd_t *, gnutls_cipher_algorithm_t, const gnutls_datum_t *,
		    const gnutls_datum_t *) = CT_REAL(gnutls_cipher_init);
	void (*deinit)(gnutls_cipher_hd_t) = CT_REAL(gnutls_cipher_deinit);
	if (!init || !deinit)
		return false;
	alg[0] = GNUTLS_CIPHER_AES_128_CBC;
	alg[1] = GNUTLS_CIPHER_AES_256_GCM;
	made = init((gnutls_cipher_hd_t *)&h[0], (gnutls_cipher_algorithm_t)alg[0], &k16, &iv16) >= 0 &&
	       init((gnutls_cipher_hd_t *)&h[1], (gnutls_cipher_algorithm_t)alg[1], &k32, &iv12) >= 0;
	made = made && layout_from(h, alg, name, &layouts[0]);
	for (int i = 0; i < 2; i++)
		if (h[i])
			deinit(h[i]);
	return made;
}

struct layout_search {
	bool aead;
	name_fn name;
};

static bool search_layout(void *arg)
{
	const struct layout_search *a = arg;
	if (find_layout(a->aead, a->name))
		return true;
	ct_log(1,
	       "gnutls: the layout of %s handle was not found: handles made before the attach stay "
	       "uncounted",
	       a->aead ? "an AEAD" : "a cipher");
	return false;
}

bool ct_gnutls_handle_cipher(const void *h, bool aead, int *alg)
{
	name_fn name = CT_REAL(gnutls_cipher_get_name);
	struct layout_search search = { aead, name };
	if (!h || !name || !ct_once(&layout_state[aead], search_layout, &search))
		return false;
	const struct layout *l = &layouts[aead];
	uint8_t entry[ENTRY_BYTES];
	int32_t a;
	if (!entry_of(h, l->entry_off, entry))
		return false;
	memcpy(&a, entry + l->alg_off, sizeof(a));
	if (!reads_as(h, l, a, name))
		return false;
	*alg = a;
	return true;
}
