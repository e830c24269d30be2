/* SPDX-License-Identifier: MIT */
/*
 * signal.c (hooks) - what the program sees of the preload's fatal-signal handler (signals.c):
 * nothing. sigaction() and the signal() family report the program's own SIG_DFL where our
 * handler stands, and setting SIG_DFL puts our handler back under it. glibc's signal(),
 * bsd_signal(), sysv_signal() and sigset() reach the kernel through an internal sigaction that
 * no preload can see, so each is hooked on its own: the real call does exactly what it would
 * have done, then the result is corrected. sigignore() needs nothing (SIG_IGN is never ours).
 *
 * prctl(PR_SET_SECCOMP) (and seccomp(2) through syscall(), kernel/afalg_data.c): the handler
 * and the flusher thread step aside before the program's filter can forbid their syscalls.
 * pthread_exit() of the main thread: the flusher thread must not be what keeps the process
 * alive once the program's own threads are gone (flusher.c). unshare() and setns(): the kernel
 * refuses some of them (a new user namespace, another mount namespace) in a process with more
 * than one thread, so the flusher thread is not there during the call.
 */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"
#include "flusher.h"
#include "signals.h"

/* Not declared by every libc's headers (bsd_signal, __sysv_signal) or not under our feature
 * macros: the ABI is the same everywhere they exist. */
ct_sighandler bsd_signal(int sig, ct_sighandler h);
ct_sighandler ssignal(int sig, ct_sighandler h);
ct_sighandler sysv_signal(int sig, ct_sighandler h);
ct_sighandler __sysv_signal(int sig, ct_sighandler h);
ct_sighandler sigset(int sig, ct_sighandler h);
int __sigaction(int sig, const struct sigaction *act, struct sigaction *old);

/* Resolved at start (ct_signals_init): the fatal-signal handler calls the real sigaction and
 * must never reach dlsym. */
static int (*real_sigaction)(int, const struct sigaction *, struct sigaction *);
static int (*real___sigaction)(int, const struct sigaction *, struct sigaction *);
static ct_sighandler (*real_signal)(int, ct_sighandler);
static ct_sighandler (*real_bsd_signal)(int, ct_sighandler);
static ct_sighandler (*real_ssignal)(int, ct_sighandler);
static ct_sighandler (*real_sysv_signal)(int, ct_sighandler);
static ct_sighandler (*real___sysv_signal)(int, ct_sighandler);
static ct_sighandler (*real_sigset)(int, ct_sighandler);
static int (*real_prctl)(int, ...);
static void (*real_pthread_exit)(void *);
static int (*real_unshare)(int);
static int (*real_setns)(int, int);

#define RESOLVE(fn)                                                                                          \
	do {                                                                                                 \
		if (!__atomic_load_n(&real_##fn, __ATOMIC_ACQUIRE))                                          \
			__atomic_store_n(&real_##fn, (__typeof__(real_##fn))ct_resolve(#fn),                 \
					 __ATOMIC_RELEASE);                                                  \
	} while (0)

void ct_signal_hooks_resolve(void)
{
	RESOLVE(sigaction);
	RESOLVE(__sigaction);
	RESOLVE(signal);
	RESOLVE(bsd_signal);
	RESOLVE(ssignal);
	RESOLVE(sysv_signal);
	RESOLVE(__sysv_signal);
	RESOLVE(sigset);
	RESOLVE(prctl);
	RESOLVE(pthread_exit);
	RESOLVE(unshare);
	RESOLVE(setns);
}

#define REAL(fn)                                                                                             \
	(__atomic_load_n(&real_##fn, __ATOMIC_ACQUIRE) ? real_##fn : (ct_signal_hooks_resolve(), real_##fn))

int ct_real_sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	__typeof__(real_sigaction) real = REAL(sigaction);
	if (CT_UNLIKELY(!real)) {
		errno = ENOSYS;
		return -1;
	}
	return real(sig, act, old);
}

static int sigaction_hook(__typeof__(real_sigaction) real, int sig, const struct sigaction *act,
			  struct sigaction *old)
{
	if (CT_UNLIKELY(!real)) {
		errno = ENOSYS;
		return -1;
	}
	if (!ct_ready())
		return real(sig, act, old);
	struct sigaction want, prev;
	if (act)
		want = *act; /* act and old may be the same struct */
	int r = real(sig, act ? &want : NULL, &prev);
	if (r != 0)
		return r;
	int e = errno;
	ct_sig_program_view(sig, &prev);
	if (act && want.sa_handler == SIG_DFL)
		ct_sig_take(sig);
	if (old)
		*old = prev;
	errno = e;
	return r;
}

CT_EXPORT int sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	return sigaction_hook(REAL(sigaction), sig, act, old);
}

CT_EXPORT int __sigaction(int sig, const struct sigaction *act, struct sigaction *old)
{
	return sigaction_hook(REAL(__sigaction), sig, act, old);
}

/* The signal() family returns the previous handler: SIG_DFL where ours stood. */
static ct_sighandler signal_hook(ct_sighandler (*real)(int, ct_sighandler), int sig, ct_sighandler h)
{
	if (CT_UNLIKELY(!real)) {
		errno = ENOSYS;
		return SIG_ERR;
	}
	if (!ct_ready())
		return real(sig, h);
	ct_sighandler prev = real(sig, h);
	if (prev == SIG_ERR)
		return prev;
	int e = errno;
	prev = ct_sig_program_handler(sig, prev);
	if (h == SIG_DFL)
		ct_sig_take(sig);
	errno = e;
	return prev;
}

#define SIGNAL_HOOK(fn)                                                                                      \
	CT_EXPORT ct_sighandler fn(int sig, ct_sighandler h)                                                 \
	{                                                                                                    \
		return signal_hook(REAL(fn), sig, h);                                                        \
	}

SIGNAL_HOOK(signal)
SIGNAL_HOOK(bsd_signal)
SIGNAL_HOOK(ssignal)
SIGNAL_HOOK(sysv_signal)
SIGNAL_HOOK(__sysv_signal)
SIGNAL_HOOK(sigset)

/* prctl takes up to four more words; reading four from a call that passed fewer reads unused
 * registers or stack slots, as glibc's own prctl() does. */
CT_EXPORT int prctl(int option, ...)
{
	va_list ap;
	va_start(ap, option);
	unsigned long a2 = va_arg(ap, unsigned long), a3 = va_arg(ap, unsigned long);
	unsigned long a4 = va_arg(ap, unsigned long), a5 = va_arg(ap, unsigned long);
	va_end(ap);
	__typeof__(real_prctl) real = REAL(prctl);
	if (CT_UNLIKELY(!real)) {
		errno = ENOSYS;
		return -1;
	}
	if (option == PR_SET_SECCOMP)
		ct_signals_before_sandbox();
	return real(option, a2, a3, a4, a5);
}

/* The flusher thread is not there during the call (and is back after it, errno kept). */
static bool flusher_off(void)
{
	return ct_ready() && !ct_proc_is_vfork_child() && ct_flusher_pause();
}

static void flusher_back(bool paused)
{
	if (paused) {
		int e = errno;
		ct_flusher_resume();
		errno = e;
	}
}

CT_EXPORT int unshare(int flags)
{
	__typeof__(real_unshare) real = REAL(unshare);
	if (CT_UNLIKELY(!real)) {
		errno = ENOSYS;
		return -1;
	}
	bool paused = flusher_off();
	int r = real(flags);
	flusher_back(paused);
	return r;
}

CT_EXPORT int setns(int fd, int nstype)
{
	__typeof__(real_setns) real = REAL(setns);
	if (CT_UNLIKELY(!real)) {
		errno = ENOSYS;
		return -1;
	}
	bool paused = flusher_off();
	int r = real(fd, nstype);
	flusher_back(paused);
	return r;
}

CT_EXPORT void pthread_exit(void *ret)
{
	__typeof__(real_pthread_exit) real = REAL(pthread_exit);
	if (ct_ready() && syscall(SYS_gettid) == getpid())
		ct_flusher_main_exiting();
	if (real)
		real(ret);
	for (;;)
		pause(); /* pthread_exit never returns; without libc's there is nothing better to do */
}
