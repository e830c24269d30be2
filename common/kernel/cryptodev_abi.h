/* SPDX-License-Identifier: MIT */
/*
 * cryptodev_abi.h - the project's own description of the Linux cryptodev (/dev/crypto) user
 * ABI, written from the public cryptodev-linux documentation so that nothing here depends on the
 * cryptodev headers being installed (they never are on Debian). Only what cryptrace decodes.
 *
 * Layouts follow the kernel's natural alignment for the program's ABI: on x86-64 pointers are 8
 * bytes, on a 32-bit program 4. Because the ioctl numbers encode sizeof(struct), a 32-bit and a
 * 64-bit program issue different request values for the same call: match them with
 * CT_CDEV_IOC_MATCH (type 'c' and number), never with the full value.
 */
#ifndef CT_CRYPTODEV_ABI_H
#define CT_CRYPTODEV_ABI_H

#include <stdint.h>
#include <sys/ioctl.h>
/* _IOC_TYPE and _IOC_NR are the kernel's (asm-generic/ioctl.h): glibc's <sys/ioctl.h> brings them
 * in, musl's does not (its own _IOC macros stand alone) */
#ifndef _IOC_TYPE
#include <linux/ioctl.h>
#endif

#define CT_CDEV_PATH "/dev/crypto"

/* Algorithm identifiers (cipher and mac fields of struct ct_cdev_session_op). */
enum ct_cdev_alg {
	CT_CRYPTO_DES_CBC = 1,
	CT_CRYPTO_3DES_CBC = 2,
	CT_CRYPTO_BLF_CBC = 3,
	CT_CRYPTO_CAST_CBC = 4,
	CT_CRYPTO_SKIPJACK_CBC = 5,
	CT_CRYPTO_MD5_HMAC = 6,
	CT_CRYPTO_SHA1_HMAC = 7,
	CT_CRYPTO_RIPEMD160_HMAC = 8,
	CT_CRYPTO_MD5_KPDK = 9,
	CT_CRYPTO_SHA1_KPDK = 10,
	CT_CRYPTO_AES_CBC = 11, /* a.k.a. RIJNDAEL128_CBC */
	CT_CRYPTO_ARC4 = 12,
	CT_CRYPTO_MD5 = 13,
	CT_CRYPTO_SHA1 = 14,
	CT_CRYPTO_DEFLATE_COMP = 15,
	CT_CRYPTO_NULL = 16,
	CT_CRYPTO_LZS_COMP = 17,
	CT_CRYPTO_SHA2_256_HMAC = 18,
	CT_CRYPTO_SHA2_384_HMAC = 19,
	CT_CRYPTO_SHA2_512_HMAC = 20,
	CT_CRYPTO_AES_CTR = 21,
	CT_CRYPTO_AES_XTS = 22,
	CT_CRYPTO_AES_ECB = 23,
	CT_CRYPTO_AES_GCM = 50,
	CT_CRYPTO_CAMELLIA_CBC = 101,
	CT_CRYPTO_RIPEMD160 = 102,
	CT_CRYPTO_SHA2_224 = 103,
	CT_CRYPTO_SHA2_256 = 104,
	CT_CRYPTO_SHA2_384 = 105,
	CT_CRYPTO_SHA2_512 = 106,
	CT_CRYPTO_SHA2_224_HMAC = 107,
	CT_CRYPTO_TLS11_AES_CBC_HMAC_SHA1 = 108,
	CT_CRYPTO_TLS12_AES_CBC_HMAC_SHA256 = 109,
};

#define CT_CDEV_MAX_ALG_NAME 64

/* CIOCGSESSION: in cipher/mac/keys, out ses. */
struct ct_cdev_session_op {
	uint32_t cipher;
	uint32_t mac;
	uint32_t keylen;
	uint8_t *key;
	uint32_t mackeylen;
	uint8_t *mackey;
	uint32_t ses;
};

struct ct_cdev_alg_info {
	char cra_name[CT_CDEV_MAX_ALG_NAME];
	char cra_driver_name[CT_CDEV_MAX_ALG_NAME];
};

/* CIOCGSESSINFO: in ses, out the kernel algorithm and driver names and flags. */
struct ct_cdev_session_info_op {
	uint32_t ses;
	struct ct_cdev_alg_info cipher_info, hash_info;
	uint16_t alignmask;
	uint32_t flags; /* CT_SIOP_FLAG_* */
};

/* Set when the driver exists only in the kernel (an offload engine); software and CPU-instruction
 * drivers leave it clear. For AEAD, set if any of the algorithms involved is kernel-only. */
#define CT_SIOP_FLAG_KERNEL_DRIVER_ONLY 1u

/* crypt_op.op (Linux numbering: BSD uses 1 and 2) */
#define CT_COP_ENCRYPT 0
#define CT_COP_DECRYPT 1

/* crypt_op.flags */
#define CT_COP_FLAG_UPDATE (1u << 0)
#define CT_COP_FLAG_FINAL (1u << 1)
#define CT_COP_FLAG_WRITE_IV (1u << 2)
#define CT_COP_FLAG_NO_ZC (1u << 3)
#define CT_COP_FLAG_AEAD_TLS_TYPE (1u << 4)
#define CT_COP_FLAG_AEAD_SRTP_TYPE (1u << 5)
#define CT_COP_FLAG_RESET (1u << 6)

/* CIOCCRYPT, CIOCASYNCCRYPT, CIOCASYNCFETCH */
struct ct_cdev_crypt_op {
	uint32_t ses;
	uint16_t op;
	uint16_t flags;
	uint32_t len;
	uint8_t *src;
	uint8_t *dst;
	uint8_t *mac;
	uint8_t *iv;
};

/* CIOCAUTHCRYPT (AEAD, TLS and SRTP modes) */
struct ct_cdev_crypt_auth_op {
	uint32_t ses;
	uint16_t op;
	uint16_t flags;
	uint32_t len;
	uint32_t auth_len;
	uint8_t *auth_src;
	uint8_t *src;
	uint8_t *dst;
	uint8_t *tag;
	uint32_t tag_len;
	uint8_t *iv;
	uint32_t iv_len;
};

/* CIOCKEY: asymmetric operations (no Linux driver implements them; decoded for completeness). */
struct ct_cdev_crparam {
	uint8_t *crp_p;
	uint32_t crp_nbits;
};
#define CT_CRK_MAXPARAM 8
struct ct_cdev_crypt_kop {
	uint32_t crk_op; /* enum ct_cdev_crk_op */
	uint32_t crk_status;
	uint16_t crk_iparams;
	uint16_t crk_oparams;
	uint32_t crk_pad1;
	struct ct_cdev_crparam crk_param[CT_CRK_MAXPARAM];
};
enum ct_cdev_crk_op {
	CT_CRK_MOD_EXP = 0,
	CT_CRK_MOD_EXP_CRT = 1,
	CT_CRK_DSA_SIGN = 2,
	CT_CRK_DSA_VERIFY = 3,
	CT_CRK_DH_COMPUTE_KEY = 4,
};
/* CIOCASYMFEAT's answer: one bit per crk_op the device can do. */
#define CT_CRF_MOD_EXP (1u << CT_CRK_MOD_EXP)
#define CT_CRF_MOD_EXP_CRT (1u << CT_CRK_MOD_EXP_CRT)
#define CT_CRF_DSA_SIGN (1u << CT_CRK_DSA_SIGN)
#define CT_CRF_DSA_VERIFY (1u << CT_CRK_DSA_VERIFY)
#define CT_CRF_DH_COMPUTE_KEY (1u << CT_CRK_DH_COMPUTE_KEY)

/* ioctl numbers (type 'c'). */
#define CT_CDEV_IOC_TYPE 'c'
enum ct_cdev_ioc_nr {
	CT_NR_CRIOGET = 101,
	CT_NR_CIOCGSESSION = 102,
	CT_NR_CIOCFSESSION = 103,
	CT_NR_CIOCCRYPT = 104,
	CT_NR_CIOCKEY = 105,
	CT_NR_CIOCASYMFEAT = 106,
	CT_NR_CIOCGSESSINFO = 107,
	CT_NR_CIOCAUTHCRYPT = 109,
	CT_NR_CIOCASYNCCRYPT = 110,
	CT_NR_CIOCASYNCFETCH = 111,
	CT_NR_CIOCCPHASH = 112, /* copy a hash state between sessions (cryptodev-linux >= 1.10) */
};

#define CT_CRIOGET _IOWR('c', CT_NR_CRIOGET, uint32_t)
#define CT_CIOCGSESSION _IOWR('c', CT_NR_CIOCGSESSION, struct ct_cdev_session_op)
#define CT_CIOCFSESSION _IOW('c', CT_NR_CIOCFSESSION, uint32_t)
#define CT_CIOCCRYPT _IOWR('c', CT_NR_CIOCCRYPT, struct ct_cdev_crypt_op)
#define CT_CIOCKEY _IOWR('c', CT_NR_CIOCKEY, struct ct_cdev_crypt_kop)
#define CT_CIOCASYMFEAT _IOR('c', CT_NR_CIOCASYMFEAT, uint32_t)
#define CT_CIOCGSESSINFO _IOWR('c', CT_NR_CIOCGSESSINFO, struct ct_cdev_session_info_op)
#define CT_CIOCAUTHCRYPT _IOWR('c', CT_NR_CIOCAUTHCRYPT, struct ct_cdev_crypt_auth_op)
#define CT_CIOCASYNCCRYPT _IOW('c', CT_NR_CIOCASYNCCRYPT, struct ct_cdev_crypt_op)
#define CT_CIOCASYNCFETCH _IOR('c', CT_NR_CIOCASYNCFETCH, struct ct_cdev_crypt_op)

/* True when request is cryptodev ioctl number nr, whatever size the program's ABI encoded. */
#define CT_CDEV_IOC_MATCH(request, nr)                                                                       \
	(_IOC_TYPE((unsigned long)(request)) == CT_CDEV_IOC_TYPE &&                                          \
	 _IOC_NR((unsigned long)(request)) == (unsigned)(nr))

#endif
