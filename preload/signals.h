/* SPDX-License-Identifier: MIT */
/*
 * signals.h - a process ended by a signal whose default action terminates it (SIGTERM, SIGINT,
 * SIGHUP, SIGQUIT, SIGPIPE) writes its last snapshot and END before it dies, the way exit does:
 * the preload catches those signals while the program leaves them at SIG_DFL, and nowhere else.
 * The program sees SIG_DFL in every query, its own handlers replace ours, and after the final
 * write the signal is raised again at SIG_DFL so that the process ends exactly as it would have
 * (termination signal, core dump). signals.c has the details; docs/reliability.md the promises.
 *
 * Also here: the per-thread "inside the writer" count that makes that handler safe. A signal
 * that lands while its thread holds one of the preload's locks (a flush, an event) cannot flush
 * on that thread without deadlocking on itself: the handler notes the signal and returns, and
 * the thread acts on it when it lets go of its last lock (ct_lock / ct_unlock).
 */
#ifndef CT_SIGNALS_H
#define CT_SIGNALS_H

#include <pthread.h>
#include <signal.h>
#include <stdbool.h>

#pragma GCC visibility push(hidden)

/* How many of the preload's locks this thread holds, and a fatal signal that landed meanwhile. */
extern __thread unsigned ct_sig_crit __attribute__((tls_model("initial-exec")));
extern __thread int ct_sig_deferred __attribute__((tls_model("initial-exec")));
void ct_signals_deferred_now(void); /* ends the process with ct_sig_deferred */

static inline void ct_crit_enter(void)
{
	ct_sig_crit++;
	__atomic_signal_fence(__ATOMIC_SEQ_CST); /* counted before the lock is taken */
}

static inline void ct_crit_leave(void)
{
	__atomic_signal_fence(__ATOMIC_SEQ_CST); /* the lock was released before this */
	if (--ct_sig_crit == 0 && __builtin_expect(ct_sig_deferred != 0, 0))
		ct_signals_deferred_now();
}

/* The preload's mutexes, with the count above. */
static inline void ct_lock(pthread_mutex_t *m)
{
	ct_crit_enter();
	pthread_mutex_lock(m);
}

static inline bool ct_trylock(pthread_mutex_t *m)
{
	ct_crit_enter();
	if (pthread_mutex_trylock(m) == 0)
		return true;
	ct_crit_leave();
	return false;
}

static inline void ct_unlock(pthread_mutex_t *m)
{
	pthread_mutex_unlock(m);
	ct_crit_leave();
}

/* Waits for m at most a couple of seconds: the last write before the process dies (_exit, a
 * fatal signal) must never hang it on a lock whose holder is stuck behind this very thread (a
 * flush on another thread waiting for the loader lock that this thread holds, interrupted in
 * dlopen). False: not taken, the caller gives up writing. */
bool ct_lock_bounded(pthread_mutex_t *m);

/* At start (ct_init): the handlers for the signals still at SIG_DFL. */
void ct_signals_init(void);
/* `cryptrace attach`'s begin, in place of ct_signals_init: the seccomp baseline and the
 * handlers (none, and no flusher, in a process under a filter); its end puts SIG_DFL back. */
void ct_signals_attach_begin(void);
void ct_signals_attach_end(void);
/* The program is about to install a seccomp filter (prctl(PR_SET_SECCOMP), seccomp(2)): put SIG_DFL
 * back where our handler stands, stop the flusher thread and never start anything again. */
void ct_signals_before_sandbox(void);
/* A filter was installed since start: by the program through our hooks, or now seen in
 * /proc/self/status (one read: call it before starting something, not per operation). Nothing
 * new (handlers, threads, syscalls) is started then. */
bool ct_signals_sandboxed(void);
/* Seccomp mode and filter count from /proc/self/status (filters -1 on kernels before 5.9, which
 * do not show it); false when it cannot be read (a sandbox may deny the open). */
bool ct_seccomp_state(int *mode, int *filters);
/* Fork: signals are blocked from the prepare handler to the end of the parent/child ones, so
 * that no handler runs while the atfork handlers hold the preload's locks (a child takes them
 * over by re-initialising them: it starts its count from zero). */
void ct_signals_fork_prepare(void);
void ct_signals_fork_done(void);

/* ---- for the hooks (hooks/signal.c) ------------------------------------------------------- */

/* One of the signals above, in a traced process that is not sandboxed. */
bool ct_sig_managed(int sig);
/* old as the kernel returned it: our handler is replaced by the program's SIG_DFL. */
void ct_sig_program_view(int sig, struct sigaction *old);
bool ct_sig_handler_is_ours(const struct sigaction *sa);
/* The same for the signal() family's return value. */
typedef void (*ct_sighandler)(int);
ct_sighandler ct_sig_program_handler(int sig, ct_sighandler prev);
/* The program just set sig to SIG_DFL: put our handler in its place (the kernel's SIG_DFL, with
 * the program's flags and mask, is what queries return from now on). */
void ct_sig_take(int sig);
/* The real sigaction (resolved at start: the handler never calls dlsym). */
int ct_real_sigaction(int sig, const struct sigaction *act, struct sigaction *old);
void ct_signal_hooks_resolve(void);

#pragma GCC visibility pop

#endif
