/* SPDX-License-Identifier: MIT */
/*
 * selftimed.c - an EVP program that times its own cipher calls: the ground truth that cryptrace's
 * times are checked against (tests/truth/, bench/truth.sh), and a way to check them on any
 * machine by hand.
 *
 *   selftimed [-s SECONDS] [-d] [-S SHARE] MODE CIPHER SIZE
 *
 * MODE (an iteration)
 *   tight   EVP_CipherUpdate of SIZE bytes on one context
 *   aead    a message, as TLS 1.3 and QUIC do it: EVP_CipherInit_ex with a new IV, 13 bytes of
 *           AAD, SIZE bytes of data, EVP_CipherFinal_ex, then the tag (GET_TAG; when decrypting,
 *           SET_TAG first: 16 messages sealed beforehand are opened in turn, every tag valid);
 *           CCM gives the message's length first (an update with no data) and, when
 *           decrypting, has no final
 *   rekey   a key set (EVP_CipherInit_ex with a key on the same context), then one update of
 *           SIZE bytes
 * Iterations run in batches of about a millisecond (at most 4096 iterations), after four warm-up
 * batches of 16 that are counted but not in the median (the fastest sizes the others).
 * -d        decrypt instead of encrypt
 * -S SHARE  after each batch, non-cipher work (a dependent arithmetic loop) for as long as the
 *           batch took x (100 - SHARE) / SHARE: the cipher calls are SHARE % of the run
 * -s        how long to run (default 1 s)
 *
 * Each batch is timed with clock_gettime around it (CLOCK_MONOTONIC and the thread's CPU time),
 * so the loop's own instructions count as the calls' (as they do in a program's own figures).
 * It prints one JSON object: calls, bytes, the batches' summed wall and CPU time, the median
 * batch and the mean of the batches no preemption stretched (robust_batch_ns: what the calls
 * cost while the thread runs), and the run's whole wall and CPU time.
 * Keys and data are fixed test values.
 */
#include <openssl/evp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "batches.h"

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void usage(void)
{
	fprintf(stderr, "usage: selftimed [-s SECONDS] [-d] [-S SHARE] tight|aead|rekey CIPHER SIZE\n");
	exit(2);
}

/* Non-cipher work for about `ns`: a dependent floating-point chain (no memory traffic, no calls
 * cryptrace sees). */
static volatile double sink;
static void other_work(uint64_t ns)
{
	uint64_t end = now_ns(CLOCK_MONOTONIC) + ns;
	double x = 1.0;
	do {
		for (int i = 0; i < 256; i++)
			x = x * 1.0000001 + 1e-9;
	} while (now_ns(CLOCK_MONOTONIC) < end);
	sink = x;
}

/* CCM takes its nonce and tag lengths before the key (12 and 16 here, as TLS 1.3 uses). */
static int ccm_setup(EVP_CIPHER_CTX *ctx, const EVP_CIPHER *cipher, int ccm, int enc)
{
	return !ccm || (EVP_CipherInit_ex(ctx, cipher, NULL, NULL, NULL, enc) == 1 &&
			EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_IVLEN, 12, NULL) == 1 &&
			EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, 16, NULL) == 1);
}

enum mode { TIGHT, AEAD, REKEY };
#define MESSAGES 16 /* AEAD decryption: distinct sealed messages, opened in turn */

int main(int argc, char **argv)
{
	double seconds = 1.0;
	int decrypt = 0, share = 100, opt;
	while ((opt = getopt(argc, argv, "s:dS:")) != -1) {
		switch (opt) {
		case 's':
			seconds = atof(optarg);
			break;
		case 'd':
			decrypt = 1;
			break;
		case 'S':
			share = atoi(optarg);
			break;
		default:
			usage();
		}
	}
	if (argc - optind != 3 || share < 1 || share > 100 || seconds <= 0)
		usage();
	enum mode mode = !strcmp(argv[optind], "tight")   ? TIGHT
			 : !strcmp(argv[optind], "aead")  ? AEAD
			 : !strcmp(argv[optind], "rekey") ? REKEY
							  : (usage(), TIGHT);
	const EVP_CIPHER *cipher = EVP_get_cipherbyname(argv[optind + 1]);
	long size = atol(argv[optind + 2]);
	if (!cipher || size < 0 || size > (1 << 20)) {
		fprintf(stderr, "selftimed: unknown cipher or bad size\n");
		return 2;
	}
	/* every byte set (no NUL padding: the tests' secrets scan looks for 8-byte windows of it) */
	static const unsigned char key[48] = "Selftimed/key:Q7#vX2!mZ9@kR4$wN8%tB1^yH6&cL3*pF0";
	unsigned char iv[16] = "Selftimed/iv:J5", tag[16] = { 0 }, aad[13] = "record header";
	unsigned char *buf = calloc(1, (size_t)size + 64);
	int outl;
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	const int ccm = EVP_CIPHER_mode(cipher) == EVP_CIPH_CCM_MODE;
	if (!buf || !ctx || !ccm_setup(ctx, cipher, ccm, !decrypt) ||
	    EVP_CipherInit_ex(ctx, ccm ? NULL : cipher, NULL, key, iv, !decrypt) != 1) {
		fprintf(stderr, "selftimed: cannot set up %s\n", argv[optind + 1]);
		return 1;
	}
	EVP_CIPHER_CTX_set_padding(ctx, 0);
	/* AEAD decryption opens real messages (a forged tag would make every final fail, and the
	 * failures would be the program's slowest calls): MESSAGES sealed here first, one per IV */
	struct sealed {
		unsigned char *ct, tag[16];
	} sealed[MESSAGES] = { { 0 } };
	unsigned long long bad_tags = 0;
	if (mode == AEAD && decrypt) {
		EVP_CIPHER_CTX *seal = EVP_CIPHER_CTX_new();
		for (unsigned m = 0; m < MESSAGES; m++) {
			iv[0] = (unsigned char)m;
			sealed[m].ct = malloc((size_t)size + 16);
			if (!seal || !sealed[m].ct || !ccm_setup(seal, cipher, ccm, 1) ||
			    EVP_EncryptInit_ex(seal, ccm ? NULL : cipher, NULL, key, iv) != 1 ||
			    (ccm && EVP_EncryptUpdate(seal, NULL, &outl, NULL, (int)size) != 1) ||
			    EVP_EncryptUpdate(seal, NULL, &outl, aad, sizeof(aad)) != 1 ||
			    EVP_EncryptUpdate(seal, sealed[m].ct, &outl, buf, (int)size) != 1 ||
			    EVP_EncryptFinal_ex(seal, sealed[m].ct + outl, &outl) != 1 ||
			    EVP_CIPHER_CTX_ctrl(seal, EVP_CTRL_AEAD_GET_TAG, 16, sealed[m].tag) != 1) {
				fprintf(stderr, "selftimed: cannot seal the messages to open\n");
				return 1;
			}
		}
		EVP_CIPHER_CTX_free(seal);
	}
	struct batches bt;
	batches_init(&bt);
	uint64_t calls = 0, bytes = 0, wall = 0, cpu = 0, keys = 0, messages = 0;
	const uint64_t run_cpu0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	const uint64_t run0 = now_ns(CLOCK_MONOTONIC), deadline = run0 + (uint64_t)(seconds * 1e9);
	while (now_ns(CLOCK_MONOTONIC) < deadline && bt.ns) {
		uint64_t w0 = now_ns(CLOCK_MONOTONIC), c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
		for (int i = 0; i < bt.size; i++) {
			switch (mode) {
			case TIGHT:
				EVP_CipherUpdate(ctx, buf, &outl, buf, (int)size);
				break;
			case AEAD: {
				unsigned m = (unsigned)(messages % MESSAGES);
				iv[0] = (unsigned char)m;
				EVP_CipherInit_ex(ctx, NULL, NULL, NULL, iv, -1);
				if (decrypt)
					EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, 16, sealed[m].tag);
				if (ccm) /* CCM: the message's length first (no data) */
					EVP_CipherUpdate(ctx, NULL, &outl, NULL, (int)size);
				EVP_CipherUpdate(ctx, NULL, &outl, aad, sizeof(aad));
				/* CCM decryption checks the tag in this update (and has no final) */
				if (EVP_CipherUpdate(ctx, buf, &outl, decrypt ? sealed[m].ct : buf,
						     (int)size) != 1)
					bad_tags++;
				if (!(ccm && decrypt) && EVP_CipherFinal_ex(ctx, buf, &outl) != 1)
					bad_tags++;
				if (!decrypt)
					EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, 16, tag);
				messages++;
				break;
			}
			case REKEY:
				EVP_CipherInit_ex(ctx, NULL, NULL, key + (i & 7), NULL, -1);
				EVP_CipherUpdate(ctx, buf, &outl, buf, (int)size);
				keys++;
				break;
			}
		}
		uint64_t w1 = now_ns(CLOCK_MONOTONIC), c1 = now_ns(CLOCK_THREAD_CPUTIME_ID);
		calls += (uint64_t)bt.size;
		bytes += (uint64_t)bt.size * (uint64_t)size;
		wall += w1 - w0;
		cpu += c1 - c0;
		batches_add(&bt, w1 - w0);
		if (share < 100)
			other_work((w1 - w0) * (uint64_t)(100 - share) / (uint64_t)share);
	}
	uint64_t run = now_ns(CLOCK_MONOTONIC) - run0, run_cpu = now_ns(CLOCK_THREAD_CPUTIME_ID) - run_cpu0;
	uint64_t median, robust;
	if (!batches_summary(&bt, &median, &robust))
		return 1;
	printf("{\"mode\": \"%s\", \"cipher\": \"%s\", \"size\": %ld, \"decrypt\": %s, \"share_pct\": %d, "
	       "\"iterations\": %llu, \"bytes\": %llu, \"messages\": %llu, \"key_setups\": %llu, "
	       "\"batches\": %zu, \"batch_iterations\": %d, \"crypto_wall_ns\": %llu, \"crypto_cpu_ns\": %llu, "
	       "\"median_batch_ns\": %llu, \"robust_batch_ns\": %llu, \"run_wall_ns\": %llu, "
	       "\"run_cpu_ns\": %llu, \"bad_tags\": %llu}\n",
	       argv[optind], argv[optind + 1], size, decrypt ? "true" : "false", share,
	       (unsigned long long)calls, (unsigned long long)bytes, (unsigned long long)messages,
	       (unsigned long long)keys, bt.n, bt.size, (unsigned long long)wall, (unsigned long long)cpu,
	       (unsigned long long)median, (unsigned long long)robust, (unsigned long long)run,
	       (unsigned long long)run_cpu, bad_tags);
	EVP_CIPHER_CTX_free(ctx);
	free(buf);
	free(bt.ns);
	return 0;
}
