/* SPDX-License-Identifier: MIT */
/*
 * exit_main.c - one EVP AES-128-CBC block, then the status argv asks for, either returned from
 * main ("return N": libc calls exit from inside itself, past any exit hook) or given to exit
 * ("exit N"). The trace's END record must hold N either way (tests/port/musl.py).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

int main(int argc, char **argv)
{
	if (argc != 3 || (strcmp(argv[1], "return") && strcmp(argv[1], "exit"))) {
		fprintf(stderr, "usage: exit_main return|exit STATUS\n");
		return 2;
	}
	unsigned char key[16] = { 1 }, iv[16] = { 2 }, in[16] = { 3 }, out[32];
	int n = 0;
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	if (!ctx || !EVP_EncryptInit_ex(ctx, EVP_aes_128_cbc(), NULL, key, iv) ||
	    !EVP_EncryptUpdate(ctx, out, &n, in, sizeof(in)) || n != 16) {
		fprintf(stderr, "exit_main: EVP failed\n");
		return 2;
	}
	EVP_CIPHER_CTX_free(ctx);
	int status = atoi(argv[2]);
	if (!strcmp(argv[1], "exit"))
		exit(status);
	return status;
}
