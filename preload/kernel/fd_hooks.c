/* SPDX-License-Identifier: MIT */
/*
 * fd_hooks.c - close, dup, dup2, dup3, fcntl(F_DUPFD*), close_range and closefrom keep the kernel
 * hooks' fd table true, and keep the preload's own trace fd safe: when a program closes it
 * (daemons close every fd), the close happens and the writer is told, so it reopens a new file
 * instead of writing into whatever file gets that number next.
 *
 * Every call on an fd the table does not know, and that is not the trace fd, passes straight
 * through after an O(1) check.
 */
/* We define both open and open64 (fcntl and fcntl64): the 64-bit-offset redirection meson turns
 * on would alias them. */
#undef _FILE_OFFSET_BITS
#include <fcntl.h>
#include <stdarg.h>
#include <sys/resource.h>
#include <unistd.h>

#include "core.h"
#include "khooks.h"
#include "writer.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

int close_range(unsigned int first, unsigned int last, int flags);
void closefrom(int lowfd);

void ct_kernel_closed(int fd, struct ct_kfd_state *st, uint64_t close_ns)
{
	(void)fd;
	struct ct_thread *t = ct_thread_get();

	if (t && ct_enter(t, CT_FAM_KERNEL)) {
		if (st->kind == CT_KFD_ALG_OP)
			ct_afalg_closed(t, st, close_ns);
		else if (st->kind == CT_KFD_ALG_TFM && st->alg.last_path != CT_NO_PATH)
			ct_phase_teardown_more(t, st->alg.last_path,
					       close_ns); /* the session's other socket */
		else if (st->kind == CT_KFD_CDEV || st->kind == CT_KFD_CDEV_CLONE)
			ct_cdev_closed(t, st);
		ct_leave(t, CT_FAM_KERNEL);
	} else if (st->kind == CT_KFD_CDEV || st->kind == CT_KFD_CDEV_CLONE) {
		ct_cdev_closed(NULL, st); /* the sessions are gone whether or not we record it */
	}
	ct_kfd_free(st);
}

/* The trace fd was in a closed range: tell the writer. Without an accessor for the fd itself,
 * test each number up to the fd limit (an open fd is always below it); close_range and closefrom
 * are rare calls (once, when a daemon starts). */
static void writer_range_closed(unsigned first, unsigned last)
{
	struct rlimit rl;
	unsigned limit = 1u << 20;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < limit)
		limit = (unsigned)rl.rlim_cur;
	if (last >= limit)
		last = limit - 1;
	for (unsigned fd = first; fd <= last; fd++) {
		if (ct_writer_owns_fd((int)fd)) {
			ct_writer_fd_closed();
			return;
		}
	}
}

static void range_closed(int fd, struct ct_kfd_state *st)
{
	ct_kernel_closed(fd, st, 0);
}

CT_EXPORT int close(int fd)
{
	struct ct_kfd_state *st = ct_kfd_get(fd);

	if (CT_LIKELY(!st)) {
		if (CT_UNLIKELY(ct_writer_owns_fd(fd))) {
			int r = CT_REAL(close)(fd);
			int e = ct_errno_save();
			ct_writer_fd_closed();
			ct_errno_restore(e);
			return r;
		}
		return CT_REAL(close)(fd);
	}
	/* Forget first: once the real close returns, another thread may get this number back. */
	struct ct_kfd_state *last = ct_kfd_forget(fd);
	uint64_t t0 = last ? ct_now_ns() : 0;
	int r = CT_REAL(close)(fd);
	int e = ct_errno_save();
	if (last)
		ct_kernel_closed(fd, last, ct_now_ns() - t0);
	ct_errno_restore(e);
	return r;
}

/* newfd now refers to what oldfd refers to (after a successful dup*). */
static void dup_done(int oldfd, int newfd)
{
	struct ct_kfd_state *st = ct_kfd_get(oldfd);

	if (newfd < 0 || newfd == oldfd)
		return;
	if (ct_writer_owns_fd(newfd))
		ct_writer_fd_closed(); /* dup2 onto our trace fd replaced it */
	if (st) {
		ct_kfd_share(newfd, st);
		return;
	}
	struct ct_kfd_state *last = ct_kfd_forget(newfd); /* dup2 over a tracked fd closes it */
	if (last)
		ct_kernel_closed(newfd, last, 0);
}

CT_EXPORT int dup(int oldfd)
{
	int r = CT_REAL(dup)(oldfd);

	if (CT_UNLIKELY(r >= 0 && ct_kfd_get(oldfd))) {
		int e = ct_errno_save();
		dup_done(oldfd, r);
		ct_errno_restore(e);
	}
	return r;
}

CT_EXPORT int dup2(int oldfd, int newfd)
{
	bool interesting = ct_kfd_get(oldfd) || ct_kfd_get(newfd) || ct_writer_owns_fd(newfd);
	int r = CT_REAL(dup2)(oldfd, newfd);

	if (CT_UNLIKELY(interesting && r >= 0)) {
		int e = ct_errno_save();
		dup_done(oldfd, r);
		ct_errno_restore(e);
	}
	return r;
}

CT_EXPORT int dup3(int oldfd, int newfd, int flags)
{
	bool interesting = ct_kfd_get(oldfd) || ct_kfd_get(newfd) || ct_writer_owns_fd(newfd);
	int r = CT_REAL(dup3)(oldfd, newfd, flags);

	if (CT_UNLIKELY(interesting && r >= 0)) {
		int e = ct_errno_save();
		dup_done(oldfd, r);
		ct_errno_restore(e);
	}
	return r;
}

/* fcntl's third argument is an int or a pointer depending on cmd; forwarding it as a pointer-
 * sized value is what glibc itself does. */
static int fcntl_common(int (*real)(int, int, ...), int fd, int cmd, void *arg)
{
	if (!real) {
		errno = ENOSYS;
		return -1;
	}
	int r = real(fd, cmd, arg);
	if (CT_UNLIKELY((cmd == F_DUPFD || cmd == F_DUPFD_CLOEXEC) && r >= 0 && ct_kfd_get(fd))) {
		int e = ct_errno_save();
		dup_done(fd, r);
		ct_errno_restore(e);
	}
	return r;
}

CT_EXPORT int fcntl(int fd, int cmd, ...)
{
	va_list ap;
	va_start(ap, cmd);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	return fcntl_common(CT_REAL(fcntl), fd, cmd, arg);
}

/* Programs built with _FILE_OFFSET_BITS=64 on glibc >= 2.28 call fcntl64. */
int fcntl64(int fd, int cmd, ...);
CT_EXPORT int fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	va_start(ap, cmd);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	return fcntl_common(CT_REAL(fcntl64), fd, cmd, arg);
}

#ifdef CT_TIME64_HOOKS
int __fcntl_time64(int fd, int cmd, ...);
CT_EXPORT int __fcntl_time64(int fd, int cmd, ...)
{
	va_list ap;
	va_start(ap, cmd);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	return fcntl_common(CT_REAL(__fcntl_time64), fd, cmd, arg);
}
#endif

CT_EXPORT int close_range(unsigned int first, unsigned int last, int flags)
{
	if (!CT_REAL(close_range)) {
		errno = ENOSYS;
		return -1;
	}
	int r = CT_REAL(close_range)(first, last, flags);
	if (r == 0 && !(flags & CLOSE_RANGE_CLOEXEC)) {
		int e = ct_errno_save();
		ct_kfd_forget_range(first, last, range_closed);
		writer_range_closed(first, last);
		ct_errno_restore(e);
	}
	return r;
}

CT_EXPORT void closefrom(int lowfd)
{
	if (!CT_REAL(closefrom))
		return;
	CT_REAL(closefrom)(lowfd);
	int e = ct_errno_save();
	if (lowfd >= 0) {
		ct_kfd_forget_range((unsigned)lowfd, ~0u, range_closed);
		writer_range_closed((unsigned)lowfd, ~0u);
	}
	ct_errno_restore(e);
}
