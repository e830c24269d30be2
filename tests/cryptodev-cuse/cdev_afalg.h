/* SPDX-License-Identifier: MIT */
/*
 * cdev_afalg.h - the kernel side of the CUSE cryptodev server: one AF_ALG transform per cryptodev
 * session (bound and keyed at CIOCGSESSION), requests as sendmsg + read on an accepted socket,
 * and the driver the kernel picked for it (from /proc/crypto, flags from crypto_user netlink).
 * All functions return 0 or a negative errno, which the server passes to the program unchanged.
 */
#ifndef CDEV_AFALG_H
#define CDEV_AFALG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cdev_tfm {
	int tfm_fd; /* the bound, keyed transform socket */
	int op_fd;  /* the accepted request socket; -1 until the first request */
	bool aead;
	unsigned authsize; /* aead: the tag length op_fd was accepted with */
};

/* Binds kname ("cbc(aes)", type skcipher or aead) and sets the key. */
int cdev_tfm_open(struct cdev_tfm *t, const char *kname, bool aead, const uint8_t *key, unsigned keylen);
void cdev_tfm_close(struct cdev_tfm *t);

/* One skcipher message: len bytes from src to dst with this IV (ivlen 0: none). */
int cdev_tfm_skcipher(struct cdev_tfm *t, bool encrypt, const uint8_t *iv, unsigned ivlen, const uint8_t *src,
		      uint8_t *dst, unsigned len);

/* One AEAD message. Encrypt: len plaintext bytes -> len + taglen bytes (ciphertext, tag).
 * Decrypt: len bytes (ciphertext, tag) -> len - taglen bytes; -EBADMSG when the tag is wrong. */
int cdev_tfm_aead(struct cdev_tfm *t, bool encrypt, const uint8_t *iv, unsigned ivlen, const uint8_t *aad,
		  unsigned aadlen, const uint8_t *src, unsigned len, unsigned taglen, uint8_t *dst);

/* The driver the kernel uses for kname (call after a transform of it exists, so that template
 * instances such as "cbc(aes-generic)" are listed), and whether it is CRYPTO_ALG_KERNEL_DRIVER_ONLY:
 * the kernel's own flag when crypto_user answers (*flag_from_kernel true), else a guess from the
 * driver's class. Returns false if /proc/crypto names none; driver_only is then false too. */
bool cdev_driver_info(const char *kname, bool aead, char *driver, size_t cap, bool *driver_only,
		      bool *flag_from_kernel);

#endif
