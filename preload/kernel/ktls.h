/* SPDX-License-Identifier: MIT */
/*
 * ktls.h - kernel TLS sockets (ktls.c): the set-up setsockopt calls, and the data calls the
 * shared socket hooks (afalg_data.c) hand over when the fd table says an fd is a kTLS socket.
 */
#ifndef CT_KTLS_H
#define CT_KTLS_H

#include <stdbool.h>
#include <sys/socket.h>
#include <sys/types.h>

#include "kernel/kernel_decode.h"
#include "kfd.h"

/* setsockopt(SOL_TCP, TCP_ULP) and setsockopt(SOL_TLS, ...): the options ktls.c records. */
static inline bool ct_ktls_sockopt(int level, int optname)
{
	return level == CT_SOL_TLS || (level == SOL_TCP && optname == CT_TCP_ULP);
}

/* The setsockopt hook's kTLS branch: the real call, then its set-up or failure recorded. st is
 * the fd's state, if any. */
int ct_ktls_setsockopt(int fd, struct ct_kfd_state *st, int level, int optname, const void *optval,
		       socklen_t optlen);

/* One data call on a kTLS socket: begin before the real call, end after it with its result
 * (msg: the sendmsg/recvmsg header whose TLS record-type cmsg marks a control record, or NULL;
 * flags: the call's MSG_* flags, 0 when it has none: a MSG_PEEK read consumed nothing and is not
 * counted). */
struct ct_ktls_call {
	struct ct_thread *t; /* NULL: not recorded (no thread state, or a nested call) */
	struct ct_op_timer timer;
};
void ct_ktls_begin(struct ct_ktls_call *c);
void ct_ktls_end(struct ct_ktls_call *c, struct ct_kfd_state *st, enum ct_dir dir, const char *call,
		 ssize_t r, const struct msghdr *msg, int flags);

/* The real call realcall on kTLS socket st, counted for dir; keeps its result and errno. */
#define CT_KTLS_CALL(st, dir, call, realcall, msg, flags)                                                    \
	({                                                                                                   \
		struct ct_ktls_call c_;                                                                      \
		ct_ktls_begin(&c_);                                                                          \
		ssize_t r_ = (realcall);                                                                     \
		ct_ktls_end(&c_, (st), (dir), (call), r_, (msg), (flags));                                   \
		r_;                                                                                          \
	})

#endif
