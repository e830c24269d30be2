/* SPDX-License-Identifier: MIT */
/*
 * hook_cost.c - the per-call cost of one EVP data call, the figure behind the [foundation]
 * 16-byte overhead target: EVP_EncryptUpdate of LEN bytes on one aes-128-cbc context in a loop,
 * timed with this thread's CPU clock (preemption by other jobs on a shared host does not count),
 * best of ROUNDS batches. bench/hook_cost.sh runs it natively and under the preload, alternating,
 * and prints the ratios; run alone it prints "ns_per_call <best>".
 *
 * usage: hook_cost [LEN [CALLS_PER_BATCH [ROUNDS]]]   (defaults 16, 1000000, 15)
 */
#include <stdio.h>
#include <stdlib.h>
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
	if (len <= 0 || len > 65536 || calls <= 0 || rounds <= 0) {
		fprintf(stderr, "usage: hook_cost [LEN [CALLS_PER_BATCH [ROUNDS]]]\n");
		return 2;
	}
	static unsigned char key[16], iv[16], in[65536], out[65536 + 16];
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	if (!ctx || !EVP_EncryptInit_ex(ctx, EVP_aes_128_cbc(), NULL, key, iv)) {
		fprintf(stderr, "hook_cost: EVP set-up failed\n");
		return 1;
	}
	double best = 0;
	for (int r = 0; r < rounds; r++) {
		int outl;
		double t0 = thread_ns();
		for (long i = 0; i < calls; i++)
			if (!EVP_EncryptUpdate(ctx, out, &outl, in, len))
				return 1;
		double ns = (thread_ns() - t0) / (double)calls;
		if (r == 0 || ns < best)
			best = ns;
	}
	EVP_CIPHER_CTX_free(ctx);
	printf("ns_per_call %.3f\n", best);
	return 0;
}
