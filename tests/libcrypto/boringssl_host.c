/* SPDX-License-Identifier: MIT */
/*
 * boringssl_host.c - a program that loads two libcryptos the way python does with its modules:
 * first OpenSSL's (dlopen RTLD_LOCAL, as python's _ssl brings it), then boringssl_plugin, built
 * against BoringSSL (RTLD_LOCAL too). Neither is in the global scope, so BoringSSL's EVP_AEAD
 * calls from the plugin reach the preload's hooks, which must find the real ones in the second
 * libcrypto mapped, not the first. Prints the expect line of the plugin's seals and its result;
 * exits 0 when every seal worked, 1 otherwise, 2 on bad arguments.
 */
#include <dlfcn.h>
#include <stdio.h>

#include "boringssl_plugin.h"

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: boringssl_host OPENSSL_LIBCRYPTO PLUGIN\n");
		return 2;
	}
	for (int i = 1; i < 3; i++) {
		if (!dlopen(argv[i], RTLD_NOW | RTLD_LOCAL)) {
			fprintf(stderr, "boringssl_host: %s\n", dlerror());
			return 2;
		}
	}
	int (*seal)(void) = (int (*)(void))dlsym(dlopen(argv[2], RTLD_NOW | RTLD_NOLOAD), "plugin_seal");
	int sealed = seal ? seal() : -1;
	printf("plugin sealed %d\n", sealed);
	printf("expect api=aead cipher=aes-128-gcm dir=encrypt calls=%d bytes=%d\n", PLUGIN_SEALS,
	       PLUGIN_SEALS * PLUGIN_LEN);
	return sealed == PLUGIN_SEALS ? 0 : 1;
}
