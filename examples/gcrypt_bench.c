/* SPDX-License-Identifier: MIT */
/*
 * gcrypt_bench.c - a libgcrypt program with known amounts of AES work that times itself, like
 * `cryptsetup benchmark` does its ciphers: the gcrypt suite's ground truth (tests/gcrypt/) and
 * the hook-cost bench's subject (bench/gcrypt_cost.sh).
 *
 *   gcrypt_bench benchmark
 *       AES-XTS 256 and 512, AES-CBC 128 and 256, AES-CTR 256 (encrypted in place) and
 *       AES-256-GCM (13 bytes of AAD and a 16-byte tag per message), each encrypted then
 *       decrypted at 512 B, 4 KiB and 64 KiB, 32 requests of each size, a new IV (counter for
 *       CTR) per request. Prints one line per cipher and direction (MiB/s by its own clock) and
 *       one JSON object per line: the calls and bytes of every data call, key, IV, AAD and tag
 *       call per cipher and direction, and a checksum of every output (the same with and without
 *       a tracer). Exit 1 when a call fails or a decrypted text differs.
 *   gcrypt_bench [-s SECONDS] [-d] [-r] tight CIPHER SIZE
 *       gcry_cipher_encrypt (decrypt with -d) of SIZE bytes on one handle, in batches of about a
 *       millisecond between clock_gettime reads (after four warm-up batches of 16, not in the
 *       figures); -r sets a new IV before each call (the IV set-up is then part of an
 *       iteration). CIPHER: aes-128-cbc, aes-256-cbc, aes-256-ctr, aes-256-xts (a 64-byte key),
 *       aes-128-xts, aes-256-cfb. Prints one JSON object: iterations, bytes, the batches and the
 *       mean of those no preemption stretched (robust_batch_ns), as examples/selftimed does.
 *
 *   gcrypt_bench [-d] late CIPHER SIZE COUNT
 *       `cryptrace attach`'s test of a handle opened before the attach (tests/attach/late_handles.py):
 *       opens and keys a handle of CIPHER (and sets its IV), prints "ready", waits for a line on
 *       stdin, then makes COUNT gcry_cipher_encrypt (decrypt with -d) calls of SIZE bytes on it
 *       and prints "done calls=N bytes=N checksum=X"; then waits for another line, and exits 0.
 *
 *   gcrypt_bench failures
 *       Two calls libgcrypt refuses, as a program's mistakes: 100 bytes of AES-256-CBC (not
 *       whole blocks), then a 15-byte key (Invalid key length); prints
 *       libgcrypt's words for each and exits 0 when both were refused.
 *
 * Keys and IVs are fixed test values (tests/gcrypt registers them with the secrets scan).
 */
#include <gcrypt.h>
#include <stdbool.h>
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

/* The fixed test key: byte i is 0xa7 ^ (i * 29) (the secrets scan looks for it). */
static void test_key(unsigned char *key, size_t n)
{
	for (size_t i = 0; i < n; i++)
		key[i] = (unsigned char)(0xa7 ^ (i * 29));
}

/* The IV of request r: byte i is 0x3c ^ i, its last four bytes r. */
static void test_iv(unsigned char iv[16], uint32_t r)
{
	for (unsigned i = 0; i < 16; i++)
		iv[i] = (unsigned char)(0x3c ^ i);
	memcpy(iv + 12, &r, 4);
}

struct cipher {
	const char *name;
	int algo, mode;
	size_t key_len;
};

static const struct cipher ciphers[] = {
	{ "aes-128-xts", GCRY_CIPHER_AES, GCRY_CIPHER_MODE_XTS, 32 },
	{ "aes-256-xts", GCRY_CIPHER_AES256, GCRY_CIPHER_MODE_XTS, 64 },
	{ "aes-128-cbc", GCRY_CIPHER_AES, GCRY_CIPHER_MODE_CBC, 16 },
	{ "aes-256-cbc", GCRY_CIPHER_AES256, GCRY_CIPHER_MODE_CBC, 32 },
	{ "aes-256-ctr", GCRY_CIPHER_AES256, GCRY_CIPHER_MODE_CTR, 32 },
	{ "aes-256-gcm", GCRY_CIPHER_AES256, GCRY_CIPHER_MODE_GCM, 32 },
	{ "aes-256-cfb", GCRY_CIPHER_AES256, GCRY_CIPHER_MODE_CFB, 32 },
};

static const struct cipher *cipher_by_name(const char *name)
{
	for (size_t i = 0; i < sizeof(ciphers) / sizeof(ciphers[0]); i++)
		if (!strcmp(ciphers[i].name, name))
			return &ciphers[i];
	return NULL;
}

static gcry_cipher_hd_t open_keyed(const struct cipher *c)
{
	gcry_cipher_hd_t h;
	unsigned char key[64];
	test_key(key, c->key_len);
	if (gcry_cipher_open(&h, c->algo, c->mode, 0) || gcry_cipher_setkey(h, key, c->key_len)) {
		fprintf(stderr, "gcrypt_bench: cannot set up %s\n", c->name);
		exit(1);
	}
	return h;
}

/* ---- benchmark ------------------------------------------------------------------------------- */

#define BENCH_REQUESTS 32
static const size_t bench_sizes[] = { 512, 4096, 65536 };

/* What one cipher and direction did, by the program's own count. */
struct tally {
	uint64_t opens, keys, ivs, calls, bytes, aad_calls, aad_bytes, tags;
	uint64_t ns;
};

static uint32_t checksum(uint32_t h, const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

static const unsigned char aad[13] = "gcrypt-bench";

/* Encrypts (dir 0) or decrypts (dir 1) BENCH_REQUESTS requests of each size on one handle of c;
 * buf holds the plaintexts (encrypt) or the ciphertexts (decrypt), tags the GCM tags. */
static int bench_dir(const struct cipher *c, int decrypt, unsigned char *buf, unsigned char (*tags)[16],
		     struct tally *t, uint32_t *sum)
{
	gcry_cipher_hd_t h = open_keyed(c);
	t->opens++;
	t->keys++;
	bool gcm = c->mode == GCRY_CIPHER_MODE_GCM, ctr = c->mode == GCRY_CIPHER_MODE_CTR;
	unsigned char *out = malloc(65536);
	int bad = 0;
	uint32_t r = 0;
	unsigned char *p = buf;
	for (size_t s = 0; s < sizeof(bench_sizes) / sizeof(bench_sizes[0]); s++) {
		size_t n = bench_sizes[s];
		for (unsigned i = 0; i < BENCH_REQUESTS; i++, r++, p += n) {
			unsigned char iv[16];
			test_iv(iv, r);
			uint64_t t0 = now_ns(CLOCK_MONOTONIC);
			bad |= ctr ? gcry_cipher_setctr(h, iv, 16) != 0
				   : gcry_cipher_setiv(h, iv, gcm ? 12 : 16) != 0;
			t->ivs++;
			if (gcm) {
				bad |= gcry_cipher_authenticate(h, aad, sizeof(aad)) != 0;
				t->aad_calls++;
				t->aad_bytes += sizeof(aad);
			}
			if (ctr) { /* in place: the output buffer alone, outsize bytes */
				memcpy(out, p, n);
				bad |= (decrypt ? gcry_cipher_decrypt(h, out, n, NULL, 0)
						: gcry_cipher_encrypt(h, out, n, NULL, 0)) != 0;
			} else {
				bad |= (decrypt ? gcry_cipher_decrypt(h, out, n, p, n)
						: gcry_cipher_encrypt(h, out, n, p, n)) != 0;
			}
			if (gcm) {
				bad |= (decrypt ? gcry_cipher_checktag(h, tags[r], 16)
						: gcry_cipher_gettag(h, tags[r], 16)) != 0;
				t->tags++;
			}
			t->ns += now_ns(CLOCK_MONOTONIC) - t0;
			t->calls++;
			t->bytes += n;
			*sum = checksum(*sum, out, n);
			memcpy(p, out, n); /* the next direction's input */
		}
	}
	gcry_cipher_close(h);
	free(out);
	return bad;
}

static int benchmark(void)
{
	size_t total = 0;
	for (size_t s = 0; s < sizeof(bench_sizes) / sizeof(bench_sizes[0]); s++)
		total += BENCH_REQUESTS * bench_sizes[s];
	unsigned char *plain = malloc(total), *buf = malloc(total);
	unsigned char(*tags)[16] = calloc(BENCH_REQUESTS * 3, 16);
	if (!plain || !buf || !tags)
		return 1;
	for (size_t i = 0; i < total; i++)
		plain[i] = (unsigned char)(i * 131 + (i >> 9));
	int bad = 0;
	printf("# Tests are approximate using memory only (no storage IO).\n");
	printf("#     Algorithm |       Key |      Encryption |      Decryption\n");
	for (size_t k = 0; k < sizeof(ciphers) / sizeof(ciphers[0]); k++) {
		const struct cipher *c = &ciphers[k];
		if (c->mode == GCRY_CIPHER_MODE_CFB)
			continue; /* tight only: gpg's mode */
		struct tally t[2] = { { 0 } };
		uint32_t sum[2] = { 2166136261u, 2166136261u };
		memcpy(buf, plain, total);
		bad |= bench_dir(c, 0, buf, tags, &t[0], &sum[0]);
		bad |= bench_dir(c, 1, buf, tags, &t[1], &sum[1]);
		bad |= memcmp(buf, plain, total) != 0;
		printf("%15s | %6zub | %10.1f MiB/s | %10.1f MiB/s\n", c->name, c->key_len * 8,
		       (double)t[0].bytes / 1048576.0 / ((double)t[0].ns / 1e9),
		       (double)t[1].bytes / 1048576.0 / ((double)t[1].ns / 1e9));
		for (int d = 0; d < 2; d++)
			printf("{\"cipher\": \"%s\", \"key_bits\": %zu, \"dir\": \"%s\", \"opens\": %llu, "
			       "\"key_setups\": %llu, \"iv_setups\": %llu, \"calls\": %llu, \"bytes\": %llu, "
			       "\"aad_calls\": %llu, \"aad_bytes\": %llu, \"tags\": %llu, \"checksum\": %u, "
			       "\"ns\": %llu}\n",
			       c->name, c->key_len * 8, d ? "decrypt" : "encrypt",
			       (unsigned long long)t[d].opens, (unsigned long long)t[d].keys,
			       (unsigned long long)t[d].ivs, (unsigned long long)t[d].calls,
			       (unsigned long long)t[d].bytes, (unsigned long long)t[d].aad_calls,
			       (unsigned long long)t[d].aad_bytes, (unsigned long long)t[d].tags, sum[d],
			       (unsigned long long)t[d].ns);
	}
	free(plain);
	free(buf);
	free(tags);
	if (bad)
		fprintf(stderr, "gcrypt_bench: a call failed or a text did not decrypt back\n");
	return bad ? 1 : 0;
}

/* ---- tight ----------------------------------------------------------------------------------- */

static int tight(const struct cipher *c, size_t size, int decrypt, int reiv, double seconds)
{
	gcry_cipher_hd_t h = open_keyed(c);
	unsigned char *buf = calloc(size ? size : 1, 1);
	unsigned char iv[16];
	test_iv(iv, 0);
	if (!buf ||
	    (c->mode == GCRY_CIPHER_MODE_CTR ? gcry_cipher_setctr(h, iv, 16) : gcry_cipher_setiv(h, iv, 16)))
		return 1;
	struct batches bt;
	batches_init(&bt);
	uint64_t calls = 0, bytes = 0, ivs = 0, wall = 0, failed = 0;
	const uint64_t run0 = now_ns(CLOCK_MONOTONIC), deadline = run0 + (uint64_t)(seconds * 1e9);
	while (now_ns(CLOCK_MONOTONIC) < deadline && bt.ns) {
		uint64_t w0 = now_ns(CLOCK_MONOTONIC);
		for (int i = 0; i < bt.size; i++) {
			if (reiv)
				failed += gcry_cipher_setiv(h, iv, 16) != 0;
			failed += (decrypt ? gcry_cipher_decrypt(h, buf, size, NULL, 0)
					   : gcry_cipher_encrypt(h, buf, size, NULL, 0)) != 0;
		}
		uint64_t w1 = now_ns(CLOCK_MONOTONIC);
		calls += (uint64_t)bt.size;
		ivs += reiv ? (uint64_t)bt.size : 0;
		bytes += (uint64_t)bt.size * size;
		wall += w1 - w0;
		batches_add(&bt, w1 - w0);
	}
	uint64_t median, robust;
	if (!batches_summary(&bt, &median, &robust))
		return 1;
	printf("{\"mode\": \"tight\", \"cipher\": \"%s\", \"size\": %zu, \"decrypt\": %s, \"iterations\": %llu, "
	       "\"bytes\": %llu, \"iv_setups\": %llu, \"batches\": %zu, \"batch_iterations\": %d, "
	       "\"crypto_wall_ns\": %llu, \"median_batch_ns\": %llu, \"robust_batch_ns\": %llu, "
	       "\"failed\": %llu}\n",
	       c->name, size, decrypt ? "true" : "false", (unsigned long long)calls,
	       (unsigned long long)bytes, (unsigned long long)ivs, bt.n, bt.size, (unsigned long long)wall,
	       (unsigned long long)median, (unsigned long long)robust, (unsigned long long)failed);
	gcry_cipher_close(h);
	free(buf);
	free(bt.ns);
	return failed ? 1 : 0;
}

static int failures(void)
{
	const struct cipher *c = cipher_by_name("aes-256-cbc");
	gcry_cipher_hd_t h = open_keyed(c);
	unsigned char key[64], buf[100] = { 0 };
	test_key(key, sizeof(key));
	gcry_error_t bad_len = gcry_cipher_encrypt(h, buf, sizeof(buf), NULL, 0);
	gcry_error_t bad_key = gcry_cipher_setkey(h, key, 15);
	printf("setkey(15 bytes): %s\nencrypt(100 bytes): %s\n", gcry_strerror(bad_key),
	       gcry_strerror(bad_len));
	gcry_cipher_close(h);
	return bad_key && bad_len ? 0 : 1;
}

/* ---- late: a handle older than the attach ----------------------------------------------- */

static int wait_line(void)
{
	char line[64];
	return fgets(line, sizeof(line), stdin) ? 0 : 1;
}

static int late(const struct cipher *c, size_t size, int decrypt, long count)
{
	gcry_cipher_hd_t h = open_keyed(c);
	unsigned char iv[16];
	test_iv(iv, 0);
	bool ctr = c->mode == GCRY_CIPHER_MODE_CTR, gcm = c->mode == GCRY_CIPHER_MODE_GCM;
	if (ctr ? gcry_cipher_setctr(h, iv, 16) : gcry_cipher_setiv(h, iv, gcm ? 12 : 16))
		return 1;
	unsigned char *in = malloc(size ? size : 1), *out = malloc(size ? size : 1);
	if (!in || !out)
		return 1;
	for (size_t i = 0; i < size; i++)
		in[i] = (unsigned char)(i * 131);
	printf("ready\n");
	fflush(stdout);
	if (wait_line())
		return 1;
	uint32_t sum = 2166136261u;
	for (long i = 0; i < count; i++) {
		if (decrypt ? gcry_cipher_decrypt(h, out, size, in, size)
			    : gcry_cipher_encrypt(h, out, size, in, size))
			return 1;
		sum = checksum(sum, out, size);
	}
	printf("done calls=%ld bytes=%llu checksum=%08x\n", count, (unsigned long long)count * size, sum);
	fflush(stdout);
	wait_line();
	gcry_cipher_close(h);
	free(in);
	free(out);
	return 0;
}

static void usage(void)
{
	fprintf(stderr,
		"usage: gcrypt_bench benchmark\n"
		"       gcrypt_bench [-s SECONDS] [-d] [-r] tight CIPHER SIZE\n"
		"       gcrypt_bench [-d] late CIPHER SIZE COUNT\n");
	exit(2);
}

int main(int argc, char **argv)
{
	double seconds = 1;
	int decrypt = 0, reiv = 0, opt;
	while ((opt = getopt(argc, argv, "s:dr")) != -1) {
		if (opt == 's')
			seconds = atof(optarg);
		else if (opt == 'd')
			decrypt = 1;
		else if (opt == 'r')
			reiv = 1;
		else
			usage();
	}
	if (!gcry_check_version(GCRYPT_VERSION)) {
		fprintf(stderr, "gcrypt_bench: libgcrypt is older than this program's header\n");
		return 1;
	}
	gcry_control(GCRYCTL_DISABLE_SECMEM, 0);
	gcry_control(GCRYCTL_INITIALIZATION_FINISHED, 0);
	if (optind < argc && !strcmp(argv[optind], "benchmark") && optind + 1 == argc)
		return benchmark();
	if (optind < argc && !strcmp(argv[optind], "failures") && optind + 1 == argc)
		return failures();
	if (optind + 3 == argc && !strcmp(argv[optind], "tight")) {
		const struct cipher *c = cipher_by_name(argv[optind + 1]);
		char *end;
		long size = strtol(argv[optind + 2], &end, 10);
		if (!c || *end || size < 0 || size % 16) {
			fprintf(stderr,
				"gcrypt_bench: unknown cipher or a size that is not a multiple of 16\n");
			return 2;
		}
		return tight(c, (size_t)size, decrypt, reiv, seconds);
	}
	if (optind + 4 == argc && !strcmp(argv[optind], "late")) {
		const struct cipher *c = cipher_by_name(argv[optind + 1]);
		long size = atol(argv[optind + 2]), count = atol(argv[optind + 3]);
		if (!c || size <= 0 || size % 16 || count < 0) {
			fprintf(stderr,
				"gcrypt_bench: unknown cipher or a size that is not a multiple of 16\n");
			return 2;
		}
		return late(c, (size_t)size, decrypt, count);
	}
	usage();
	return 2;
}
