/* SPDX-License-Identifier: MIT */
/*
 * gcrypt_cost.c - the per-call cost of the libgcrypt hooks (preload/hooks/gcrypt.c):
 * gcry_cipher_encrypt of LEN bytes on one AES-128-CBC handle in a loop, timed with this thread's
 * CPU clock (preemption by other jobs does not count), best of ROUNDS batches; prints
 * "ns_per_call <best>", as bench/hook_cost does for EVP, so that bench/hook_cost.sh -p runs it
 * natively and under the preload, alternating, and prints the ratios.
 *
 * usage: gcrypt_cost [LEN [CALLS_PER_BATCH [ROUNDS]]]   (defaults 16, 1000000, 15)
 */
#include <gcrypt.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

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
	if (len <= 0 || len > 65536 || len % 16 || calls <= 0 || rounds <= 0) {
		fprintf(stderr, "usage: gcrypt_cost [LEN (a multiple of 16) [CALLS_PER_BATCH [ROUNDS]]]\n");
		return 2;
	}
	if (!gcry_check_version(GCRYPT_VERSION))
		return 1;
	gcry_control(GCRYCTL_DISABLE_SECMEM, 0);
	gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0);
	static unsigned char key[16], iv[16], in[65536], out[65536];
	gcry_cipher_hd_t h;
	if (gcry_cipher_open(&h, GCRY_CIPHER_AES, GCRY_CIPHER_MODE_CBC, 0) ||
	    gcry_cipher_setkey(h, key, 16) || gcry_cipher_setiv(h, iv, 16)) {
		fprintf(stderr, "gcrypt_cost: libgcrypt set-up failed\n");
		return 1;
	}
	double best = 0;
	for (int r = 0; r < rounds; r++) {
		double t0 = thread_ns();
		for (long i = 0; i < calls; i++)
			if (gcry_cipher_encrypt(h, out, (size_t)len, in, (size_t)len))
				return 1;
		double ns = (thread_ns() - t0) / (double)calls;
		if (r == 0 || ns < best)
			best = ns;
	}
	gcry_cipher_close(h);
	printf("ns_per_call %.3f\n", best);
	return 0;
}
