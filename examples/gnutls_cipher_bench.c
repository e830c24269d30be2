/* SPDX-License-Identifier: MIT */
/*
 * gnutls_cipher_bench.c - GnuTLS's cipher and AEAD API with known counts and its own clock: the
 * ground truth of tests/gnutls/cipher_bench.py and bench/gnutls_overhead.sh.
 *
 *   gnutls_cipher_bench [-n ITERATIONS] [-t TIMEFILE] MODE SIZE
 *
 * MODE
 *   cbc    gnutls_cipher_* AES-128-CBC: ITERATIONS encrypt2 of SIZE bytes, then as many decrypt2
 *   gcm    gnutls_cipher_* AES-256-GCM messages: set_iv, add_auth (13 bytes), encrypt2 of SIZE,
 *          tag; then as many decrypted the same way
 *   aead   gnutls_aead_cipher_encrypt AES-256-GCM messages of SIZE (16-byte tag), then as many
 *          gnutls_aead_cipher_decrypt of them (SIZE + 16 bytes each), then one with a damaged tag,
 *          which fails (GNUTLS_E_DECRYPTION_FAILED)
 *   aeadv  the same through encryptv2 / decryptv2 (in place: ITERATIONS encryptions of one buffer,
 *          then as many decryptions of a copy of the last message), the data in two iovecs
 *   late   `cryptrace attach`'s test of handles made before the attach
 *          (tests/attach/late_handles.py): inits an AES-128-CBC cipher handle and an AES-256-GCM
 *          AEAD handle, prints "ready", waits for a line on stdin, then makes ITERATIONS encrypt2
 *          calls of SIZE on the first and as many aead_cipher_encrypt of SIZE on the second,
 *          prints its line (below), waits for another line and exits
 * SIZE is a multiple of 16 (CBC). The encryptions run in batches of about a millisecond, each
 * timed with clock_gettime(CLOCK_MONOTONIC) around it; TIMEFILE gets, as JSON, the batches' mean
 * per message without those a preemption stretched ({"encrypt_calls": N,
 * "robust_ns_per_message": NS}): what a message costs the program while its thread runs.
 * stdout: the mode, the counts and a checksum of every output, the same with and without a
 * tracer (nothing on it depends on time). Keys, IVs and data are fixed test values.
 */
#include <gnutls/crypto.h>
#include <gnutls/gnutls.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "batches.h"

#define AAD_LEN 13
#define TAG_LEN 16

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* FNV-1a over every output, so that the run's stdout says the work was done and equal */
static uint32_t sum = 2166136261u;
static void digest(const void *p, size_t n)
{
	const unsigned char *b = p;
	for (size_t i = 0; i < n; i++)
		sum = (sum ^ b[i]) * 16777619u;
}

static int die(const char *what, int r)
{
	fprintf(stderr, "gnutls_cipher_bench: %s: %s\n", what, gnutls_strerror(r));
	exit(1);
}

/* the encryptions, timed in batches of about a millisecond (examples/batches.h: the fastest
 * of four warm-up batches of 16 sizes them; a last, shorter batch is not kept): the loop body is one message.
 * Returns the batches' mean per message without those that lost the CPU, in ns: what a message
 * costs the program while its thread runs, as examples/selftimed measures it. */
typedef int (*message_fn)(void *state, size_t i);

static double timed_loop(message_fn fn, void *state, size_t n)
{
	struct batches bt;
	batches_init(&bt);
	for (size_t done = 0; done < n;) {
		const bool whole = n - done >= (size_t)bt.size; /* a last, shorter batch is not kept */
		const size_t b = whole ? (size_t)bt.size : n - done;
		uint64_t t0 = now_ns();
		for (size_t i = 0; i < b; i++)
			fn(state, done + i);
		uint64_t ns = now_ns() - t0;
		if (whole)
			batches_add(&bt, ns);
		done += b;
	}
	uint64_t median, robust;
	double each = batches_summary(&bt, &median, &robust) ? (double)robust / bt.size : 0;
	free(bt.ns);
	return each;
}

struct run {
	gnutls_cipher_hd_t h;
	gnutls_aead_cipher_hd_t a;
	unsigned char *in, *out, *tags;
	size_t size;
	unsigned char iv[16], aad[AAD_LEN];
};

static int cbc_enc(void *s, size_t i)
{
	struct run *r = s;
	(void)i;
	int e = gnutls_cipher_encrypt2(r->h, r->in, r->size, r->out, r->size);
	return e < 0 ? die("encrypt2", e) : e;
}

static int gcm_message(struct run *r, size_t i, int enc)
{
	r->iv[0] = (unsigned char)i;
	gnutls_cipher_set_iv(r->h, r->iv, 12);
	int e = gnutls_cipher_add_auth(r->h, r->aad, AAD_LEN);
	if (e >= 0)
		e = enc ? gnutls_cipher_encrypt2(r->h, r->in, r->size, r->out, r->size)
			: gnutls_cipher_decrypt2(r->h, r->out, r->size, r->in, r->size);
	if (e >= 0)
		e = gnutls_cipher_tag(r->h, r->tags, TAG_LEN);
	return e < 0 ? die("gcm message", e) : e;
}

static int gcm_enc(void *s, size_t i)
{
	return gcm_message(s, i, 1);
}

static int aead_enc(void *s, size_t i)
{
	struct run *r = s;
	size_t outl = r->size + TAG_LEN;
	r->iv[0] = (unsigned char)i;
	int e = gnutls_aead_cipher_encrypt(r->a, r->iv, 12, r->aad, AAD_LEN, TAG_LEN, r->in, r->size, r->out,
					   &outl);
	return e < 0 ? die("aead encrypt", e) : e;
}

static int aeadv_enc(void *s, size_t i)
{
	struct run *r = s;
	giovec_t auth = { r->aad, AAD_LEN };
	giovec_t iov[2] = { { r->in, r->size / 2 }, { r->in + r->size / 2, r->size - r->size / 2 } };
	size_t tagl = TAG_LEN;
	r->iv[0] = (unsigned char)i;
	int e = gnutls_aead_cipher_encryptv2(r->a, r->iv, 12, &auth, 1, iov, 2, r->tags, &tagl);
	return e < 0 ? die("aead encryptv2", e) : e;
}

int main(int argc, char **argv)
{
	size_t n = 1000;
	const char *timefile = NULL;
	int c;
	while ((c = getopt(argc, argv, "n:t:")) != -1) {
		if (c == 'n')
			n = strtoul(optarg, NULL, 0);
		else if (c == 't')
			timefile = optarg;
		else
			return 2;
	}
	if (argc - optind != 2) {
		fprintf(stderr,
			"usage: gnutls_cipher_bench [-n ITERATIONS] [-t TIMEFILE] cbc|gcm|aead|aeadv|late SIZE\n");
		return 2;
	}
	const char *mode = argv[optind];
	struct run r = { .size = strtoul(argv[optind + 1], NULL, 0) };
	if (!r.size || r.size % 16) {
		fprintf(stderr, "gnutls_cipher_bench: SIZE must be a positive multiple of 16\n");
		return 2;
	}
	r.in = calloc(1, r.size + TAG_LEN);
	r.out = calloc(1, r.size + TAG_LEN);
	r.tags = calloc(1, TAG_LEN);
	if (!r.in || !r.out || !r.tags)
		return 1;
	for (size_t i = 0; i < r.size; i++)
		r.in[i] = (unsigned char)(i * 7);
	memset(r.aad, 0xa5, sizeof(r.aad));
	unsigned char key[32];
	for (int i = 0; i < 32; i++)
		key[i] = (unsigned char)(0x40 + i); /* a fixed test key */
	gnutls_global_init();
	double ns = 0;
	size_t extra_failed = 0;
	int e;
	if (!strcmp(mode, "cbc") || !strcmp(mode, "gcm")) {
		int cbc = !strcmp(mode, "cbc");
		gnutls_datum_t k = { key, cbc ? 16 : 32 }, iv = { r.iv, cbc ? 16 : 12 };
		if ((e = gnutls_cipher_init(&r.h, cbc ? GNUTLS_CIPHER_AES_128_CBC : GNUTLS_CIPHER_AES_256_GCM,
					    &k, &iv)) < 0)
			die("cipher_init", e);
		ns = timed_loop(cbc ? cbc_enc : gcm_enc, &r, n);
		digest(r.out, r.size);
		gnutls_cipher_deinit(r.h);
		if ((e = gnutls_cipher_init(&r.h, cbc ? GNUTLS_CIPHER_AES_128_CBC : GNUTLS_CIPHER_AES_256_GCM,
					    &k, &iv)) < 0)
			die("cipher_init", e);
		for (size_t i = 0; i < n; i++) {
			if (cbc && (e = gnutls_cipher_decrypt2(r.h, r.out, r.size, r.in, r.size)) < 0)
				die("decrypt2", e);
			if (!cbc)
				gcm_message(&r, i, 0);
		}
		digest(r.in, r.size);
		gnutls_cipher_deinit(r.h);
	} else if (!strcmp(mode, "aead") || !strcmp(mode, "aeadv")) {
		int v = !strcmp(mode, "aeadv");
		gnutls_datum_t k = { key, 32 };
		if ((e = gnutls_aead_cipher_init(&r.a, GNUTLS_CIPHER_AES_256_GCM, &k)) < 0)
			die("aead_cipher_init", e);
		ns = timed_loop(v ? aeadv_enc : aead_enc, &r, n);
		digest(r.out, r.size + TAG_LEN);
		digest(r.tags, TAG_LEN);
		/* the last message, opened n times (same nonce as sealed) */
		r.iv[0] = (unsigned char)(n - 1);
		for (size_t i = 0; i < n; i++) {
			if (v) { /* decryptv2 works in place: on a copy of the last sealed message (in r.in) */
				giovec_t auth = { r.aad, AAD_LEN };
				giovec_t iov[2] = { { r.out, r.size / 2 },
						    { r.out + r.size / 2, r.size - r.size / 2 } };
				memcpy(r.out, r.in, r.size);
				if ((e = gnutls_aead_cipher_decryptv2(r.a, r.iv, 12, &auth, 1, iov, 2, r.tags,
								      TAG_LEN)) < 0)
					die("decryptv2", e);
			} else {
				size_t ptl = r.size;
				if ((e = gnutls_aead_cipher_decrypt(r.a, r.iv, 12, r.aad, AAD_LEN, TAG_LEN,
								    r.out, r.size + TAG_LEN, r.in, &ptl)) < 0)
					die("aead decrypt", e);
			}
		}
		if (!v) { /* a damaged tag: the call fails, as it must */
			size_t ptl = r.size;
			r.out[r.size] ^= 1;
			e = gnutls_aead_cipher_decrypt(r.a, r.iv, 12, r.aad, AAD_LEN, TAG_LEN, r.out,
						       r.size + TAG_LEN, r.in, &ptl);
			extra_failed = e == GNUTLS_E_DECRYPTION_FAILED;
		}
		digest(r.in, r.size);
		gnutls_aead_cipher_deinit(r.a);
	} else if (!strcmp(mode, "late")) {
		char line[64];
		gnutls_datum_t k128 = { key, 16 }, k256 = { key, 32 }, iv = { r.iv, 16 };
		if ((e = gnutls_cipher_init(&r.h, GNUTLS_CIPHER_AES_128_CBC, &k128, &iv)) < 0)
			die("cipher_init", e);
		if ((e = gnutls_aead_cipher_init(&r.a, GNUTLS_CIPHER_AES_256_GCM, &k256)) < 0)
			die("aead_cipher_init", e);
		printf("ready\n");
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin))
			return 1;
		for (size_t i = 0; i < n; i++) {
			cbc_enc(&r, i);
			digest(r.out, r.size);
			aead_enc(&r, i);
			digest(r.out, r.size + TAG_LEN);
		}
		printf("done\n");
		fflush(stdout);
		gnutls_cipher_deinit(r.h);
		gnutls_aead_cipher_deinit(r.a);
		if (!fgets(line, sizeof(line), stdin))
			return 1;
	} else {
		fprintf(stderr, "gnutls_cipher_bench: unknown mode %s\n", mode);
		return 2;
	}
	printf("mode=%s size=%zu iterations=%zu damaged_tag_refused=%zu checksum=%08x\n", mode, r.size, n,
	       extra_failed, sum);
	if (timefile) {
		FILE *f = fopen(timefile, "w");
		if (!f)
			return 1;
		fprintf(f, "{\"encrypt_calls\": %zu, \"robust_ns_per_message\": %.2f}\n", n, ns);
		fclose(f);
	}
	gnutls_global_deinit();
	free(r.in);
	free(r.out);
	free(r.tags);
	return 0;
}
