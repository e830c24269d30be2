/* SPDX-License-Identifier: MIT */
/*
 * align_cost.c - what a buffer's place costs one EVP data call: CIPHER updates of LEN bytes in
 * place on a page-aligned buffer moved OFFSET bytes on, in a loop, timed with this thread's CPU
 * clock, best of ROUNDS batches. A program's buffer lands where its allocator puts it
 * (openssl speed's, routed, 16 bytes past a cache line): a 512-bit kernel's every load and store
 * of data off a line splits two lines, which aesni_bench's own buffers do not show alike.
 * bench/align_cost.sh runs it natively and routed, alternating; alone it prints
 * "ns_per_call <best>". With OUT_OFFSET the output is a page of its own, that many bytes on,
 * and only the input moves: whether a cost is the loads', the stores' or needs both (routed XTS
 * at 1 KiB on model 167: both off a line, 3 ns; either alone, 0-1 ns).
 *
 * usage: align_cost CIPHER LEN OFFSET [CALLS_PER_BATCH [ROUNDS [enc|dec [OUT_OFFSET]]]]
 *        (defaults 20000 calls, 15 rounds, enc, in place)
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
	if (argc < 4) {
		fprintf(stderr, "usage: align_cost CIPHER LEN OFFSET [CALLS_PER_BATCH [ROUNDS [enc|dec]]]\n");
		return 2;
	}
	const EVP_CIPHER *cipher = EVP_get_cipherbyname(argv[1]);
	const int len = atoi(argv[2]), offset = atoi(argv[3]);
	const int calls = argc > 4 ? atoi(argv[4]) : 20000, rounds = argc > 5 ? atoi(argv[5]) : 15;
	const int enc = !(argc > 6 && !strcmp(argv[6], "dec"));
	const int out_offset = argc > 7 ? atoi(argv[7]) : -1; /* -1: in place */
	if (!cipher || len < 16 || len > (1 << 20) || offset < 0 || offset > 4095 || calls < 1 ||
	    rounds < 1 || out_offset < -1 || out_offset > 4095) {
		fprintf(stderr,
			"align_cost: bad argument (cipher %s, LEN 16..1 MiB, OFFSET and OUT_OFFSET 0..4095)\n",
			argv[1]);
		return 2;
	}
	unsigned char key[64], iv[16], *page;
	for (int i = 0; i < 64; i++)
		key[i] = (unsigned char)(7 * i + 1); /* XTS refuses equal key halves */
	memset(iv, 3, sizeof(iv));
	if (posix_memalign((void **)&page, 4096, (size_t)len + 8192) != 0)
		return 1;
	memset(page, 1, (size_t)len + 8192);
	unsigned char *buf = page + offset, *out_page = NULL, *out = buf;
	if (out_offset >= 0) {
		if (posix_memalign((void **)&out_page, 4096, (size_t)len + 8192) != 0)
			return 1;
		memset(out_page, 1, (size_t)len + 8192);
		out = out_page + out_offset;
	}
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	if (!ctx || EVP_CipherInit_ex(ctx, cipher, NULL, key, iv, enc) != 1 ||
	    EVP_CIPHER_CTX_set_padding(ctx, 0) != 1) {
		fprintf(stderr, "align_cost: %s: init failed\n", argv[1]);
		return 1;
	}
	double best = 0;
	for (int r = 0; r < rounds; r++) {
		int outl;
		const double t0 = thread_ns();
		for (int i = 0; i < calls; i++) {
			if (EVP_CipherUpdate(ctx, out, &outl, buf, len) != 1) {
				fprintf(stderr, "align_cost: %s: update failed\n", argv[1]);
				return 1;
			}
		}
		const double per = (thread_ns() - t0) / calls;
		if (r == 0 || per < best)
			best = per;
	}
	printf("ns_per_call %.1f\n", best);
	EVP_CIPHER_CTX_free(ctx);
	free(page);
	free(out_page);
	return 0;
}
