/* SPDX-License-Identifier: MIT */
/*
 * exit_group_evp.c - ends the way a Go program does: through the exit_group system call, without
 * libc's exit handlers, so the preload never writes its last snapshot and END. With --evp it
 * first encrypts 1 MiB with AES-128-CTR through EVP (work that reaches no snapshot either);
 * --exit N gives the status, --libc uses exit() instead (the normal end, for comparison).
 * Prints "encrypted N bytes" when it did.
 */
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	int status = 0;
	int evp = 0, libc = 0;

	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--evp"))
			evp = 1;
		else if (!strcmp(argv[i], "--libc"))
			libc = 1;
		else if (!strcmp(argv[i], "--exit") && i + 1 < argc)
			status = atoi(argv[++i]);
	}
	if (evp) {
		static unsigned char in[1 << 20], out[(1 << 20) + 16];
		unsigned char key[16] = { 0x42 }, iv[16] = { 0x24 };
		int outl = 0;
		EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();

		if (!ctx || EVP_EncryptInit_ex(ctx, EVP_aes_128_ctr(), NULL, key, iv) != 1 ||
		    EVP_EncryptUpdate(ctx, out, &outl, in, sizeof(in)) != 1)
			return 2;
		EVP_CIPHER_CTX_free(ctx);
		printf("encrypted %d bytes\n", outl);
	}
	fflush(stdout);
	if (libc)
		exit(status);
	syscall(SYS_exit_group, status);
	return 99; /* not reached */
}
