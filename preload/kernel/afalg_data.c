/* SPDX-License-Identifier: MIT */
/*
 * afalg_data.c - the AF_ALG data path. Sends (sendmsg, send, sendto, write, writev, splice into
 * the op socket) open an operation and carry its control messages (ALG_SET_OP sets the direction;
 * IV and AEAD lengths only); reads (read, readv, recv, recvfrom, recvmsg, splice out of it) and
 * io_getevents complete it. OpenSSL's afalg engine and libkcapi submit their reads with
 * io_submit through syscall(2), so syscall() is hooked too, for the AIO numbers only: every other
 * number goes straight to the real syscall() with its six argument words (seccomp(2) after
 * the fatal-signal handler stepped aside, signals.c).
 *
 * Each hook on an fd that is not an AF_ALG op socket passes through after one O(1) table check.
 */
/* We define both open and open64 (fcntl and fcntl64): the 64-bit-offset redirection meson turns
 * on would alias them. */
#undef _FILE_OFFSET_BITS
#include <linux/aio_abi.h>
#include <linux/seccomp.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include "afalg_ops.h"
#include "emul.h"
#include "signals.h"
#include "kernel/kernel_decode.h"
#include "khooks.h"
#include "ktls.h"

ssize_t vmsplice(int fd, const struct iovec *iov, size_t n, unsigned int flags);
ssize_t splice(int fd_in, off_t *off_in, int fd_out, off_t *off_out, size_t len, unsigned int flags);

/* vmsplice goes to a pipe, not to the socket: count it with the splice that follows. */
static __thread uint32_t pending_vmsplices __attribute__((tls_model("initial-exec")));

/* ---- operation life cycle ------------------------------------------------------------------ */

uint32_t ct_afalg_path(struct ct_thread *t, struct ct_alg_state *a, uint8_t dir, uint8_t entry)
{
	if (dir > CT_DIR_DECRYPT)
		dir = CT_DIR_UNKNOWN;
	if (entry >= CT_KFD_ENTRIES)
		entry = 0;
	if (CT_LIKELY(a->paths[dir][entry]))
		return a->paths[dir][entry] - 1;
	static const uint8_t entries[CT_KFD_ENTRIES] = { CT_ENTRY_AFALG_SENDMSG, CT_ENTRY_AFALG_SPLICE,
							 CT_ENTRY_AFALG_AIO };
	uint32_t keybits = a->keylen * 8;
	if (!strncmp(a->name, "xts(", 4))
		keybits /= 2;
	else if (!strncmp(a->name, "rfc4106(", 8) || !strncmp(a->name, "rfc3686(", 8))
		keybits = keybits >= 32 ? keybits - 32 : 0;
	struct ct_path_key key = {
		.api = CT_API_AFALG,
		.dir = dir,
		.entry = entries[entry],
		.route = a->route,
		.key_bits = (uint16_t)keybits,
		.flags = a->drv_flags,
		.impl = a->impl[0] ? a->impl : "kernel:unknown",
		.cipher = a->cipher[0] ? a->cipher : (a->name[0] ? a->name : "unknown"),
		.requested = a->name[0] ? a->name : NULL,
	};
	uint32_t id = ct_kernel_path_intern(t, &key);
	if (id == CT_NO_PATH)
		return id;
	a->paths[dir][entry] = id + 1;
	if (a->tfm)
		a->tfm->last_path = id;
	if (a->setup_ns) {
		ct_phase_setup(t, id, a->setup_ns);
		a->setup_ns = 0;
	}
	return id;
}

/* The key lives on the tfm socket and may be set (or changed) after accept. */
static void sync_key(struct ct_alg_state *a)
{
	const struct ct_alg_state *tfm = a->tfm;

	if (CT_LIKELY(!tfm || (tfm->keylen == a->keylen && tfm->authsize == a->authsize)))
		return;
	a->keylen = tfm->keylen;
	a->authsize = tfm->authsize;
	if (!ct_alg_openssl_cipher(a->name, a->keylen, a->cipher, sizeof(a->cipher)))
		snprintf(a->cipher, sizeof(a->cipher), "%.*s", (int)sizeof(a->cipher) - 1, a->name);
	memset(a->paths, 0, sizeof(a->paths)); /* another key size is another path */
}

void ct_afalg_op_begin(struct ct_thread *t, struct ct_alg_state *a)
{
	if (a->op_open)
		return;
	sync_key(a);
	a->op_open = true;
	a->op_spliced = false;
	a->op_failed = false;
	a->op_syscalls = 0;
	a->op_bytes = 0;
	ct_op_begin(t, &a->timer, a->last_len);
}

uint32_t ct_afalg_op_end(struct ct_thread *t, struct ct_alg_state *a, uint8_t entry, uint64_t bytes, bool ok)
{
	uint32_t path = ct_afalg_path(t, a, a->dir, entry);

	if (path == CT_NO_PATH) {
		a->op_open = false;
		return path;
	}
	/* Served in-process: the calls on the socket reached no kernel crypto. */
	for (uint32_t i = 0; a->route != CT_ROUTE_AESNI && i < a->op_syscalls; i++)
		ct_count_syscall(t, path);
	if (a->op_spliced)
		ct_mark_spliced(t, path);
	if (a->op_open)
		ct_op_end(t, &a->timer, path, bytes, ok && !a->op_failed);
	a->op_open = false;
	a->op_syscalls = 0;
	a->last_len = bytes;
	a->last_path = path;
	return path;
}

static uint8_t current_entry(const struct ct_alg_state *a, bool aio)
{
	return aio ? 2 : a->op_spliced ? 1 : 0;
}

/* ---- sends --------------------------------------------------------------------------------- */

/* Before a send on op socket st: the op begins (and the thread must be recording). */
static struct ct_thread *send_begin(struct ct_kfd_state *st)
{
	struct ct_thread *t = ct_thread_get();

	if (!t || !ct_enter(t, CT_FAM_KERNEL))
		return NULL;
	ct_afalg_op_begin(t, &st->alg);
	return t;
}

/* After it: count it, take the direction from the cmsgs, record a failure. */
static void send_end(struct ct_thread *t, struct ct_kfd_state *st, const char *call, ssize_t r, int e,
		     const struct msghdr *msg, size_t len)
{
	struct ct_alg_state *a = &st->alg;
	struct ct_alg_cmsgs c = { 0 };

	a->op_syscalls++;
	if (msg && !(r < 0 && e == EFAULT)) {
		ct_alg_parse_cmsgs(msg, &c);
		if (c.has_op)
			a->dir = c.op == CT_ALG_OP_ENCRYPT   ? CT_DIR_ENCRYPT
				 : c.op == CT_ALG_OP_DECRYPT ? CT_DIR_DECRYPT
							     : CT_DIR_UNKNOWN;
	}
	if (r >= 0) {
		a->op_bytes += (uint64_t)r;
	} else if (e != EINTR && e != EAGAIN) {
		char desc[200], cm[96];
		ct_afalg_describe(a, desc, sizeof(desc));
		ct_alg_fmt_cmsgs(cm, sizeof(cm), &c);
		ct_event(CT_EV_CALL_FAILED, call, e, r, CT_NO_PATH, true, "%s%s%s len=%zu", desc,
			 cm[0] ? " " : "", cm, len);
		a->op_failed = true;
		ct_afalg_op_end(t, a, current_entry(a, false), a->op_bytes, false);
	}
	ct_leave(t, CT_FAM_KERNEL);
}

static size_t iov_total(const struct iovec *iov, size_t n)
{
	size_t sum = 0;
	for (size_t i = 0; iov && i < n; i++)
		sum += iov[i].iov_len;
	return sum;
}

/* A tracked fd is an AF_ALG op socket (served here) or a kTLS socket (counted by ktls.c); every
 * other fd is NULL in the table and passes through. */
static inline struct ct_kfd_state *alg_op(struct ct_kfd_state *s)
{
	return s && s->kind == CT_KFD_ALG_OP ? s : NULL;
}
#define IS_KTLS(s) (CT_UNLIKELY((s) != NULL) && (s)->kind == CT_KFD_KTLS)

/* The socket's answer: the emulation's when it serves this op socket, else the kernel's. */
#define ALG_CALL(st, emulcall, realcall) ((st) && (st)->emul ? (emulcall) : (realcall))

static ssize_t emul_send_buf(struct ct_kfd_state *st, const void *buf, size_t len, int flags)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	struct msghdr msg = { .msg_iov = &iov, .msg_iovlen = 1 };
	return ct_emul_alg_send(st, &msg, flags);
}

static ssize_t emul_send_iov(struct ct_kfd_state *st, const struct iovec *iov, int n)
{
	struct msghdr msg = { .msg_iov = (struct iovec *)iov, .msg_iovlen = n > 0 ? (size_t)n : 0 };
	return ct_emul_alg_send(st, &msg, 0);
}

static ssize_t emul_recv_buf(struct ct_kfd_state *st, void *buf, size_t len, int fd, int flags)
{
	struct iovec iov = { .iov_base = buf, .iov_len = len };
	return ct_emul_alg_recv(st, &iov, 1, fd, flags);
}

static ssize_t emul_recvmsg(struct ct_kfd_state *st, struct msghdr *msg, int fd, int flags)
{
	if (!msg)
		return errno = EFAULT, -1;
	ssize_t r = ct_emul_alg_recv(st, msg->msg_iov, msg->msg_iovlen, fd, flags);
	if (r >= 0) {
		msg->msg_flags = 0;
		msg->msg_controllen = 0;
	}
	return r;
}

/* real: the twin the program called (sendmsg, __sendmsg64); an AF_ALG or kTLS socket's control
 * messages carry no time_t. */
static ssize_t sendmsg_hook(ssize_t (*real)(int, const struct msghdr *, int), int fd,
			    const struct msghdr *msg, int flags)
{
	struct ct_kfd_state *st = ct_kfd_get(fd);

	if (IS_KTLS(st))
		return CT_KTLS_CALL(st, CT_DIR_ENCRYPT, "sendmsg", real(fd, msg, flags), msg, 0);
	st = alg_op(st);
	struct ct_thread *t = st ? send_begin(st) : NULL;

	if (CT_LIKELY(!t))
		return ALG_CALL(st, ct_emul_alg_send(st, msg, flags), real(fd, msg, flags));
	ssize_t r = ALG_CALL(st, ct_emul_alg_send(st, msg, flags), real(fd, msg, flags));
	int e = ct_errno_save();
	send_end(t, st, "sendmsg", r, e, msg,
		 msg && !(r < 0 && e == EFAULT) ? iov_total(msg->msg_iov, msg->msg_iovlen) : 0);
	ct_errno_restore(e);
	return r;
}

CT_EXPORT ssize_t sendmsg(int fd, const struct msghdr *msg, int flags)
{
	return sendmsg_hook(CT_REAL(sendmsg), fd, msg, flags);
}

#ifdef CT_TIME64_HOOKS
ssize_t __sendmsg64(int fd, const struct msghdr *msg, int flags);
CT_EXPORT ssize_t __sendmsg64(int fd, const struct msghdr *msg, int flags)
{
	return sendmsg_hook(CT_REAL(__sendmsg64), fd, msg, flags);
}
#endif

CT_EXPORT ssize_t send(int fd, const void *buf, size_t len, int flags)
{
	struct ct_kfd_state *st = ct_kfd_get(fd);

	if (IS_KTLS(st))
		return CT_KTLS_CALL(st, CT_DIR_ENCRYPT, "send", CT_REAL(send)(fd, buf, len, flags), NULL, 0);
	st = alg_op(st);
	struct ct_thread *t = st ? send_begin(st) : NULL;

	if (CT_LIKELY(!t))
		return ALG_CALL(st, emul_send_buf(st, buf, len, flags), CT_REAL(send)(fd, buf, len, flags));
	ssize_t r = ALG_CALL(st, emul_send_buf(st, buf, len, flags), CT_REAL(send)(fd, buf, len, flags));
	int e = ct_errno_save();
	send_end(t, st, "send", r, e, NULL, len);
	ct_errno_restore(e);
	return r;
}

CT_EXPORT ssize_t sendto(int fd, const void *buf, size_t len, int flags, const struct sockaddr *to,
			 socklen_t tolen)
{
	struct ct_kfd_state *st = ct_kfd_get(fd);

	if (IS_KTLS(st))
		return CT_KTLS_CALL(st, CT_DIR_ENCRYPT, "sendto",
				    CT_REAL(sendto)(fd, buf, len, flags, to, tolen), NULL, 0);
	st = alg_op(st);
	struct ct_thread *t = st ? send_begin(st) : NULL;

	if (CT_LIKELY(!t))
		return ALG_CALL(st, emul_send_buf(st, buf, len, flags),
				CT_REAL(sendto)(fd, buf, len, flags, to, tolen));
	ssize_t r = ALG_CALL(st, emul_send_buf(st, buf, len, flags),
			     CT_REAL(sendto)(fd, buf, len, flags, to, tolen));
	int e = ct_errno_save();
	send_end(t, st, "sendto", r, e, NULL, len);
	ct_errno_restore(e);
	return r;
}

CT_EXPORT ssize_t write(int fd, const void *buf, size_t len)
{
	struct ct_kfd_state *st = ct_kfd_get(fd);

	if (IS_KTLS(st))
		return CT_KTLS_CALL(st, CT_DIR_ENCRYPT, "write", CT_REAL(write)(fd, buf, len), NULL, 0);
	st = alg_op(st);
	struct ct_thread *t = st ? send_begin(st) : NULL;

	if (CT_LIKELY(!t))
		return ALG_CALL(st, emul_send_buf(st, buf, len, 0), CT_REAL(write)(fd, buf, len));
	ssize_t r = ALG_CALL(st, emul_send_buf(st, buf, len, 0), CT_REAL(write)(fd, buf, len));
	int e = ct_errno_save();
	send_end(t, st, "write", r, e, NULL, len);
	ct_errno_restore(e);
	return r;
}

CT_EXPORT ssize_t writev(int fd, const struct iovec *iov, int n)
{
	struct ct_kfd_state *st = ct_kfd_get(fd);

	if (IS_KTLS(st))
		return CT_KTLS_CALL(st, CT_DIR_ENCRYPT, "writev", CT_REAL(writev)(fd, iov, n), NULL, 0);
	st = alg_op(st);
	struct ct_thread *t = st ? send_begin(st) : NULL;

	if (CT_LIKELY(!t))
		return ALG_CALL(st, emul_send_iov(st, iov, n), CT_REAL(writev)(fd, iov, n));
	ssize_t r = ALG_CALL(st, emul_send_iov(st, iov, n), CT_REAL(writev)(fd, iov, n));
	int e = ct_errno_save();
	send_end(t, st, "writev", r, e, NULL, r >= 0 ? (size_t)r : 0);
	ct_errno_restore(e);
	return r;
}

/* ---- reads --------------------------------------------------------------------------------- */

/* After a read-side call on op socket st returned r: the op completes (or fails). */
static void read_end(struct ct_kfd_state *st, const char *call, ssize_t r, int e)
{
	struct ct_thread *t = ct_thread_get();
	struct ct_alg_state *a = &st->alg;

	if (!t || !ct_enter(t, CT_FAM_KERNEL))
		return;
	if (r < 0 && (e == EINTR || e == EAGAIN)) {
		/* Not done yet: the retry completes it. */
		if (a->op_open)
			a->op_syscalls++;
	} else if (a->op_open || r < 0) {
		if (!a->op_open) /* a read with nothing sent (an rng socket, or a bad call) */
			ct_afalg_op_begin(t, a);
		a->op_syscalls++;
		uint64_t bytes = a->op_bytes ? a->op_bytes : (r > 0 ? (uint64_t)r : 0);
		uint32_t path = ct_afalg_op_end(t, a, current_entry(a, false), bytes, r >= 0);
		if (r < 0) {
			char desc[200];
			ct_afalg_describe(a, desc, sizeof(desc));
			ct_event(CT_EV_CALL_FAILED, call, e, r, path, true, "%s dir=%s len=%llu", desc,
				 ct_dir_name(a->dir), (unsigned long long)bytes);
		}
	} else if (!strcmp(a->type, "rng") && r > 0) {
		ct_afalg_op_begin(t, a);
		a->op_syscalls++;
		ct_afalg_op_end(t, a, 0, (uint64_t)r, true);
	} else if (a->last_path != CT_NO_PATH) {
		ct_count_syscall(t, a->last_path); /* the rest of an earlier result */
	}
	ct_leave(t, CT_FAM_KERNEL);
}

#define READ_HOOK(call, realcall, emulcall, msg, flags)                                                      \
	({                                                                                                   \
		struct ct_kfd_state *st_ = ct_kfd_get(fd);                                                   \
		ssize_t r_;                                                                                  \
		if (CT_LIKELY(!st_)) {                                                                       \
			r_ = realcall;                                                                       \
		} else if (st_->kind == CT_KFD_KTLS) {                                                       \
			r_ = CT_KTLS_CALL(st_, CT_DIR_DECRYPT, call, realcall, msg, flags);                  \
		} else if (st_->kind != CT_KFD_ALG_OP) {                                                     \
			r_ = realcall;                                                                       \
		} else {                                                                                     \
			r_ = st_->emul ? (emulcall) : (realcall);                                            \
			int e_ = ct_errno_save();                                                            \
			read_end(st_, call, r_, e_);                                                         \
			ct_errno_restore(e_);                                                                \
		}                                                                                            \
		r_;                                                                                          \
	})

CT_EXPORT ssize_t read(int fd, void *buf, size_t len)
{
	return READ_HOOK("read", CT_REAL(read)(fd, buf, len), emul_recv_buf(st_, buf, len, fd, 0), NULL, 0);
}

/* _FORTIFY_SOURCE builds read through these when the buffer size is known. */
ssize_t __read_chk(int fd, void *buf, size_t len, size_t buflen);
ssize_t __recv_chk(int fd, void *buf, size_t len, size_t buflen, int flags);
ssize_t __recvfrom_chk(int fd, void *buf, size_t len, size_t buflen, int flags, struct sockaddr *from,
		       socklen_t *fromlen);

CT_EXPORT ssize_t __read_chk(int fd, void *buf, size_t len, size_t buflen)
{
	return READ_HOOK("read", CT_REAL(__read_chk)(fd, buf, len, buflen),
			 emul_recv_buf(st_, buf, len < buflen ? len : buflen, fd, 0), NULL, 0);
}

CT_EXPORT ssize_t __recv_chk(int fd, void *buf, size_t len, size_t buflen, int flags)
{
	return READ_HOOK("recv", CT_REAL(__recv_chk)(fd, buf, len, buflen, flags),
			 emul_recv_buf(st_, buf, len < buflen ? len : buflen, fd, flags), NULL, flags);
}

CT_EXPORT ssize_t __recvfrom_chk(int fd, void *buf, size_t len, size_t buflen, int flags,
				 struct sockaddr *from, socklen_t *fromlen)
{
	return READ_HOOK("recvfrom", CT_REAL(__recvfrom_chk)(fd, buf, len, buflen, flags, from, fromlen),
			 emul_recv_buf(st_, buf, len < buflen ? len : buflen, fd, flags), NULL, flags);
}

CT_EXPORT ssize_t readv(int fd, const struct iovec *iov, int n)
{
	return READ_HOOK("readv", CT_REAL(readv)(fd, iov, n),
			 ct_emul_alg_recv(st_, iov, n > 0 ? (size_t)n : 0, fd, 0), NULL, 0);
}

CT_EXPORT ssize_t recv(int fd, void *buf, size_t len, int flags)
{
	return READ_HOOK("recv", CT_REAL(recv)(fd, buf, len, flags), emul_recv_buf(st_, buf, len, fd, flags),
			 NULL, flags);
}

CT_EXPORT ssize_t recvfrom(int fd, void *buf, size_t len, int flags, struct sockaddr *from,
			   socklen_t *fromlen)
{
	return READ_HOOK("recvfrom", CT_REAL(recvfrom)(fd, buf, len, flags, from, fromlen),
			 emul_recv_buf(st_, buf, len, fd, flags), NULL, flags);
}

CT_EXPORT ssize_t recvmsg(int fd, struct msghdr *msg, int flags)
{
	return READ_HOOK("recvmsg", CT_REAL(recvmsg)(fd, msg, flags), emul_recvmsg(st_, msg, fd, flags), msg,
			 flags);
}

#ifdef CT_TIME64_HOOKS
ssize_t __recvmsg64(int fd, struct msghdr *msg, int flags);
CT_EXPORT ssize_t __recvmsg64(int fd, struct msghdr *msg, int flags)
{
	return READ_HOOK("recvmsg", CT_REAL(__recvmsg64)(fd, msg, flags), emul_recvmsg(st_, msg, fd, flags),
			 msg, flags);
}
#endif

/* ---- splice / vmsplice --------------------------------------------------------------------- */

CT_EXPORT ssize_t vmsplice(int fd, const struct iovec *iov, size_t n, unsigned int flags)
{
	ssize_t r = CT_REAL(vmsplice)(fd, iov, n, flags);

	if (atomic_load_explicit(&ct_kfd_alg_ops, memory_order_relaxed))
		pending_vmsplices++;
	return r;
}

CT_EXPORT ssize_t splice(int fd_in, off_t *off_in, int fd_out, off_t *off_out, size_t len, unsigned int flags)
{
	struct ct_kfd_state *out = ct_kfd_get(fd_out), *in = ct_kfd_get(fd_in);

	if (CT_LIKELY(!out && !in))
		return CT_REAL(splice)(fd_in, off_in, fd_out, off_out, len, flags);
	/* a file or pipe spliced into a kTLS socket is sent (encrypted); out of one, received */
	if (IS_KTLS(out))
		return CT_KTLS_CALL(out, CT_DIR_ENCRYPT, "splice",
				    CT_REAL(splice)(fd_in, off_in, fd_out, off_out, len, flags), NULL, 0);
	if (IS_KTLS(in))
		return CT_KTLS_CALL(in, CT_DIR_DECRYPT, "splice",
				    CT_REAL(splice)(fd_in, off_in, fd_out, off_out, len, flags), NULL, 0);
	out = alg_op(out);
	in = alg_op(in);
	if (!out && !in)
		return CT_REAL(splice)(fd_in, off_in, fd_out, off_out, len, flags);
	struct ct_thread *t = out ? send_begin(out) : NULL;
	ssize_t r;
	if (out && out->emul)
		r = ct_emul_alg_splice_in(out, fd_in, len, flags);
	else if (in && in->emul) /* the result spliced out of an emulated socket: not served */
		r = (errno = EINVAL, -1);
	else
		r = CT_REAL(splice)(fd_in, off_in, fd_out, off_out, len, flags);
	int e = ct_errno_save();
	if (t) {
		out->alg.op_spliced = true;
		out->alg.op_syscalls += pending_vmsplices;
		pending_vmsplices = 0;
		send_end(t, out, "splice", r, e, NULL, len);
	}
	if (in) /* the result spliced out of the op socket */
		read_end(in, "splice", r, e);
	ct_errno_restore(e);
	return r;
}

/* ---- AIO through syscall(2) ---------------------------------------------------------------- */

/* iocb -> op fd for submitted reads, so io_getevents can find the op without dereferencing a
 * pointer the program may have freed. */
#define AIO_SLOTS 256u
static struct {
	_Atomic uintptr_t iocb;
	int fd;
} aio_slots[AIO_SLOTS];

static unsigned aio_hash(uintptr_t p)
{
	return (unsigned)((p >> 4) * 0x9e3779b1u) & (AIO_SLOTS - 1);
}

static void aio_remember(uintptr_t iocb, int fd)
{
	for (unsigned i = 0, at = aio_hash(iocb); i < AIO_SLOTS; i++, at = (at + 1) & (AIO_SLOTS - 1)) {
		uintptr_t expect = 0;
		if (atomic_load(&aio_slots[at].iocb) == iocb ||
		    atomic_compare_exchange_strong(&aio_slots[at].iocb, &expect, iocb)) {
			aio_slots[at].fd = fd;
			return;
		}
	}
}

static int aio_take(uintptr_t iocb)
{
	for (unsigned i = 0, at = aio_hash(iocb); i < AIO_SLOTS; i++, at = (at + 1) & (AIO_SLOTS - 1)) {
		if (atomic_load(&aio_slots[at].iocb) == iocb) {
			int fd = aio_slots[at].fd;
			atomic_store(&aio_slots[at].iocb, 0);
			return fd;
		}
	}
	return -1;
}

static void aio_submitted(long r, int e, long nr, struct iocb **iocbpp)
{
	struct ct_thread *t = ct_thread_get();

	if (!t || !iocbpp || nr <= 0 || (r < 0 && e == EFAULT) || !ct_enter(t, CT_FAM_KERNEL))
		return;
	bool counted = false;
	/* On success the kernel read the first r pointers; on failure, at least the first one. */
	long n = r >= 0 ? r : 1;
	for (long i = 0; i < n && i < nr; i++) {
		struct iocb *cb = iocbpp[i];
		struct ct_kfd_state *st = cb ? alg_op(ct_kfd_get((int)cb->aio_fildes)) : NULL;
		if (!st)
			continue;
		struct ct_alg_state *a = &st->alg;
		ct_afalg_op_begin(t, a);
		if (!counted) {
			a->op_syscalls++; /* one io_submit, charged to its first op */
			counted = true;
		}
		if (r >= 0) {
			aio_remember((uintptr_t)cb, (int)cb->aio_fildes);
		} else {
			char desc[200];
			ct_afalg_describe(a, desc, sizeof(desc));
			uint32_t path = ct_afalg_op_end(t, a, 2, a->op_bytes, false);
			ct_event(CT_EV_CALL_FAILED, "io_submit", e, r, path, true, "%s opcode=%u nbytes=%llu",
				 desc, (unsigned)cb->aio_lio_opcode, (unsigned long long)cb->aio_nbytes);
		}
	}
	ct_leave(t, CT_FAM_KERNEL);
}

static void aio_completed(long r, struct io_event *events)
{
	struct ct_thread *t = ct_thread_get();

	if (!t || r <= 0 || !events || !ct_enter(t, CT_FAM_KERNEL))
		return;
	bool counted = false;
	for (long i = 0; i < r; i++) {
		int fd = aio_take((uintptr_t)events[i].obj);
		struct ct_kfd_state *st = fd >= 0 ? alg_op(ct_kfd_get(fd)) : NULL;
		if (!st)
			continue;
		struct ct_alg_state *a = &st->alg;
		if (!counted) {
			a->op_syscalls++; /* one io_getevents, charged to its first op */
			counted = true;
		}
		long res = (long)events[i].res;
		uint64_t bytes = a->op_bytes ? a->op_bytes : (res > 0 ? (uint64_t)res : 0);
		uint32_t path = ct_afalg_op_end(t, a, 2, bytes, res >= 0);
		if (res < 0) {
			char desc[200];
			ct_afalg_describe(a, desc, sizeof(desc));
			ct_event(CT_EV_CALL_FAILED, "io_getevents", (int)-res, res, path, true,
				 "%s dir=%s len=%llu", desc, ct_dir_name(a->dir), (unsigned long long)bytes);
		}
	}
	ct_leave(t, CT_FAM_KERNEL);
}

/* syscall(2) is variadic; the kernel takes at most six argument words, and reading six from a
 * call that passed fewer reads registers/stack slots that are simply unused, as glibc's own
 * syscall() does. */
CT_EXPORT long syscall(long number, ...)
{
	va_list ap;
	va_start(ap, number);
	long a1 = va_arg(ap, long), a2 = va_arg(ap, long), a3 = va_arg(ap, long);
	long a4 = va_arg(ap, long), a5 = va_arg(ap, long), a6 = va_arg(ap, long);
	va_end(ap);

	long (*real)(long, ...) = CT_REAL(syscall);
	if (CT_UNLIKELY(!real)) {
		errno = ENOSYS;
		return -1;
	}
	if (CT_LIKELY(number != SYS_io_submit && number != SYS_io_getevents) ||
	    !atomic_load_explicit(&ct_kfd_alg_ops, memory_order_relaxed)) {
		if (CT_UNLIKELY(number == SYS_seccomp) &&
		    (a1 == SECCOMP_SET_MODE_STRICT || a1 == SECCOMP_SET_MODE_FILTER))
			ct_signals_before_sandbox(); /* signals.c: before the filter can forbid them */
		return real(number, a1, a2, a3, a4, a5, a6);
	}
	bool served = false;
	long r = number == SYS_io_submit
			 ? ct_emul_aio_submit((unsigned long)a1, a2, (struct iocb **)a3, &served)
			 : ct_emul_aio_getevents((unsigned long)a1, a2, a3, (struct io_event *)a4, &served);
	if (!served)
		r = real(number, a1, a2, a3, a4, a5, a6);
	int e = ct_errno_save();
	if (number == SYS_io_submit)
		aio_submitted(r, e, a2, (struct iocb **)a3);
	else
		aio_completed(r, (struct io_event *)a4);
	ct_errno_restore(e);
	return r;
}
