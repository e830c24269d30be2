/* SPDX-License-Identifier: MIT */
/*
 * codename.c - what the reporter calls the code at given addresses of a file, as the CPU
 * profile would (report/codefile.c finds the function, report/codeclass.c names it): for the
 * profile suite's checks of Go pclntab names and profile_symbols.def's Go rows against real
 * programs (profile.py).
 * usage: codename FILE [BUILD-ID] < vaddrs (hex, one a line); prints one line per address:
 * "start<TAB>end<TAB>category<TAB>impl<TAB>name" (start "-" when no function holds it; name
 * "-" when bounds come from .eh_frame alone).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codeclass.h"
#include "codefile.h"

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: codename FILE [BUILD-ID] < vaddrs\n");
		return 2;
	}
	struct ct_str id = { .p = argc == 3 ? argv[2] : "",
			     .len = argc == 3 ? (uint32_t)strlen(argv[2]) : 0 };
	struct rp_codefile f;
	if (!rp_codefile_open(&f, argv[1], id)) {
		fprintf(stderr, "codename: %s: no 64-bit ELF file of that build id\n", argv[1]);
		return 1;
	}
	struct rp_code_consts k;
	rp_code_consts_find(&f, &k);
	const char *base = strrchr(argv[1], '/') ? strrchr(argv[1], '/') + 1 : argv[1];
	char line[64];
	while (fgets(line, sizeof(line), stdin)) {
		uint64_t va = strtoull(line, NULL, 16), start, end;
		const char *name;
		char cat[24] = "", impl[40] = ""; /* as the report keeps them (report/model.h) */
		if (!rp_codefile_function_at(&f, va, &start, &end, &name)) {
			printf("-\n");
			continue;
		}
		rp_code_classify(&f, &k, start, end, name, base, cat, sizeof(cat), impl, sizeof(impl));
		printf("%#llx\t%#llx\t%s\t%s\t%s\n", (unsigned long long)start, (unsigned long long)end, cat,
		       impl, name ? name : "-");
	}
	rp_codefile_close(&f);
	return 0;
}
