/* SPDX-License-Identifier: MIT */
/*
 * test_elf_targets.c - the reporter's ELF readers (report/elfimage.c, elfsyms.c, codefile.c) on
 * files of other targets than the one they run on: a shared object built from elf/fixture.c by
 * each cross compiler found (meson passes them as NAME=PATH: i386 and mipsel 32-bit little-endian,
 * mips 32-bit big-endian, aarch64 and the host's own 64-bit little-endian). Each must read as its
 * class, byte order and machine, give the build id the link set (its notes in the file's byte
 * order), and name ct_fixture_function at every byte of it through the symbol table and through
 * the code file (its program headers decoded); a reader that assumes ELF64 little-endian fails
 * every foreign one. Exit 77 when no cross compiler built a fixture.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "codefile.h"
#include "elfimage.h"
#include "elfsyms.h"

#define BUILD_ID "0123456789abcdef" /* the fixtures' -Wl,--build-id=0x... */
#define FUNCTION "ct_fixture_function"

static const struct target {
	const char *name;
	bool is64, msb;
	unsigned machine;
} targets[] = {
	{ "host", true, false, 0 }, /* the build machine's own: x86-64 here */
	{ "i386", false, false, EM_386 }, { "mipsel", false, false, EM_MIPS },
	{ "mips", false, true, EM_MIPS }, { "aarch64", true, false, EM_AARCH64 },
};

static const struct target *fixture_target;
static const char *fixture_path;

static void test_header_and_build_id(void **state)
{
	(void)state;
	struct rp_image im;
	struct rp_elf eh;
	char id[64];
	assert_int_equal(rp_image_map(fixture_path, 1u << 24, &im), RP_IMAGE_OK);
	assert_true(rp_image_elf(&im, &eh));
	assert_int_equal(eh.is64, fixture_target->is64);
	assert_int_equal(eh.msb, fixture_target->msb);
	if (fixture_target->machine)
		assert_int_equal(eh.h.e_machine, fixture_target->machine);
	assert_int_equal(eh.h.e_type, ET_DYN);
	assert_true(rp_image_build_id(&im, &eh, id, sizeof(id)));
	assert_string_equal(id, BUILD_ID);
	rp_image_unmap(&im);
}

/* The function's symbol, found by name among the decoded entries. */
static void find_symbol(const struct rp_elfsyms *s, Elf64_Sym *out)
{
	Elf64_Sym y;
	for (size_t i = 0; rp_elfsyms_get(s, i, &y); i++)
		if (y.st_name < s->strtab_len && !strcmp(s->strtab + y.st_name, FUNCTION)) {
			*out = y;
			return;
		}
	fail_msg("%s: no symbol %s among %zu", fixture_path, FUNCTION, s->nsyms);
}

static void test_symbols(void **state)
{
	(void)state;
	struct rp_image im;
	struct rp_elf eh;
	struct rp_elfsyms s;
	Elf64_Sym y = { 0 };
	uint64_t start, end;
	assert_int_equal(rp_image_map(fixture_path, 1u << 24, &im), RP_IMAGE_OK);
	assert_true(rp_image_elf(&im, &eh));
	rp_elfsyms_index(&s, &im, &eh);
	assert_true(s.full); /* not stripped: .symtab */
	find_symbol(&s, &y);
	assert_int_equal(ELF64_ST_TYPE(y.st_info), STT_FUNC);
	assert_int_equal(ELF64_ST_BIND(y.st_info), STB_GLOBAL);
	assert_true(y.st_size > 0 && y.st_size < 256);
	assert_true(y.st_shndx != SHN_UNDEF && y.st_shndx < eh.h.e_shnum);
	for (uint64_t va = y.st_value; va < y.st_value + y.st_size; va++) {
		const char *name = rp_elfsyms_function_at(&s, va, &start, &end);
		assert_non_null(name);
		assert_string_equal(name, FUNCTION);
		assert_true(start == y.st_value && end == y.st_value + y.st_size);
	}
	const char *after = rp_elfsyms_function_at(&s, y.st_value + y.st_size, &start, &end);
	assert_true(!after || strcmp(after, FUNCTION));
	rp_image_unmap(&im);
}

static void test_codefile(void **state)
{
	(void)state;
	struct rp_codefile f;
	uint64_t start, end;
	const char *name;
	assert_true(rp_codefile_open(&f, fixture_path, (struct ct_str){ .p = BUILD_ID, .len = 16 }));
	assert_true(f.phnum > 0);
	Elf64_Sym y = { 0 };
	find_symbol(&f.syms, &y);
	/* the function's bytes lie in a loadable segment: vaddr -> file offset -> vaddr */
	uint64_t off = rp_codefile_vaddr_to_off(&f, y.st_value);
	assert_true(off != UINT64_MAX && off < f.im.len);
	assert_int_equal(rp_codefile_off_to_vaddr(&f, off), y.st_value);
	assert_true(rp_codefile_function_at(&f, y.st_value + y.st_size - 1, &start, &end, &name));
	assert_non_null(name);
	assert_string_equal(name, FUNCTION);
	rp_codefile_close(&f);
	/* another build id: not this file */
	assert_false(rp_codefile_open(&f, fixture_path, (struct ct_str){ .p = "00112233", .len = 8 }));
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header_and_build_id),
		cmocka_unit_test(test_symbols),
		cmocka_unit_test(test_codefile),
	};
	int failed = 0, ran = 0, foreign = 0;
	for (int a = 1; a < argc; a++) {
		const char *eq = strchr(argv[a], '=');
		fixture_target = NULL;
		for (size_t t = 0; eq && t < sizeof(targets) / sizeof(targets[0]); t++)
			if (strlen(targets[t].name) == (size_t)(eq - argv[a]) &&
			    !strncmp(argv[a], targets[t].name, (size_t)(eq - argv[a])))
				fixture_target = &targets[t];
		if (!fixture_target) {
			fprintf(stderr, "test_elf_targets: bad argument %s (NAME=PATH)\n", argv[a]);
			return 2;
		}
		fixture_path = eq + 1;
		if (!*fixture_path) {
			printf("# %s: no cross compiler here, not tested\n", fixture_target->name);
			continue;
		}
		printf("# %s: %s\n", fixture_target->name, fixture_path);
		failed += _cmocka_run_group_tests(fixture_target->name, tests,
						  sizeof(tests) / sizeof(tests[0]), NULL, NULL);
		ran++;
		foreign += fixture_target->machine != 0;
	}
	if (!foreign) {
		printf("SKIP: no cross compiler (gcc-i686-linux-gnu, gcc-mipsel-linux-gnu, "
		       "gcc-aarch64-linux-gnu) built a foreign fixture\n");
		return 77;
	}
	printf("# %d fixtures read\n", ran);
	return failed ? 1 : 0;
}
