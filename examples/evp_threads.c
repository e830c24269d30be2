/* SPDX-License-Identifier: MIT */
/*
 * evp_threads.c - 8 threads doing EVP cipher work at the same time: two threads per cipher and
 * direction, each a fixed number of updates of known sizes, through EVP_EncryptUpdate,
 * EVP_DecryptUpdate and EVP_CipherUpdate, with ciphers from EVP_CIPHER_fetch and from the
 * legacy getters, and re-inits with a NULL cipher in the middle (as libssl does). It prints
 * what a tracer must count as lines
 *   expect api=evp cipher=<name> dir=<encrypt|decrypt> calls=<n> bytes=<n>
 * Keys and IVs are fixed: the program never touches the DRBG, whose own aes-256-ctr work would
 * otherwise mix into the counts. Exit 0 on success.
 *
 * `evp_threads --pause-at N` (`cryptrace attach`'s test): every thread stops after its first N
 * updates, its context initialised and in use, until a line arrives on stdin; "paused" on
 * stdout says they all are. What is counted from then on is printed as
 *   expect-after-pause api=evp cipher=<name> dir=<encrypt|decrypt> calls=<n> bytes=<n>
 * (N below the halfway re-init: the contexts are first met by a data call, then re-inited).
 */
#include <openssl/evp.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define THREADS 8
#define UPDATES_PER_THREAD 3000

enum entry { USE_ENCRYPT_UPDATE, USE_DECRYPT_UPDATE, USE_CIPHER_UPDATE };

struct work {
	const char *cipher; /* OpenSSL's lower-case name, as a report prints it */
	bool encrypt;
	enum entry entry;
	bool fetch; /* EVP_CIPHER_fetch instead of EVP_get_cipherbyname */
};

static const struct work kinds[THREADS / 2] = {
	{ .cipher = "aes-128-cbc", .encrypt = true, .entry = USE_ENCRYPT_UPDATE, .fetch = true },
	{ .cipher = "aes-256-cbc", .encrypt = false, .entry = USE_DECRYPT_UPDATE, .fetch = false },
	{ .cipher = "aes-128-ctr", .encrypt = true, .entry = USE_CIPHER_UPDATE, .fetch = true },
	{ .cipher = "aes-256-gcm", .encrypt = true, .entry = USE_ENCRYPT_UPDATE, .fetch = false },
};

/* Request sizes cycle through these: tiny, odd, block-sized and large. */
static const int sizes[] = { 16, 1, 100, 1024, 4096, 17, 8192, 64 };
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

static int pause_at = -1; /* --pause-at N */
static pthread_barrier_t paused, resume;

/* The bytes of updates [from, UPDATES_PER_THREAD) of one thread. */
static unsigned long expected_bytes_per_thread(int from)
{
	unsigned long sum = 0;

	for (int i = from; i < UPDATES_PER_THREAD; i++)
		sum += (unsigned long)sizes[i % NSIZES];
	return sum;
}

static int do_update(EVP_CIPHER_CTX *ctx, const struct work *w, uint8_t *out, const uint8_t *in, int len)
{
	int outl = 0;

	switch (w->entry) {
	case USE_ENCRYPT_UPDATE:
		return EVP_EncryptUpdate(ctx, out, &outl, in, len);
	case USE_DECRYPT_UPDATE:
		return EVP_DecryptUpdate(ctx, out, &outl, in, len);
	case USE_CIPHER_UPDATE:
		return EVP_CipherUpdate(ctx, out, &outl, in, len);
	}
	return 0;
}

static void *worker(void *arg)
{
	const struct work *w = arg;
	static const uint8_t key[32] = "fixed key, never a secret: test";
	static const uint8_t iv[16] = "fixed iv 0123456";
	uint8_t *in = calloc(1, 8192), *out = calloc(1, 8192 + 64);
	EVP_CIPHER *fetched = w->fetch ? EVP_CIPHER_fetch(NULL, w->cipher, NULL) : NULL;
	const EVP_CIPHER *cipher = w->fetch ? fetched : EVP_get_cipherbyname(w->cipher);
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	intptr_t ok = in && out && cipher && ctx &&
		      EVP_CipherInit_ex(ctx, cipher, NULL, key, iv, w->encrypt ? 1 : 0);

	for (int i = 0; ok && i < UPDATES_PER_THREAD; i++) {
		if (i == pause_at) {
			pthread_barrier_wait(&paused);
			pthread_barrier_wait(&resume);
		}
		/* Halfway, a fresh IV without a new cipher: the context keeps its path. */
		if (i == UPDATES_PER_THREAD / 2)
			ok = EVP_CipherInit_ex(ctx, NULL, NULL, NULL, iv, -1);
		if (ok)
			ok = do_update(ctx, w, out, in, sizes[i % NSIZES]);
	}
	if (ok && w->encrypt) {
		int outl = 0;

		/* Final is not a data call: it must not change the counts. */
		EVP_CIPHER_CTX_set_padding(ctx, 1);
		ok = EVP_EncryptFinal_ex(ctx, out, &outl);
	}
	EVP_CIPHER_CTX_free(ctx);
	EVP_CIPHER_free(fetched);
	free(in);
	free(out);
	return (void *)ok;
}

int main(int argc, char **argv)
{
	pthread_t tids[THREADS];
	int failed = 0;

	if (argc == 3 && !strcmp(argv[1], "--pause-at")) {
		pause_at = atoi(argv[2]);
		if (pause_at < 0 || pause_at >= UPDATES_PER_THREAD) {
			fprintf(stderr, "evp_threads: --pause-at takes 0..%d\n", UPDATES_PER_THREAD - 1);
			return 2;
		}
		pthread_barrier_init(&paused, NULL, THREADS + 1);
		pthread_barrier_init(&resume, NULL, THREADS + 1);
	} else if (argc != 1) {
		fprintf(stderr, "usage: evp_threads [--pause-at N]\n");
		return 2;
	}

	for (int t = 0; t < THREADS; t++) {
		if (pthread_create(&tids[t], NULL, worker, (void *)&kinds[t % (THREADS / 2)])) {
			fprintf(stderr, "evp_threads: pthread_create failed\n");
			return 1;
		}
	}
	if (pause_at >= 0) {
		char line[64];

		pthread_barrier_wait(&paused);
		printf("paused\n");
		fflush(stdout);
		if (!fgets(line, sizeof(line), stdin))
			line[0] = 0;
		pthread_barrier_wait(&resume);
	}
	for (int t = 0; t < THREADS; t++) {
		void *ok = NULL;

		pthread_join(tids[t], &ok);
		if (!ok)
			failed++;
	}
	if (failed) {
		fprintf(stderr, "evp_threads: %d thread(s) failed their EVP calls\n", failed);
		return 1;
	}

	unsigned long per_thread = expected_bytes_per_thread(0);

	for (size_t k = 0; k < THREADS / 2; k++)
		printf("expect api=evp cipher=%s dir=%s calls=%d bytes=%lu\n", kinds[k].cipher,
		       kinds[k].encrypt ? "encrypt" : "decrypt", 2 * UPDATES_PER_THREAD, 2 * per_thread);
	for (size_t k = 0; pause_at >= 0 && k < THREADS / 2; k++)
		printf("expect-after-pause api=evp cipher=%s dir=%s calls=%d bytes=%lu\n", kinds[k].cipher,
		       kinds[k].encrypt ? "encrypt" : "decrypt", 2 * (UPDATES_PER_THREAD - pause_at),
		       2 * expected_bytes_per_thread(pause_at));
	return 0;
}
