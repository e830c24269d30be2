/* SPDX-License-Identifier: MIT */
/*
 * flusher.c - the flusher thread. Snapshots used to be written only from hooked calls (a timed
 * call past the deadline, a context free): a server that did a burst of work and then sat idle
 * never wrote again, and a SIGKILL took the burst with it. One thread per traced process now
 * wakes every CRYPTRACE_FLUSH_MS and writes a snapshot when something changed since the last
 * one, so a kill loses at most one interval of work, idle or not.
 *
 * A thread rather than a timer: timer_create(SIGEV_SIGNAL) sends the program a signal (EINTR
 * in its system calls, a signal number it may use itself); SIGEV_THREAD makes a thread anyway,
 * glibc's, whose mask and end we do not control; a timerfd needs a thread to read it.
 *
 * What the thread must never do, and how it does not:
 *  - exist without something to write: it starts with the process's first cipher path
 *    (registry.c), not at start; a process without crypto never gets one;
 *  - take a signal: all are blocked in it, so process-directed signals reach the program's
 *    threads as before (a signal the program blocks everywhere and reads with sigwait() or a
 *    signalfd still reaches it), and the fatal-signal handler (signals.c) never runs here;
 *  - be counted: it has no per-thread state (ct_thread_internal), hooks it reaches pass through;
 *  - cost anything while idle: a wake-up sums the counters (microseconds) and writes nothing
 *    when nothing changed (ct_flush_periodic): no record, no system call but the wait;
 *  - keep the process alive: exit() ends it with every other thread; a main thread that leaves
 *    with pthread_exit() (hooks/signal.c) leaves the process to its other threads, the last of
 *    which ends it: the flusher ends then too (after one last snapshot, whose PROC says that
 *    snapshots are no longer periodic), so that it is never that last thread;
 *  - live in a sandbox: it is not started once a seccomp filter was installed since the process
 *    started, and it is stopped and joined before the program installs one (signals.c);
 *  - make a single-threaded program multithreaded where that shows: unshare(CLONE_NEWUSER) and
 *    setns() into a user or mount namespace fail with EINVAL in a process with threads, so the
 *    flusher ends (joined) for those calls and starts again after them (hooks/signal.c);
 *  - follow fork wrongly: a fork child has only the forking thread; it starts its own flusher
 *    when the parent had one (its own trace file is open by then).
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "flusher.h"
#include "gotpatch.h"
#include "signals.h"

enum { FL_NONE, FL_STARTING, FL_RUNNING, FL_ENDED, FL_NEVER };

static _Atomic int state;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER; /* quit, the thread's start and end */
static pthread_cond_t wake;
static bool cond_made, quit;
static pthread_t thread;
static _Atomic pid_t thread_tid; /* the kernel's id of the flusher thread, for join_fully */
/* The start waits until the new thread is through its own start-up (thread.c's state, a
 * sanitizer runtime's bookkeeping, which allocates): a fork right after ct_flusher_start
 * must not copy a lock that this thread holds halfway through. */
static pthread_mutex_t settle_lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t settle_cond = PTHREAD_COND_INITIALIZER;
static bool settled;

static bool make_cond(void)
{
	if (cond_made)
		return true;
	pthread_condattr_t a;
	if (pthread_condattr_init(&a) != 0)
		return false;
	bool ok = pthread_condattr_setclock(&a, CLOCK_MONOTONIC) == 0 && pthread_cond_init(&wake, &a) == 0;
	pthread_condattr_destroy(&a);
	cond_made = ok;
	return ok;
}

/* Attached (docs/attach.md): how soon a module the program loads is patched (gotpatch.c). */
#define MODULE_POLL_NS (100ull * 1000000)

/* The next deadline as a CLOCK_MONOTONIC time: now plus what is left until ct_g.next_flush (in
 * the trace's clock, TSC or ns), so that a drift between the two clocks cannot make it spin. */
static void next_wake(struct timespec *ts)
{
	uint64_t now = ct_clock_now();
	uint64_t due = atomic_load_explicit(&ct_g.next_flush, memory_order_relaxed);
	uint64_t left = due > now ? ct_clock_to_ns(due - now) : 0;
	if (ct_attach_late() && left > MODULE_POLL_NS)
		left = MODULE_POLL_NS;
	clock_gettime(CLOCK_MONOTONIC, ts);
	uint64_t ns = (uint64_t)ts->tv_nsec + left % 1000000000u;
	ts->tv_sec += (time_t)(left / 1000000000u + ns / 1000000000u);
	ts->tv_nsec = (long)(ns % 1000000000u);
}

static void *flusher_main(void *arg)
{
	(void)arg;
	ct_thread_internal();
	atomic_store(&thread_tid, (pid_t)syscall(SYS_gettid));
	pthread_setname_np(pthread_self(), "cryptrace-flush");
	pthread_mutex_lock(&settle_lock);
	settled = true;
	pthread_cond_signal(&settle_cond);
	pthread_mutex_unlock(&settle_lock);
	pthread_mutex_lock(&lock);
	while (!quit) {
		struct timespec until;
		next_wake(&until);
		pthread_cond_timedwait(&wake, &lock, &until);
		if (quit)
			break;
		pthread_mutex_unlock(&lock);
		ct_flush_periodic(); /* when due */
		if (ct_attach_late())
			ct_got_patch_new();
		pthread_mutex_lock(&lock);
	}
	pthread_mutex_unlock(&lock);
	return NULL;
}

void ct_flusher_start(void)
{
	if (atomic_load_explicit(&state, memory_order_relaxed) != FL_NONE || !ct_config()->flusher)
		return;
	if (!ct_ready() || ct_proc_is_vfork_child())
		return;
	int expect = FL_NONE;
	if (!atomic_compare_exchange_strong(&state, &expect, FL_STARTING))
		return;
	int saved = errno;
	int next = FL_NEVER;
	pthread_mutex_lock(&lock);
	if (atomic_load(&state) != FL_STARTING) { /* stopped or ended meanwhile: stays so */
		pthread_mutex_unlock(&lock);
		errno = saved;
		return;
	}
	if (!ct_signals_sandboxed() && make_cond()) {
		/* the new thread inherits this mask: every signal blocked from its first instruction */
		sigset_t all, old;
		sigfillset(&all);
		pthread_sigmask(SIG_SETMASK, &all, &old);
		quit = false;
		settled = false;
		if (pthread_create(&thread, NULL, flusher_main, NULL) == 0) {
			pthread_mutex_lock(&settle_lock);
			while (!settled)
				pthread_cond_wait(&settle_cond, &settle_lock);
			pthread_mutex_unlock(&settle_lock);
			next = FL_RUNNING;
		}
		pthread_sigmask(SIG_SETMASK, &old, NULL);
	}
	atomic_store(&state, next);
	pthread_mutex_unlock(&lock);
	ct_log(2, next == FL_RUNNING ? "flusher thread started" : "no flusher thread in this process");
	errno = saved;
}

bool ct_flusher_running(void)
{
	return atomic_load_explicit(&state, memory_order_relaxed) == FL_RUNNING;
}

/* pthread_join returns when the kernel has cleared the thread's tid word, which it does before
 * the thread leaves the thread group; unshare(CLONE_NEWUSER) and setns() count the group, so
 * they could still fail with EINVAL for a moment. Wait (bounded: 1 s) until the thread is gone
 * from the group too, which is when tgkill stops finding it.
 *
 * The pauses are ppoll, never nanosleep: a detach (attach.c) runs this as a remote call in a
 * thread that `cryptrace attach` stopped, maybe in a relative sleep, which the kernel resumes
 * after the detach through restart_syscall and the thread's restart block. nanosleep and
 * clock_nanosleep reset that block on entry, so the program's sleep came back early with EINTR
 * (sleep() returned, the arm64 guest's sleeping target exited; it happened when the exiting
 * flusher took more than 100 yields, on a loaded host). ppoll touches it only when a signal
 * interrupts it. */
static void join_fully(void)
{
	pid_t tid = atomic_exchange(&thread_tid, 0);
	pthread_join(thread, NULL);
	if (tid <= 0)
		return;
	int saved = errno;
	struct timespec pause = { .tv_nsec = 20000 };
	for (int i = 0; i < 50000 && syscall(SYS_tgkill, getpid(), tid, 0) == 0; i++) {
		if (i < 100)
			sched_yield();
		else
			ppoll(NULL, 0, &pause, NULL);
	}
	errno = saved;
}

void ct_flusher_stop(void)
{
	pthread_mutex_lock(&lock);
	int s = atomic_load(&state);
	atomic_store(&state, FL_NEVER);
	if (s == FL_RUNNING || s == FL_ENDED) {
		quit = true;
		pthread_cond_signal(&wake);
	}
	pthread_mutex_unlock(&lock);
	if (s == FL_RUNNING || s == FL_ENDED)
		join_fully(); /* gone, not only asked: a filter with TSYNC would cover it */
}

void ct_flusher_rearm(void)
{
	int expect = FL_NEVER;
	atomic_compare_exchange_strong(&state, &expect, FL_NONE);
}

bool ct_flusher_pause(void)
{
	pthread_mutex_lock(&lock);
	bool running = atomic_load(&state) == FL_RUNNING;
	if (running) {
		atomic_store(&state, FL_STARTING); /* nobody else starts or stops it meanwhile */
		quit = true;
		pthread_cond_signal(&wake);
	}
	pthread_mutex_unlock(&lock);
	if (!running)
		return false;
	join_fully();
	int expect = FL_STARTING;
	atomic_compare_exchange_strong(&state, &expect, FL_NONE);
	return true;
}

void ct_flusher_resume(void)
{
	ct_flusher_start();
}

void ct_flusher_after_fork_child(void)
{
	int s = atomic_load(&state);
	pthread_mutex_init(&lock, NULL);
	pthread_mutex_init(&settle_lock, NULL);
	pthread_cond_init(&settle_cond, NULL);
	cond_made = false; /* the parent's waiter may have left the copy in any state */
	atomic_store(&state, s == FL_NEVER ? FL_NEVER : FL_NONE);
	if (s == FL_RUNNING)
		ct_flusher_start();
}

/* The main thread leaves with pthread_exit(): end the flusher without waiting for it (the caller
 * is on its way out) and write one snapshot whose PROC no longer says "periodic"; none starts
 * later in this process (a fork child may have its own). */
void ct_flusher_main_exiting(void)
{
	pthread_mutex_lock(&lock);
	int s = atomic_load(&state);
	if (s == FL_NONE || s == FL_STARTING || s == FL_RUNNING)
		atomic_store(&state, FL_ENDED);
	if (s == FL_RUNNING) {
		quit = true;
		pthread_cond_signal(&wake);
	}
	pthread_mutex_unlock(&lock);
	if (s == FL_RUNNING)
		ct_flush_now();
}
