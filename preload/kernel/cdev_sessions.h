/* SPDX-License-Identifier: MIT */
/*
 * cdev_sessions.h - cryptodev sessions seen by the hooks, keyed by (open file, session id): what
 * the session was set up with, the driver behind it, and its paths per direction. Lookups (every
 * CIOCCRYPT) take no lock; inserts and deletes (CIOCGSESSION, CIOCFSESSION, close) take a spinlock.
 */
#ifndef CT_CDEV_SESSIONS_H
#define CT_CDEV_SESSIONS_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "kfd.h"

struct ct_cdev_session {
	_Atomic uint64_t key; /* 0 free, 1 deleted, else the hash key */
	const struct ct_kfd_state *file;
	uint32_t ses;
	uint32_t cipher, mac, keylen;
	char impl[80]; /* "kernel:cbc-aes-aesni" */
	char cipher_name[48];
	uint32_t drv_flags;
	uint8_t route;             /* enum ct_route_target: CT_ROUTE_AESNI when served in-process */
	uint64_t setup_ns;         /* reported with the first operation's path, then 0 */
	_Atomic uint32_t paths[3]; /* per enum ct_dir: path id + 1 (0: not interned yet) */
	uint32_t last_path;
};

/* A new entry for (file, ses), filled by the caller before it is used; NULL when full. */
struct ct_cdev_session *ct_cdev_session_add(const struct ct_kfd_state *file, uint32_t ses);
struct ct_cdev_session *ct_cdev_session_find(const struct ct_kfd_state *file, uint32_t ses);
void ct_cdev_session_del(struct ct_cdev_session *s);
/* Deletes every session of file (its last fd was closed). */
void ct_cdev_session_del_file(const struct ct_kfd_state *file);

#endif
