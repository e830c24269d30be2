/* SPDX-License-Identifier: MIT */
/*
 * cryptodev_names.c - cryptodev constants as data: algorithm ids, asymmetric ops, directions,
 * ioctl numbers, and the mapping of (algorithm id, key length) to OpenSSL's cipher names.
 */
#include <stdio.h>
#include <string.h>

#include "kernel_decode.h"

#define N(tab) (sizeof(tab) / sizeof((tab)[0]))

const char *ct_kname_find(const struct ct_kname *t, size_t n, uint32_t value)
{
	for (size_t i = 0; i < n; i++)
		if (t[i].value == value)
			return t[i].name;
	return NULL;
}

const char *ct_kname_or_raw(char *buf, size_t cap, const struct ct_kname *t, size_t n, uint32_t value)
{
	const char *name = ct_kname_find(t, n, value);

	if (name)
		return name;
	if (cap)
		snprintf(buf, cap, "%u", value);
	return buf;
}

static const struct ct_kname cdev_algs[] = {
	{ CT_CRYPTO_DES_CBC, "DES_CBC" },
	{ CT_CRYPTO_3DES_CBC, "3DES_CBC" },
	{ CT_CRYPTO_BLF_CBC, "BLF_CBC" },
	{ CT_CRYPTO_CAST_CBC, "CAST_CBC" },
	{ CT_CRYPTO_SKIPJACK_CBC, "SKIPJACK_CBC" },
	{ CT_CRYPTO_MD5_HMAC, "MD5_HMAC" },
	{ CT_CRYPTO_SHA1_HMAC, "SHA1_HMAC" },
	{ CT_CRYPTO_RIPEMD160_HMAC, "RIPEMD160_HMAC" },
	{ CT_CRYPTO_MD5_KPDK, "MD5_KPDK" },
	{ CT_CRYPTO_SHA1_KPDK, "SHA1_KPDK" },
	{ CT_CRYPTO_AES_CBC, "AES_CBC" },
	{ CT_CRYPTO_ARC4, "ARC4" },
	{ CT_CRYPTO_MD5, "MD5" },
	{ CT_CRYPTO_SHA1, "SHA1" },
	{ CT_CRYPTO_DEFLATE_COMP, "DEFLATE_COMP" },
	{ CT_CRYPTO_NULL, "NULL" },
	{ CT_CRYPTO_LZS_COMP, "LZS_COMP" },
	{ CT_CRYPTO_SHA2_256_HMAC, "SHA2_256_HMAC" },
	{ CT_CRYPTO_SHA2_384_HMAC, "SHA2_384_HMAC" },
	{ CT_CRYPTO_SHA2_512_HMAC, "SHA2_512_HMAC" },
	{ CT_CRYPTO_AES_CTR, "AES_CTR" },
	{ CT_CRYPTO_AES_XTS, "AES_XTS" },
	{ CT_CRYPTO_AES_ECB, "AES_ECB" },
	{ CT_CRYPTO_AES_GCM, "AES_GCM" },
	{ CT_CRYPTO_CAMELLIA_CBC, "CAMELLIA_CBC" },
	{ CT_CRYPTO_RIPEMD160, "RIPEMD160" },
	{ CT_CRYPTO_SHA2_224, "SHA2_224" },
	{ CT_CRYPTO_SHA2_256, "SHA2_256" },
	{ CT_CRYPTO_SHA2_384, "SHA2_384" },
	{ CT_CRYPTO_SHA2_512, "SHA2_512" },
	{ CT_CRYPTO_SHA2_224_HMAC, "SHA2_224_HMAC" },
	{ CT_CRYPTO_TLS11_AES_CBC_HMAC_SHA1, "TLS11_AES_CBC_HMAC_SHA1" },
	{ CT_CRYPTO_TLS12_AES_CBC_HMAC_SHA256, "TLS12_AES_CBC_HMAC_SHA256" },
};

static const struct ct_kname cdev_crk_ops[] = {
	{ CT_CRK_MOD_EXP, "MOD_EXP" },
	{ CT_CRK_MOD_EXP_CRT, "MOD_EXP_CRT" },
	{ CT_CRK_DSA_SIGN, "DSA_SIGN" },
	{ CT_CRK_DSA_VERIFY, "DSA_VERIFY" },
	{ CT_CRK_DH_COMPUTE_KEY, "DH_COMPUTE_KEY" },
};

static const struct ct_kname cdev_ops[] = {
	{ CT_COP_ENCRYPT, "encrypt" },
	{ CT_COP_DECRYPT, "decrypt" },
};

static const struct ct_kname cdev_ioctls[] = {
	{ CT_NR_CRIOGET, "CRIOGET" },
	{ CT_NR_CIOCGSESSION, "CIOCGSESSION" },
	{ CT_NR_CIOCFSESSION, "CIOCFSESSION" },
	{ CT_NR_CIOCCRYPT, "CIOCCRYPT" },
	{ CT_NR_CIOCKEY, "CIOCKEY" },
	{ CT_NR_CIOCASYMFEAT, "CIOCASYMFEAT" },
	{ CT_NR_CIOCGSESSINFO, "CIOCGSESSINFO" },
	{ CT_NR_CIOCAUTHCRYPT, "CIOCAUTHCRYPT" },
	{ CT_NR_CIOCASYNCCRYPT, "CIOCASYNCCRYPT" },
	{ CT_NR_CIOCASYNCFETCH, "CIOCASYNCFETCH" },
	{ CT_NR_CIOCCPHASH, "CIOCCPHASH" },
};

/* Which cryptodev ids are ciphers, and their OpenSSL mode suffix and family. */
static const struct {
	uint32_t alg;
	const char *family; /* "aes", "des-ede3", ...: OpenSSL's prefix */
	const char *mode;   /* "cbc", "ctr", ... */
	bool keybits_in_name, xts;
} cdev_ciphers[] = {
	{ CT_CRYPTO_AES_CBC, "aes", "cbc", true, false },
	{ CT_CRYPTO_AES_CTR, "aes", "ctr", true, false },
	{ CT_CRYPTO_AES_XTS, "aes", "xts", true, true },
	{ CT_CRYPTO_AES_ECB, "aes", "ecb", true, false },
	{ CT_CRYPTO_AES_GCM, "aes", "gcm", true, false },
	{ CT_CRYPTO_CAMELLIA_CBC, "camellia", "cbc", true, false },
	{ CT_CRYPTO_DES_CBC, "des", "cbc", false, false },
	{ CT_CRYPTO_3DES_CBC, "des-ede3", "cbc", false, false },
	{ CT_CRYPTO_BLF_CBC, "bf", "cbc", false, false },
	{ CT_CRYPTO_CAST_CBC, "cast5", "cbc", false, false },
	{ CT_CRYPTO_ARC4, "rc4", NULL, false, false },
	{ CT_CRYPTO_NULL, "null", NULL, false, false },
	{ CT_CRYPTO_SKIPJACK_CBC, "skipjack", "cbc", false, false },
	{ CT_CRYPTO_TLS11_AES_CBC_HMAC_SHA1, "aes", "cbc-hmac-sha1", true, false },
	{ CT_CRYPTO_TLS12_AES_CBC_HMAC_SHA256, "aes", "cbc-hmac-sha256", true, false },
};

const char *ct_cdev_alg_name(uint32_t alg)
{
	return ct_kname_find(cdev_algs, N(cdev_algs), alg);
}
const char *ct_cdev_crk_name(uint32_t op)
{
	return ct_kname_find(cdev_crk_ops, N(cdev_crk_ops), op);
}
const char *ct_cdev_op_name(uint32_t op)
{
	return ct_kname_find(cdev_ops, N(cdev_ops), op);
}

int ct_cdev_ioctl_nr(unsigned long request)
{
	if (_IOC_TYPE(request) != CT_CDEV_IOC_TYPE)
		return -1;
	return (int)_IOC_NR(request);
}

const char *ct_cdev_ioctl_name(unsigned long request)
{
	int nr = ct_cdev_ioctl_nr(request);

	return nr < 0 ? NULL : ct_kname_find(cdev_ioctls, N(cdev_ioctls), (uint32_t)nr);
}

bool ct_cdev_alg_is_cipher(uint32_t alg)
{
	for (size_t i = 0; i < N(cdev_ciphers); i++)
		if (cdev_ciphers[i].alg == alg)
			return true;
	return false;
}

bool ct_cdev_openssl_cipher(uint32_t alg, uint32_t keylen, char *buf, size_t cap)
{
	if (cap)
		buf[0] = '\0';
	for (size_t i = 0; i < N(cdev_ciphers); i++) {
		if (cdev_ciphers[i].alg != alg)
			continue;
		const char *fam = cdev_ciphers[i].family, *mode = cdev_ciphers[i].mode;
		if (!cdev_ciphers[i].keybits_in_name) {
			snprintf(buf, cap, "%s%s%s", fam, mode ? "-" : "", mode ? mode : "");
			return cap > 0;
		}
		/* XTS keys hold two AES keys: OpenSSL names it by one of them. */
		uint32_t bits = keylen * 8 / (cdev_ciphers[i].xts ? 2 : 1);
		if (bits != 128 && bits != 192 && bits != 256)
			return false;
		if (cdev_ciphers[i].xts && bits == 192)
			return false;
		snprintf(buf, cap, "%s-%u-%s", fam, bits, mode);
		return cap > 0;
	}
	return false;
}
