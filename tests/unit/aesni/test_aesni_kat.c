/* SPDX-License-Identifier: MIT */
/*
 * test_aesni_kat.c - known-answer vectors for the in-process AES backend, on every code path
 * this CPU has: FIPS-197 appendix B/C, SP 800-38A F.1-F.5 (ECB, CBC, CFB128, OFB, CTR at
 * 128/192/256), IEEE 1619 XTS vectors (incl. ciphertext stealing) and the GCM specification's
 * test cases 1-18 (incl. 8- and 60-byte IVs). Exits 77 without the CPU's AES instructions (AES-NI,
 * ARMv8 CE); a level this CPU lacks is a skipped test.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "aesni.h"

static size_t unhex(const char *s, uint8_t *out)
{
	size_t n = 0;
	for (; s[0] && s[1]; s += 2) {
		unsigned v;
		sscanf(s, "%2x", &v);
		out[n++] = (uint8_t)v;
	}
	return n;
}

/* got == want, or the test fails naming the vector and the level, both printed in hex. */
static void check(const char *what, const char *level, const uint8_t *got, const uint8_t *want, size_t n)
{
	if (memcmp(got, want, n) == 0)
		return;
	char hex[2][2 * 64 + 1] = { "", "" };
	for (size_t i = 0; i < n && i < 64; i++) {
		snprintf(hex[0] + 2 * i, 3, "%02x", got[i]);
		snprintf(hex[1] + 2 * i, 3, "%02x", want[i]);
	}
	fail_msg("%s [%s]\n  got  %s\n  want %s", what, level, hex[0], hex[1]);
}

/* The best level this CPU (and CRYPTRACE_AESNI_MAX) allows, read before any test caps it. */
static enum ct_aesni_level best;

/* Caps the backend to the test's level (its state); a level above the best one is skipped. */
static const char *at_level(void **state)
{
	const enum ct_aesni_level want = *(const enum ct_aesni_level *)*state;
	if (want != ct_aesni_base_level() && want > best)
		skip();
	assert_int_equal(ct_aesni_set_max_level(want), want);
	return ct_aesni_level_name(want);
}

/* ---- FIPS-197 ---- */
static const struct {
	const char *key, *pt, *ct;
} fips197[] = {
	{ "2b7e151628aed2a6abf7158809cf4f3c", "3243f6a8885a308d313198a2e0370734",
	  "3925841d02dc09fbdc118597196a0b32" },
	{ "000102030405060708090a0b0c0d0e0f", "00112233445566778899aabbccddeeff",
	  "69c4e0d86a7b0430d8cdb78070b4c55a" },
	{ "000102030405060708090a0b0c0d0e0f1011121314151617", "00112233445566778899aabbccddeeff",
	  "dda97ca4864cdfe06eaf70a0ec0d7191" },
	{ "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f",
	  "00112233445566778899aabbccddeeff", "8ea2b7ca516745bfeafc49904b496089" },
};

/* ---- SP 800-38A appendix F: same four plaintext blocks for every mode ---- */
static const char sp_pt[] =
	"6bc1bee22e409f96e93d7e117393172aae2d8a571e03ac9c9eb76fac45af8e51"
	"30c81c46a35ce411e5fbc1191a0a52eff69f2445df4f9b17ad2b417be66c3710";
static const char *const sp_key[3] = {
	"2b7e151628aed2a6abf7158809cf4f3c",
	"8e73b0f7da0e6452c810f32b809079e562f8ead2522c6b7b",
	"603deb1015ca71be2b73aef0857d77811f352c073b6108d72d9810a30914dff4",
};
static const char sp_iv[] = "000102030405060708090a0b0c0d0e0f";
static const char sp_ctr[] = "f0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";

enum sp_mode { SP_ECB, SP_CBC, SP_CFB, SP_OFB, SP_CTR, SP_NMODES };
static const char *const sp_mode_name[SP_NMODES] = { "ECB", "CBC", "CFB128", "OFB", "CTR" };
static const char *const sp_ct[SP_NMODES][3] = {
	[SP_ECB] = {
		"3ad77bb40d7a3660a89ecaf32466ef97f5d3d58503b9699de785895a96fdbaaf"
		"43b1cd7f598ece23881b00e3ed0306887b0c785e27e8ad3f8223207104725dd4",
		"bd334f1d6e45f25ff712a214571fa5cc974104846d0ad3ad7734ecb3ecee4eef"
		"ef7afd2270e2e60adce0ba2face6444e9a4b41ba738d6c72fb16691603c18e0e",
		"f3eed1bdb5d2a03c064b5a7e3db181f8591ccb10d410ed26dc5ba74a31362870"
		"b6ed21b99ca6f4f9f153e7b1beafed1d23304b7a39f9f3ff067d8d8f9e24ecc7",
	},
	[SP_CBC] = {
		"7649abac8119b246cee98e9b12e9197d5086cb9b507219ee95db113a917678b2"
		"73bed6b8e3c1743b7116e69e222295163ff1caa1681fac09120eca307586e1a7",
		"4f021db243bc633d7178183a9fa071e8b4d9ada9ad7dedf4e5e738763f69145a"
		"571b242012fb7ae07fa9baac3df102e008b0e27988598881d920a9e64f5615cd",
		"f58c4c04d6e5f1ba779eabfb5f7bfbd69cfc4e967edb808d679f777bc6702c7d"
		"39f23369a9d9bacfa530e26304231461b2eb05e2c39be9fcda6c19078c6a9d1b",
	},
	[SP_CFB] = {
		"3b3fd92eb72dad20333449f8e83cfb4ac8a64537a0b3a93fcde3cdad9f1ce58b"
		"26751f67a3cbb140b1808cf187a4f4dfc04b05357c5d1c0eeac4c66f9ff7f2e6",
		"cdc80d6fddf18cab34c25909c99a417467ce7f7f81173621961a2b70171d3d7a"
		"2e1e8a1dd59b88b1c8e60fed1efac4c9c05f9f9ca9834fa042ae8fba584b09ff",
		"dc7e84bfda79164b7ecd8486985d386039ffed143b28b1c832113c6331e5407b"
		"df10132415e54b92a13ed0a8267ae2f975a385741ab9cef82031623d55b1e471",
	},
	[SP_OFB] = {
		"3b3fd92eb72dad20333449f8e83cfb4a7789508d16918f03f53c52dac54ed825"
		"9740051e9c5fecf64344f7a82260edcc304c6528f659c77866a510d9c1d6ae5e",
		"cdc80d6fddf18cab34c25909c99a4174fcc28b8d4c63837c09e81700c1100401"
		"8d9a9aeac0f6596f559c6d4daf59a5f26d9f200857ca6c3e9cac524bd9acc92a",
		"dc7e84bfda79164b7ecd8486985d38604febdc6740d20b3ac88f6ad82a4fb08d"
		"71ab47a086e86eedf39d1c5bba97c4080126141d67f37be8538f5a8be740e484",
	},
	[SP_CTR] = {
		"874d6191b620e3261bef6864990db6ce9806f66b7970fdff8617187bb9fffdff"
		"5ae4df3edbd5d35e5b4f09020db03eab1e031dda2fbe03d1792170a0f3009cee",
		"1abc932417521ca24f2b0459fe7e6e0b090339ec0aa6faefd5ccc2c6f4ce8e94"
		"1e36b26bd1ebc670d1bd1d665620abf74f78a7f6d29809585a97daec58c6b050",
		"601ec313775789a5b7a7f504bbf3d228f443e3ca4d62b59aca84e990cacaf5c5"
		"2b0930daa23de94ce87017ba2d84988ddfc9c58db67aada613c2dd08457941a6",
	},
};

/* Runs one SP 800-38A mode in the given direction, in pieces of 'step' bytes so the num/IV
 * state carried between calls is exercised too. */
static void sp_run(enum sp_mode m, const struct ct_aes_key *k, const uint8_t *in, uint8_t *out, size_t len,
		   size_t step, bool enc)
{
	uint8_t iv[16], ecount[16];
	unsigned num = 0;
	unhex(m == SP_CTR ? sp_ctr : sp_iv, iv);
	for (size_t off = 0; off < len; off += step) {
		const size_t n = len - off < step ? len - off : step;
		switch (m) {
		case SP_ECB:
			(enc ? ct_aes_ecb_encrypt : ct_aes_ecb_decrypt)(k, in + off, out + off, n);
			break;
		case SP_CBC:
			(enc ? ct_aes_cbc_encrypt : ct_aes_cbc_decrypt)(k, iv, in + off, out + off, n);
			break;
		case SP_CFB:
			ct_aes_cfb128(k, iv, &num, in + off, out + off, n, enc);
			break;
		case SP_OFB:
			ct_aes_ofb128(k, iv, &num, in + off, out + off, n);
			break;
		case SP_CTR:
			ct_aes_ctr128(k, iv, ecount, &num, in + off, out + off, n);
			break;
		default:
			break;
		}
	}
}

static void test_block_modes(void **state)
{
	const char *level = at_level(state);
	uint8_t key[32], pt[64], ct[64], out[64], blk[16], want[16];
	char what[96];
	struct ct_aes_key k;

	for (size_t i = 0; i < sizeof(fips197) / sizeof(fips197[0]); i++) {
		const size_t kl = unhex(fips197[i].key, key);
		unhex(fips197[i].pt, pt);
		unhex(fips197[i].ct, want);
		ct_aes_set_key(&k, key, (unsigned)kl * 8);
		ct_aes_encrypt_block(&k, pt, blk);
		snprintf(what, sizeof(what), "FIPS-197 #%zu encrypt", i);
		check(what, level, blk, want, 16);
		ct_aes_decrypt_block(&k, want, blk);
		snprintf(what, sizeof(what), "FIPS-197 #%zu decrypt", i);
		check(what, level, blk, pt, 16);
	}

	unhex(sp_pt, pt);
	for (int m = 0; m < SP_NMODES; m++) {
		for (int ks = 0; ks < 3; ks++) {
			const size_t kl = unhex(sp_key[ks], key);
			unhex(sp_ct[m][ks], ct);
			ct_aes_set_key(&k, key, (unsigned)kl * 8);
			/* Whole blocks for ECB/CBC; odd pieces for the stream modes. */
			const size_t steps[] = { 64, 16, (m == SP_ECB || m == SP_CBC) ? 32 : 7 };
			for (size_t s = 0; s < 3; s++) {
				sp_run(m, &k, pt, out, 64, steps[s], true);
				snprintf(what, sizeof(what), "SP800-38A %s-%zu encrypt step %zu",
					 sp_mode_name[m], kl * 8, steps[s]);
				check(what, level, out, ct, 64);
				sp_run(m, &k, ct, out, 64, steps[s], false);
				snprintf(what, sizeof(what), "SP800-38A %s-%zu decrypt step %zu",
					 sp_mode_name[m], kl * 8, steps[s]);
				check(what, level, out, pt, 64);
				/* in place */
				memcpy(out, pt, 64);
				sp_run(m, &k, out, out, 64, steps[s], true);
				snprintf(what, sizeof(what), "SP800-38A %s-%zu in-place step %zu",
					 sp_mode_name[m], kl * 8, steps[s]);
				check(what, level, out, ct, 64);
			}
		}
	}
	ct_aes_key_wipe(&k);
}

/* ---- IEEE 1619-2007 annex B (key1 encrypts data, key2 the tweak) ---- */
static const struct {
	const char *key1, *key2, *tweak, *pt, *ct;
} xts_vec[] = {
	{ /* vector 1 */
	  "00000000000000000000000000000000", "00000000000000000000000000000000",
	  "00000000000000000000000000000000",
	  "0000000000000000000000000000000000000000000000000000000000000000",
	  "917cf69ebd68b2ec9b9fe9a3eadda692cd43d2f59598ed858c02c2652fbf922e" },
	{ /* vector 2 */
	  "11111111111111111111111111111111", "22222222222222222222222222222222",
	  "33333333330000000000000000000000",
	  "4444444444444444444444444444444444444444444444444444444444444444",
	  "c454185e6a16936e39334038acef838bfb186fff7480adc4289382ecd6d394f0" },
	{ /* vector 3 */
	  "fffefdfcfbfaf9f8f7f6f5f4f3f2f1f0", "22222222222222222222222222222222",
	  "33333333330000000000000000000000",
	  "4444444444444444444444444444444444444444444444444444444444444444",
	  "af85336b597afc1a900b2eb21ec949d292df4c047e0b21532186a5971a227a89" },
	/* vectors 15-18: ciphertext stealing, 17 to 20 bytes */
	{ "fffefdfcfbfaf9f8f7f6f5f4f3f2f1f0", "bfbebdbcbbbab9b8b7b6b5b4b3b2b1b0",
	  "9a785634120000000000000000000000", "000102030405060708090a0b0c0d0e0f10",
	  "6c1625db4671522d3d7599601de7ca09ed" },
	{ "fffefdfcfbfaf9f8f7f6f5f4f3f2f1f0", "bfbebdbcbbbab9b8b7b6b5b4b3b2b1b0",
	  "9a785634120000000000000000000000", "000102030405060708090a0b0c0d0e0f1011",
	  "d069444b7a7e0cab09e24447d24deb1fedbf" },
	{ "fffefdfcfbfaf9f8f7f6f5f4f3f2f1f0", "bfbebdbcbbbab9b8b7b6b5b4b3b2b1b0",
	  "9a785634120000000000000000000000", "000102030405060708090a0b0c0d0e0f101112",
	  "e5df1351c0544ba1350b3363cd8ef4beedbf9d" },
	{ "fffefdfcfbfaf9f8f7f6f5f4f3f2f1f0", "bfbebdbcbbbab9b8b7b6b5b4b3b2b1b0",
	  "9a785634120000000000000000000000", "000102030405060708090a0b0c0d0e0f10111213",
	  "9d84c813f719aa2c7be3f66171c7c5c2edbf9dac" },
};

static void test_xts(void **state)
{
	const char *level = at_level(state);
	for (size_t i = 0; i < sizeof(xts_vec) / sizeof(xts_vec[0]); i++) {
		uint8_t k1[32], k2[32], tw[16], pt[64], ct[64], out[64];
		struct ct_aes_key dk, tk;
		char what[64];
		const size_t kl = unhex(xts_vec[i].key1, k1);
		unhex(xts_vec[i].key2, k2);
		unhex(xts_vec[i].tweak, tw);
		const size_t n = unhex(xts_vec[i].pt, pt);
		unhex(xts_vec[i].ct, ct);
		ct_aes_set_key(&dk, k1, (unsigned)kl * 8);
		ct_aes_set_key(&tk, k2, (unsigned)kl * 8);
		ct_aes_xts(&dk, &tk, tw, pt, out, n, true);
		snprintf(what, sizeof(what), "IEEE1619 XTS #%zu (%zu bytes) encrypt", i, n);
		check(what, level, out, ct, n);
		ct_aes_xts(&dk, &tk, tw, ct, out, n, false);
		snprintf(what, sizeof(what), "IEEE1619 XTS #%zu (%zu bytes) decrypt", i, n);
		check(what, level, out, pt, n);
		memcpy(out, ct, n);
		ct_aes_xts(&dk, &tk, tw, out, out, n, false);
		snprintf(what, sizeof(what), "IEEE1619 XTS #%zu in-place decrypt", i);
		check(what, level, out, pt, n);
	}
}

/* ---- GCM specification (McGrew & Viega), test cases 1-18 ---- */
#define GCM_K1 "feffe9928665731c6d6a8f9467308308"
#define GCM_P                                                                                                \
	"d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"                                   \
	"1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b391aafd255"
#define GCM_P60                                                                                              \
	"d9313225f88406e5a55909c5aff5269a86a7a9531534f7da2e4c303d8a318a72"                                   \
	"1c3c0c95956809532fcf0e2449a6b525b16aedf5aa0de657ba637b39"
#define GCM_A "feedfacedeadbeeffeedfacedeadbeefabaddad2"
#define GCM_IV12 "cafebabefacedbaddecaf888"
#define GCM_IV8 "cafebabefacedbad"
#define GCM_IV60                                                                                             \
	"9313225df88406e555909c5aff5269aa6a7a9538534f7da1e4c303d2a318a728"                                   \
	"c3c0c95156809539fcf0e2429a6b525416aedbf5a0de6a57a637b39b"
static const struct {
	const char *key, *iv, *aad, *pt, *ct, *tag; /* ct NULL: only the tag is checked */
} gcm_vec[] = {
	{ "00000000000000000000000000000000", "000000000000000000000000", "", "", "",
	  "58e2fccefa7e3061367f1d57a4e7455a" },
	{ "00000000000000000000000000000000", "000000000000000000000000", "",
	  "00000000000000000000000000000000", "0388dace60b6a392f328c2b971b2fe78",
	  "ab6e47d42cec13bdf53a67b21257bddf" },
	{ GCM_K1, GCM_IV12, "", GCM_P,
	  "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e"
	  "21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091473f5985",
	  "4d5c2af327cd64a62cf35abd2ba6fab4" },
	{ GCM_K1, GCM_IV12, GCM_A, GCM_P60,
	  "42831ec2217774244b7221b784d0d49ce3aa212f2c02a4e035c17e2329aca12e"
	  "21d514b25466931c7d8f6a5aac84aa051ba30b396a0aac973d58e091",
	  "5bc94fbc3221a5db94fae95ae7121a47" },
	{ GCM_K1, GCM_IV8, GCM_A, GCM_P60,
	  "61353b4c2806934a777ff51fa22a4755699b2a714fcdc6f83766e5f97b6c7423"
	  "73806900e49f24b22b097544d4896b424989b5e1ebac0f07c23f4598",
	  "3612d2e79e3b0785561be14aaca2fccb" },
	{ GCM_K1, GCM_IV60, GCM_A, GCM_P60,
	  "8ce24998625615b603a033aca13fb894be9112a5c3a211a8ba262a3cca7e2ca7"
	  "01e4a9a4fba43c90ccdcb281d48c7c6fd62875d2aca417034c34aee5",
	  "619cc5aefffe0bfa462af43c1699d050" },
	{ "000000000000000000000000000000000000000000000000", "000000000000000000000000", "", "", "",
	  "cd33b28ac773f74ba00ed1f312572435" },
	{ "000000000000000000000000000000000000000000000000", "000000000000000000000000", "",
	  "00000000000000000000000000000000", "98e7247c07f0fe411c267e4384b0f600",
	  "2ff58d80033927ab8ef4d4587514f0fb" },
	{ GCM_K1 "feffe9928665731c", GCM_IV12, "", GCM_P,
	  "3980ca0b3c00e841eb06fac4872a2757859e1ceaa6efd984628593b40ca1e19c"
	  "7d773d00c144c525ac619d18c84a3f4718e2448b2fe324d9ccda2710acade256",
	  "9924a7c8587336bfb118024db8674a14" },
	{ GCM_K1 "feffe9928665731c", GCM_IV12, GCM_A, GCM_P60,
	  "3980ca0b3c00e841eb06fac4872a2757859e1ceaa6efd984628593b40ca1e19c"
	  "7d773d00c144c525ac619d18c84a3f4718e2448b2fe324d9ccda2710",
	  "2519498e80f1478f37ba55bd6d27618c" },
	{ GCM_K1 "feffe9928665731c", GCM_IV8, GCM_A, GCM_P60, NULL, "65dcc57fcf623a24094fcca40d3533f8" },
	{ GCM_K1 "feffe9928665731c", GCM_IV60, GCM_A, GCM_P60, NULL, "dcf566ff291c25bbb8568fc3d376a6d9" },
	{ "0000000000000000000000000000000000000000000000000000000000000000", "000000000000000000000000", "",
	  "", "", "530f8afbc74536b9a963b4f1c4cb738b" },
	{ "0000000000000000000000000000000000000000000000000000000000000000", "000000000000000000000000", "",
	  "00000000000000000000000000000000", "cea7403d4d606b6e074ec5d3baf39d18",
	  "d0d1c8a799996bf0265b98b5d48ab919" },
	{ GCM_K1 GCM_K1, GCM_IV12, "", GCM_P,
	  "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
	  "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662898015ad",
	  "b094dac5d93471bdec1a502270e3cc6c" },
	{ GCM_K1 GCM_K1, GCM_IV12, GCM_A, GCM_P60,
	  "522dc1f099567d07f47f37a32a84427d643a8cdcbfe5c0c97598a2bd2555d1aa"
	  "8cb08e48590dbb3da7b08b1056828838c5f61e6393ba7a0abcc9f662",
	  "76fc6ece0f4e1768cddf8853bb2d551b" },
	{ GCM_K1 GCM_K1, GCM_IV8, GCM_A, GCM_P60, NULL, "3a337dbf46a792c45e454913fe2ea8f2" },
	{ GCM_K1 GCM_K1, GCM_IV60, GCM_A, GCM_P60, NULL, "a44a8266ee1c8eb0c8b5d4cf5ae9f19a" },
};

static void test_gcm(void **state)
{
	const char *level = at_level(state);
	for (size_t i = 0; i < sizeof(gcm_vec) / sizeof(gcm_vec[0]); i++) {
		uint8_t key[32], iv[64], aad[32], pt[64], ct[64], tag[16], out[64], mytag[16];
		struct ct_aes_gcm g;
		char what[64];
		const size_t kl = unhex(gcm_vec[i].key, key);
		const size_t ivl = unhex(gcm_vec[i].iv, iv);
		const size_t al = unhex(gcm_vec[i].aad, aad);
		const size_t pl = unhex(gcm_vec[i].pt, pt);
		unhex(gcm_vec[i].tag, tag);
		if (gcm_vec[i].ct)
			unhex(gcm_vec[i].ct, ct);

		/* Encrypt in one go, and again in 1-, 5- and 17-byte pieces. */
		const size_t steps[] = { 64, 1, 5, 17 };
		for (size_t s = 0; s < 4; s++) {
			ct_aes_gcm_init(&g, key, (unsigned)kl * 8);
			ct_aes_gcm_setiv(&g, iv, ivl);
			for (size_t o = 0; o < al; o += steps[s])
				ct_aes_gcm_aad(&g, aad + o, al - o < steps[s] ? al - o : steps[s]);
			for (size_t o = 0; o < pl; o += steps[s])
				ct_aes_gcm_encrypt(&g, pt + o, out + o,
						   pl - o < steps[s] ? pl - o : steps[s]);
			ct_aes_gcm_tag(&g, mytag);
			snprintf(what, sizeof(what), "GCM test case %zu tag, step %zu", i + 1, steps[s]);
			check(what, level, mytag, tag, 16);
			if (gcm_vec[i].ct) {
				snprintf(what, sizeof(what), "GCM test case %zu ct, step %zu", i + 1,
					 steps[s]);
				check(what, level, out, ct, pl);
			}
		}
		/* Decrypt in place and verify the tag, then a truncated and a forged tag. */
		ct_aes_gcm_init(&g, key, (unsigned)kl * 8);
		ct_aes_gcm_setiv(&g, iv, ivl);
		ct_aes_gcm_aad(&g, aad, al);
		ct_aes_gcm_encrypt(&g, pt, ct, pl);
		ct_aes_gcm_setiv(&g, iv, ivl);
		ct_aes_gcm_aad(&g, aad, al);
		memcpy(out, ct, pl);
		ct_aes_gcm_decrypt(&g, out, out, pl);
		snprintf(what, sizeof(what), "GCM test case %zu decrypt", i + 1);
		check(what, level, out, pt, pl);
		if (ct_aes_gcm_verify(&g, tag, 16) != 0)
			fail_msg("GCM test case %zu: good tag rejected [%s]", i + 1, level);
		for (size_t tl = 4; tl <= 16; tl += 4) {
			ct_aes_gcm_setiv(&g, iv, ivl);
			ct_aes_gcm_aad(&g, aad, al);
			ct_aes_gcm_decrypt(&g, ct, out, pl);
			uint8_t bad[16];
			memcpy(bad, tag, 16);
			bad[tl - 1] ^= 0x80;
			if (ct_aes_gcm_verify(&g, bad, tl) == 0)
				fail_msg("GCM test case %zu: forged %zu-byte tag accepted [%s]", i + 1, tl,
					 level);
		}
		ct_aes_gcm_wipe(&g);
	}
}

int main(void)
{
	if (!ct_aesni_available()) {
		printf("SKIP: this CPU has no AES-NI + PCLMULQDQ nor ARMv8 AES + PMULL (or "
		       "CRYPTRACE_AESNI_MAX=none)\n");
		return 77;
	}
	best = ct_aesni_level();
	/* Every level this build has, up to the best this CPU allows: the base one (AES-NI, ARMv8
	 * CE) and on x86 the two VAES ones. The levels above it are named, not passed over. */
	static enum ct_aesni_level levels[4];
	static char names[12][48];
	static void (*const fns[3])(void **) = { test_block_modes, test_xts, test_gcm };
	static const char *const fn_names[3] = { "test_block_modes", "test_xts", "test_gcm" };
	struct CMUnitTest tests[12];
	const size_t built = ct_aesni_build_levels(levels, 4);
	size_t nlevels = 0, ntests = 0;
	for (size_t l = 0; l < built; l++)
		if (levels[l] <= best)
			levels[nlevels++] = levels[l]; /* ascending: the runnable ones come first */
		else
			printf("note: level %s not run here (the CPU lacks it, or CRYPTRACE_AESNI_MAX)\n",
			       ct_aesni_level_name(levels[l]));
	for (size_t l = 0; l < nlevels; l++)
		for (size_t f = 0; f < 3; f++, ntests++) {
			snprintf(names[ntests], sizeof(names[ntests]), "%s [%s]", fn_names[f],
				 ct_aesni_level_name(levels[l]));
			tests[ntests] = (struct CMUnitTest){ .name = names[ntests],
							     .test_func = fns[f],
							     .initial_state = &levels[l] };
		}
	return _cmocka_run_group_tests("aesni-kat", tests, ntests, NULL, NULL);
}
