/* SPDX-License-Identifier: MIT */
/* test_classify.c - the naming of an EVP context's path (classify.c) from hand-made facts: every
 * kind of implementation, the cipher name, key bits, direction, routes and requested engines. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "classify.h"

/* The result points into itself (key.impl -> impl...), so it is filled in place, never copied. */
static struct ct_evp_class c;

static void classify(struct ct_evp_facts f)
{
	memset(&c, 0x5a, sizeof(c)); /* garbage in every field the classifier must set */
	ct_evp_classify(&f, &c);
}

static void test_provider(void **state)
{
	(void)state;
	classify((struct ct_evp_facts){ .has_provider = true,
					.provider_name = "default",
					.cipher_name = "AES-128-CBC",
					.key_len = 16,
					.dir = CT_DIR_ENCRYPT });
	assert_string_equal(c.key.impl, "provider:default");
	assert_string_equal(c.key.cipher, "aes-128-cbc");
	assert_int_equal(c.key.api, CT_API_EVP);
	assert_int_equal(c.key.key_bits, 128);
	assert_int_equal(c.key.dir, CT_DIR_ENCRYPT);
	assert_int_equal(c.key.entry, CT_ENTRY_UNKNOWN);
	assert_int_equal(c.key.route, CT_ROUTE_NONE);
	assert_int_equal(c.key.flags, 0);
	assert_null(c.key.requested);
	classify((struct ct_evp_facts){
		.has_provider = true, .cipher_name = "AES-256-GCM", .key_len = 32, .dir = CT_DIR_DECRYPT });
	assert_string_equal(c.key.impl, "provider:?"); /* a provider without a name */
	assert_int_equal(c.key.key_bits, 256);
	assert_int_equal(c.key.dir, CT_DIR_DECRYPT);
}

static void test_engine_wins(void **state)
{
	(void)state;
	/* an engine named at init serves the ctx even when the cipher has a provider */
	classify((struct ct_evp_facts){ .has_engine = true,
					.engine_id = "afalg",
					.has_provider = true,
					.provider_name = "default",
					.route_aesni = true,
					.cipher_name = "AES-128-CBC",
					.key_len = 16 });
	assert_string_equal(c.key.impl, "engine:afalg");
	assert_int_equal(c.key.route, CT_ROUTE_NONE);
	classify((struct ct_evp_facts){ .has_engine = true, .cipher_name = "aes-128-cbc" });
	assert_string_equal(c.key.impl, "engine:?");
	assert_int_equal(c.key.key_bits, 0); /* unknown key length */
}

static void test_routes(void **state)
{
	(void)state;
	classify((struct ct_evp_facts){ .has_provider = true,
					.provider_name = "cryptrace",
					.route_aesni = true,
					.cipher_name = "AES-128-CTR",
					.key_len = 16 });
	/* The CPU's own name for its instructions: "route:armv8-ce" on aarch64, never "aesni" there. */
#if defined(__x86_64__) || defined(__i386__)
	assert_string_equal(c.key.impl, "route:aesni");
#elif defined(__aarch64__)
	assert_string_equal(c.key.impl, "route:armv8-ce");
#else
	assert_string_equal(c.key.impl, "route:cpu");
#endif
	assert_int_equal(c.key.route, CT_ROUTE_AESNI);
	assert_int_equal(c.key.flags, CT_PATH_ROUTED);
	classify((struct ct_evp_facts){ .has_provider = true,
					.provider_name = "cryptrace-kernel",
					.kernel_route = CT_ROUTE_AFALG,
					.kernel_impl = "route:afalg:cbc-aes-aesni",
					.cipher_name = "AES-256-CBC",
					.key_len = 32 });
	assert_string_equal(c.key.impl, "route:afalg:cbc-aes-aesni");
	assert_int_equal(c.key.route, CT_ROUTE_AFALG);
	assert_int_equal(c.key.flags, CT_PATH_ROUTED);
}

static void test_no_provider(void **state)
{
	(void)state;
	/* OpenSSL 1.1: an engine registered as the cipher's default, else libcrypto's own code */
	classify((struct ct_evp_facts){
		.default_engine = "cryptodev", .cipher_name = "aes-128-cbc", .key_len = 16 });
	assert_string_equal(c.key.impl, "engine:cryptodev");
	classify((struct ct_evp_facts){ .cipher_name = "aes-128-cbc", .key_len = 16 });
	assert_string_equal(c.key.impl, "builtin");
	/* BoringSSL: its own code, named with the level the hooks told */
	classify((struct ct_evp_facts){
		.builtin_impl = "boringssl:vpaes", .cipher_name = "aes-128-gcm", .key_len = 16 });
	assert_string_equal(c.key.impl, "boringssl:vpaes");
	/* an engine registered as default still wins over the library's own code */
	classify((struct ct_evp_facts){ .default_engine = "e",
					.builtin_impl = "boringssl:aesni",
					.cipher_name = "aes-128-cbc",
					.key_len = 16 });
	assert_string_equal(c.key.impl, "engine:e");
}

static void test_cipher_names(void **state)
{
	(void)state;
	classify((struct ct_evp_facts){ .has_provider = true, .provider_name = "default" });
	assert_string_equal(c.key.cipher, "unknown");
	char longname[100];
	memset(longname, 'A', sizeof(longname) - 1);
	longname[sizeof(longname) - 1] = 0;
	classify((struct ct_evp_facts){ .has_provider = true, .cipher_name = longname });
	assert_int_equal(strlen(c.key.cipher), sizeof(c.cipher) - 1); /* cut, terminated */
	assert_int_equal(c.key.cipher[0], 'a');
}

static void test_requested_engine(void **state)
{
	(void)state;
	/* -engine afalg failed: the ctx runs in provider default, and the path says what was asked */
	classify((struct ct_evp_facts){ .has_provider = true,
					.provider_name = "default",
					.cipher_name = "AES-128-CBC",
					.key_len = 16,
					.requested_engine = "afalg" });
	assert_non_null(c.key.requested);
	assert_string_equal(c.key.requested, "engine:afalg");
	/* the engine that was asked for serves it: nothing to say */
	classify((struct ct_evp_facts){ .has_engine = true,
					.engine_id = "afalg",
					.requested_engine = "afalg",
					.cipher_name = "aes-128-cbc" });
	assert_null(c.key.requested);
	classify((struct ct_evp_facts){
		.has_provider = true, .provider_name = "default", .requested_engine = "" });
	assert_null(c.key.requested);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_provider),     cmocka_unit_test(test_engine_wins),
		cmocka_unit_test(test_routes),       cmocka_unit_test(test_no_provider),
		cmocka_unit_test(test_cipher_names), cmocka_unit_test(test_requested_engine),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
