/* SPDX-License-Identifier: MIT */
/*
 * gcrypt_impl.c - a libgcrypt handle's cipher name and the code that serves it (gcrypt_impl.h).
 *
 * Which AES code libgcrypt 1.10 runs (cipher/rijndael.c, do_setkey): with the intel-aesni feature
 * every AES call runs AES-NI, and with intel-vaes-vpclmul and intel-avx2 as well, the bulk
 * functions of CBC and CFB decryption, CTR (so GCM's data too), OCB, XTS and GCM-SIV's counter
 * run VAES/AVX2 instead (CBC and CFB encryption are serial: one block at a time, AES-NI; CCM and
 * EAX spend half their AES on a serial CBC-MAC or CMAC: named AES-NI, their larger half). Without AES-NI: padlock-aes (VIA, AES-128 only), else intel-ssse3's vector
 * permutation code (vpaes), else the generic table code. On ARM arm-aes, on POWER ppc-vcrypto, on
 * s390x s390x-msa: their AES instructions. The feature list is the library's own
 * (/etc/gcrypt/hwf.deny and GCRYCTL_DISABLE_HWF remove features from it).
 */
#include "gcrypt_impl.h"

#include <gcrypt.h>
#include <stdio.h>
#include <string.h>

static bool is_aes(int algo)
{
	return algo == GCRY_CIPHER_AES || algo == GCRY_CIPHER_AES192 || algo == GCRY_CIPHER_AES256;
}

static unsigned aes_bits(int algo)
{
	return algo == GCRY_CIPHER_AES ? 128 : algo == GCRY_CIPHER_AES192 ? 192 : 256;
}

/* Modes by OpenSSL's suffix (cfb is CFB-128); NONE and STREAM have none. */
static const struct {
	int mode;
	const char *suffix;
} mode_names[] = {
	{ GCRY_CIPHER_MODE_ECB, "ecb" },           { GCRY_CIPHER_MODE_CFB, "cfb" },
	{ GCRY_CIPHER_MODE_CBC, "cbc" },           { GCRY_CIPHER_MODE_OFB, "ofb" },
	{ GCRY_CIPHER_MODE_CTR, "ctr" },           { GCRY_CIPHER_MODE_AESWRAP, "wrap" },
	{ GCRY_CIPHER_MODE_CCM, "ccm" },           { GCRY_CIPHER_MODE_GCM, "gcm" },
	{ GCRY_CIPHER_MODE_POLY1305, "poly1305" }, { GCRY_CIPHER_MODE_OCB, "ocb" },
	{ GCRY_CIPHER_MODE_CFB8, "cfb8" },         { GCRY_CIPHER_MODE_XTS, "xts" },
	{ GCRY_CIPHER_MODE_EAX, "eax" },           { GCRY_CIPHER_MODE_SIV, "siv" },
	{ GCRY_CIPHER_MODE_GCM_SIV, "gcm-siv" },
};

static const char *mode_suffix(int mode)
{
	for (size_t i = 0; i < sizeof(mode_names) / sizeof(mode_names[0]); i++)
		if (mode_names[i].mode == mode)
			return mode_names[i].suffix;
	return NULL;
}

void ct_gcrypt_cipher_name(char *buf, size_t cap, int algo, const char *algo_name, int mode)
{
	const char *m = mode_suffix(mode);
	if (is_aes(algo)) {
		if (mode == GCRY_CIPHER_MODE_AESWRAP)
			snprintf(buf, cap, "id-aes%u-wrap", aes_bits(algo));
		else
			snprintf(buf, cap, "aes-%u-%s", aes_bits(algo), m ? m : "unknown");
		return;
	}
	char name[40];
	if (algo_name && *algo_name && strcmp(algo_name, "?"))
		snprintf(name, sizeof(name), "%s", algo_name);
	else
		snprintf(name, sizeof(name), "gcry-cipher-%d", algo);
	for (char *p = name; *p; p++)
		if (*p >= 'A' && *p <= 'Z')
			*p = (char)(*p - 'A' + 'a');
	if (m)
		snprintf(buf, cap, "%s-%s", name, m);
	else
		snprintf(buf, cap, "%s", name);
}

unsigned ct_gcrypt_key_bits(int mode, size_t keylen)
{
	(void)mode; /* an XTS or SIV key is given whole (two keys): EVP counts it whole too */
	return keylen > 0 && keylen < 8192 ? (unsigned)keylen * 8 : 0;
}

/* Whether the ':'-separated list has the feature. */
static bool has_feature(const char *list, const char *feature)
{
	size_t n = strlen(feature);
	for (const char *p = list; p && (p = strstr(p, feature)); p += n)
		if ((p == list || p[-1] == ':') && (p[n] == ':' || p[n] == '\0'))
			return true;
	return false;
}

/* The bulk functions libgcrypt 1.10 gives VAES (rijndael.c): CBC and CFB decryption, CTR (and
 * GCM's and GCM-SIV's counters), OCB and XTS. */
static bool vaes_serves(int mode, bool decrypt)
{
	switch (mode) {
	case GCRY_CIPHER_MODE_CBC:
	case GCRY_CIPHER_MODE_CFB:
		return decrypt;
	case GCRY_CIPHER_MODE_CTR:
	case GCRY_CIPHER_MODE_GCM:
	case GCRY_CIPHER_MODE_GCM_SIV:
	case GCRY_CIPHER_MODE_OCB:
	case GCRY_CIPHER_MODE_XTS:
		return true;
	default:
		return false;
	}
}

const char *ct_gcrypt_impl(const char *hwflist, int algo, int mode, bool decrypt)
{
	if (!is_aes(algo))
		return "gcrypt";
	if (!hwflist)
		return "gcrypt:unknown";
	if (has_feature(hwflist, "intel-aesni")) {
		bool vaes = has_feature(hwflist, "intel-vaes-vpclmul") && has_feature(hwflist, "intel-avx2");
		return vaes && vaes_serves(mode, decrypt) ? "gcrypt:vaes" : "gcrypt:aesni";
	}
	if (has_feature(hwflist, "padlock-aes") && algo == GCRY_CIPHER_AES)
		return "gcrypt:padlock";
	if (has_feature(hwflist, "intel-ssse3"))
		return "gcrypt:ssse3";
	if (has_feature(hwflist, "arm-aes"))
		return "gcrypt:arm-ce";
	if (has_feature(hwflist, "ppc-vcrypto"))
		return "gcrypt:ppc-vcrypto";
	if (has_feature(hwflist, "s390x-msa"))
		return "gcrypt:s390x-msa";
	return "gcrypt:generic";
}
