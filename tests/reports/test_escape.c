/* SPDX-License-Identifier: MIT */
/*
 * test_escape.c - the escapers every new output relies on for strings from traced programs:
 * HTML (markup, quotes, control characters, invalid UTF-8), JSON strings and RFC 4180 CSV
 * fields. Plain asserts on memory streams; exit 0 pass, 1 fail.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "views.h"

static int failures;

static void expect(const char *what, void (*fn)(FILE *, const char *, size_t), const char *in,
		   size_t len, const char *want)
{
	char *buf = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&buf, &n);
	if (!f)
		exit(1);
	fn(f, in, len);
	fclose(f);
	if (strcmp(buf, want) != 0) {
		printf("FAIL: %s: got [%s], want [%s]\n", what, buf, want);
		failures++;
	} else {
		printf("ok: %s\n", what);
	}
	free(buf);
}

#define S(lit) lit, sizeof(lit) - 1

int main(void)
{
	expect("html markup", rp_html_str, S("<script>a&b</script>"),
	       "&lt;script&gt;a&amp;b&lt;/script&gt;");
	expect("html quotes (attribute values)", rp_html_str, S("a\"b'c"), "a&quot;b&#39;c");
	expect("html control characters", rp_html_str, S("a\x1b[31mb\x7f"), "a?[31mb?");
	expect("html keeps newlines (call sites)", rp_html_str, S("f1\nf2"), "f1\nf2");
	expect("html valid UTF-8 kept", rp_html_str, S("caf\xc3\xa9"), "caf\xc3\xa9");
	expect("html invalid UTF-8", rp_html_str, S("a\xff\xc3"), "a&#xfffd;&#xfffd;");
	expect("html overlong encoding", rp_html_str, S("\xc0\xaf"), "&#xfffd;&#xfffd;");
	expect("json escapes", rp_json_str, S("a\"b\\c\nd\x01"), "\"a\\\"b\\\\c\\nd\\u0001\"");
	expect("json invalid UTF-8", rp_json_str, S("x\xfe"), "\"x\\ufffd\"");
	expect("json embedded NUL", rp_json_str, "a\0b", 3, "\"a\\u0000b\"");
	expect("csv plain field", rp_csv_field, S("provider:default"), "provider:default");
	expect("csv comma quoted", rp_csv_field, S("a,b"), "\"a,b\"");
	expect("csv quotes doubled", rp_csv_field, S("say \"hi\""), "\"say \"\"hi\"\"\"");
	expect("csv line break quoted", rp_csv_field, S("a\r\nb"), "\"a\r\nb\"");
	expect("csv control character", rp_csv_field, S("a\tb"), "a?b");
	return failures ? 1 : 0;
}
