/* SPDX-License-Identifier: MIT */
/* test_conffile.c - the always-on configuration parser (preload/conffile.c) on good and hostile
 * input: every key and unit, comments and blanks; unknown keys, bad values, NUL bytes, over-long
 * lines and files, a missing last newline, too many globs: each skipped with one warning naming
 * its line, the good lines around it still taken. And the include/exclude selection. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "conffile.h"

struct warns {
	unsigned n, lines[64];
	char last[200];
};

static void on_warn(void *arg, unsigned line, const char *what)
{
	struct warns *w = arg;
	if (w->n < 64)
		w->lines[w->n] = line;
	w->n++;
	snprintf(w->last, sizeof(w->last), "%s", what);
}

static struct ct_conffile c;

static void parse(const char *text, size_t len, struct warns *w)
{
	memset(w, 0, sizeof(*w));
	ct_conffile_parse(text, len, &c, on_warn, w);
}

static void every_key(void **state)
{
	(void)state;
	static const char text[] =
		"# always-on\n"
		"\n"
		"  spool = /var/spool/cryptrace  \n"
		"include=/usr/bin/*\n"
		"include = /usr/sbin/sshd\n"
		"exclude\t=\t*/python3*\r\n"
		"mode = calls\n"
		"max_file_bytes = 64M\n"
		"max_spool_bytes = 2G\n"
		"max_age = 7d";
	struct warns w;
	parse(text, sizeof(text) - 1, &w);
	assert_int_equal(w.n, 0);
	assert_string_equal(c.spool, "/var/spool/cryptrace");
	assert_int_equal(c.n_include, 2);
	assert_string_equal(c.include[0], "/usr/bin/*");
	assert_string_equal(c.include[1], "/usr/sbin/sshd");
	assert_int_equal(c.n_exclude, 1);
	assert_string_equal(c.exclude[0], "*/python3*");
	assert_int_equal(c.mode, 1);
	assert_true(c.max_file_bytes == 64ull << 20);
	assert_true(c.max_spool_bytes == 2ull << 30);
	assert_true(c.max_age_s == 7 * 86400ull);
}

static void defaults(void **state)
{
	(void)state;
	struct warns w;
	parse("", 0, &w);
	assert_int_equal(w.n, 0);
	assert_string_equal(c.spool, "");
	assert_int_equal(c.mode, -1);
	assert_true(c.max_file_bytes == 0 && c.max_spool_bytes == 0 && c.max_age_s == 0);
	assert_true(ct_conffile_selects(&c, "/usr/bin/ls"));
}

static void unknown_and_bad_values(void **state)
{
	(void)state;
	static const char text[] =
		"spool = /s\n"
		"colour = blue\n"
		"mode = fast\n"
		"max_file_bytes = -1\n"
		"max_file_bytes = 12T\n"
		"max_spool_bytes = 99999999999999999999999\n"
		"max_spool_bytes = 17179869184G\n"
		"max_age = 1w\n"
		"spool = relative/dir\n"
		"just words\n"
		"include =\n"
		"max_age = 30m\n";
	struct warns w;
	parse(text, sizeof(text) - 1, &w);
	assert_int_equal(w.n, 10);
	assert_int_equal(c.warnings, 10);
	assert_int_equal(w.lines[0], 2);
	assert_int_equal(w.lines[9], 11);
	assert_string_equal(c.spool, "/s"); /* the bad one did not replace it */
	assert_int_equal(c.mode, -1);
	assert_true(c.max_file_bytes == 0 && c.max_spool_bytes == 0);
	assert_true(c.max_age_s == 1800);
	assert_int_equal(c.n_include, 0);
}

static void nul_bytes(void **state)
{
	(void)state;
	/* a NUL would cut the key or value short: the whole line goes */
	static const char text[] = "spool = /a\0/b\nmode = calls\n\0\nmax_age = 5\n";
	struct warns w;
	parse(text, sizeof(text) - 1, &w);
	assert_int_equal(w.n, 2);
	assert_int_equal(w.lines[0], 1);
	assert_int_equal(w.lines[1], 3);
	assert_string_equal(c.spool, "");
	assert_int_equal(c.mode, 1);
	assert_true(c.max_age_s == 5);
}

static void long_lines(void **state)
{
	(void)state;
	static char text[3 * CT_CONF_MAX_LINE];
	size_t n = (size_t)snprintf(text, sizeof(text), "spool = /");
	while (n < 2 * CT_CONF_MAX_LINE)
		text[n++] = 'x';
	n += (size_t)snprintf(text + n, sizeof(text) - n, "\nmode = calls\ninclude = /");
	while (n < sizeof(text) - 2)
		text[n++] = 'y'; /* under the line limit, over the glob's */
	text[n++] = '\n';
	struct warns w;
	parse(text, n, &w);
	assert_int_equal(w.n, 2);
	assert_int_equal(w.lines[0], 1);
	assert_int_equal(w.lines[1], 3);
	assert_string_equal(c.spool, "");
	assert_int_equal(c.mode, 1);
	assert_int_equal(c.n_include, 0);
}

static void too_many_globs(void **state)
{
	(void)state;
	static char text[4096];
	size_t n = 0;
	for (unsigned i = 0; i < CT_CONF_MAX_GLOBS + 3; i++)
		n += (size_t)snprintf(text + n, sizeof(text) - n, "exclude = /x%u\n", i);
	struct warns w;
	parse(text, n, &w);
	assert_int_equal(w.n, 3);
	assert_int_equal(c.n_exclude, CT_CONF_MAX_GLOBS);
}

static void selection(void **state)
{
	(void)state;
	static const char text[] = "include = /usr/bin/*\ninclude = /usr/sbin/sshd\nexclude = */python3*\n";
	struct warns w;
	parse(text, sizeof(text) - 1, &w);
	assert_true(ct_conffile_selects(&c, "/usr/bin/openssl"));
	assert_true(ct_conffile_selects(&c, "/usr/sbin/sshd"));
	assert_false(ct_conffile_selects(&c, "/usr/sbin/cron"));
	assert_false(ct_conffile_selects(&c, "/usr/bin/python3.11")); /* exclude wins */
	assert_false(ct_conffile_selects(&c, ""));
	parse("exclude = /bin/*\n", 17, &w);
	assert_true(ct_conffile_selects(&c, "/usr/bin/ls"));
	assert_false(ct_conffile_selects(&c, "/bin/ls"));
}

static void files(void **state)
{
	(void)state;
	struct warns w = { 0 };
	char dir[] = "/tmp/ct-conffile-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[128];
	snprintf(path, sizeof(path), "%s/cryptrace.conf", dir);
	assert_int_equal(ct_conffile_load(path, &c, on_warn, &w), 0); /* missing: not an error */
	assert_int_equal(w.n, 0);
	/* over the file limit: the rest ignored, the cut line too, one warning for the file */
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs("mode = calls\n", f);
	for (unsigned i = 0; i < CT_CONF_MAX_BYTES / 10; i++)
		fputs("# padding\n", f);
	fputs("spool = /late\n", f);
	fclose(f);
	assert_int_equal(ct_conffile_load(path, &c, on_warn, &w), 1);
	assert_int_equal(w.n, 1);
	assert_int_equal(w.lines[0], 0);
	assert_int_equal(c.mode, 1);
	assert_string_equal(c.spool, "");
	/* a directory in the file's place: read fails, warned */
	unlink(path);
	assert_int_equal(mkdir(path, 0700), 0);
	memset(&w, 0, sizeof(w));
	assert_int_equal(ct_conffile_load(path, &c, on_warn, &w), -1);
	assert_int_equal(w.n, 1);
	rmdir(path);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(every_key),
		cmocka_unit_test(defaults),
		cmocka_unit_test(unknown_and_bad_values),
		cmocka_unit_test(nul_bytes),
		cmocka_unit_test(long_lines),
		cmocka_unit_test(too_many_globs),
		cmocka_unit_test(selection),
		cmocka_unit_test(files),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
