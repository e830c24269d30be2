/* SPDX-License-Identifier: MIT */
/*
 * params.h - OSSL_PARAM reading and writing for the in-process provider. The preload never links
 * libcrypto, so these mirror OSSL_PARAM_{get,set}_* for the few types cipher parameters use:
 * integers of 4 or 8 bytes, octet strings and octet pointers.
 */
#ifndef CT_ROUTE_PARAMS_H
#define CT_ROUTE_PARAMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <openssl/core.h>

/* Whether a param's key is name. EVP asks the provider for one or two params per call, several
 * times per message (openssl speed's GCM loop: the IV and key length at every init, the padding,
 * the tag): a chain of strcmp calls over the names a provider knows cost 4 % of that loop's CPU.
 * Names of different first letters are told apart inline. */
static inline bool ct_param_is(const char *key, const char *name)
{
	return key[0] == name[0] && __builtin_strcmp(key, name) == 0;
}

/* The first param named key, or NULL (params may be NULL). */
OSSL_PARAM *ct_param_find(OSSL_PARAM *params, const char *key);
const OSSL_PARAM *ct_param_find_const(const OSSL_PARAM *params, const char *key);

/* Integers: accept (UNSIGNED_)INTEGER of 4 or 8 bytes; fail (0) when the value does not fit. */
int ct_param_set_uint(OSSL_PARAM *p, uint64_t v);
int ct_param_set_int(OSSL_PARAM *p, int64_t v);
int ct_param_get_uint(const OSSL_PARAM *p, uint64_t *v);

/* Octet string (copied; data NULL = size query) or octet pointer (points at src). */
int ct_param_set_octets(OSSL_PARAM *p, const void *src, size_t len);
/* Copies an OCTET_STRING of at most max bytes into dst; *len gets its size. */
int ct_param_get_octets(const OSSL_PARAM *p, void *dst, size_t max, size_t *len);

#endif
