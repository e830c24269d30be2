/* SPDX-License-Identifier: MIT */
/*
 * kfd.h - the kernel hooks' fd table: which descriptors are /dev/crypto or AF_ALG sockets, and
 * their state. An fd-indexed array of state pointers sized from RLIMIT_NOFILE and mmap'd on the
 * first tracked fd, so every hook on an untracked fd decides "pass through" in O(1): one bound
 * check and one load. dup'd descriptors share one state (refcounted), as they share the socket.
 */
#ifndef CT_KFD_H
#define CT_KFD_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>

#include "core.h"

enum ct_kfd_kind {
	CT_KFD_NONE = 0,
	CT_KFD_CDEV = 1,       /* open("/dev/crypto") */
	CT_KFD_CDEV_CLONE = 2, /* an fd returned by CRIOGET */
	CT_KFD_ALG_TFM = 3,    /* socket(AF_ALG): bind + setsockopt happen here */
	CT_KFD_ALG_OP = 4,     /* accept() on a tfm socket: the data path */
	CT_KFD_KTLS = 5,       /* a TCP socket with the kernel's TLS layer (TCP_ULP "tls"), ktls.c */
};

#define CT_KFD_ENTRIES 3 /* sendmsg, splice, aio */

/* AF_ALG state; a tfm's is copied into each op fd accepted from it. */
struct ct_alg_state {
	char type[16];      /* "skcipher" */
	char name[129];     /* "cbc(aes)" */
	char impl[160];     /* "kernel:cbc-aes-aesni" */
	char cipher[48];    /* "aes-128-cbc", or the kernel name when OpenSSL has none */
	uint32_t drv_flags; /* CT_PATH_HW/CPU/SW_DRIVER */
	uint32_t keylen, authsize;
	uint8_t dir;                       /* enum ct_dir, from the last ALG_SET_OP */
	uint8_t route;                     /* enum ct_route_target: CT_ROUTE_AESNI when emulated */
	uint64_t setup_ns;                 /* socket + bind + setsockopt + accept, not yet reported */
	uint32_t paths[3][CT_KFD_ENTRIES]; /* [dir][entry] path id + 1 (0: not interned) */
	uint32_t last_path;                /* CT_NO_PATH until the first op; a tfm socket: the path of the
				 * last op socket accepted from it (its close is part of that
				 * session's teardown) */
	/* the op in progress: from the first send to the read that completes it */
	bool op_open, op_spliced, op_failed;
	uint32_t op_syscalls;
	uint64_t op_bytes;
	uint64_t last_len; /* previous op's size: the sampling hint for the next begin */
	struct ct_op_timer timer;
	/* The tfm socket an op socket came from: the kernel keeps the key there, and OpenSSL's
	 * afalg engine sets it after accept(). Held by a reference (ct_kfd_state.refs). */
	struct ct_alg_state *tfm;
};

/* kTLS socket state (ktls.c): what each direction's SOL_TLS set-up named. */
struct ct_ktls_state {
	char impl[2][24];   /* [0] TX, [1] RX: "kernel:tls-sw", "kernel:tls-device" */
	char cipher[2][24]; /* "aes-256-gcm" */
	char proto[2][8];   /* "TLS1.3" */
	uint16_t key_bits[2];
	_Atomic uint32_t paths[2][2]; /* [dir][0 data, 1 control records]: path id + 1 */
	uint64_t setup_ns;            /* TCP_ULP + SOL_TLS calls, charged to the first path */
};

struct ct_kfd_state {
	_Atomic uint32_t refs;
	uint8_t kind; /* enum ct_kfd_kind */
	struct ct_alg_state alg;
	struct ct_ktls_state ktls;
	uint64_t cdev_last_len;
	struct ct_kfd_state *next_free;
	struct ct_kfd_state *tfm_ref; /* op sockets: the referenced tfm state */
	void *emul; /* served in-process (emul.h): struct ct_emul_cdev / ct_emul_alg, else NULL */
};

extern _Atomic(struct ct_kfd_state *) *ct_kfd_table;
extern _Atomic uint32_t ct_kfd_cap;

/* The state of fd, or NULL (the O(1) pass-through test every hook starts with). */
static inline struct ct_kfd_state *ct_kfd_get(int fd)
{
	uint32_t cap = atomic_load_explicit(&ct_kfd_cap, memory_order_acquire);

	if (CT_LIKELY((unsigned)fd >= cap))
		return NULL;
	return atomic_load_explicit(&ct_kfd_table[fd], memory_order_relaxed);
}

/* A fresh zeroed state of kind (refs 1), or NULL when out of memory or fd is beyond the table. */
struct ct_kfd_state *ct_kfd_new(int fd, enum ct_kfd_kind kind);
/* fd now also refers to st (dup): takes a reference; any state fd had is released first. */
void ct_kfd_share(int fd, struct ct_kfd_state *st);
/* fd is closed: releases its reference; returns the state if it was the last one (the caller
 * finishes its teardown and then calls ct_kfd_free), else NULL. */
struct ct_kfd_state *ct_kfd_forget(int fd);
void ct_kfd_free(struct ct_kfd_state *st);
/* Takes / drops a reference that is not an fd (an op socket holding its tfm); the last drop
 * frees the state. */
void ct_kfd_hold(struct ct_kfd_state *st);
void ct_kfd_put(struct ct_kfd_state *st);
/* Forget every tracked fd in [first, last] (close_range, closefrom); returns the last-reference
 * states through cb (teardown), which must call ct_kfd_free. */
void ct_kfd_forget_range(unsigned first, unsigned last, void (*cb)(int fd, struct ct_kfd_state *st));
/* Number of live AF_ALG op fds: vmsplice only looks at its pipe when there is one. */
extern _Atomic uint32_t ct_kfd_alg_ops;

#endif
