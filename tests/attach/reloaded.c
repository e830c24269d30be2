/* SPDX-License-Identifier: MIT */
/*
 * reloaded.c - a program that loads and unloads a module over and over while it is attached
 * (tests/attach/reloaded.py): `reloaded MODULE SECONDS now|lazy`. After "ready" and a line on
 * stdin it loads MODULE (reloc_module.c, slow to relocate), seals 16 bytes with AES-128-CTR
 * through it and unloads it, for SECONDS; then loads it once more, waits 500 ms (the flusher
 * patches a module within 200 ms of the loader's last load), seals SEALS x SIZE bytes with AES-128-GCM through
 * it and prints "sealed LOADS HASH" (FNV-1a of the ciphertexts); after another line (the test
 * has detached), it seals once more through it. It calls no EVP_EncryptUpdate of its own: the
 * module's slot is the only one of that name.
 */
#include <dlfcn.h>
#include <openssl/evp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SEALS 16
#define SIZE 65536

typedef int (*seal_fn)(EVP_CIPHER_CTX *, unsigned char *, const unsigned char *, int);

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec / 1e9;
}

static seal_fn load(const char *path, int mode, void **handle)
{
	*handle = dlopen(path, mode);
	if (!*handle) {
		fprintf(stderr, "reloaded: %s\n", dlerror());
		exit(2);
	}
	seal_fn f = (seal_fn)dlsym(*handle, "reloc_module_seal");
	if (!f) {
		fprintf(stderr, "reloaded: %s\n", dlerror());
		exit(2);
	}
	return f;
}

int main(int argc, char **argv)
{
	if (argc != 4 || (strcmp(argv[3], "now") && strcmp(argv[3], "lazy"))) {
		fprintf(stderr, "usage: reloaded MODULE SECONDS now|lazy\n");
		return 2;
	}
	int mode = strcmp(argv[3], "now") ? RTLD_LAZY : RTLD_NOW;
	double seconds = atof(argv[2]);
	static unsigned char in[SIZE], out[SIZE];
	const unsigned char key[16] = { 1, 2, 3 }, iv[16] = { 4, 5, 6 };
	char line[16];
	printf("ready\n");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 2;
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	if (!ctx || !EVP_EncryptInit_ex(ctx, EVP_aes_128_ctr(), NULL, key, iv))
		return 2;
	unsigned long loads = 0;
	void *h;
	for (double end = now_s() + seconds; now_s() < end; loads++) {
		seal_fn seal = load(argv[1], mode, &h);
		if (seal(ctx, out, in, 16) != 16)
			return 3;
		dlclose(h);
	}
	seal_fn seal = load(argv[1], mode, &h);
	nanosleep(&(struct timespec){ 0, 500 * 1000000L }, NULL);
	uint64_t hash = 14695981039346656037ull;
	for (int i = 0; i < SEALS; i++) {
		unsigned char nonce[12] = { 0 };
		nonce[11] = (unsigned char)i;
		if (!EVP_EncryptInit_ex(ctx, EVP_aes_128_gcm(), NULL, key, nonce) ||
		    seal(ctx, out, in, SIZE) != SIZE)
			return 3;
		for (int j = 0; j < SIZE; j++)
			hash = (hash ^ out[j]) * 1099511628211ull;
	}
	printf("sealed %lu %016llx\n", loads, (unsigned long long)hash);
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		return 2;
	/* after the detach: the module's slot is back to what the loader bound (exit 3 if not) */
	if (!EVP_EncryptInit_ex(ctx, EVP_aes_128_gcm(), NULL, key, iv) || seal(ctx, out, in, SIZE) != SIZE)
		return 3;
	dlclose(h);
	EVP_CIPHER_CTX_free(ctx);
	return 0;
}
