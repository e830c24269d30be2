/* SPDX-License-Identifier: MIT */
/*
 * test_escape.c - the escapers every new output relies on for strings from traced programs:
 * HTML (markup, quotes, control characters, invalid UTF-8), JSON strings and RFC 4180 CSV
 * fields, each written to a memory stream.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "views.h"

/* What fn writes for in[0..len) is exactly want. */
static void expect(void (*fn)(FILE *, const char *, size_t), const char *in, size_t len, const char *want)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	assert_non_null(f);
	fn(f, in, len);
	fclose(f);
	assert_string_equal(buf, want);
	free(buf);
}

#define S(lit) lit, sizeof(lit) - 1

static void test_html(void **state)
{
	(void)state;
	expect(rp_html_str, S("<script>a&b</script>"), "&lt;script&gt;a&amp;b&lt;/script&gt;");
	/* quotes: attribute values */
	expect(rp_html_str, S("a\"b'c"), "a&quot;b&#39;c");
	expect(rp_html_str, S("a\x1b[31mb\x7f"), "a?[31mb?"); /* control characters */
	expect(rp_html_str, S("f1\nf2"), "f1\nf2");           /* newlines kept (call sites) */
	expect(rp_html_str, S("caf\xc3\xa9"), "caf\xc3\xa9"); /* valid UTF-8 kept */
	expect(rp_html_str, S("a\xff\xc3"), "a&#xfffd;&#xfffd;");
	expect(rp_html_str, S("\xc0\xaf"), "&#xfffd;&#xfffd;"); /* an overlong encoding */
}

static void test_json(void **state)
{
	(void)state;
	expect(rp_json_str, S("a\"b\\c\nd\x01"), "\"a\\\"b\\\\c\\nd\\u0001\"");
	expect(rp_json_str, S("x\xfe"), "\"x\\ufffd\""); /* invalid UTF-8 */
	expect(rp_json_str, "a\0b", 3, "\"a\\u0000b\""); /* an embedded NUL */
}

static void test_csv(void **state)
{
	(void)state;
	expect(rp_csv_field, S("provider:default"), "provider:default");
	expect(rp_csv_field, S("a,b"), "\"a,b\"");
	expect(rp_csv_field, S("say \"hi\""), "\"say \"\"hi\"\"\""); /* quotes doubled */
	expect(rp_csv_field, S("a\r\nb"), "\"a\r\nb\"");
	expect(rp_csv_field, S("a\tb"), "a?b"); /* a control character */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_html),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_csv),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
