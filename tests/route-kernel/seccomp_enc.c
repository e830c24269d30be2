/* SPDX-License-Identifier: MIT */
/*
 * seccomp_enc.c - encrypts a fixed buffer with EVP AES-128-CBC after installing a seccomp filter
 * (one that allows everything: what matters is that the process is filtered, as sshd's sandboxed
 * children are) and prints a hash of the ciphertext. Under an afalg route the preload must not
 * open kernel sockets here: the output must equal the unfiltered, unrouted run, and the trace
 * must say why the route fell back.
 *   seccomp_enc [nofilter]
 */
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <openssl/evp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>

static uint8_t in[65536], out[65536 + 16];

int main(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "nofilter") != 0) {
		struct sock_filter allow[] = { BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
		struct sock_fprog prog = { .len = 1, .filter = allow };
		if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 ||
		    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) != 0) {
			perror("seccomp");
			return 2;
		}
	}
	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (uint8_t)(i * 7 + 3);
	static const uint8_t key[16] = "0123456789abcdef", iv[16] = "fedcba9876543210";
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	int l1 = 0, l2 = 0;
	if (!ctx || !EVP_EncryptInit_ex(ctx, EVP_aes_128_cbc(), NULL, key, iv) ||
	    !EVP_EncryptUpdate(ctx, out, &l1, in, sizeof(in)) || !EVP_EncryptFinal_ex(ctx, out + l1, &l2))
		return 1;
	EVP_CIPHER_CTX_free(ctx);
	uint64_t h = 0xcbf29ce484222325ull;
	for (int i = 0; i < l1 + l2; i++)
		h = (h ^ out[i]) * 0x100000001b3ull;
	printf("len=%d fnv=%016llx\n", l1 + l2, (unsigned long long)h);
	return 0;
}
