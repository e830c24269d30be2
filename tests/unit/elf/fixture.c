/* SPDX-License-Identifier: MIT */
/* fixture.c - a tiny shared object, built by each cross compiler found, for test_elf_targets.c. */
int ct_fixture_data = 7;

int ct_fixture_function(int x)
{
	return x * 3 + ct_fixture_data;
}
