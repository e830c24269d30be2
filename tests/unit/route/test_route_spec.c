/* SPDX-License-Identifier: MIT */
/*
 * test_route_spec.c - the route spec grammar: every branch, every error (message and column),
 * glob matching, and size thresholds on both sides of the boundary.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include <cmocka.h>

#include "route_spec.h"

/* The CPU target's canonical name and the list of targets in errors, per architecture. */
#if defined(__x86_64__) || defined(__i386__)
#define CPU_NAME "aesni"
#define EXPECTED "(expected native, cpu, aesni, afalg, cryptodev)"
#else
#define CPU_NAME "cpu"
#define EXPECTED "(expected native, cpu, afalg, cryptodev)"
#endif

static struct ct_route_table parse_ok(const char *spec)
{
	struct ct_route_table t;
	char err[256];
	int rc = ct_route_parse(spec, &t, err, sizeof(err));
	if (rc != 0)
		print_error("unexpected error for \"%s\": %s\n", spec, err);
	assert_int_equal(rc, 0);
	assert_string_equal(err, "");
	return t;
}

static void expect_error(const char *spec, const char *message)
{
	struct ct_route_table t;
	char err[256];
	memset(&t, 0x5a, sizeof(t));
	assert_int_equal(ct_route_parse(spec, &t, err, sizeof(err)), -1);
	assert_string_equal(err, message);
	assert_int_equal(t.count, 0); /* a failed parse routes nothing */
}

static void test_full_rule(void **state)
{
	(void)state;
	struct ct_route_table t = parse_ok("aes-*-cbc=afalg>=4096,aes-*=cpu");
	assert_int_equal(t.count, 2);
	assert_string_equal(t.rules[0].glob, "aes-*-cbc");
	assert_int_equal(t.rules[0].dir, CT_DIR_UNKNOWN);
	assert_int_equal(t.rules[0].target, CT_ROUTE_AFALG);
	assert_int_equal(t.rules[0].cond, CT_ROUTE_COND_GE);
	assert_int_equal(t.rules[0].size, 4096);
	assert_string_equal(t.rules[1].glob, "aes-*");
	assert_int_equal(t.rules[1].target, CT_ROUTE_AESNI);
	assert_int_equal(t.rules[1].cond, CT_ROUTE_COND_NONE);
}

static void test_targets_and_dirs(void **state)
{
	(void)state;
	struct ct_route_table t =
		parse_ok("a:enc=native,b:dec=cpu,c:encrypt=afalg,d:decrypt=cryptodev,E*=cpu");
	assert_int_equal(t.count, 5);
	assert_int_equal(t.rules[0].dir, CT_DIR_ENCRYPT);
	assert_int_equal(t.rules[0].target, CT_ROUTE_NATIVE);
	assert_int_equal(t.rules[1].dir, CT_DIR_DECRYPT);
	assert_int_equal(t.rules[1].target, CT_ROUTE_AESNI);
	assert_int_equal(t.rules[2].dir, CT_DIR_ENCRYPT);
	assert_int_equal(t.rules[2].target, CT_ROUTE_AFALG);
	assert_int_equal(t.rules[3].dir, CT_DIR_DECRYPT);
	assert_int_equal(t.rules[3].target, CT_ROUTE_CRYPTODEV);
	assert_string_equal(t.rules[4].glob, "e*"); /* globs are stored lower-case */
}

static void test_bare_target_continues(void **state)
{
	(void)state;
	struct ct_route_table t = parse_ok("aes-*-cbc:dec=afalg>=4k,cpu<16,native");
	assert_int_equal(t.count, 3);
	for (unsigned i = 0; i < 3; i++) {
		assert_string_equal(t.rules[i].glob, "aes-*-cbc");
		assert_int_equal(t.rules[i].dir, CT_DIR_DECRYPT);
	}
	assert_int_equal(t.rules[0].size, 4096);
	assert_int_equal(t.rules[1].target, CT_ROUTE_AESNI);
	assert_int_equal(t.rules[1].cond, CT_ROUTE_COND_LT);
	assert_int_equal(t.rules[1].size, 16);
	assert_int_equal(t.rules[2].target, CT_ROUTE_NATIVE);
	assert_int_equal(t.rules[2].cond, CT_ROUTE_COND_NONE);
}

static void test_sizes(void **state)
{
	(void)state;
	struct ct_route_table t =
		parse_ok("a=cpu>=0,b=cpu>=1K,c=cpu<2m,d=cpu<3M,e=cpu>=18446744073709551614");
	assert_int_equal(t.rules[0].size, 0);
	assert_int_equal(t.rules[1].size, 1024);
	assert_int_equal(t.rules[2].size, 2 * 1024 * 1024);
	assert_int_equal(t.rules[3].size, 3 * 1024 * 1024);
	assert_true(t.rules[4].size == UINT64_MAX - 1);
}

static void test_whitespace(void **state)
{
	(void)state;
	struct ct_route_table t = parse_ok("  aes-*-gcm=cpu , aes-*=native  ");
	assert_int_equal(t.count, 2);
	assert_string_equal(t.rules[0].glob, "aes-*-gcm");
}

static void test_max_rules(void **state)
{
	(void)state;
	char spec[CT_ROUTE_MAX_RULES * 16 + 32] = "x=cpu";
	for (int i = 1; i < CT_ROUTE_MAX_RULES; i++)
		strcat(spec, ",native");
	struct ct_route_table t = parse_ok(spec);
	assert_int_equal(t.count, CT_ROUTE_MAX_RULES);
	strcat(spec, ",afalg");
	char msg[64];
	snprintf(msg, sizeof(msg), "bad route spec at %zu: more than 32 rules", strlen(spec) - 4);
	expect_error(spec, msg);
}

/* The CPU's AES instructions: "cpu" everywhere; "aesni" is the same target on x86 and refused,
 * naming "cpu", on a CPU that has no AES-NI. */
static void test_cpu_target(void **state)
{
	(void)state;
	struct ct_route_table t = parse_ok("aes-*=cpu");
	assert_int_equal(t.rules[0].target, CT_ROUTE_AESNI);
#if defined(__x86_64__) || defined(__i386__)
	t = parse_ok("aes-*=aesni");
	assert_int_equal(t.rules[0].target, CT_ROUTE_AESNI);
#else
	expect_error("aes-*-gcm=native,aes-*=aesni>=1k",
		     "bad route spec at 24: target \"aesni\" is x86's AES-NI; the AES instructions of this "
		     "CPU are target \"cpu\"");
#endif
}

static void test_errors(void **state)
{
	(void)state;
	expect_error("", "bad route spec at 1: empty spec (expected GLOB[:DIR]=TARGET[>=SIZE|<SIZE],...)");
	expect_error(NULL, "bad route spec at 1: empty spec (expected GLOB[:DIR]=TARGET[>=SIZE|<SIZE],...)");
	expect_error("aes-*-cbc=aesnii", "bad route spec at 11: unknown target \"aesnii\" " EXPECTED);
	expect_error("aes-*-cbc=afalg>=4096,aes-*=aesnii",
		     "bad route spec at 29: unknown target \"aesnii\" " EXPECTED);
	expect_error("aes-*=afalg,,x=native",
		     "bad route spec at 13: empty rule (two commas in a row, or a comma at the end)");
	expect_error("aes-*=afalg,",
		     "bad route spec at 13: empty rule (two commas in a row, or a comma at the end)");
	expect_error("aesni",
		     "bad route spec at 1: \"aesni\" has no cipher glob before it (expected GLOB=TARGET)");
	expect_error("=afalg", "bad route spec at 1: empty cipher glob before \"=\"");
	expect_error(":enc=afalg", "bad route spec at 1: empty cipher glob before \":\"");
	expect_error("aes/cbc=afalg", "bad route spec at 4: bad character '/' in cipher glob \"aes/cbc\"");
	expect_error(
		"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa=afalg",
		"bad route spec at 1: cipher glob \"aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...\" is longer "
		"than 47 characters");
	expect_error("aes-*:both=afalg",
		     "bad route spec at 7: unknown direction \"both\" (expected enc, dec, encrypt, decrypt)");
	expect_error("aes-*:enc", "bad route spec at 10: missing \"=TARGET\" after \"aes-*:enc\"");
	expect_error("aes-*=", "bad route spec at 7: missing target " EXPECTED);
	expect_error("aes-*=>=4", "bad route spec at 7: missing target " EXPECTED);
	expect_error("aes-*=afalg>4096",
		     "bad route spec at 12: bad size condition \">\" (expected >=SIZE or <SIZE)");
	expect_error("aes-*=afalg<=4096",
		     "bad route spec at 12: bad size condition \"<=\" (expected >=SIZE or <SIZE)");
	expect_error("aes-*=afalg>=",
		     "bad route spec at 14: bad size \"\" (expected digits with an optional k or m)");
	expect_error("aes-*=afalg>=4x",
		     "bad route spec at 14: bad size \"4x\" (expected digits with an optional k or m)");
	expect_error("aes-*=afalg>=4kb",
		     "bad route spec at 14: bad size \"4kb\" (expected digits with an optional k or m)");
	expect_error("aes-*=afalg<k",
		     "bad route spec at 13: bad size \"k\" (expected digits with an optional k or m)");
	expect_error("aes-*=afalg>=99999999999999999999",
		     "bad route spec at 14: size \"99999999999999999999\" is too large");
	expect_error("aes-*=afalg>=18014398509481984k",
		     "bad route spec at 14: size \"18014398509481984k\" is too large");
	expect_error("aes-*=afalg,aes!ni", "bad route spec at 16: bad character '!' in target \"aes!ni\"");
	/* a truncated error buffer stays a C string and the parse still fails */
	struct ct_route_table t;
	char small[8];
	assert_int_equal(ct_route_parse("x=bad", &t, small, sizeof(small)), -1);
	assert_int_equal(strlen(small), sizeof(small) - 1);
	assert_int_equal(ct_route_parse("x=bad", &t, NULL, 0), -1);
}

static void test_glob(void **state)
{
	(void)state;
	assert_true(ct_route_glob_match("aes-*-cbc", "aes-128-cbc"));
	assert_true(ct_route_glob_match("aes-*-cbc", "AES-256-CBC"));
	assert_false(ct_route_glob_match("aes-*-cbc", "aes-128-cbc-hmac-sha1"));
	assert_true(ct_route_glob_match("aes-*-cbc*", "aes-128-cbc-hmac-sha1"));
	assert_true(ct_route_glob_match("*", ""));
	assert_true(ct_route_glob_match("*", "chacha20"));
	assert_false(ct_route_glob_match("", "x"));
	assert_true(ct_route_glob_match("", ""));
	assert_true(ct_route_glob_match("aes-1?8-*", "aes-128-gcm"));
	assert_false(ct_route_glob_match("aes-1?8-*", "aes-256-gcm"));
	assert_false(ct_route_glob_match("aes-\?\?\?-ctr", "aes-12-ctr"));
	assert_true(ct_route_glob_match("*-*-*", "aes-128-xts"));
	assert_true(ct_route_glob_match("a**b", "ab"));
	assert_true(ct_route_glob_match("*cb*c", "aes-cbc-cbc"));
	assert_false(ct_route_glob_match("aes-*", "aes"));
	assert_true(ct_route_glob_match("aes*", "aes"));
}

static void test_lookup(void **state)
{
	(void)state;
	struct ct_route_table t = parse_ok("aes-*-cbc=afalg>=4096,cpu,aes-*-gcm:dec=native,aes-*=cpu");
	/* thresholds on both sides */
	assert_int_equal(ct_route_lookup(&t, "aes-128-cbc", CT_DIR_ENCRYPT, 4095), CT_ROUTE_AESNI);
	assert_int_equal(ct_route_lookup(&t, "aes-128-cbc", CT_DIR_ENCRYPT, 4096), CT_ROUTE_AFALG);
	assert_int_equal(ct_route_lookup(&t, "AES-256-CBC", CT_DIR_DECRYPT, 1 << 20), CT_ROUTE_AFALG);
	assert_int_equal(ct_route_lookup(&t, "aes-128-cbc", CT_DIR_ENCRYPT, 0), CT_ROUTE_AESNI);
	/* direction */
	assert_int_equal(ct_route_lookup(&t, "aes-128-gcm", CT_DIR_DECRYPT, 16), CT_ROUTE_NATIVE);
	assert_int_equal(ct_route_lookup(&t, "aes-128-gcm", CT_DIR_ENCRYPT, 16), CT_ROUTE_AESNI);
	assert_int_equal(ct_route_lookup(&t, "aes-128-gcm", CT_DIR_UNKNOWN, 16), CT_ROUTE_AESNI);
	/* no match -> native */
	assert_int_equal(ct_route_lookup(&t, "chacha20", CT_DIR_ENCRYPT, 16), CT_ROUTE_NATIVE);
	assert_int_equal(ct_route_lookup(NULL, "aes-128-cbc", CT_DIR_ENCRYPT, 16), CT_ROUTE_NATIVE);
	assert_int_equal(ct_route_lookup(&t, NULL, CT_DIR_ENCRYPT, 16), CT_ROUTE_NATIVE);

	/* size unknown: first name/dir match decides, flagged when it has a condition */
	unsigned flags = 99;
	assert_int_equal(ct_route_lookup_ex(&t, "aes-128-cbc", CT_DIR_ENCRYPT, CT_ROUTE_SIZE_UNKNOWN, &flags),
			 CT_ROUTE_AFALG);
	assert_int_equal(flags, CT_ROUTE_F_MATCHED | CT_ROUTE_F_SIZE_DEPENDENT);
	assert_int_equal(ct_route_lookup_ex(&t, "aes-128-ctr", CT_DIR_ENCRYPT, CT_ROUTE_SIZE_UNKNOWN, &flags),
			 CT_ROUTE_AESNI);
	assert_int_equal(flags, CT_ROUTE_F_MATCHED);
	assert_int_equal(ct_route_lookup_ex(&t, "des-cbc", CT_DIR_ENCRYPT, CT_ROUTE_SIZE_UNKNOWN, &flags),
			 CT_ROUTE_NATIVE);
	assert_int_equal(flags, 0);

	/* "<" on both sides */
	struct ct_route_table lt = parse_ok("*=cpu<64");
	assert_int_equal(ct_route_lookup(&lt, "aes-128-ecb", CT_DIR_ENCRYPT, 63), CT_ROUTE_AESNI);
	assert_int_equal(ct_route_lookup(&lt, "aes-128-ecb", CT_DIR_ENCRYPT, 64), CT_ROUTE_NATIVE);
}

static void test_format_roundtrip(void **state)
{
	(void)state;
	struct ct_route_table t = parse_ok("aes-*-cbc:dec=afalg>=4k,cpu,AES-*=cryptodev<16");
	char buf[256];
	size_t n = ct_route_format(&t, buf, sizeof(buf));
	assert_string_equal(buf, "aes-*-cbc:dec=afalg>=4096,aes-*-cbc:dec=" CPU_NAME ",aes-*=cryptodev<16");
	assert_int_equal(n, strlen(buf));
	struct ct_route_table again = parse_ok(buf);
	assert_memory_equal(&again, &t, sizeof(t));
	char tiny[10];
	assert_int_equal(ct_route_format(&t, tiny, sizeof(tiny)), n);
	assert_true(strlen(tiny) < sizeof(tiny));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_full_rule),
		cmocka_unit_test(test_targets_and_dirs),
		cmocka_unit_test(test_bare_target_continues),
		cmocka_unit_test(test_sizes),
		cmocka_unit_test(test_whitespace),
		cmocka_unit_test(test_max_rules),
		cmocka_unit_test(test_cpu_target),
		cmocka_unit_test(test_errors),
		cmocka_unit_test(test_glob),
		cmocka_unit_test(test_lookup),
		cmocka_unit_test(test_format_roundtrip),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
