/* SPDX-License-Identifier: MIT */
/*
 * evp_kernel_diff.c - a transcript of random EVP work on AES-128/192/256 ECB, CBC and CTR, the
 * modes the kernel routes serve: both directions, padding on and off, 0..200 KiB of data cut
 * into random update sizes (so that a size threshold sends some updates to the kernel and keeps
 * others in-process, with the IV/counter carried across), in-place updates, context copies that
 * both finish, and IV-only re-inits. Return values, lengths and output bytes go into one FNV-1a
 * hash per cipher. Run natively and under CRYPTRACE_ROUTE='aes-*=afalg>=256,aesni' (in the qemu
 * guest): the printed lines must be identical.
 *   evp_kernel_diff [cases] [seed] [v]   (v: a line per case)
 */
#include <openssl/evp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transcript.h"

static const char *const names[9] = { "AES-128-ECB", "AES-192-ECB", "AES-256-ECB",
				      "AES-128-CBC", "AES-192-CBC", "AES-256-CBC",
				      "AES-128-CTR", "AES-192-CTR", "AES-256-CTR" };
static uint64_t digest[9];
static unsigned long cases_of[9];
static void mix(int c, const void *p, size_t n)
{
	fnv_mix(&digest[c], p, n);
}

static void mix_int(int c, long v)
{
	mix(c, &v, sizeof(v));
}

#define MAXLEN (200 * 1024)
static uint8_t in[MAXLEN + 64], out[MAXLEN + 64], out2[MAXLEN + 64];

/* Feeds in[from..to) in random chunks; returns the bytes written to dst (or -1 on failure). */
static long feed(int c, EVP_CIPHER_CTX *ctx, uint8_t *dst, size_t from, size_t to, bool inplace)
{
	bool block = c < 6;
	long total = 0;
	while (from < to) {
		size_t n;
		switch (rnd() % 4) {
		case 0:
			n = 1 + rnd() % 64;
			break;
		case 1:
			n = (1 + rnd() % 64) * 16;
			break;
		default:
			n = 1 + rnd() % 70000;
			break;
		}
		/* in-place with a partial block buffered would overlap input and output partially,
		 * which EVP leaves undefined: whole blocks only (len is whole blocks then, too) */
		if (inplace && block)
			n = n < 16 ? 16 : n & ~(size_t)15;
		if (n > to - from)
			n = to - from;
		int outl = 0;
		const uint8_t *src = in + from;
		if (inplace) { /* EVP allows in == out for the update of the same bytes */
			memcpy(dst + total, in + from, n);
			src = dst + total;
		}
		int r = EVP_CipherUpdate(ctx, dst + total, &outl, src, (int)n);
		mix_int(c, r);
		mix_int(c, outl);
		if (r != 1)
			return -1;
		total += outl;
		from += n;
	}
	return total;
}

int main(int argc, char **argv)
{
	unsigned long cases = argc > 1 ? strtoul(argv[1], NULL, 0) : 300;
	rng_state = argc > 2 ? strtoull(argv[2], NULL, 0) : 1;
	bool verbose = argc > 3;
	if (!rng_state)
		rng_state = 1;
	EVP_CIPHER *ciphers[9];
	for (int i = 0; i < 9; i++) {
		ciphers[i] = EVP_CIPHER_fetch(NULL, names[i], NULL);
		if (!ciphers[i])
			return 1;
	}
	for (unsigned long n = 0; n < cases; n++) {
		int c = (int)(rnd() % 9);
		bool enc = rnd() & 1, pad = c < 6 ? rnd() % 3 != 0 : false;
		bool inplace = (c >= 6 || !pad) && rnd() % 4 == 0; /* see feed() */
		uint8_t key[32], iv[16];
		for (size_t i = 0; i < sizeof(key); i++)
			key[i] = (uint8_t)rnd();
		for (size_t i = 0; i < sizeof(iv); i++)
			iv[i] = (uint8_t)rnd();
		size_t len = rnd() % 3 == 0 ? rnd() % 600 : rnd() % (MAXLEN + 1);
		if (c < 6 && (!pad || !enc))
			len &= ~(
				size_t)15; /* no padding, or decrypting: whole blocks (padding: may be bad) */
		for (size_t i = 0; i < len; i++)
			in[i] = (uint8_t)rnd();
		EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new(), *copy = NULL;
		int r = EVP_CipherInit_ex(ctx, ciphers[c], NULL, key, iv, enc);
		mix_int(c, r);
		EVP_CIPHER_CTX_set_padding(ctx, pad);
		size_t cut = len ? rnd() % (len + 1) : 0;
		if (c < 6)
			cut &= ~(size_t)15;
		long a = feed(c, ctx, out, 0, cut, inplace);
		if (rnd() % 4 == 0) {
			copy = EVP_CIPHER_CTX_new();
			mix_int(c, EVP_CIPHER_CTX_copy(copy, ctx));
		} else if (rnd() % 8 == 0) { /* same key, new IV: the kernel session must follow */
			iv[0] ^= 0x5a;
			mix_int(c, EVP_CipherInit_ex(ctx, NULL, NULL, NULL, iv, enc));
		}
		long b = a < 0 ? -1 : feed(c, ctx, out + a, cut, len, inplace);
		int fl = 0;
		if (b >= 0) {
			mix_int(c, EVP_CipherFinal_ex(ctx, out + a + b, &fl));
			mix_int(c, fl);
			mix(c, out, (size_t)(a + b + fl));
		}
		if (copy) {
			long d = feed(c, copy, out2, cut, len, false);
			if (d >= 0) {
				mix_int(c, EVP_CipherFinal_ex(copy, out2 + d, &fl));
				mix_int(c, fl);
				mix(c, out2, (size_t)(d + fl));
			}
			EVP_CIPHER_CTX_free(copy);
		}
		EVP_CIPHER_CTX_free(ctx);
		cases_of[c]++;
		if (verbose) /* to find the first case that differs */
			printf("case %lu %s enc=%d pad=%d inplace=%d len=%zu copy=%d: %016llx\n", n, names[c],
			       enc, pad, inplace, len, copy != NULL, (unsigned long long)digest[c]);
	}
	for (int i = 0; i < 9; i++)
		printf("%s cases=%lu digest=%016llx\n", names[i], cases_of[i], (unsigned long long)digest[i]);
	return 0;
}
