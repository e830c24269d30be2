/* SPDX-License-Identifier: MIT */
/*
 * cdev_profile.h - what the CUSE cryptodev server accepts: the cryptodev cipher ids it maps to
 * kernel (AF_ALG) algorithm names, and the start-up profiles that mimic limited hardware
 * (glxsb: AES-128-CBC only; eip93-like: no AES-CBC at all; slow: added latency per request), and
 * the IV each mode leaves for a chained request.
 */
#ifndef CDEV_PROFILE_H
#define CDEV_PROFILE_H

#include <stdbool.h>
#include <stdint.h>

/* One cryptodev cipher the server can serve through AF_ALG. */
struct cdev_cipher {
	uint32_t id;        /* CT_CRYPTO_AES_* */
	const char *kname;  /* the kernel algorithm name: "cbc(aes)" */
	bool aead;          /* AF_ALG type "aead" (CIOCAUTHCRYPT) rather than "skcipher" */
	unsigned ivlen;     /* 0: no IV */
	unsigned blocksize; /* requests must be a multiple of this (1: any length) */
	bool xts;           /* key is two AES keys: 32 or 64 bytes */
};

enum cdev_profile_id {
	CDEV_PROFILE_FULL,
	CDEV_PROFILE_GLXSB,
	CDEV_PROFILE_EIP93,
	CDEV_PROFILE_SLOW,
};

struct cdev_profile {
	enum cdev_profile_id id;
	const char *name;
	unsigned latency_us; /* added to every CIOCCRYPT/CIOCAUTHCRYPT */
};

/* The table entry for a cryptodev cipher id, or NULL (not a cipher this server knows). */
const struct cdev_cipher *cdev_cipher_find(uint32_t id);

/* Parses "full", "glxsb", "eip93-like" or "slow" (default latency 200 us for slow, 0 otherwise).
 * Returns false for an unknown name. */
bool cdev_profile_parse(const char *name, struct cdev_profile *out);

/* Whether the profile lets a session of this cipher, key length and mac be created. 0 or the
 * negative errno CIOCGSESSION returns (-EINVAL, as the real drivers do). Key lengths the kernel
 * itself refuses are left to the kernel (its setkey error is what the program sees). */
int cdev_profile_allows(const struct cdev_profile *p, uint32_t cipher, uint32_t keylen, uint32_t mac);

/* The IV a chained next request needs (COP_FLAG_WRITE_IV), as the kernel's modes leave it: CBC
 * the last ciphertext block (src when decrypting, dst when encrypting), CTR the 128-bit big-endian
 * counter advanced once per block, a partial block included. Other modes leave iv as it is. */
void cdev_next_iv(const struct cdev_cipher *ci, bool encrypt, const uint8_t *src, const uint8_t *dst,
		  unsigned len, uint8_t iv[16]);

#endif
