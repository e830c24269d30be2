/* SPDX-License-Identifier: MIT */
/*
 * foreign_host.c - two libcryptos in one process, as python brings them (_ssl's, then a module
 * with a copy of its own): dlopens argv[1] (a libcrypto, RTLD_LOCAL) and uses it, then the plugin
 * argv[2] (RTLD_LOCAL), whose EVP calls bind to its own libcrypto. Prints the plugin's ciphertext
 * and exits 0 when it equals what argv[1] computes for the same input through function pointers
 * (which no hook sees), 1 when it differs, 2 when something cannot be loaded.
 */
#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

typedef void *(*ctx_new_fn)(void);
typedef void (*ctx_free_fn)(void *);
typedef const void *(*cipher_fn)(void);
typedef int (*init_fn)(void *, const void *, void *, const unsigned char *, const unsigned char *);
typedef int (*update_fn)(void *, unsigned char *, int *, const unsigned char *, int);
typedef int (*final_fn)(void *, unsigned char *, int *);

static int reference(void *lib, unsigned char *out)
{
	ctx_new_fn ctx_new = (ctx_new_fn)dlsym(lib, "EVP_CIPHER_CTX_new");
	ctx_free_fn ctx_free = (ctx_free_fn)dlsym(lib, "EVP_CIPHER_CTX_free");
	cipher_fn cbc = (cipher_fn)dlsym(lib, "EVP_aes_128_cbc");
	init_fn init = (init_fn)dlsym(lib, "EVP_EncryptInit_ex");
	update_fn update = (update_fn)dlsym(lib, "EVP_EncryptUpdate");
	final_fn final = (final_fn)dlsym(lib, "EVP_EncryptFinal_ex");
	if (!ctx_new || !ctx_free || !cbc || !init || !update || !final)
		return -2;
	unsigned char key[16], iv[16] = { 0 }, in[64];
	for (int i = 0; i < 16; i++)
		key[i] = (unsigned char)i;
	memset(in, 'A', sizeof(in));
	void *c = ctx_new();
	int n = 0, m = 0,
	    ok = c && init(c, cbc(), NULL, key, iv) && update(c, out, &n, in, sizeof(in)) &&
		 final(c, out + n, &m);
	ctx_free(c);
	return ok ? n + m : -1;
}

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: foreign_host LIBCRYPTO PLUGIN\n");
		return 2;
	}
	void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!lib) {
		fprintf(stderr, "foreign_host: %s\n", dlerror());
		return 2;
	}
	unsigned char want[96], got[96];
	int nw = reference(lib, want);
	void *plugin = dlopen(argv[2], RTLD_NOW | RTLD_LOCAL);
	int (*encrypt)(unsigned char *) = plugin ? (int (*)(unsigned char *))dlsym(plugin, "plugin_encrypt")
						 : NULL;
	if (!encrypt) {
		fprintf(stderr, "foreign_host: %s\n", dlerror());
		return 2;
	}
	int ng = encrypt(got);
	printf("plugin %d bytes: ", ng);
	for (int i = 0; i < ng; i++)
		printf("%02x", got[i]);
	printf("\nreference %d bytes\n", nw);
	return ng == nw && ng > 0 && memcmp(got, want, (size_t)ng) == 0 ? 0 : 1;
}
