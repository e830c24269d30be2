/* SPDX-License-Identifier: MIT */
/*
 * lowlevel_diff.c - a transcript of random low-level AES_* work: block, ECB, CBC (partial last
 * blocks included), CFB128 and OFB at every num position, 128/192/256-bit keys, in-place and
 * separate buffers, keys of the wrong direction, AES_KEYs copied or rewritten behind the set-up
 * functions' back. Every output byte (including what CBC writes past a partial block), IV and
 * num goes into a running FNV-1a hash per mode. Run natively and under the preload with
 * CRYPTRACE_ROUTE=aes-*=aesni: the printed lines must be identical (the test compares them).
 *   lowlevel_diff [cases] [seed]
 */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/aes.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "transcript.h"

enum { M_BLOCK, M_ECB, M_CBC, M_CFB, M_OFB, M_COUNT };
static const char *const mode_names[M_COUNT] = { "block", "ecb", "cbc", "cfb128", "ofb" };
static uint64_t digest[M_COUNT];
static unsigned long cases_of[M_COUNT];
static void fill(uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)rnd();
}

static void mix(int mode, const void *p, size_t n)
{
	fnv_mix(&digest[mode], p, n);
}

#define MAXLEN 4096
static uint8_t in[MAXLEN + 32], out[MAXLEN + 32];

/* A length: often small or near block boundaries, sometimes anything up to MAXLEN. */
static size_t pick_len(void)
{
	switch (rnd() % 4) {
	case 0:
		return rnd() % 48;
	case 1:
		return (rnd() % 64) * 16 + (rnd() % 3 == 0 ? rnd() % 16 : 0);
	default:
		return rnd() % (MAXLEN + 1);
	}
}

int main(int argc, char **argv)
{
	unsigned long cases = argc > 1 ? strtoul(argv[1], NULL, 0) : 20000;
	rng_state = argc > 2 ? strtoull(argv[2], NULL, 0) : 1;
	if (!rng_state)
		rng_state = 1;
	static const int sizes[3] = { 128, 192, 256 };
	for (unsigned long n = 0; n < cases; n++) {
		uint8_t key[32], iv[16];
		fill(key, sizeof(key));
		fill(iv, sizeof(iv));
		int bits = sizes[rnd() % 3];
		int mode = (int)(rnd() % M_COUNT);
		bool enc = rnd() & 1;
		/* the schedule OpenSSL wants, or (1 in 16) the other one: native gives garbage, so must we */
		bool enc_sched = (mode == M_CFB || mode == M_OFB) ? true : enc;
		if (rnd() % 16 == 0)
			enc_sched = !enc_sched;
		AES_KEY k, copy, *use = &k;
		int r = enc_sched ? AES_set_encrypt_key(key, bits, &k) : AES_set_decrypt_key(key, bits, &k);
		if (r != 0) {
			fprintf(stderr, "set key failed\n");
			return 1;
		}
		switch (rnd() % 32) {
		case 0: /* a copy the set-up hooks never saw */
			memcpy(&copy, &k, sizeof(k));
			use = &copy;
			break;
		case 1: /* the same memory rewritten behind our back with another key's schedule */
			fill(key, 16);
			{
				AES_KEY other;
				AES_set_encrypt_key(key, 128, &other);
				memcpy(&k, &other, sizeof(k));
			}
			break;
		default:
			break;
		}
		size_t len = pick_len();
		fill(in, sizeof(in));
		memset(out, 0xa5, sizeof(out));
		bool inplace = rnd() % 4 == 0;
		uint8_t *dst = inplace ? in : out;
		int calls = 1 + (int)(rnd() % 3); /* state carried across calls */
		int num = (int)(rnd() % 16);
		if (mode != M_CFB && mode != M_OFB)
			num = 0;
		else if (rnd() % 2)
			num = 0;
		for (int c = 0; c < calls; c++) {
			switch (mode) {
			case M_BLOCK:
				if (enc)
					AES_encrypt(in, dst, use);
				else
					AES_decrypt(in, dst, use);
				break;
			case M_ECB:
				AES_ecb_encrypt(in, dst, use, enc ? AES_ENCRYPT : AES_DECRYPT);
				break;
			case M_CBC:
				AES_cbc_encrypt(in, dst, len, use, iv, enc ? AES_ENCRYPT : AES_DECRYPT);
				break;
			case M_CFB:
				AES_cfb128_encrypt(in, dst, len, use, iv, &num,
						   enc ? AES_ENCRYPT : AES_DECRYPT);
				break;
			case M_OFB:
				AES_ofb128_encrypt(in, dst, len, use, iv, &num);
				break;
			}
		}
		mix(mode, inplace ? in : out, MAXLEN + 32);
		mix(mode, iv, sizeof(iv));
		mix(mode, &num, sizeof(num));
		cases_of[mode]++;
	}
	for (int m = 0; m < M_COUNT; m++)
		printf("%-7s cases=%lu digest=%016llx\n", mode_names[m], cases_of[m],
		       (unsigned long long)digest[m]);
	return 0;
}
