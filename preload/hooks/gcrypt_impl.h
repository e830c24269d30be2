/* SPDX-License-Identifier: MIT */
/*
 * gcrypt_impl.h - what names a libgcrypt cipher handle's path: its cipher in OpenSSL's words
 * ("aes-256-cfb") and the libgcrypt code that serves it ("gcrypt:vaes"), from the library's own
 * hardware-feature list. Pure (no libgcrypt, no globals): the hooks (gcrypt.c) pass the facts in.
 */
#ifndef CT_GCRYPT_IMPL_H
#define CT_GCRYPT_IMPL_H

#include <stdbool.h>
#include <stddef.h>

#pragma GCC visibility push(hidden)

/* The cipher of algorithm algo (libgcrypt's GCRY_CIPHER_*, named algo_name by the library, NULL
 * when unknown) in mode (GCRY_CIPHER_MODE_*), into buf: OpenSSL's lower-case name for AES
 * ("aes-128-xts", "id-aes256-wrap"), else the library's name lower-cased with the mode. */
void ct_gcrypt_cipher_name(char *buf, size_t cap, int algo, const char *algo_name, int mode);

/* Key bits of a key of keylen bytes as EVP counts them (XTS and SIV keys are two keys). */
unsigned ct_gcrypt_key_bits(int mode, size_t keylen);

/* The libgcrypt code (1.10) that serves AES algo in mode in that direction, given the library's
 * "hwflist" (gcry_get_config(0, "hwflist"): the features it uses, ':'-separated; NULL unknown):
 * "gcrypt:vaes", "gcrypt:aesni", "gcrypt:ssse3", "gcrypt:generic"... A cipher other than AES is
 * "gcrypt". */
const char *ct_gcrypt_impl(const char *hwflist, int algo, int mode, bool decrypt);

#pragma GCC visibility pop

#endif
