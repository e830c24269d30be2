/* SPDX-License-Identifier: MIT */
/*
 * hook_cost.c - the per-call cost of one EVP data call, the figure behind the [foundation]
 * 16-byte overhead target: EVP_EncryptUpdate of LEN bytes on one aes-128-cbc context in a loop
 * (or another cipher, or EVP_DecryptUpdate: for the per-call cost of a route),
 * timed with this thread's CPU clock (preemption by other jobs on a shared host does not count),
 * best of ROUNDS batches. bench/hook_cost.sh runs it natively and under the preload, alternating,
 * and prints the ratios; run alone it prints "ns_per_call <best>".
 *
 * usage: hook_cost [LEN [CALLS_PER_BATCH [ROUNDS [CIPHER [enc|dec [inplace|apart [sameiv|newiv
 *        [OFFSET]]]]]]]]
 *        (defaults 16, 1000000, 15, aes-128-cbc, enc, apart, sameiv, 0; inplace: out = in, as
 *        openssl speed; newiv: each call after an init with the next IV, the unit's number, as a
 *        disk encryptor sets each sector's (bench/xts_units.py); OFFSET: the buffers that many
 *        bytes past a cache line's start)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>

static double thread_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	int len = argc > 1 ? atoi(argv[1]) : 16;
	long calls = argc > 2 ? atol(argv[2]) : 1000000;
	int rounds = argc > 3 ? atoi(argv[3]) : 15;
	const char *name = argc > 4 ? argv[4] : "aes-128-cbc";
	int enc = !(argc > 5 && !strcmp(argv[5], "dec"));
	int inplace = argc > 6 && !strcmp(argv[6], "inplace");
	int newiv = argc > 7 && !strcmp(argv[7], "newiv");
	int offset = argc > 8 ? atoi(argv[8]) : 0;
	const EVP_CIPHER *cipher = EVP_get_cipherbyname(name);
	if (len <= 0 || len > 65536 || calls <= 0 || rounds <= 0 || !cipher || offset < 0 || offset > 63) {
		fprintf(stderr,
			"usage: hook_cost [LEN [CALLS_PER_BATCH [ROUNDS [CIPHER [enc|dec "
			"[inplace|apart [sameiv|newiv [OFFSET]]]]]]]]\n");
		return 2;
	}
	static unsigned char key[64], iv[16], inbuf[65536 + 64] __attribute__((aligned(64))),
		outbuf[65536 + 16 + 64] __attribute__((aligned(64)));
	unsigned char *in = inbuf + offset, *out = outbuf + offset;
	for (size_t i = 0; i < sizeof(key); i++) /* XTS refuses a key whose two halves are equal */
		key[i] = (unsigned char)i;
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	if (!ctx || !EVP_CipherInit_ex(ctx, cipher, NULL, key, iv, enc)) {
		fprintf(stderr, "hook_cost: EVP set-up failed\n");
		return 1;
	}
	unsigned char *dst = inplace ? in : out;
	if (getenv("HOOK_COST_NOPAD"))
		EVP_CIPHER_CTX_set_padding(ctx, 0);
	double best = 0;
	for (int r = 0; r < rounds; r++) {
		int outl;
		double t0 = thread_ns();
		if (newiv) {
			for (long i = 0; i < calls; i++) {
				memcpy(iv, &i, sizeof(i)); /* the unit's number, little-endian on x86 */
				if (!EVP_CipherInit_ex(ctx, NULL, NULL, NULL, iv, enc) ||
				    !EVP_CipherUpdate(ctx, dst, &outl, in, len))
					return 1;
			}
		} else if (enc) {
			for (long i = 0; i < calls; i++)
				if (!EVP_EncryptUpdate(ctx, dst, &outl, in, len))
					return 1;
		} else {
			for (long i = 0; i < calls; i++)
				if (!EVP_DecryptUpdate(ctx, dst, &outl, in, len))
					return 1;
		}
		double ns = (thread_ns() - t0) / (double)calls;
		if (r == 0 || ns < best)
			best = ns;
	}
	EVP_CIPHER_CTX_free(ctx);
	printf("ns_per_call %.3f\n", best);
	return 0;
}
