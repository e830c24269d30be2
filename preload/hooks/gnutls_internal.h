/* SPDX-License-Identifier: MIT */
/*
 * gnutls_internal.h - what the GnuTLS hooks share: the path of a GnuTLS cipher (its OpenSSL-style
 * name and which code GnuTLS runs for it, gnutls_impl.c), and its failures as events. The cipher
 * API hooks are gnutls.c, the record hooks gnutls_record.c.
 */
#ifndef CT_GNUTLS_INTERNAL_H
#define CT_GNUTLS_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core.h"

/* GnuTLS's name of cipher algorithm alg, lower-cased ("AES-256-GCM" -> "aes-256-gcm"), into buf;
 * "unknown" when GnuTLS has none. Resolves gnutls_cipher_get_name (call with guards raised). */
const char *ct_gnutls_cipher_name(int alg, char *buf, size_t cap);

/* Which code serves cipher (a name from ct_gnutls_cipher_name) in this process, from the CPU and
 * the two environment overrides, read as GnuTLS and nettle read them at their start:
 * "gnutls:aesni", "gnutls:ssse3" (GnuTLS's own x86 code), "nettle:aesni", "nettle:generic" (nettle's
 * AES with and without AES-NI), "nettle" for a cipher other than AES. */
const char *ct_gnutls_impl(const char *cipher);

/* The overrides that changed that choice, as the path's `requested` ("GNUTLS_CPUID_OVERRIDE=0x1
 * NETTLE_FAT_OVERRIDE=vendor:intel"); NULL when neither is set. */
const char *ct_gnutls_overrides(void);

/* A GnuTLS call that returned the error r (< 0): an event with its call site, the error decoded
 * by gnutls_strerror_name ("GNUTLS_E_DECRYPTION_FAILED (-24)"). Call with guards raised. */
void ct_gnutls_failed(const char *call, int r, uint32_t path_id);

/* The cipher algorithm of a GnuTLS cipher handle (aead false: gnutls_cipher_hd_t) or AEAD handle
 * (gnutls_aead_cipher_hd_t) made before `cryptrace attach`, read from the handle (gnutls_late.c;
 * guards raised by the caller); false when it cannot be read safely. */
bool ct_gnutls_handle_cipher(const void *h, bool aead, int *alg);

#endif
