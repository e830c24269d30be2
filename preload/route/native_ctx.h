/* SPDX-License-Identifier: MIT */
/*
 * native_ctx.h - a native (program's default library context) EVP context that a cryptrace
 * provider context hands its work to when it meets something the aesni route does not serve:
 * today libssl's TLS 1.0-1.2 CBC record layer (`tls-version` set: padding and MAC handling in
 * constant time belong to OpenSSL). The work then runs exactly as without the route.
 */
#ifndef CT_ROUTE_NATIVE_CTX_H
#define CT_ROUTE_NATIVE_CTX_H

#include <stddef.h>
#include <stdint.h>

#include <openssl/core.h>

/* An initialised native context for cipher `name` (NULL on failure). */
void *ct_native_open(const char *name, const uint8_t *key, size_t keylen, const uint8_t *iv, size_t ivlen,
		     int enc, const OSSL_PARAM params[]);
int ct_native_reinit(void *n, const uint8_t *key, const uint8_t *iv, int enc, const OSSL_PARAM params[]);
int ct_native_update(void *n, uint8_t *out, size_t *outl, size_t outsize, const uint8_t *in, size_t inl);
int ct_native_final(void *n, uint8_t *out, size_t *outl, size_t outsize);
int ct_native_cipher(void *n, uint8_t *out, size_t *outl, size_t outsize, const uint8_t *in, size_t inl);
int ct_native_get_params(void *n, OSSL_PARAM params[]);
int ct_native_set_params(void *n, const OSSL_PARAM params[]);
void *ct_native_dup(void *n);
void ct_native_free(void *n);

/* How the installed libcrypto treats EVP_CIPHER_CTX_set_num: OpenSSL 3.0.22 refuses a num at or
 * above the cipher's block size (a stream mode, block size 1, takes only 0); 3.0.19 and earlier
 * took any. Asked once of a native stream-mode context (the behaviour, not the version string,
 * which a distribution's backports do not change); CT_NUM_UNKNOWN when it cannot be asked. */
enum ct_native_num_rule { CT_NUM_UNKNOWN, CT_NUM_ANY, CT_NUM_BELOW_BLOCK };
enum ct_native_num_rule ct_native_num_rule(void);

#endif
