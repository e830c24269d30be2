/* SPDX-License-Identifier: MIT */
/*
 * route.h - what the EVP hooks call to apply CRYPTRACE_ROUTE: a context routed to aesni, afalg
 * or cryptodev gets one of the cryptrace providers' ciphers in place of the one the program asked
 * for, at init time. (AES_* routes: lowlevel.h; kernel-interface routes: kernel/emul.h.)
 */
#ifndef CT_ROUTE_H
#define CT_ROUTE_H

#include <stdint.h>

#include <openssl/evp.h>

#include "route_spec.h"

/* Parses CRYPTRACE_ROUTE once (later calls are no-ops). A spec that does not parse is reported
 * once on stderr (bare LD_PRELOAD has no other way to tell the user) and as a trace warning, and
 * nothing is routed. Call from the constructor; every other function here calls it too. */
void ct_route_init(void);

/* `cryptrace attach`'s begin: the table from the attach's settings (none: nothing routed),
 * replacing an earlier attach's. Only while every other thread is stopped. */
void ct_route_reload(void);

/* The active table, or NULL when no (valid) spec is set. */
const struct ct_route_table *ct_route_active(void);

/* For the EVP init hooks: the cipher to pass to the real init instead of `requested`, or NULL to
 * leave the call untouched. *route_out (may be NULL) gets the enum ct_route_target that applies
 * to this context: CT_ROUTE_NONE when no rule matched, CT_ROUTE_AESNI when the substitute is
 * returned (or requested already is ours), CT_ROUTE_NATIVE when a rule said native or when the
 * aesni route had to fall back (a CT_EV_FALLBACK event then says why). afalg/cryptodev: the
 * kernel routes' provider's cipher (see ct_route_kernel_impl) with *route_out = the target; when
 * the kernel cannot take the cipher here (no AF_ALG, no /dev/crypto, seccomp, mode), the aesni
 * provider's cipher if a rule also says aesni for it (*route_out CT_ROUTE_AESNI), else NULL
 * with *route_out still the kernel target; a fallback event says why. enc: 1, 0 or -1. */
const EVP_CIPHER *ct_route_evp_cipher(const EVP_CIPHER *requested, ENGINE *impl, int enc,
				      uint32_t *route_out);

/* True when cipher is one of ours (a context already routed to aesni). */
int ct_route_is_ours(const EVP_CIPHER *cipher);

/* For the EVP hooks' path classification: when cipher is one of the kernel routes' ciphers
 * (afalg/cryptodev), writes its impl ("route:afalg:cbc-aes-aesni", "route:cryptodev:<driver>")
 * into impl (may be NULL) and returns CT_ROUTE_AFALG or CT_ROUTE_CRYPTODEV; else CT_ROUTE_NONE.
 * Requests below a size threshold, or after a kernel error, are served in-process by the same
 * context (the kernel paths of the preload's AF_ALG / cryptodev hooks count what the kernel did). */
unsigned ct_route_kernel_impl(const EVP_CIPHER *cipher, char *impl, size_t cap);

/* The path impl to record for a routed context: "route:aesni" on x86, "route:armv8-ce" on aarch64
 * (aesni.h, which the user includes). */
#define CT_ROUTE_IMPL_AESNI CT_AESNI_IMPL

#endif
