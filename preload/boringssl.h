/* SPDX-License-Identifier: MIT */
/*
 * boringssl.h - what the EVP and EVP_AEAD hooks need to know about BoringSSL's libcrypto
 * (Debian's android-libboringssl, and programs that bundle it): whether a cipher comes from one,
 * and which of its AES code (AES-NI, vector-permute, constant-time C) runs. BoringSSL has no
 * providers and no engines; OpenSSL_version() says just "BoringSSL".
 */
#ifndef CT_BORINGSSL_H
#define CT_BORINGSSL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The implementation that serves `cipher` when addr (an EVP_CIPHER or EVP_AEAD) lies in a mapped
 * library whose OpenSSL_version() starts with "BoringSSL", else NULL: "boringssl:aesni",
 * "boringssl:vpaes" or "boringssl:nohw" for AES on x86, "boringssl" where the level cannot be told
 * (other ciphers, other CPUs, or BoringSSL's own answer disagreeing with ours). Slow (dladdr,
 * dlopen RTLD_NOLOAD): call it at classification only, with every guard raised. */
const char *ct_boringssl_impl(const void *addr, const char *cipher);

/* BoringSSL's first capability word (CPUID.1 EDX in bits 0-31, ECX in 32-63) after its
 * OPENSSL_ia32cap environment value: "~V" clears V's bits, "|V" sets them, "V" replaces the word;
 * V in hex (0x...) or decimal; anything else leaves the word alone. Pure: unit-tested. */
uint64_t ct_boringssl_cap_word(uint64_t cpuid_word, const char *env);

/* Bits of that word: AES-NI (CPUID.1:ECX.AES) and SSSE3 (CPUID.1:ECX.SSSE3, vpaes). */
#define CT_BSSL_CAP_AESNI (1ull << 57)
#define CT_BSSL_CAP_SSSE3 (1ull << 41)

#endif
