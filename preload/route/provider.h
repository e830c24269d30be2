/* SPDX-License-Identifier: MIT */
/*
 * provider.h - the "cryptrace" OpenSSL 3 provider: AES-128/192/256 ECB, CBC, CTR, CFB128, OFB,
 * GCM and AES-128/256-XTS served by the in-process AES-NI/VAES backend (aesni/), with the default
 * provider's names, lengths, flags, parameters and buffering/padding rules, so EVP callers see no
 * difference except speed. Built against the OpenSSL headers only.
 */
#ifndef CT_ROUTE_PROVIDER_H
#define CT_ROUTE_PROVIDER_H

#include <stdbool.h>

#include <openssl/core.h>

#define CT_PROVIDER_NAME "cryptrace"
/* The same ciphers (ECB, CBC, CTR) for the afalg/cryptodev routes: their contexts forward whole
 * blocks to a kernel session (kernel_backend.h) and do the rest in-process. */
#define CT_PROVIDER_KERNEL_NAME "cryptrace-kernel"

/* OSSL_provider_init_fn for OSSL_PROVIDER_add_builtin(libctx, CT_PROVIDER_NAME, ...). */
int ct_provider_init(const OSSL_CORE_HANDLE *handle, const OSSL_DISPATCH *in, const OSSL_DISPATCH **out,
		     void **provctx);

int ct_provider_kernel_init(const OSSL_CORE_HANDLE *handle, const OSSL_DISPATCH *in,
			    const OSSL_DISPATCH **out, void **provctx);

/* True when the provider has an implementation of this cipher (name in any case, e.g.
 * "AES-128-CBC" or "aes-256-xts"). */
bool ct_provider_serves(const char *cipher_name);
/* Index of that cipher in the provider's table (0 .. CT_PROVIDER_ALGS-1), or -1. */
int ct_provider_alg_index(const char *cipher_name);
#define CT_PROVIDER_ALGS 20
/* The first CT_PROVIDER_KERNEL_ALGS of them (ECB, CBC, CTR) are the kernel routes' provider's too. */
#define CT_PROVIDER_KERNEL_ALGS 9

#endif
