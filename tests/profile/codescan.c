/* SPDX-License-Identifier: MIT */
/*
 * codescan - the profile's code classifier (report/codeclass.c) run over every function of an
 * ELF file, not only the sampled ones: one line per function it names ("start end category
 * impl name"; a function with both an FDE and a symbol comes twice), so that profile.py can check a rule fires where it should (sntrup761 only in
 * ssh and sshd, a handful of functions) and nowhere else (no public-key category in libc).
 * Usage: codescan [-r] FILE (-r: the functions asked in reverse order, which must not change
 * any answer: a function's category may come from its callers, found as it is asked)
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "codegraph.h"
#include "codefile.h"

int main(int argc, char **argv)
{
	bool reverse = argc == 3 && !strcmp(argv[1], "-r");
	if (argc != 2 && !reverse) {
		fprintf(stderr, "usage: codescan [-r] FILE\n");
		return 2;
	}
	argv += reverse;
	struct rp_codefile f;
	if (!rp_codefile_open(&f, argv[1], (struct ct_str){ 0 })) {
		fprintf(stderr, "codescan: %s: no readable 64-bit ELF file\n", argv[1]);
		return 1;
	}
	const char *base = strrchr(argv[1], '/');
	base = base ? base + 1 : argv[1];
	struct rp_code_file_class *fc = rp_code_file_class_new(&f, base);
	if (!fc) {
		fprintf(stderr, "codescan: out of memory\n");
		return 1;
	}
	size_t n = 0;
	size_t count = rp_code_file_class_count(fc);
	for (size_t k = 0; k < count; k++) {
		struct rp_code_fn fn;
		if (!rp_code_file_class_at(fc, reverse ? count - 1 - k : k, &fn))
			continue;
		n++;
		if (!fn.category[0])
			continue;
		printf("%llx %llx %s|%s|%s\n", (unsigned long long)fn.start, (unsigned long long)fn.end,
		       fn.category, fn.impl, fn.name ? fn.name : "");
	}
	fprintf(stderr, "codescan: %zu functions\n", n);
	rp_code_file_class_free(fc);
	rp_codefile_close(&f);
	return 0;
}
