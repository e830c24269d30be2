/* SPDX-License-Identifier: MIT */
/*
 * classify.h - the decision that names an EVP context's path, from facts the EVP hooks gather
 * with libcrypto's accessors at init: which engine, provider or route serves it, the cipher's
 * name, key length and direction, and whether an engine was asked for. Pure (no libcrypto, no
 * globals), so the unit tests drive it with hand-made facts.
 */
#ifndef CT_CLASSIFY_H
#define CT_CLASSIFY_H

#include <stdbool.h>
#include <stdint.h>

#include "core.h"

struct ct_evp_facts {
	bool has_engine;              /* the init named an ENGINE (or the ctx has one) */
	const char *engine_id;        /* its id (NULL: unknown) */
	bool has_provider;            /* the cipher comes from an OpenSSL 3 provider */
	const char *provider_name;    /* its name (NULL: unknown) */
	bool route_aesni;             /* the provider is cryptrace's own AES-NI one */
	uint8_t kernel_route;         /* CT_ROUTE_AFALG/CRYPTODEV when a kernel route serves it */
	const char *kernel_impl;      /* then "route:afalg:<driver>"... */
	const char *default_engine;   /* no provider (1.1): the engine ENGINE_get_cipher_engine gave */
	const char *builtin_impl;     /* no provider, no engine: the library's own code when it can be
				       * named ("boringssl:aesni"...: boringssl.h); NULL: "builtin" */
	const char *cipher_name;      /* EVP_CIPHER_get0_name, else OBJ_nid2sn (NULL: unknown) */
	int key_len;                  /* bytes; <= 0 unknown */
	uint8_t dir;                  /* CT_DIR_* */
	const char *requested_engine; /* the engine id the program asked for ("" or NULL: none) */
};

/* A path key and the strings it points to. */
struct ct_evp_class {
	struct ct_path_key key;
	char impl[64], cipher[48], requested[64];
};

/* Fills out from f; out->key points into out. */
void ct_evp_classify(const struct ct_evp_facts *f, struct ct_evp_class *out);

#endif
