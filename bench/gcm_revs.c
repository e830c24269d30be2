/* SPDX-License-Identifier: MIT */
/*
 * gcm_revs.c - the GCM mode layer (aesni/aes_gcm.c) of another revision against this tree's, in
 * one process, per message: setiv, encrypt + tag (or decrypt + verify), AES-128, no AAD, the
 * way aesni_bench and ipsec-mb's job API time a message. bench/gcm_revs.sh compiles the other
 * revision's aes_gcm.c with its own aesni.h and its functions renamed rev_*, links both against
 * this tree's kernels and runs this. The two alternate in short slices, 60 times each, and the
 * best slice of each is kept: on a shared VM the host's load moves both alike.
 *
 *   gcm_revs SIZE...    prints, per size and direction, TSC ticks per message and the ratio
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "aesni.h"

/* The other revision's state, opaque here: its own header says its size, which is far below. */
struct rev_gcm {
	_Alignas(64) uint8_t space[8192];
};
int rev_init(struct rev_gcm *g, const uint8_t *key, unsigned bits);
int rev_setiv(struct rev_gcm *g, const uint8_t *iv, size_t ivlen);
int rev_encrypt(struct rev_gcm *g, const uint8_t *in, uint8_t *out, size_t len);
int rev_decrypt(struct rev_gcm *g, const uint8_t *in, uint8_t *out, size_t len);
void rev_tag(struct rev_gcm *g, uint8_t tag[16]);
int rev_verify(struct rev_gcm *g, const uint8_t *tag, size_t taglen);

static uint8_t in[65536], out[65536], tag[16];
static const uint8_t key[16] = { 1, 2, 3 }, iv[12] = { 4, 5 };
static struct rev_gcm rev;
static struct ct_aes_gcm ours;

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* ns per message over n messages */
static double slice(int tree, int dec, size_t len, int n)
{
	const uint64_t t0 = now_ns();
	for (int i = 0; i < n; i++) {
		if (!tree) {
			rev_setiv(&rev, iv, 12);
			if (dec) {
				rev_decrypt(&rev, in, out, len);
				(void)rev_verify(&rev, tag, 16);
			} else {
				rev_encrypt(&rev, in, out, len);
				rev_tag(&rev, tag);
			}
		} else {
			ct_aes_gcm_setiv(&ours, iv, 12);
			if (dec) {
				ct_aes_gcm_decrypt(&ours, in, out, len);
				(void)ct_aes_gcm_verify(&ours, tag, 16);
			} else {
				ct_aes_gcm_encrypt(&ours, in, out, len);
				ct_aes_gcm_tag(&ours, tag);
			}
		}
	}
	return (double)(now_ns() - t0) / n;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: gcm_revs SIZE... (bytes, up to 65536)\n");
		return 2;
	}
	if (rev_init(&rev, key, 128) != 0 || ct_aes_gcm_init(&ours, key, 128) != 0) {
		fprintf(stderr, "gcm_revs: no AES-NI here\n");
		return 1;
	}
	printf("%8s %4s %12s %12s %8s\n", "bytes", "dir", "rev ns/msg", "tree ns/msg", "speedup");
	for (int a = 1; a < argc; a++) {
		const size_t len = strtoul(argv[a], NULL, 10);
		if (len > sizeof(in)) {
			fprintf(stderr, "gcm_revs: %zu bytes: at most %zu\n", len, sizeof(in));
			return 2;
		}
		const int n = len < 1024 ? 20000 : len < 16384 ? 4000 : 1000;
		for (int dec = 0; dec < 2; dec++) {
			double best[2] = { 1e300, 1e300 };
			for (int r = 0; r < 60; r++)
				for (int tree = 0; tree < 2; tree++) {
					const double t = slice(tree, dec, len, n);
					if (t < best[tree])
						best[tree] = t;
				}
			printf("%8zu %4s %12.1f %12.1f %7.2fx\n", len, dec ? "dec" : "enc", best[0], best[1],
			       best[0] / best[1]);
		}
	}
	return 0;
}
