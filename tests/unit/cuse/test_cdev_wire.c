/* SPDX-License-Identifier: MIT */
/*
 * test_cdev_wire.c - decoding cryptodev struct images of both ABIs as the CUSE server receives
 * them: 64-bit images made from cryptodev_abi.h's structs, 32-bit ones byte by byte at the i386
 * offsets (so a wrong 32-bit layout cannot agree with itself), and pointers written back.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "cdev_wire.h"

static void put32(uint8_t *img, size_t off, uint32_t v)
{
	memcpy(img + off, &v, sizeof(v));
}
static void put16(uint8_t *img, size_t off, uint16_t v)
{
	memcpy(img + off, &v, sizeof(v));
}

static void test_session(void **state)
{
	struct ct_cdev_session_op s64 = {
		.cipher = CT_CRYPTO_AES_CBC,
		.keylen = 32,
		.key = (uint8_t *)(uintptr_t)0x7fff12345678ull, /* 0x12345678 on 32-bit */
		.mackeylen = 0,
		.mackey = NULL
	};
	uint8_t img[28] = { 0 };
	struct session_req r;

	(void)state;
	cdev_decode_session(&s64, false, &r);
	assert_int_equal(r.cipher, CT_CRYPTO_AES_CBC);
	assert_int_equal(r.keylen, 32);
	assert_true(r.key == (uintptr_t)0x7fff12345678ull);
	assert_true(r.mackey == 0);

	/* i386: cipher 0, mac 4, keylen 8, key 12, mackeylen 16, mackey 20, ses 24. */
	put32(img, 0, CT_CRYPTO_AES_GCM);
	put32(img, 8, 16);
	put32(img, 12, 0xffd01234u);
	put32(img, 16, 20);
	put32(img, 20, 0x08048000u);
	cdev_decode_session(img, true, &r);
	assert_int_equal(r.cipher, CT_CRYPTO_AES_GCM);
	assert_int_equal(r.keylen, 16);
	assert_true(r.key == 0xffd01234u);
	assert_int_equal(r.mackeylen, 20);
	assert_true(r.mackey == 0x08048000u);
	assert_int_equal(CDEV_ABI_SIZE(true, session_op), 28);
	assert_int_equal(CDEV_ABI_OFFSET(true, session_op, ses), 24);
	assert_int_equal(CDEV_ABI_SIZE(false, session_op), sizeof(struct ct_cdev_session_op));
}

static void test_crypt(void **state)
{
	uint8_t src, dst, iv;
	struct ct_cdev_crypt_op c64 = { .ses = 7,
					.op = CT_COP_DECRYPT,
					.flags = CT_COP_FLAG_WRITE_IV,
					.len = 4096,
					.src = &src,
					.dst = &dst,
					.iv = &iv };
	uint8_t img[28] = { 0 };
	struct crypt_req r;

	(void)state;
	cdev_decode_crypt(&c64, false, &r);
	assert_int_equal(r.ses, 7);
	assert_int_equal(r.op, CT_COP_DECRYPT);
	assert_int_equal(r.flags, CT_COP_FLAG_WRITE_IV);
	assert_int_equal(r.len, 4096);
	assert_true(r.src == (uintptr_t)&src && r.dst == (uintptr_t)&dst && r.iv == (uintptr_t)&iv);

	/* i386: ses 0, op 4, flags 6, len 8, src 12, dst 16, mac 20, iv 24. */
	put32(img, 0, 3);
	put16(img, 4, CT_COP_ENCRYPT);
	put16(img, 6, CT_COP_FLAG_WRITE_IV);
	put32(img, 8, 65536);
	put32(img, 12, 0x1000);
	put32(img, 16, 0x2000);
	put32(img, 20, 0x3000);
	put32(img, 24, 0x4000);
	cdev_decode_crypt(img, true, &r);
	assert_int_equal(r.ses, 3);
	assert_int_equal(r.op, CT_COP_ENCRYPT);
	assert_int_equal(r.flags, CT_COP_FLAG_WRITE_IV);
	assert_int_equal(r.len, 65536);
	assert_true(r.src == 0x1000 && r.dst == 0x2000 && r.iv == 0x4000);
}

static void test_auth(void **state)
{
	uint8_t img[44] = { 0 };
	struct auth_req r;

	(void)state;
	/* i386: ses 0, op 4, flags 6, len 8, auth_len 12, auth_src 16, src 20, dst 24, tag 28,
	 * tag_len 32, iv 36, iv_len 40. */
	put32(img, 0, 9);
	put16(img, 4, CT_COP_DECRYPT);
	put32(img, 8, 1016);
	put32(img, 12, 20);
	put32(img, 16, 0xa000);
	put32(img, 20, 0xb000);
	put32(img, 24, 0xc000);
	put32(img, 32, 12);
	put32(img, 36, 0xd000);
	put32(img, 40, 12);
	cdev_decode_auth(img, true, &r);
	assert_int_equal(r.ses, 9);
	assert_int_equal(r.op, CT_COP_DECRYPT);
	assert_int_equal(r.len, 1016);
	assert_int_equal(r.auth_len, 20);
	assert_true(r.auth_src == 0xa000 && r.src == 0xb000 && r.dst == 0xc000 && r.iv == 0xd000);
	assert_int_equal(r.tag_len, 12);
	assert_int_equal(r.iv_len, 12);

	/* The tag pointer goes back in the program's width, at its offset, touching nothing else. */
	uint8_t before[44];
	memcpy(before, img, sizeof(img));
	cdev_put_uptr(img, CDEV_ABI_OFFSET(true, crypt_auth_op, tag), true, 0xc000 + 1016 - 12);
	uint32_t tag;
	memcpy(&tag, img + 28, 4);
	assert_int_equal(tag, 0xc000 + 1016 - 12);
	assert_memory_equal(img, before, 28);
	assert_memory_equal(img + 32, before + 32, 12);

	struct ct_cdev_crypt_auth_op a64 = { .ses = 1, .tag_len = 16 };
	cdev_put_uptr((uint8_t *)&a64, CDEV_ABI_OFFSET(false, crypt_auth_op, tag), false, 0x7fffdeadbe00ull);
	assert_true((uintptr_t)a64.tag == (uintptr_t)0x7fffdeadbe00ull); /* native width */
	assert_int_equal(a64.tag_len, 16);
	assert_int_equal(CDEV_ABI_SIZE(true, crypt_auth_op), 44);
	assert_int_equal(CDEV_ABI_OFFSET(true, crypt_auth_op, tag_len), 32);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_session),
		cmocka_unit_test(test_crypt),
		cmocka_unit_test(test_auth),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
