/* SPDX-License-Identifier: MIT */
/*
 * lowlevel.h - serving OpenSSL's low-level AES_* calls from the in-process AES-NI/VAES backend
 * when the route says aesni. The AES_set_{en,de}crypt_key hooks record, beside the program's
 * AES_KEY (which the real set-up still fills, so native fallback always works), our own expanded
 * key in a side table keyed by the AES_KEY's address. A data call is served only when that entry
 * exists and a copy of the AES_KEY taken at set-up still equals the program's bytes: a key that
 * was moved, copied, rewritten or set up behind our back runs natively.
 */
#ifndef CT_ROUTE_LOWLEVEL_H
#define CT_ROUTE_LOWLEVEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/aes.h>

/* True when some route may send low-level AES to aesni (a table is active and AES-NI works):
 * only then do the set-key hooks pay for the side table. */
bool ct_lowlevel_enabled(void);

/* After a successful real AES_set_encrypt_key (enc) / AES_set_decrypt_key (!enc). */
void ct_lowlevel_key_set(const AES_KEY *key, const unsigned char *user_key, int bits, bool enc);

/* The serving functions: false (nothing written) when the key is unknown, stale or of the other
 * direction than OpenSSL would use for this call; the caller then runs the real function. */
bool ct_lowlevel_block(const AES_KEY *key, const uint8_t *in, uint8_t *out, bool enc);
bool ct_lowlevel_cbc(const AES_KEY *key, const uint8_t *in, uint8_t *out, size_t len, uint8_t *ivec,
		     bool enc);
bool ct_lowlevel_cfb128(const AES_KEY *key, const uint8_t *in, uint8_t *out, size_t len, uint8_t *ivec,
			int *num, bool enc);
bool ct_lowlevel_ofb128(const AES_KEY *key, const uint8_t *in, uint8_t *out, size_t len, uint8_t *ivec,
			int *num);

#endif
