/* SPDX-License-Identifier: MIT */
/*
 * test_gopclntab.c - Go pclntab reading (report/gopclntab.c) on tables built here in each layout
 * it reads (Go 1.16-1.17, 1.18-1.19, 1.20 on): names and bounds at a function's first and last
 * byte and between functions, the table found by its header behind bytes that look like one,
 * and hostile tables (the file comes from a trace): short, lying counts and offsets, names
 * without their NUL, records that disagree with the table, and every byte of a good table
 * changed in turn, each read in a buffer of exactly its size (the sanitizer builds catch a read
 * past it).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "gopclntab.h"

#define TEXT 0x401000u

static const struct {
	uint32_t off, size;
	const char *name;
} funcs[] = {
	{ 0x000, 0x40, "runtime.text" },
	{ 0x040, 0x1c0, "golang.org/x/crypto/chacha20poly1305.chacha20Poly1305Seal" },
	{ 0x200, 0x20, "main.main" },
};
#define NFUNCS (sizeof(funcs) / sizeof(funcs[0]))

static void put(uint8_t *p, uint64_t v, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* A table of the layout go (116, 118 or 120) at buf + at; returns its length. */
static size_t build(uint8_t *buf, size_t at, unsigned go)
{
	uint8_t *p = buf + at;
	const unsigned ps = 8, fields = go >= 118 ? 8 : 7;
	size_t header = 8 + fields * ps, names = header, n = names;
	uint32_t nameoff[NFUNCS];
	for (size_t i = 0; i < NFUNCS; i++) {
		nameoff[i] = (uint32_t)(n - names);
		memcpy(p + n, funcs[i].name, strlen(funcs[i].name) + 1);
		n += strlen(funcs[i].name) + 1;
	}
	size_t pcln = (n + 7) & ~(size_t)7, esz = go >= 118 ? 8 : 16, rec = (NFUNCS + 1) * esz;
	size_t reclen = go >= 118 ? 8 : 16;
	put(p, go == 120 ? 0xfffffff1 : go == 118 ? 0xfffffff0 : 0xfffffffa, 4);
	p[4] = p[5] = 0;
	p[6] = 1;
	p[7] = (uint8_t)ps;
	put(p + 8, NFUNCS, ps);
	put(p + 16, 0, ps); /* nfiles */
	unsigned f = 2;
	if (go >= 118)
		put(p + 8 + ps * f++, TEXT, ps);
	put(p + 8 + ps * f++, names, ps);
	for (int k = 0; k < 3; k++) /* cu, file and pc tables: not read */
		put(p + 8 + ps * f++, pcln, ps);
	put(p + 8 + ps * f, pcln, ps);
	for (size_t i = 0; i <= NFUNCS; i++) {
		uint64_t pc = i < NFUNCS ? funcs[i].off : funcs[NFUNCS - 1].off + funcs[NFUNCS - 1].size;
		uint64_t funcoff = i < NFUNCS ? rec + i * reclen : 0;
		if (go >= 118) {
			put(p + pcln + i * esz, pc, 4);
			put(p + pcln + i * esz + 4, funcoff, 4);
		} else {
			put(p + pcln + i * esz, TEXT + pc, 8);
			put(p + pcln + i * esz + 8, funcoff, 8);
		}
	}
	for (size_t i = 0; i < NFUNCS; i++) {
		uint8_t *r = p + pcln + rec + i * reclen;
		if (go >= 118) {
			put(r, funcs[i].off, 4);
			put(r + 4, nameoff[i], 4);
		} else {
			put(r, TEXT + funcs[i].off, 8);
			put(r + 8, nameoff[i], 4);
			put(r + 12, 0, 4);
		}
	}
	return pcln + rec + NFUNCS * reclen;
}

/* The table of layout go in a buffer of exactly its size (the caller frees it). */
static uint8_t *table(unsigned go, size_t *len)
{
	uint8_t tmp[1024] = { 0 };
	*len = build(tmp, 0, go);
	uint8_t *p = malloc(*len);
	assert_non_null(p);
	memcpy(p, tmp, *len);
	return p;
}

static void expect(const struct rp_gopclntab *t, uint64_t va, const char *name, uint64_t start, uint64_t end)
{
	uint64_t s = 0, e = 0;
	const char *n = NULL;
	if (!name) {
		assert_false(rp_gopclntab_function_at(t, va, &s, &e, &n));
		return;
	}
	assert_true(rp_gopclntab_function_at(t, va, &s, &e, &n));
	assert_string_equal(n, name);
	assert_int_equal(s, start);
	assert_int_equal(e, end);
}

static void layouts(void **state)
{
	(void)state;
	static const unsigned gos[] = { 116, 118, 120 };
	for (size_t g = 0; g < 3; g++) {
		size_t len;
		uint8_t *p = table(gos[g], &len);
		struct rp_gopclntab t;
		assert_true(rp_gopclntab_parse(&t, p, len));
		assert_int_equal(t.nfunc, NFUNCS);
		expect(&t, TEXT, "runtime.text", TEXT, TEXT + 0x40);
		expect(&t, TEXT + 0x3f, "runtime.text", TEXT, TEXT + 0x40);
		expect(&t, TEXT + 0x40, funcs[1].name, TEXT + 0x40, TEXT + 0x200);
		expect(&t, TEXT + 0x1ff, funcs[1].name, TEXT + 0x40, TEXT + 0x200);
		expect(&t, TEXT + 0x21f, "main.main", TEXT + 0x200, TEXT + 0x220);
		expect(&t, TEXT - 1, NULL, 0, 0);
		expect(&t, TEXT + 0x220, NULL, 0, 0);
		expect(&t, 0, NULL, 0, 0);
		expect(&t, UINT64_MAX, NULL, 0, 0);
		free(p);
	}
	/* Go 1.2-1.15's table (0xfffffffb) is not read */
	size_t len;
	uint8_t *p = table(118, &len);
	put(p, 0xfffffffb, 4);
	struct rp_gopclntab t;
	assert_false(rp_gopclntab_parse(&t, p, len));
	expect(&t, TEXT, NULL, 0, 0);
	free(p);
}

/* Found by its header in a file's bytes, behind bytes that start like one. */
static void found(void **state)
{
	(void)state;
	uint8_t buf[4096] = { 0 };
	/* a magic with its zero pads but nothing behind it, then one with a count of 0 */
	static const uint8_t fake[] = { 0xf1, 0xff, 0xff, 0xff, 0x00, 0x00, 0x01, 0x08 };
	memcpy(buf + 64, fake, sizeof(fake));
	memcpy(buf + 256, fake, sizeof(fake));
	size_t len = build(buf, 1024, 120);
	struct rp_gopclntab t;
	assert_true(rp_gopclntab_find(&t, buf, 1024 + len));
	assert_ptr_equal(t.p, buf + 1024);
	expect(&t, TEXT + 0x100, funcs[1].name, TEXT + 0x40, TEXT + 0x200);
	/* cut short: the last function's record is not all there, the others are */
	assert_true(rp_gopclntab_find(&t, buf, 1024 + len - 1));
	expect(&t, TEXT + 0x100, funcs[1].name, TEXT + 0x40, TEXT + 0x200);
	expect(&t, TEXT + 0x200, NULL, 0, 0);
	/* cut inside the function table: none */
	assert_false(rp_gopclntab_find(&t, buf, 1024 + (size_t)t.functab + 8));
	assert_false(rp_gopclntab_find(&t, buf, 0));
	expect(&t, TEXT + 0x100, NULL, 0, 0);
}

/* Every lookup over the text and around it: a name found lies, with its NUL, in the n bytes. */
static void lookups_inside(const struct rp_gopclntab *t, const uint8_t *p, size_t n)
{
	uint64_t s, e;
	const char *name;
	for (uint64_t va = TEXT - 0x10; va < TEXT + 0x240; va += 0x8)
		if (rp_gopclntab_function_at(t, va, &s, &e, &name))
			assert_true(name >= (const char *)p && name < (const char *)p + n &&
				    memchr(name, 0, n - (size_t)(name - (const char *)p)) && s <= va &&
				    va < e);
}

/* Tables that lie: each is read, and refused, within its bytes. */
static void hostile(void **state)
{
	(void)state;
	size_t len;
	struct rp_gopclntab t;
	uint8_t *p = table(120, &len);
	for (size_t n = 0; n < len; n++) { /* every length short of the whole, in a buffer of n */
		uint8_t *q = malloc(n ? n : 1);
		assert_non_null(q);
		memcpy(q, p, n);
		if (rp_gopclntab_parse(&t, q, n))
			lookups_inside(&t, q, n);
		free(q);
	}
	/* nfunc beyond the table, and absurd */
	put(p + 8, 1000, 8);
	assert_false(rp_gopclntab_parse(&t, p, len));
	put(p + 8, UINT64_MAX, 8);
	assert_false(rp_gopclntab_parse(&t, p, len));
	free(p);

	/* the second function's record beyond the table, then disagreeing with it */
	p = table(120, &len);
	size_t esz = 8;
	assert_true(rp_gopclntab_parse(&t, p, len));
	uint8_t *ent = p + t.functab + esz;
	put(ent + 4, 0xfffffff0, 4);
	expect(&t, TEXT + 0x100, NULL, 0, 0);
	put(ent + 4, (NFUNCS + 1) * esz, 4); /* the first function's record */
	expect(&t, TEXT + 0x100, NULL, 0, 0);
	free(p);

	/* a name offset past the end, negative, and a last name without its NUL */
	p = table(120, &len);
	assert_true(rp_gopclntab_parse(&t, p, len));
	uint8_t *rec = p + len - 8; /* main.main's record, the last */
	put(rec + 4, (uint32_t)len, 4);
	expect(&t, TEXT + 0x200, NULL, 0, 0);
	put(rec + 4, 0xffffffff, 4);
	expect(&t, TEXT + 0x200, NULL, 0, 0);
	free(p);
	/* Go 1.16's record ends in 4 bytes of padding: main.main's name there, without a NUL */
	p = table(116, &len);
	assert_true(rp_gopclntab_parse(&t, p, len));
	rec = p + len - 16;
	put(rec + 8, (uint32_t)(len - 4 - t.funcnames), 4);
	memcpy(p + len - 4, "main", 4);
	expect(&t, TEXT + 0x200, NULL, 0, 0);
	p[len - 1] = 0;
	expect(&t, TEXT + 0x200, "mai", TEXT + 0x200, TEXT + 0x220);
	free(p);

	/* every byte of each layout's table changed in turn: whatever is read, it is read inside */
	static const unsigned gos[] = { 116, 118, 120 };
	static const uint8_t vals[] = { 0x00, 0xff, 0x80, 0x7f };
	for (size_t g = 0; g < 3; g++) {
		p = table(gos[g], &len);
		for (size_t i = 0; i < len; i++) {
			uint8_t was = p[i];
			for (size_t v = 0; v < sizeof(vals); v++) {
				p[i] = vals[v];
				if (rp_gopclntab_parse(&t, p, len))
					lookups_inside(&t, p, len);
			}
			p[i] = was;
		}
		free(p);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(layouts),
		cmocka_unit_test(found),
		cmocka_unit_test(hostile),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
