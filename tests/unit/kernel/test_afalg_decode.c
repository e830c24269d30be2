/* SPDX-License-Identifier: MIT */
/*
 * test_afalg_decode.c - AF_ALG decoders with hand-built sockaddr_alg, socket options and control
 * messages: names, lengths only (never key or IV bytes), short addrlen never over-read.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cmocka.h>
#include <linux/if_alg.h>

#include "kernel_decode.h"

static void test_names(void **state)
{
	(void)state;
	/* Our constants agree with the kernel's uapi header. */
	assert_int_equal(CT_ALG_SET_KEY, ALG_SET_KEY);
	assert_int_equal(CT_ALG_SET_IV, ALG_SET_IV);
	assert_int_equal(CT_ALG_SET_OP, ALG_SET_OP);
	assert_int_equal(CT_ALG_SET_AEAD_ASSOCLEN, ALG_SET_AEAD_ASSOCLEN);
	assert_int_equal(CT_ALG_SET_AEAD_AUTHSIZE, ALG_SET_AEAD_AUTHSIZE);
	assert_int_equal(CT_ALG_OP_ENCRYPT, ALG_OP_ENCRYPT);
	assert_int_equal(CT_ALG_OP_DECRYPT, ALG_OP_DECRYPT);
	assert_string_equal(ct_alg_opt_name(ALG_SET_KEY), "ALG_SET_KEY");
	assert_string_equal(ct_alg_opt_name(ALG_SET_AEAD_AUTHSIZE), "ALG_SET_AEAD_AUTHSIZE");
	assert_string_equal(ct_alg_opt_name(6), "ALG_SET_DRBG_ENTROPY");
	assert_string_equal(ct_alg_opt_name(7), "ALG_SET_KEY_BY_KEY_SERIAL");
	assert_null(ct_alg_opt_name(99));
	assert_string_equal(ct_alg_op_name(ALG_OP_ENCRYPT), "encrypt");
	assert_string_equal(ct_alg_op_name(ALG_OP_DECRYPT), "decrypt");
	assert_null(ct_alg_op_name(5));
	assert_true(ct_alg_type_known("skcipher"));
	assert_true(ct_alg_type_known("aead"));
	assert_true(ct_alg_type_known("hash"));
	assert_true(ct_alg_type_known("rng"));
	assert_false(ct_alg_type_known("bogus"));
	char eb[16];
	assert_string_equal(ct_errno_name(EAFNOSUPPORT, eb, sizeof(eb)), "EAFNOSUPPORT"); /* 124 on MIPS */
	assert_string_equal(ct_errno_name(ENOENT, eb, sizeof(eb)), "ENOENT");
	assert_string_equal(ct_errno_name(100000, eb, sizeof(eb)), "100000");
}

static void test_addr(void **state)
{
	char b[200];
	struct sockaddr_alg sa = { .salg_family = AF_ALG, .salg_type = "skcipher", .salg_name = "cbc(aes)" };
	struct ct_alg_addr a;
	(void)state;
	assert_true(ct_alg_decode_addr(&sa, sizeof(sa), &a));
	assert_string_equal(a.type, "skcipher");
	assert_string_equal(a.name, "cbc(aes)");
	ct_alg_fmt_addr(b, sizeof(b), &sa, sizeof(sa));
	assert_string_equal(b, "family=AF_ALG type=skcipher name=cbc(aes)");
	sa.salg_feat = 1;
	sa.salg_mask = 0x20;
	ct_alg_fmt_addr(b, sizeof(b), &sa, sizeof(sa));
	assert_string_equal(b, "family=AF_ALG type=skcipher name=cbc(aes) feat=0x1 mask=0x20");
	ct_alg_fmt_addr(b, sizeof(b), NULL, 88);
	assert_string_equal(b, "addr=NULL addrlen=88");
	ct_alg_fmt_addr(b, sizeof(b), &sa, 1);
	assert_string_equal(b, "addrlen=1 short");
}

/* A sockaddr_alg placed at the very end of a readable page, the next page inaccessible: a
 * decoder that reads past addrlen crashes the test instead of passing by luck. */
static void test_short_addrlen_not_overread(void **state)
{
	(void)state;
	long pg = sysconf(_SC_PAGESIZE);
	uint8_t *map = mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(map != MAP_FAILED);
	assert_int_equal(mprotect(map + pg, (size_t)pg, PROT_NONE), 0);
	char b[200];
	struct sockaddr_alg sa = { .salg_family = AF_ALG, .salg_type = "skcipher", .salg_name = "cbc(aes)" };

	for (size_t len = 0; len <= sizeof(sa); len++) {
		uint8_t *at = map + pg - len;
		memcpy(at, &sa, len);
		struct ct_alg_addr a;
		bool ok = ct_alg_decode_addr(at, len, &a);
		assert_int_equal(ok, len >= 2);
		ct_alg_fmt_addr(b, sizeof(b), at, len);
	}
	/* type cut after 5 bytes of "skcipher" (addrlen 7) */
	memcpy(map + pg - 7, &sa, 7);
	ct_alg_fmt_addr(b, sizeof(b), map + pg - 7, 7);
	assert_string_equal(b, "family=AF_ALG type=skcip addrlen=7 short");
	/* the name cut after "cbc(" */
	memcpy(map + pg - 28, &sa, 28);
	ct_alg_fmt_addr(b, sizeof(b), map + pg - 28, 28);
	assert_string_equal(b, "family=AF_ALG type=skcipher name=cbc(");
	/* a name without terminator right up to the end */
	memset(map + pg - 24 - 40, 'a', 24 + 40);
	memcpy(map + pg - 24 - 40, &sa, 24);
	ct_alg_fmt_addr(b, sizeof(b), map + pg - 64, 64);
	assert_non_null(strstr(b, "name=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"));
	munmap(map, (size_t)pg * 2);
}

static void test_sockopt(void **state)
{
	char b[120];
	uint8_t key[32];
	(void)state;
	memset(key, 0x41, sizeof(key));
	ct_alg_fmt_sockopt(b, sizeof(b), SOL_ALG, ALG_SET_KEY, key, 32);
	assert_string_equal(b, "opt=ALG_SET_KEY keylen=32");
	assert_null(strstr(b, "AAAA"));
	ct_alg_fmt_sockopt(b, sizeof(b), SOL_ALG, ALG_SET_AEAD_AUTHSIZE, NULL, 16);
	assert_string_equal(b, "opt=ALG_SET_AEAD_AUTHSIZE authsize=16");
	ct_alg_fmt_sockopt(b, sizeof(b), SOL_ALG, 6, key, 48);
	assert_string_equal(b, "opt=ALG_SET_DRBG_ENTROPY entropylen=48");
	int32_t serial = 12345;
	ct_alg_fmt_sockopt(b, sizeof(b), SOL_ALG, 7, &serial, sizeof(serial));
	assert_string_equal(b, "opt=ALG_SET_KEY_BY_KEY_SERIAL key_serial=12345");
	ct_alg_fmt_sockopt(b, sizeof(b), SOL_ALG, 7, NULL, 2);
	assert_string_equal(b, "opt=ALG_SET_KEY_BY_KEY_SERIAL optlen=2");
	ct_alg_fmt_sockopt(b, sizeof(b), SOL_ALG, 42, key, 3);
	assert_string_equal(b, "opt=42 optlen=3");
	ct_alg_fmt_sockopt(b, sizeof(b), 1 /* SOL_SOCKET */, 2, key, 4);
	assert_string_equal(b, "level=1 opt=2 optlen=4");
}

static void test_cmsgs(void **state)
{
	(void)state;
	union {
		char buf[CMSG_SPACE(4) + CMSG_SPACE(20) + CMSG_SPACE(4) + CMSG_SPACE(4)];
		struct cmsghdr align;
	} u;
	memset(&u, 0, sizeof(u));
	struct msghdr msg = { .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_ALG;
	c->cmsg_type = ALG_SET_OP;
	c->cmsg_len = CMSG_LEN(4);
	*(uint32_t *)CMSG_DATA(c) = ALG_OP_ENCRYPT;
	c = CMSG_NXTHDR(&msg, c);
	c->cmsg_level = SOL_ALG;
	c->cmsg_type = ALG_SET_IV;
	c->cmsg_len = CMSG_LEN(20);
	struct af_alg_iv *iv = (void *)CMSG_DATA(c);
	iv->ivlen = 16;
	memset(iv->iv, 0x42, 16);
	c = CMSG_NXTHDR(&msg, c);
	c->cmsg_level = SOL_ALG;
	c->cmsg_type = ALG_SET_AEAD_ASSOCLEN;
	c->cmsg_len = CMSG_LEN(4);
	*(uint32_t *)CMSG_DATA(c) = 13;
	c = CMSG_NXTHDR(&msg, c);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = 1;
	c->cmsg_len = CMSG_LEN(4);

	struct ct_alg_cmsgs got;
	char b[120];
	ct_alg_parse_cmsgs(&msg, &got);
	assert_true(got.has_op && got.has_iv && got.has_assoclen);
	assert_int_equal(got.op, ALG_OP_ENCRYPT);
	assert_int_equal(got.ivlen, 16);
	assert_int_equal(got.assoclen, 13);
	assert_int_equal(got.unknown, 1);
	ct_alg_fmt_cmsgs(b, sizeof(b), &got);
	assert_string_equal(b, "op=encrypt ivlen=16 assoclen=13 other_cmsgs=1");
	assert_null(strstr(b, "42"));

	/* Only the first cmsg fits in the declared control length. */
	msg.msg_controllen = CMSG_SPACE(4) + 8;
	ct_alg_parse_cmsgs(&msg, &got);
	assert_true(got.has_op);
	assert_false(got.has_iv);
	/* A cmsg_len running past the buffer stops the walk. */
	msg.msg_controllen = sizeof(u.buf);
	c = CMSG_FIRSTHDR(&msg);
	c->cmsg_len = 4096;
	ct_alg_parse_cmsgs(&msg, &got);
	assert_false(got.has_op);
	/* No control at all. */
	struct msghdr none = { 0 };
	ct_alg_parse_cmsgs(&none, &got);
	ct_alg_fmt_cmsgs(b, sizeof(b), &got);
	assert_string_equal(b, "");
	ct_alg_parse_cmsgs(NULL, &got);
	assert_false(got.has_op);
}

static void test_openssl_names(void **state)
{
	char b[32];
	(void)state;
	assert_true(ct_alg_openssl_cipher("cbc(aes)", 16, b, sizeof(b)));
	assert_string_equal(b, "aes-128-cbc");
	assert_true(ct_alg_openssl_cipher("cbc(aes)", 32, b, sizeof(b)));
	assert_string_equal(b, "aes-256-cbc");
	assert_true(ct_alg_openssl_cipher("ctr(aes)", 24, b, sizeof(b)));
	assert_string_equal(b, "aes-192-ctr");
	assert_true(ct_alg_openssl_cipher("ecb(aes)", 16, b, sizeof(b)));
	assert_string_equal(b, "aes-128-ecb");
	assert_true(ct_alg_openssl_cipher("xts(aes)", 32, b, sizeof(b)));
	assert_string_equal(b, "aes-128-xts");
	assert_true(ct_alg_openssl_cipher("xts(aes)", 64, b, sizeof(b)));
	assert_string_equal(b, "aes-256-xts");
	assert_true(ct_alg_openssl_cipher("gcm(aes)", 16, b, sizeof(b)));
	assert_string_equal(b, "aes-128-gcm");
	assert_true(ct_alg_openssl_cipher("rfc4106(gcm(aes))", 20, b, sizeof(b)));
	assert_string_equal(b, "aes-128-gcm");
	assert_false(ct_alg_openssl_cipher("cbc(aes)", 0, b, sizeof(b)));
	assert_false(ct_alg_openssl_cipher("cbc(aes)", 15, b, sizeof(b)));
	assert_false(ct_alg_openssl_cipher("sha256", 0, b, sizeof(b)));
	assert_string_equal(b, "");
	assert_false(ct_alg_openssl_cipher(NULL, 16, b, sizeof(b)));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_names),
		cmocka_unit_test(test_addr),
		cmocka_unit_test(test_short_addrlen_not_overread),
		cmocka_unit_test(test_sockopt),
		cmocka_unit_test(test_cmsgs),
		cmocka_unit_test(test_openssl_names),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
