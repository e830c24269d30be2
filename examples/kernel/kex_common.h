/* SPDX-License-Identifier: MIT */
/*
 * kex_common.h - what the kernel-interface examples share: a clock, chunk-size lists, the
 * OpenSSL EVP reference every result is checked against, and the seed-003 style table rows.
 * Header-only (static functions) so each example stays one self-contained program.
 */
#ifndef CT_KEX_COMMON_H
#define CT_KEX_COMMON_H

#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>

#define KEX_MAX_SIZES 32
#define KEX_MAX_CHUNK (64u * 1024u)

static inline uint64_t kex_now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* "16,64,4096" -> sizes; returns the count, 0 on a bad list. */
static inline unsigned kex_parse_sizes(const char *s, unsigned *sizes)
{
	unsigned n = 0;
	char *end;

	while (*s && n < KEX_MAX_SIZES) {
		unsigned long v = strtoul(s, &end, 0);
		if (end == s || v == 0 || v > KEX_MAX_CHUNK)
			return 0;
		sizes[n++] = (unsigned)v;
		s = *end == ',' ? end + 1 : end;
		if (*end && *end != ',')
			return 0;
	}
	return n;
}

static inline unsigned kex_default_sizes(unsigned *sizes)
{
	static const unsigned def[] = { 16, 64, 256, 512, 1024, 2048, 4096, 8192, 16384, 32768, 65536 };
	unsigned n = sizeof(def) / sizeof(def[0]);

	memcpy(sizes, def, sizeof(def));
	return n;
}

/* One-shot OpenSSL encryption/decryption of len bytes, no padding: the reference result. */
static inline int kex_evp_crypt(const char *cipher_name, const uint8_t *key, const uint8_t *iv,
				const uint8_t *in, uint8_t *out, int len, int enc)
{
	const EVP_CIPHER *c = EVP_get_cipherbyname(cipher_name);
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	int ok = 0, n1 = 0, n2 = 0;

	if (c && ctx && EVP_CipherInit_ex(ctx, c, NULL, key, iv, enc) == 1) {
		EVP_CIPHER_CTX_set_padding(ctx, 0);
		ok = EVP_CipherUpdate(ctx, out, &n1, in, len) == 1 &&
		     EVP_CipherFinal_ex(ctx, out + n1, &n2) == 1 && n1 + n2 == len;
	}
	EVP_CIPHER_CTX_free(ctx);
	return ok;
}

static inline void kex_fill(uint8_t *p, size_t n, uint32_t seed)
{
	for (size_t i = 0; i < n; i++) {
		seed = seed * 1103515245u + 12345u;
		p[i] = (uint8_t)(seed >> 16);
	}
}

static inline void kex_table_head(const char *what)
{
	printf("%-8s %10s %10s %12s %10s %12s\n", "chunk", "ops", "init_us", what, "deinit_us", "full_MB/s");
}

/* full: init + one chunk + deinit, as story 3's "fulltest" measured it (docs/stories.md). The rates
 * have four decimals: a 16-byte chunk under qemu's TCG runs at 0.02-0.2 MB/s, where two decimals
 * were 2-25 % off, and tests/vm/kernel-truth.sh takes a session's chunk time out of its full
 * rate (16 / full_MB/s - init - deinit, a small difference of large figures). */
static inline void kex_table_row(unsigned chunk, uint64_t ops, double init_us, double mbps, double deinit_us,
				 double full_mbps)
{
	printf("%-8u %10llu %10.2f %12.4f %10.2f %12.4f\n", chunk, (unsigned long long)ops, init_us, mbps,
	       deinit_us, full_mbps);
}

#endif
