/* SPDX-License-Identifier: MIT */
/*
 * kdriver.h - which kernel driver serves a path: for AF_ALG, the /proc/crypto resolution of the
 * bound algorithm name (read once per name and cached); for cryptodev, CIOCGSESSINFO's answer.
 * Both end as an impl string "kernel:<driver>" and a CT_PATH_*_DRIVER flag.
 */
#ifndef CT_KDRIVER_H
#define CT_KDRIVER_H

#include <stddef.h>
#include <stdint.h>

#include "kernel/proc_crypto.h"

/* Resolves (AF_ALG type, algorithm name) through /proc/crypto, cached per pair. Returns false
 * (out->driver "") when /proc/crypto cannot be read or lists no usable driver. */
bool ct_kdriver_resolve(const char *afalg_type, const char *name, struct ct_kdrv *out);

/* CT_PATH_HW_DRIVER / CPU / SW for a class (0 for unknown). */
uint32_t ct_kdriver_path_flag(enum ct_kdrv_class cls);

#endif
