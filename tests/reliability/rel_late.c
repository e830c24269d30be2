/* SPDX-License-Identifier: MIT */
/*
 * rel_late.c - libcrypto loaded late: this program is not linked with libcrypto. (1) It dlopens
 * PLUGIN (linked with libcrypto) with RTLD_LOCAL, as python's ssl module and plugin hosts do,
 * and the plugin encrypts 1000 x 64 bytes of aes-128-cbc (printed as an `expect` line). (2) It
 * dlopens libcrypto.so.3 RTLD_LOCAL itself, takes EVP functions with dlsym(handle) and encrypts
 * 500 x 64 bytes of aes-192-cbc (printed as a `direct` line: dlsym on a handle bypasses any
 * preload). (3) Given a second path (a copy of libcrypto elsewhere), the same through the copy,
 * 700 x 64 bytes of aes-256-cbc: a process with two libcrypto instances.
 * Usage: rel_late PLUGIN [SECOND_LIBCRYPTO]
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef void *(*ctx_new_fn)(void);
typedef const void *(*byname_fn)(const char *);
typedef int (*init_fn)(void *, const void *, void *, const unsigned char *, const unsigned char *);
typedef int (*update_fn)(void *, unsigned char *, int *, const unsigned char *, int);
typedef void (*ctx_free_fn)(void *);

static int work(const char *lib, const char *cipher, int n)
{
	void *h = dlopen(lib, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		fprintf(stderr, "rel_late: %s\n", dlerror());
		return 1;
	}
	ctx_new_fn ctx_new = (ctx_new_fn)dlsym(h, "EVP_CIPHER_CTX_new");
	byname_fn byname = (byname_fn)dlsym(h, "EVP_get_cipherbyname");
	init_fn init = (init_fn)dlsym(h, "EVP_EncryptInit_ex");
	update_fn update = (update_fn)dlsym(h, "EVP_EncryptUpdate");
	ctx_free_fn ctx_free = (ctx_free_fn)dlsym(h, "EVP_CIPHER_CTX_free");
	if (!ctx_new || !byname || !init || !update || !ctx_free)
		return 1;
	static const unsigned char key[32] = "Ls2!Mt4@Nu6#Ov8$Pw0%Qx2^Ry4&Sz6*", iv[16] = "Ta8(Ub0)Vc2-Wd4+";
	unsigned char in[64], out[96];
	int outl;
	memset(in, 7, sizeof(in));
	void *ctx = ctx_new();
	if (!ctx || init(ctx, byname(cipher), NULL, key, iv) != 1)
		return 1;
	for (int i = 0; i < n; i++)
		if (update(ctx, out, &outl, in, 64) != 1)
			return 1;
	ctx_free(ctx);
	printf("direct api=evp cipher=%s dir=encrypt calls=%d bytes=%d\n", cipher, n, n * 64);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: rel_late PLUGIN [SECOND_LIBCRYPTO]\n");
		return 2;
	}
	void *plugin = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	int (*run)(int) = plugin ? (int (*)(int))dlsym(plugin, "rel_plugin_run") : NULL;
	if (!run || run(1000) != 0) {
		fprintf(stderr, "rel_late: plugin: %s\n", plugin ? "failed" : dlerror());
		return 1;
	}
	printf("expect api=evp cipher=aes-128-cbc dir=encrypt calls=1000 bytes=64000\n");
	if (work("libcrypto.so.3", "aes-192-cbc", 500))
		return 1;
	if (argc > 2 && work(argv[2], "aes-256-cbc", 700))
		return 1;
	return 0;
}
