/* SPDX-License-Identifier: MIT */
/*
 * calib_evp.c - EVP aes-128-ctr over 8 KiB buffers, optionally after entering a seccomp filter
 * mode (an allow-everything filter: the process runs exactly as before, but it is sandboxed as far
 * as /proc/self/status says). Under a bare LD_PRELOAD the preload measures the AES-NI bound in the
 * plain process, and must not in the sandboxed one (tests/findings/calibration.py).
 * Usage: calib_evp plain|seccomp|none   ("none": no cipher work at all). Prints "ok N".
 */
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>

static int enter_seccomp(void)
{
	struct sock_filter allow[] = { BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW) };
	struct sock_fprog prog = { .len = 1, .filter = allow };

	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return -1;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
}

int main(int argc, char **argv)
{
	static const unsigned char key[16] = "Hk3#Jm5$Ln7%Pq9&", iv[16] = "Rs1*Tv3(Wx5)Yz7-";
	static unsigned char in[8192], out[8192];
	const char *mode = argc > 1 ? argv[1] : "plain";
	int outl, n = 0;

	if (!strcmp(mode, "seccomp") && enter_seccomp() != 0) {
		perror("calib_evp: seccomp");
		return 2;
	}
	if (strcmp(mode, "none")) {
		EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();

		if (!ctx || EVP_EncryptInit_ex(ctx, EVP_aes_128_ctr(), NULL, key, iv) != 1)
			return 1;
		for (; n < 2000; n++)
			if (EVP_EncryptUpdate(ctx, out, &outl, in, (int)sizeof(in)) != 1)
				return 1;
		EVP_CIPHER_CTX_free(ctx);
	}
	printf("ok %d\n", n);
	return 0;
}
