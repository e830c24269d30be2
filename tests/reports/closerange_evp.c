/* SPDX-License-Identifier: MIT */
/*
 * closerange_evp.c - a program that closes every descriptor above stderr in the middle of its
 * work, like sshd's closefrom(): EVP AES-128-CBC encryption of BEFORE 64-byte updates, a pause
 * so the tracer's periodic flush writes them to the first trace file, close_range(3, ~0U, 0)
 * (which closes the trace fd too), then AFTER more updates. The tracer continues in
 * "X.<pid>.ctrace.1". Prints "expect before=N after=M" for the test.
 */
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "close_range.h"

static int encrypt_n(EVP_CIPHER_CTX *ctx, unsigned n)
{
	unsigned char in[64] = { 0 }, out[64 + 16];
	int outl;
	for (unsigned i = 0; i < n; i++)
		if (EVP_EncryptUpdate(ctx, out, &outl, in, sizeof(in)) != 1)
			return -1;
	return 0;
}

int main(int argc, char **argv)
{
	unsigned before = argc > 1 ? (unsigned)atoi(argv[1]) : 1000;
	unsigned after = argc > 2 ? (unsigned)atoi(argv[2]) : 2000;
	unsigned char key[16] = { 1 }, iv[16] = { 2 };
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	if (!ctx || EVP_EncryptInit_ex(ctx, EVP_aes_128_cbc(), NULL, key, iv) != 1)
		return 1;
	if (encrypt_n(ctx, before - 1))
		return 1;
	/* the preload's flusher thread writes a snapshot during the pause (CRYPTRACE_FLUSH_MS) */
	struct timespec pause = { .tv_nsec = 200 * 1000 * 1000 };
	nanosleep(&pause, NULL);
	if (encrypt_n(ctx, 1))
		return 1;
	if (close_range(3, ~0U, 0) != 0) {
		perror("close_range");
		return 2;
	}
	if (encrypt_n(ctx, after))
		return 1;
	EVP_CIPHER_CTX_free(ctx);
	printf("expect before=%u after=%u\n", before, after);
	return 0;
}
