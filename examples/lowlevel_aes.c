/* SPDX-License-Identifier: MIT */
/*
 * lowlevel_aes.c - a program that uses OpenSSL's deprecated low-level AES_* API the way old code
 * does (block, ECB, CBC, CFB-128/8/1, OFB, IGE and bi-IGE, key wrap, and CTR built from
 * AES_encrypt with CRYPTO_ctr128_encrypt),
 * with fixed, known numbers of calls and bytes. It prints what a tracer must see as lines
 *   expect api=aes cipher=<name> dir=<encrypt|decrypt> calls=<n> bytes=<n>
 * and checks a FIPS-197 known answer so that the work is real. Exit 0 on success.
 */
#define OPENSSL_SUPPRESS_DEPRECATED /* the whole point is the deprecated API */

#include <openssl/aes.h>
#include <openssl/modes.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

enum {
	BLOCK_CALLS = 100,
	DECRYPT_CALLS = 50,
	ECB_CALLS = 40,
	CBC_ENC_CALLS = 30,
	CBC_ENC_LEN = 4096,
	CBC_DEC_CALLS = 20,
	CBC_DEC_LEN = 1024,
	CFB_CALLS = 10,
	CFB_LEN = 100,
	OFB_CALLS = 12,
	OFB_LEN = 333,
	CTR_CALLS = 5,
	CTR_LEN = 1000,
	CFB8_CALLS = 7,
	CFB8_LEN = 77,
	CFB1_CALLS = 3,
	CFB1_BITS = 100 /* AES_cfb1_encrypt counts bits: 13 bytes */,
	IGE_CALLS = 9,
	IGE_LEN = 512,
	BIIGE_CALLS = 4,
	BIIGE_LEN = 256,
	WRAP_CALLS = 6,
	WRAP_LEN = 32
};

static uint8_t buf_in[8192], buf_out[8192];

static void expect(const char *cipher, const char *dir, unsigned long calls, unsigned long bytes)
{
	printf("expect api=aes cipher=%s dir=%s calls=%lu bytes=%lu\n", cipher, dir, calls, bytes);
}

/* FIPS-197 appendix C.1: proves the calls really reach AES. */
static int known_answer(void)
{
	static const uint8_t key[16] = { 0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
					 0x08, 0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f };
	static const uint8_t pt[16] = { 0x00, 0x11, 0x22, 0x33, 0x44, 0x55, 0x66, 0x77,
					0x88, 0x99, 0xaa, 0xbb, 0xcc, 0xdd, 0xee, 0xff };
	static const uint8_t ct[16] = { 0x69, 0xc4, 0xe0, 0xd8, 0x6a, 0x7b, 0x04, 0x30,
					0xd8, 0xcd, 0xb7, 0x80, 0x70, 0xb4, 0xc5, 0x5a };
	AES_KEY ek;
	uint8_t out[16];

	AES_set_encrypt_key(key, 128, &ek);
	AES_encrypt(pt, out, &ek);
	return memcmp(out, ct, 16) == 0;
}

int main(void)
{
	static const uint8_t key[32] = "0123456789abcdef0123456789abcdef";
	AES_KEY enc128, dec128, enc256, dec256;
	uint8_t iv[AES_BLOCK_SIZE], ecount[AES_BLOCK_SIZE];
	unsigned int ctr_num;
	int num;

	if (AES_set_encrypt_key(key, 128, &enc128) || AES_set_decrypt_key(key, 128, &dec128) ||
	    AES_set_encrypt_key(key, 256, &enc256) || AES_set_decrypt_key(key, 256, &dec256)) {
		fprintf(stderr, "lowlevel_aes: key setup failed\n");
		return 1;
	}
	memset(buf_in, 0x5a, sizeof(buf_in));

	for (int i = 0; i < BLOCK_CALLS; i++)
		AES_encrypt(buf_in, buf_out, &enc128);
	for (int i = 0; i < DECRYPT_CALLS; i++)
		AES_decrypt(buf_in, buf_out, &dec128);
	for (int i = 0; i < ECB_CALLS; i++)
		AES_ecb_encrypt(buf_in, buf_out, &enc256, AES_ENCRYPT);
	memset(iv, 0, sizeof(iv));
	for (int i = 0; i < CBC_ENC_CALLS; i++)
		AES_cbc_encrypt(buf_in, buf_out, CBC_ENC_LEN, &enc256, iv, AES_ENCRYPT);
	for (int i = 0; i < CBC_DEC_CALLS; i++)
		AES_cbc_encrypt(buf_in, buf_out, CBC_DEC_LEN, &dec256, iv, AES_DECRYPT);
	num = 0;
	for (int i = 0; i < CFB_CALLS; i++)
		AES_cfb128_encrypt(buf_in, buf_out, CFB_LEN, &enc128, iv, &num, AES_ENCRYPT);
	num = 0;
	for (int i = 0; i < OFB_CALLS; i++)
		AES_ofb128_encrypt(buf_in, buf_out, OFB_LEN, &enc128, iv, &num);
	num = 0;
	for (int i = 0; i < CFB8_CALLS; i++)
		AES_cfb8_encrypt(buf_in, buf_out, CFB8_LEN, &enc128, iv, &num, AES_ENCRYPT);
	num = 0;
	for (int i = 0; i < CFB1_CALLS; i++)
		AES_cfb1_encrypt(buf_in, buf_out, CFB1_BITS, &enc128, iv, &num, AES_DECRYPT);
	/* IGE takes two blocks of IV; bi-IGE two keys and four blocks */
	uint8_t ige_iv[4 * AES_BLOCK_SIZE] = { 0 };
	for (int i = 0; i < IGE_CALLS; i++)
		AES_ige_encrypt(buf_in, buf_out, IGE_LEN, &enc256, ige_iv, AES_ENCRYPT);
	for (int i = 0; i < BIIGE_CALLS; i++)
		AES_bi_ige_encrypt(buf_in, buf_out, BIIGE_LEN, &enc128, &enc128, ige_iv, AES_ENCRYPT);
	/* RFC 3394 key wrap, and back: the unwrapped key must be the one wrapped */
	uint8_t wrapped[WRAP_LEN + 8], unwrapped[WRAP_LEN];
	for (int i = 0; i < WRAP_CALLS; i++) {
		if (AES_wrap_key(&enc256, NULL, wrapped, buf_in, WRAP_LEN) != WRAP_LEN + 8 ||
		    AES_unwrap_key(&dec256, NULL, unwrapped, wrapped, WRAP_LEN + 8) != WRAP_LEN ||
		    memcmp(unwrapped, buf_in, WRAP_LEN)) {
			fprintf(stderr, "lowlevel_aes: key wrap round trip failed\n");
			return 1;
		}
	}
	/* CTR the 1.1+ way: the mode code calls AES_encrypt once per 16-byte block (a partial
	 * last block included), so each call below is ceil(CTR_LEN / 16) block calls. */
	for (int i = 0; i < CTR_CALLS; i++) {
		memset(iv, 0, sizeof(iv));
		ctr_num = 0;
		CRYPTO_ctr128_encrypt(buf_in, buf_out, CTR_LEN, &enc128, iv, ecount, &ctr_num,
				      (block128_f)AES_encrypt);
	}
	if (!known_answer()) {
		fprintf(stderr, "lowlevel_aes: AES-128 known answer mismatch\n");
		return 1;
	}

	unsigned long ctr_blocks = (unsigned long)CTR_CALLS * ((CTR_LEN + 15) / 16);

	/* AES_encrypt and AES_ecb_encrypt both do one ECB block; the known answer adds one. */
	expect("aes-128-ecb", "encrypt", BLOCK_CALLS + ctr_blocks + 1, 16ul * (BLOCK_CALLS + ctr_blocks + 1));
	expect("aes-128-ecb", "decrypt", DECRYPT_CALLS, 16ul * DECRYPT_CALLS);
	expect("aes-256-ecb", "encrypt", ECB_CALLS, 16ul * ECB_CALLS);
	expect("aes-256-cbc", "encrypt", CBC_ENC_CALLS, (unsigned long)CBC_ENC_CALLS * CBC_ENC_LEN);
	expect("aes-256-cbc", "decrypt", CBC_DEC_CALLS, (unsigned long)CBC_DEC_CALLS * CBC_DEC_LEN);
	expect("aes-128-cfb", "encrypt", CFB_CALLS, (unsigned long)CFB_CALLS * CFB_LEN);
	expect("aes-128-ofb", "encrypt", OFB_CALLS, (unsigned long)OFB_CALLS * OFB_LEN);
	expect("aes-128-cfb8", "encrypt", CFB8_CALLS, (unsigned long)CFB8_CALLS * CFB8_LEN);
	expect("aes-128-cfb1", "decrypt", CFB1_CALLS, (unsigned long)CFB1_CALLS * ((CFB1_BITS + 7) / 8));
	expect("aes-256-ige", "encrypt", IGE_CALLS, (unsigned long)IGE_CALLS * IGE_LEN);
	expect("aes-128-biige", "encrypt", BIIGE_CALLS, (unsigned long)BIIGE_CALLS * BIIGE_LEN);
	expect("aes-256-wrap", "encrypt", WRAP_CALLS, (unsigned long)WRAP_CALLS * WRAP_LEN);
	expect("aes-256-wrap", "decrypt", WRAP_CALLS, (unsigned long)WRAP_CALLS * (WRAP_LEN + 8));
	return 0;
}
