/* SPDX-License-Identifier: MIT */
/*
 * test_ktls_decode.c - kTLS set-up decoders with hand-built tls12_crypto_info_* structs: version
 * and cipher named, the kernel's struct length checked, and the key, IV, salt and record
 * sequence never read (they sit on a page that faults when touched).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>
#include <linux/tls.h>
#include <netinet/tcp.h>

#include "kernel_decode.h"

static void test_constants(void **state)
{
	(void)state;
	/* Our constants and lengths agree with the kernel's uapi header. */
	assert_int_equal(CT_TLS_TX, TLS_TX);
	assert_int_equal(CT_TLS_RX, TLS_RX);
	assert_int_equal(CT_TLS_TX_ZEROCOPY_RO, TLS_TX_ZEROCOPY_RO);
	assert_int_equal(CT_TLS_RX_EXPECT_NO_PAD, TLS_RX_EXPECT_NO_PAD);
	assert_int_equal(CT_TLS_SET_RECORD_TYPE, TLS_SET_RECORD_TYPE);
	assert_int_equal(CT_TLS_GET_RECORD_TYPE, TLS_GET_RECORD_TYPE);
	assert_int_equal(CT_TCP_ULP, TCP_ULP);
	assert_int_equal(CT_SOL_TLS, 282);
	static const struct {
		uint16_t type;
		size_t len;
	} sizes[] = {
		{ TLS_CIPHER_AES_GCM_128, sizeof(struct tls12_crypto_info_aes_gcm_128) },
		{ TLS_CIPHER_AES_GCM_256, sizeof(struct tls12_crypto_info_aes_gcm_256) },
		{ TLS_CIPHER_AES_CCM_128, sizeof(struct tls12_crypto_info_aes_ccm_128) },
		{ TLS_CIPHER_CHACHA20_POLY1305, sizeof(struct tls12_crypto_info_chacha20_poly1305) },
		{ TLS_CIPHER_SM4_GCM, sizeof(struct tls12_crypto_info_sm4_gcm) },
		{ TLS_CIPHER_SM4_CCM, sizeof(struct tls12_crypto_info_sm4_ccm) },
		{ TLS_CIPHER_ARIA_GCM_128, sizeof(struct tls12_crypto_info_aria_gcm_128) },
		{ TLS_CIPHER_ARIA_GCM_256, sizeof(struct tls12_crypto_info_aria_gcm_256) },
	};
	for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
		struct tls_crypto_info h = { .version = TLS_1_3_VERSION, .cipher_type = sizes[i].type };
		struct ct_ktls_info ki;
		assert_true(ct_ktls_decode_info(&h, sizeof(h), &ki));
		assert_non_null(ki.cipher);
		assert_int_equal(ki.struct_len, sizes[i].len);
	}
	assert_string_equal(ct_ktls_opt_name(TLS_TX), "TLS_TX");
	assert_string_equal(ct_ktls_opt_name(TLS_RX), "TLS_RX");
	assert_null(ct_ktls_opt_name(99));
	assert_null(ct_ktls_opt_name(-1));
	assert_string_equal(ct_ktls_proto_name(TLS_1_2_VERSION), "TLS1.2");
	assert_string_equal(ct_ktls_proto_name(TLS_1_3_VERSION), "TLS1.3");
	assert_null(ct_ktls_proto_name(0x0302));
	assert_string_equal(ct_ktls_record_type_name(21), "alert");
	assert_string_equal(ct_ktls_record_type_name(22), "handshake");
	assert_null(ct_ktls_record_type_name(99));
}

/* A struct whose secret part lies on a PROT_NONE page: reading past the header crashes. */
static void *header_on_page_edge(uint16_t version, uint16_t type, void **map)
{
	long pg = sysconf(_SC_PAGESIZE);
	uint8_t *p = mmap(NULL, (size_t)pg * 2, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(p != MAP_FAILED);
	assert_int_equal(mprotect(p + pg, (size_t)pg, PROT_NONE), 0);
	struct tls_crypto_info h = { .version = version, .cipher_type = type };
	memcpy(p + pg - sizeof(h), &h, sizeof(h));
	*map = p;
	return p + pg - sizeof(h);
}

static void test_decode_reads_header_only(void **state)
{
	(void)state;
	void *map;
	const void *info = header_on_page_edge(TLS_1_3_VERSION, TLS_CIPHER_AES_GCM_256, &map);
	struct ct_ktls_info ki;
	char b[200];
	/* optlen says 56 bytes, the key would be at offset 12: never read */
	assert_true(ct_ktls_decode_info(info, sizeof(struct tls12_crypto_info_aes_gcm_256), &ki));
	assert_string_equal(ki.proto, "TLS1.3");
	assert_string_equal(ki.kname, "AES_GCM_256");
	assert_string_equal(ki.cipher, "aes-256-gcm");
	assert_int_equal(ki.key_bits, 256);
	ct_ktls_fmt_sockopt(b, sizeof(b), TLS_TX, info, sizeof(struct tls12_crypto_info_aes_gcm_256));
	assert_string_equal(b,
			    "level=SOL_TLS optname=TLS_TX version=TLS1.3 cipher=AES_GCM_256 (aes-256-gcm) "
			    "optlen=56");
	munmap(map, (size_t)sysconf(_SC_PAGESIZE) * 2);
}

static void test_format(void **state)
{
	(void)state;
	char b[200];
	struct tls12_crypto_info_aes_gcm_128 g = { .info = { .version = TLS_1_2_VERSION,
							     .cipher_type = TLS_CIPHER_AES_GCM_128 } };
	memset(g.key, 0xAB, sizeof(g.key));
	ct_ktls_fmt_sockopt(b, sizeof(b), TLS_RX, &g, sizeof(g));
	assert_string_equal(b,
			    "level=SOL_TLS optname=TLS_RX version=TLS1.2 cipher=AES_GCM_128 (aes-128-gcm) "
			    "optlen=40");
	/* a wrong length (what the kernel answers EINVAL to) is said */
	ct_ktls_fmt_sockopt(b, sizeof(b), TLS_TX, &g, 56);
	assert_string_equal(b,
			    "level=SOL_TLS optname=TLS_TX version=TLS1.2 cipher=AES_GCM_128 (aes-128-gcm) "
			    "optlen=56 (expected 40)");
	struct tls_crypto_info odd = { .version = 0x0302, .cipher_type = 99 };
	ct_ktls_fmt_sockopt(b, sizeof(b), TLS_TX, &odd, sizeof(odd));
	assert_string_equal(b,
			    "level=SOL_TLS optname=TLS_TX version=0x0302 cipher_type=99 (unknown) optlen=4");
	ct_ktls_fmt_sockopt(b, sizeof(b), TLS_TX, &odd, 2);
	assert_string_equal(b, "level=SOL_TLS optname=TLS_TX crypto_info=short");
	ct_ktls_fmt_sockopt(b, sizeof(b), TLS_TX, NULL, 40);
	assert_string_equal(b, "level=SOL_TLS optname=TLS_TX crypto_info=NULL");
	int one = 1;
	ct_ktls_fmt_sockopt(b, sizeof(b), TLS_TX_ZEROCOPY_RO, &one, sizeof(one));
	assert_string_equal(b, "level=SOL_TLS optname=TLS_TX_ZEROCOPY_RO optlen=4");
	ct_ktls_fmt_sockopt(b, sizeof(b), 77, &one, sizeof(one));
	assert_string_equal(b, "level=SOL_TLS optname=77 optlen=4");
	struct ct_ktls_info ki;
	assert_false(ct_ktls_decode_info(NULL, 40, &ki));
	/* truncation is silent and terminated */
	ct_ktls_fmt_sockopt(b, 10, TLS_RX, &g, sizeof(g));
	assert_string_equal(b, "level=SOL");
}

static void test_ulp(void **state)
{
	(void)state;
	char b[100];
	ct_ktls_fmt_ulp(b, sizeof(b), "tls", 4);
	assert_string_equal(b, "level=SOL_TCP optname=TCP_ULP ulp=tls");
	ct_ktls_fmt_ulp(b, sizeof(b), "tls", 3); /* no NUL within optlen: never read past it */
	assert_string_equal(b, "level=SOL_TCP optname=TCP_ULP ulp=tls");
	ct_ktls_fmt_ulp(b, sizeof(b), "tlsXYZ", 3);
	assert_string_equal(b, "level=SOL_TCP optname=TCP_ULP ulp=tls");
	ct_ktls_fmt_ulp(b, sizeof(b), "", 1);
	assert_string_equal(b, "level=SOL_TCP optname=TCP_ULP ulp=\"\"");
	ct_ktls_fmt_ulp(b, sizeof(b), NULL, 4);
	assert_string_equal(b, "level=SOL_TCP optname=TCP_ULP ulp=NULL");
	ct_ktls_fmt_ulp(b, sizeof(b), "a-very-long-ulp-name-indeed", 27);
	assert_string_equal(b, "level=SOL_TCP optname=TCP_ULP ulp=a-very-long-ulp");
}

static void test_record_type(void **state)
{
	(void)state;
	union {
		char buf[CMSG_SPACE(1)];
		struct cmsghdr align;
	} u;
	memset(&u, 0, sizeof(u));
	struct msghdr msg = { .msg_control = u.buf, .msg_controllen = sizeof(u.buf) };
	struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
	c->cmsg_level = SOL_TLS;
	c->cmsg_type = TLS_SET_RECORD_TYPE;
	c->cmsg_len = CMSG_LEN(1);
	*CMSG_DATA(c) = 21;
	uint8_t type = 0;
	assert_true(ct_ktls_record_type(&msg, &type));
	assert_int_equal(type, 21);
	c->cmsg_level = SOL_SOCKET;
	assert_false(ct_ktls_record_type(&msg, &type));
	c->cmsg_level = SOL_TLS;
	c->cmsg_len = sizeof(u.buf) + 8; /* runs past msg_controllen: not read */
	assert_false(ct_ktls_record_type(&msg, &type));
	struct msghdr none = { 0 };
	assert_false(ct_ktls_record_type(&none, &type));
	assert_false(ct_ktls_record_type(NULL, &type));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_constants),   cmocka_unit_test(test_decode_reads_header_only),
		cmocka_unit_test(test_format),      cmocka_unit_test(test_ulp),
		cmocka_unit_test(test_record_type),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
