/* SPDX-License-Identifier: MIT */
/*
 * rel_threads.c - the threads stress program for the reliability suite. 16 threads for a given
 * number of seconds: each cycles through three ciphers (aes-128-cbc encrypt, aes-256-ctr
 * encrypt, aes-128-gcm decrypt), copies the context mid-stream (EVP_CIPHER_CTX_copy), works on
 * the copy, frees it, resets the original, and - every few rounds - makes kernel-interface calls
 * (a /dev/crypto session + CIOCCRYPT, which the test's stand-in device answers, and an AF_ALG
 * socket, which this host refuses with EAFNOSUPPORT). It prints the exact counts a tracer must
 * show as `expect api=.. cipher=.. dir=.. calls=N bytes=N` and `kernel cryptodev_crypts=N`.
 * A watchdog (alarm) kills the program if the work does not finish: a deadlock fails the test.
 * Usage: rel_threads SECONDS [THREADS]
 */
#include <errno.h>
#include <fcntl.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "cryptodev_abi.h"

#define MAX_THREADS 64
#define AF_ALG_FAMILY 38

struct kind {
	const char *name;
	bool encrypt;
};

static const struct kind kinds[] = {
	{ .name = "aes-128-cbc", .encrypt = true },
	{ .name = "aes-256-ctr", .encrypt = true },
	{ .name = "aes-128-gcm", .encrypt = false },
};
#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))

static const int sizes[] = { 16, 64, 1024, 48, 4096, 32 }; /* multiples of 16: CBC, no padding */
#define NSIZES (sizeof(sizes) / sizeof(sizes[0]))

struct tally {
	uint64_t calls[NKINDS], bytes[NKINDS];
	uint64_t cdev_crypts, cdev_bytes, cdev_failed, afalg_refused, rounds;
	bool failed;
};

static struct tally tallies[MAX_THREADS];
static double run_seconds;
static atomic_bool stop;

static const uint8_t key[32] = "Ud8:Ve0<Wf2>Xg4)Yh6[Zi8]Aj0{Bk2}";
static const uint8_t iv[16] = "Cl4'Dm6,En8.Fo0/";

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static bool update(EVP_CIPHER_CTX *ctx, const struct kind *k, uint8_t *out, const uint8_t *in, int len)
{
	int outl = 0;

	return k->encrypt ? EVP_EncryptUpdate(ctx, out, &outl, in, len) == 1
			  : EVP_DecryptUpdate(ctx, out, &outl, in, len) == 1;
}

static bool init(EVP_CIPHER_CTX *ctx, const EVP_CIPHER *c, const struct kind *k)
{
	return k->encrypt ? EVP_EncryptInit_ex(ctx, c, NULL, key, iv) == 1
			  : EVP_DecryptInit_ex(ctx, c, NULL, key, iv) == 1;
}

/* One cipher round: 8 updates on ctx, a copy with 4 updates, free of the copy, reset. */
static void evp_round(struct tally *t, unsigned kind, const EVP_CIPHER *c, uint8_t *in, uint8_t *out)
{
	const struct kind *k = &kinds[kind];
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();

	if (!ctx || !init(ctx, c, k)) {
		t->failed = true;
		EVP_CIPHER_CTX_free(ctx);
		return;
	}
	EVP_CIPHER_CTX_set_padding(ctx, 0);
	for (unsigned i = 0; i < 8; i++) {
		int len = sizes[(t->rounds + i) % NSIZES];
		if (!update(ctx, k, out, in, len))
			t->failed = true;
		t->calls[kind]++;
		t->bytes[kind] += (uint64_t)len;
	}
	EVP_CIPHER_CTX *copy = EVP_CIPHER_CTX_new();
	if (copy && EVP_CIPHER_CTX_copy(copy, ctx) == 1) {
		for (unsigned i = 0; i < 4; i++) {
			if (!update(copy, k, out, in, 16))
				t->failed = true;
			t->calls[kind]++;
			t->bytes[kind] += 16;
		}
	} else {
		t->failed = true;
	}
	EVP_CIPHER_CTX_free(copy);
	EVP_CIPHER_CTX_reset(ctx);
	EVP_CIPHER_CTX_free(ctx);
}

/* The kernel interfaces: a stand-in /dev/crypto when the test provides one, and AF_ALG. */
static void kernel_round(struct tally *t, uint8_t *buf)
{
	int fd = open(CT_CDEV_PATH, O_RDWR | O_CLOEXEC);

	if (fd >= 0) {
		struct ct_cdev_session_op s = { .cipher = CT_CRYPTO_AES_CBC,
						.keylen = 16,
						.key = (uint8_t *)key };
		if (ioctl(fd, CT_CIOCGSESSION, &s) == 0) {
			struct ct_cdev_crypt_op c = { .ses = s.ses,
						      .op = CT_COP_ENCRYPT,
						      .len = 64,
						      .src = buf,
						      .dst = buf,
						      .iv = (uint8_t *)iv };
			/* every attempt is a call; the last of each round asks for 60 bytes of CBC
			 * (not whole blocks), which the device refuses: those are the errors */
			for (unsigned i = 0; i < 4; i++) {
				c.len = i == 3 ? 60 : 64;
				t->cdev_crypts++;
				t->cdev_bytes += c.len;
				if (ioctl(fd, CT_CIOCCRYPT, &c) != 0)
					t->cdev_failed++;
			}
			ioctl(fd, CT_CIOCFSESSION, &s.ses);
		}
		close(fd);
	}
	int sk = socket(AF_ALG_FAMILY, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
	if (sk >= 0)
		close(sk);
	else if (errno == EAFNOSUPPORT)
		t->afalg_refused++;
}

static void *worker(void *arg)
{
	struct tally *t = arg;
	EVP_CIPHER *ciphers[NKINDS];
	uint8_t in[4096], out[4096 + 32];

	memset(in, 0x5a, sizeof(in));
	for (unsigned k = 0; k < NKINDS; k++)
		ciphers[k] = EVP_CIPHER_fetch(NULL, kinds[k].name, NULL);
	while (!atomic_load(&stop)) {
		for (unsigned k = 0; k < NKINDS; k++)
			evp_round(t, k, ciphers[k], in, out);
		if (t->rounds % 8 == 0)
			kernel_round(t, out);
		t->rounds++;
	}
	for (unsigned k = 0; k < NKINDS; k++)
		EVP_CIPHER_free(ciphers[k]);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: rel_threads SECONDS [THREADS]\n");
		return 2;
	}
	run_seconds = atof(argv[1]);
	int nthreads = argc > 2 ? atoi(argv[2]) : 16;
	if (run_seconds <= 0 || nthreads < 1 || nthreads > MAX_THREADS) {
		fprintf(stderr, "rel_threads: bad arguments\n");
		return 2;
	}
	/* The watchdog: SIGALRM's default action ends the process; the test sees the signal. */
	alarm((unsigned)run_seconds + 120);

	pthread_t th[MAX_THREADS];
	for (int i = 0; i < nthreads; i++)
		if (pthread_create(&th[i], NULL, worker, &tallies[i]) != 0) {
			fprintf(stderr, "rel_threads: pthread_create failed\n");
			return 1;
		}
	uint64_t end = mono_ns() + (uint64_t)(run_seconds * 1e9);
	while (mono_ns() < end) {
		struct timespec nap = { .tv_nsec = 10 * 1000 * 1000 };
		nanosleep(&nap, NULL);
	}
	atomic_store(&stop, true);
	for (int i = 0; i < nthreads; i++)
		pthread_join(th[i], NULL);

	struct tally sum = { 0 };
	for (int i = 0; i < nthreads; i++) {
		for (unsigned k = 0; k < NKINDS; k++) {
			sum.calls[k] += tallies[i].calls[k];
			sum.bytes[k] += tallies[i].bytes[k];
		}
		sum.cdev_crypts += tallies[i].cdev_crypts;
		sum.cdev_bytes += tallies[i].cdev_bytes;
		sum.cdev_failed += tallies[i].cdev_failed;
		sum.afalg_refused += tallies[i].afalg_refused;
		sum.rounds += tallies[i].rounds;
		sum.failed |= tallies[i].failed;
	}
	for (unsigned k = 0; k < NKINDS; k++)
		printf("expect api=evp cipher=%s dir=%s calls=%llu bytes=%llu\n", kinds[k].name,
		       kinds[k].encrypt ? "encrypt" : "decrypt", (unsigned long long)sum.calls[k],
		       (unsigned long long)sum.bytes[k]);
	printf("kernel cryptodev_crypts=%llu cryptodev_bytes=%llu cryptodev_failed=%llu "
	       "afalg_refused=%llu\n",
	       (unsigned long long)sum.cdev_crypts, (unsigned long long)sum.cdev_bytes,
	       (unsigned long long)sum.cdev_failed, (unsigned long long)sum.afalg_refused);
	printf("threads=%d seconds=%g rounds=%llu\n", nthreads, run_seconds, (unsigned long long)sum.rounds);
	if (sum.failed) {
		fprintf(stderr, "rel_threads: an EVP call failed\n");
		return 1;
	}
	return 0;
}
