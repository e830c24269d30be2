/* SPDX-License-Identifier: MIT */
/*
 * strings.c - the reporter's helpers for ct_str, the (pointer, length) slices every loaded string
 * is: comparisons, the parts of NUL- or newline-joined lists (argv, call sites, crypto_libs), a
 * search, and the part after a separator (a file's base name, a cipher's mode). None of them
 * needs a NUL terminator or allocates.
 */
#include "model.h"

#include <string.h>

bool rp_str_eq(struct ct_str a, struct ct_str b)
{
	return a.len == b.len && (a.len == 0 || memcmp(a.p, b.p, a.len) == 0);
}

bool rp_str_is(struct ct_str a, const char *lit)
{
	return rp_str_eq(a, ct_str_from(lit));
}

bool rp_str_starts(struct ct_str a, const char *prefix)
{
	size_t n = strlen(prefix);
	return a.len >= n && memcmp(a.p, prefix, n) == 0;
}

struct ct_str rp_str_part(struct ct_str s, char sep, unsigned i)
{
	uint32_t start = 0;
	for (uint32_t k = 0; k <= s.len; k++) {
		if (k == s.len || s.p[k] == sep) {
			if (i == 0)
				return (struct ct_str){ .p = s.p ? s.p + start : "", .len = k - start };
			i--;
			start = k + 1;
		}
	}
	return (struct ct_str){ .p = "", .len = 0 };
}

unsigned rp_str_nparts(struct ct_str s, char sep)
{
	if (s.len == 0)
		return 0;
	unsigned n = 1;
	for (uint32_t k = 0; k < s.len; k++)
		n += s.p[k] == sep;
	return s.p[s.len - 1] == sep ? n - 1 : n; /* a trailing separator ends the last part */
}

struct ct_str rp_str_find(struct ct_str s, const char *needle)
{
	size_t n = strlen(needle);
	for (uint32_t i = 0; n && i + n <= s.len; i++)
		if (!memcmp(s.p + i, needle, n))
			return (struct ct_str){ .p = s.p + i, .len = s.len - i };
	return (struct ct_str){ .p = NULL, .len = 0 };
}

struct ct_str rp_str_after_last(struct ct_str s, char sep)
{
	for (uint32_t i = s.len; i > 0; i--)
		if (s.p[i - 1] == sep)
			return (struct ct_str){ .p = s.p + i, .len = s.len - i };
	return s;
}

struct ct_str rp_str_basename(struct ct_str path)
{
	return rp_str_after_last(path, '/');
}
