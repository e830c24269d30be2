/* SPDX-License-Identifier: MIT */
/*
 * cdev_profile.c - the cipher table and the hardware-mimicking profiles of the CUSE cryptodev
 * server. Data plus two small predicates; the server asks them before touching AF_ALG, so a
 * refused session costs nothing in the kernel, as with a driver that does not register the mode.
 */
#include <errno.h>
#include <string.h>

#include "cdev_profile.h"
#include "cryptodev_abi.h"

static const struct cdev_cipher ciphers[] = {
	{ .id = CT_CRYPTO_AES_CBC, .kname = "cbc(aes)", .ivlen = 16, .blocksize = 16 },
	{ .id = CT_CRYPTO_AES_CTR, .kname = "ctr(aes)", .ivlen = 16, .blocksize = 1 },
	{ .id = CT_CRYPTO_AES_ECB, .kname = "ecb(aes)", .ivlen = 0, .blocksize = 16 },
	{ .id = CT_CRYPTO_AES_XTS, .kname = "xts(aes)", .ivlen = 16, .blocksize = 16, .xts = true },
	{ .id = CT_CRYPTO_AES_GCM, .kname = "gcm(aes)", .aead = true, .ivlen = 12, .blocksize = 1 },
};

const struct cdev_cipher *cdev_cipher_find(uint32_t id)
{
	for (size_t i = 0; i < sizeof(ciphers) / sizeof(ciphers[0]); i++)
		if (ciphers[i].id == id)
			return &ciphers[i];
	return NULL;
}

static const struct cdev_profile profiles[] = {
	{ .id = CDEV_PROFILE_FULL, .name = "full" },
	{ .id = CDEV_PROFILE_GLXSB, .name = "glxsb" },
	{ .id = CDEV_PROFILE_EIP93, .name = "eip93-like" },
	{ .id = CDEV_PROFILE_SLOW, .name = "slow", .latency_us = 200 },
};

bool cdev_profile_parse(const char *name, struct cdev_profile *out)
{
	for (size_t i = 0; i < sizeof(profiles) / sizeof(profiles[0]); i++) {
		if (!strcmp(name, profiles[i].name)) {
			*out = profiles[i];
			return true;
		}
	}
	return false;
}

int cdev_profile_allows(const struct cdev_profile *p, uint32_t cipher, uint32_t keylen, uint32_t mac)
{
	/* Hash and HMAC sessions are not served: this device is about ciphers. */
	if (mac != 0 || !cdev_cipher_find(cipher))
		return -EINVAL;
	/* cryptodev-linux refuses keys longer than CRYPTO_CIPHER_MAX_KEY_LEN before the driver. */
	if (keylen == 0 || keylen > 64)
		return -EINVAL;
	switch (p->id) {
	case CDEV_PROFILE_GLXSB:
		/* A Geode LX (geode-aes) style engine: AES-128-CBC and nothing else (seeds 000/002). */
		return cipher == CT_CRYPTO_AES_CBC && keylen == 16 ? 0 : -EINVAL;
	case CDEV_PROFILE_EIP93:
		/* As reported on OpenWrt: every AES-CBC key size fails, CTR works. */
		return cipher == CT_CRYPTO_AES_CBC ? -EINVAL : 0;
	case CDEV_PROFILE_FULL:
	case CDEV_PROFILE_SLOW:
		break;
	}
	return 0;
}

void cdev_next_iv(const struct cdev_cipher *ci, bool encrypt, const uint8_t *src, const uint8_t *dst,
		  unsigned len, uint8_t iv[16])
{
	if (ci->id == CT_CRYPTO_AES_CBC && len >= 16) {
		memcpy(iv, (encrypt ? dst : src) + len - 16, 16);
	} else if (ci->id == CT_CRYPTO_AES_CTR) {
		uint64_t blocks = (len + 15u) / 16u;
		for (int i = 15; i >= 0 && blocks; i--) {
			uint64_t sum = iv[i] + (blocks & 0xff);
			iv[i] = (uint8_t)sum;
			blocks = (blocks >> 8) + (sum >> 8);
		}
	}
}
