/* SPDX-License-Identifier: MIT */
/*
 * closefds_enc.c - EVP AES-128-CBC over 256 KiB in 8 KiB updates, closing every socket the process
 * holds halfway through (what a daemon's "close all descriptors" does to a library's kernel
 * sockets). Prints a hash of the ciphertext. Under an afalg route the kernel requests after the
 * close fail; the route must finish the context in-process with the IV intact (same hash as a
 * native run) and record the fallback.
 */
#include <dirent.h>
#include <openssl/evp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define TOTAL (256 * 1024)
#define STEP 8192
static uint8_t in[TOTAL], out[TOTAL + 16];

static void close_sockets(void)
{
	DIR *d = opendir("/proc/self/fd");
	if (!d)
		return;
	int self = dirfd(d);
	struct dirent *e;
	while ((e = readdir(d))) {
		int fd = atoi(e->d_name);
		char path[64], target[64];
		if (fd <= 2 || fd == self)
			continue;
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
		ssize_t n = readlink(path, target, sizeof(target) - 1);
		if (n > 0 && (target[n] = 0, !strncmp(target, "socket:", 7)))
			close(fd);
	}
	closedir(d);
}

int main(void)
{
	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (uint8_t)(i * 13 + 1);
	static const uint8_t key[16] = "0123456789abcdef", iv[16] = "fedcba9876543210";
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	int total = 0, l = 0;
	if (!ctx || !EVP_EncryptInit_ex(ctx, EVP_aes_128_cbc(), NULL, key, iv))
		return 1;
	for (int off = 0; off < TOTAL; off += STEP) {
		if (off == TOTAL / 2)
			close_sockets();
		if (!EVP_EncryptUpdate(ctx, out + total, &l, in + off, STEP))
			return 1;
		total += l;
	}
	if (!EVP_EncryptFinal_ex(ctx, out + total, &l))
		return 1;
	total += l;
	EVP_CIPHER_CTX_free(ctx);
	uint64_t h = 0xcbf29ce484222325ull;
	for (int i = 0; i < total; i++)
		h = (h ^ out[i]) * 0x100000001b3ull;
	printf("len=%d fnv=%016llx\n", total, (unsigned long long)h);
	return 0;
}
