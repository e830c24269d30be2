/* SPDX-License-Identifier: MIT */
/*
 * proc_crypto.h - which kernel driver serves an algorithm name, read from /proc/crypto text,
 * and whether that driver is hardware offload, CPU instructions or generic software.
 *
 * Pure functions over a caller-supplied text (the preload reads the file, tests pass fixtures).
 */
#ifndef CT_PROC_CRYPTO_H
#define CT_PROC_CRYPTO_H

#include <stdbool.h>
#include <stddef.h>

enum ct_kdrv_class {
	CT_KDRV_UNKNOWN = 0,
	CT_KDRV_HW = 1,  /* an offload engine: only the kernel can drive it */
	CT_KDRV_CPU = 2, /* CPU crypto instructions (AES-NI, VAES, ARMv8 CE, NEON, PadLock...) */
	CT_KDRV_SW = 3,  /* generic C code: aes-generic, aes-fixed-time, aes-lib, templates over them */
};

struct ct_kdrv {
	char name[128];   /* the algorithm name asked for: "cbc(aes)" */
	char driver[128]; /* "cbc-aes-aesni" */
	char module[64];  /* "aesni_intel", "kernel" */
	char type[24];    /* "skcipher", "lskcipher", "aead", ... */
	int priority;
	enum ct_kdrv_class cls;
};

/* Picks the driver the kernel would use for alg (the exact /proc/crypto "name"): among entries
 * with that name, "selftest : passed", not "internal : yes", and a type that an AF_ALG socket of
 * afalg_type can use ("skcipher" -> skcipher/lskcipher/ablkcipher/blkcipher, "aead" -> aead,
 * "hash" -> shash/ahash, "rng" -> rng; NULL -> skcipher or aead), the highest priority; the first
 * listed wins a tie (the kernel lists newest first). Returns false if none qualifies. */
bool ct_proc_crypto_resolve(const char *text, size_t len, const char *alg, const char *afalg_type,
			    struct ct_kdrv *out);

/* Classifies a driver from its driver and module names. */
enum ct_kdrv_class ct_kdrv_classify(const char *driver, const char *module);

const char *ct_kdrv_class_name(enum ct_kdrv_class cls); /* "hardware", "cpu", "software", "unknown" */

#endif
