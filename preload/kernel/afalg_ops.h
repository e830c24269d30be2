/* SPDX-License-Identifier: MIT */
/*
 * afalg_ops.h - the AF_ALG operation life cycle shared by the data-path hooks: an operation
 * begins with the first send (sendmsg/write/splice) on an op socket and ends with the read,
 * recv or io_getevents that returns its result. Its syscalls are counted as they happen and
 * charged to its path when it ends, because only then is the entry (copy, splice, AIO) known.
 */
#ifndef CT_AFALG_OPS_H
#define CT_AFALG_OPS_H

#include "core.h"
#include "kfd.h"

/* The path of (state, dir, entry), interned on first use (cold: takes the registry lock). */
uint32_t ct_afalg_path(struct ct_thread *t, struct ct_alg_state *a, uint8_t dir, uint8_t entry);

/* Starts the op if none is open. */
void ct_afalg_op_begin(struct ct_thread *t, struct ct_alg_state *a);
/* Ends the open op (if any) with bytes and ok, on the path of entry; returns the path. */
uint32_t ct_afalg_op_end(struct ct_thread *t, struct ct_alg_state *a, uint8_t entry, uint64_t bytes, bool ok);

/* "type=skcipher name=cbc(aes) keylen=16" for event details. */
void ct_afalg_describe(const struct ct_alg_state *a, char *buf, size_t cap);

#endif
