/* SPDX-License-Identifier: MIT */
/*
 * profile_loop.c - EVP encryption of 16 KiB requests for a given CPU time: CPU work whose code the
 * launcher's profile must name (tests/profile/). Built against the shared libcrypto, and, where
 * libcrypto.a and a static libc exist, as a static executable that no preload can enter.
 * With COPY (a copy of libcrypto at another path), the same loop runs as long again through that
 * copy, loaded RTLD_LOCAL and called through dlsym's pointers: cipher work the hooks never see,
 * which the profile does (the hooks/profile cross-check, report/profile_check.c).
 * usage: profile_loop SECONDS [CIPHER [COPY]]; prints "encrypted N bytes".
 */
#include <dlfcn.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The process's CPU time: the loop runs for SECONDS of CPU however busy the machine is, so its
 * profile has the samples the test counts on */
static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The EVP functions the loop calls: the process's own (hooked), or a copy's */
struct evp {
	const EVP_CIPHER *(*get_cipherbyname)(const char *);
	EVP_CIPHER_CTX *(*ctx_new)(void);
	int (*init)(EVP_CIPHER_CTX *, const EVP_CIPHER *, ENGINE *, const unsigned char *,
		    const unsigned char *);
	int (*update)(EVP_CIPHER_CTX *, unsigned char *, int *, const unsigned char *, int);
	void (*ctx_free)(EVP_CIPHER_CTX *);
};

static long long loop(const struct evp *e, double seconds, const char *name)
{
	static const unsigned char key[32] = "profile-loop key, not a secret.";
	static const unsigned char iv[16] = "profile-loop iv";
	static unsigned char in[16384], out[16384 + 32];
	const EVP_CIPHER *cipher = e->get_cipherbyname(name);
	EVP_CIPHER_CTX *ctx = e->ctx_new();
	if (!cipher || !ctx || e->init(ctx, cipher, NULL, key, iv) != 1)
		return -1;
	memset(in, 0x5a, sizeof(in));
	long long total = 0;
	double end = now() + seconds;
	int outl;
	do {
		for (int i = 0; i < 64; i++) {
			if (e->update(ctx, out, &outl, in, (int)sizeof(in)) != 1)
				return -1;
			total += outl;
		}
	} while (now() < end);
	e->ctx_free(ctx);
	return total;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 1;
	const char *name = argc > 2 ? argv[2] : "aes-128-cbc";
	struct evp own = { EVP_get_cipherbyname, EVP_CIPHER_CTX_new, EVP_EncryptInit_ex, EVP_EncryptUpdate,
			   EVP_CIPHER_CTX_free };
	long long total = loop(&own, seconds, name);
	if (total < 0)
		return 1;
	if (argc > 3) {
		void *h = dlopen(argv[3], RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			fprintf(stderr, "profile_loop: %s\n", dlerror());
			return 1;
		}
		struct evp copy;
		*(void **)&copy.get_cipherbyname = dlsym(h, "EVP_get_cipherbyname");
		*(void **)&copy.ctx_new = dlsym(h, "EVP_CIPHER_CTX_new");
		*(void **)&copy.init = dlsym(h, "EVP_EncryptInit_ex");
		*(void **)&copy.update = dlsym(h, "EVP_EncryptUpdate");
		*(void **)&copy.ctx_free = dlsym(h, "EVP_CIPHER_CTX_free");
		if (!copy.get_cipherbyname || !copy.ctx_new || !copy.init || !copy.update || !copy.ctx_free)
			return 1;
		long long more = loop(&copy, seconds, name);
		if (more < 0)
			return 1;
		total += more;
	}
	/* its own CPU clock, the ground truth of the profile's CPU time (tests/profile) */
	printf("encrypted %lld bytes in %.6f s of CPU\n", total, now());
	return 0;
}
