/* SPDX-License-Identifier: MIT */
/*
 * kernel_backend.h - the afalg / cryptodev routes for EVP: a cryptrace provider context whose
 * route says afalg or cryptodev forwards whole blocks of ECB, CBC and CTR to the kernel (one
 * AF_ALG tfm socket per key and one op socket reused across calls; or one /dev/crypto session
 * per key), deciding per request by its size (`aes-*-cbc=afalg>=4096,aesni`). The provider keeps
 * OpenSSL's buffering, padding and IV semantics; this file only moves the block work and carries
 * the IV/counter forward exactly as the in-process code would.
 *
 * The functions are declared weak: the provider is also linked into tests without this file
 * (tests/route's differential test), where kernel contexts are never made.
 */
#ifndef CT_ROUTE_KERNEL_BACKEND_H
#define CT_ROUTE_KERNEL_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct ct_kroute;

/* At context init (route.c, per cipher and direction, with the guard raised): can the kernel
 * target serve cipher here? NULL if yes, else the reason for the fallback event. driver gets
 * the kernel driver that will serve it ("cbc-aes-aesni"; "?" when unknown). */
const char *ct_kroute_check(unsigned target, const char *cipher, char *driver, size_t cap)
	__attribute__((weak));

/* A kernel session for this key; NULL when no rule sends this cipher to the kernel or the
 * kernel refused (a CT_EV_FALLBACK event then says why, and the context runs in-process). */
struct ct_kroute *ct_kroute_open(const char *cipher, bool enc, const uint8_t *key, size_t keylen)
	__attribute__((weak));

/* Serves the leading whole blocks of len bytes in the kernel when the route table sends the
 * program's request (the update of `request` bytes this work belongs to) there; returns the
 * bytes done (0: do it all in-process). A lone block flushed from the buffer of a bigger update
 * (decryption with padding holds one back) stays in-process: one kernel request per update.
 * iv (CBC IV or CTR counter) is updated as OpenSSL would. A kernel error closes the session for
 * good (fallback event) and returns what was done before it. */
size_t ct_kroute_cipher(struct ct_kroute *kr, bool enc, uint8_t iv[16], const uint8_t *in, uint8_t *out,
			size_t len, size_t request) __attribute__((weak));

void ct_kroute_free(struct ct_kroute *kr) __attribute__((weak));

#endif
