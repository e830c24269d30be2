/* SPDX-License-Identifier: MIT */
/*
 * local_host.c - dlopens PLUGIN (local_plugin.c) RTLD_LOCAL and runs it: the program itself
 * links no GnuTLS. Prints the plugin's result; exits 0 when it succeeded.
 */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	if (argc != 2)
		return 2;
	void *h = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		fprintf(stderr, "local_host: %s\n", dlerror());
		return 2;
	}
	int (*run)(void) = (int (*)(void))dlsym(h, "local_plugin_run");
	int r = run ? run() : -1;
	printf("local_plugin_run=%d\n", r);
	return r != 0;
}
