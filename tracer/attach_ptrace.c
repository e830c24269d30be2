/* SPDX-License-Identifier: MIT */
/*
 * attach_ptrace.c - stopping a running process and calling a function in it (attach.h).
 *
 * PTRACE_SEIZE then PTRACE_INTERRUPT, not PTRACE_ATTACH: no SIGSTOP is sent, so the program's
 * job control and its own handlers never see us, and a thread in a system call stops where it
 * is (the call restarts when its registers are put back). A call runs on one stopped thread,
 * below its stack's red zone, returning to address 0: the return faults, the fault stops the
 * thread in our hands, and the fault signal is never delivered.
 *
 * A function called while the other threads are stopped can wait for a lock one of them holds
 * (the loader's, malloc's): after CALL_ALONE_NS the other threads are let go until the call
 * returns, then stopped again. The process is stopped longer than we would like then, but it
 * never hangs.
 */
#include "attach.h"

#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>

#include "tracer.h"

#define MAX_THREADS 65536
#define SEIZE_ROUNDS 100                  /* a process making threads as fast as we seize them */
#define CALL_ALONE_NS (2000ull * 1000000) /* then the other threads run too (see above) */
#define CALL_LIMIT_NS (60000ull * 1000000)
#define SLACK 64 /* bytes between the call's stack and the strings above it */
/* A thread stops within microseconds unless it sleeps uninterruptibly (a hung NFS read): then
 * the attach gives up rather than hold the others stopped. */
#define STOP_LIMIT_NS (5000ull * 1000000)

bool ct_remote_write(pid_t pid, uint64_t addr, const void *buf, size_t n)
{
	struct iovec local = { .iov_base = (void *)buf, .iov_len = n };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = n };
	return process_vm_writev(pid, &local, 1, &remote, 1, 0) == (ssize_t)n;
}

bool ct_remote_read(pid_t pid, uint64_t addr, void *buf, size_t n)
{
	struct iovec local = { .iov_base = buf, .iov_len = n };
	struct iovec remote = { .iov_base = (void *)(uintptr_t)addr, .iov_len = n };
	return process_vm_readv(pid, &local, 1, &remote, 1, 0) == (ssize_t)n;
}

struct ct_arch_state *ct_arch_state_new(void)
{
	return calloc(1, ct_arch_state_size);
}

void ct_arch_state_free(struct ct_arch_state *st)
{
	free(st);
}

static bool seized(const struct ct_stopped *s, pid_t tid)
{
	for (unsigned i = 0; i < s->n; i++)
		if (s->tids[i] == tid)
			return true;
	return false;
}

/* A thread that ended but lingers (a main thread that left with pthread_exit while the others
 * run) can neither stop nor run a call: it is left alone. */
static bool thread_is_zombie(pid_t pid, pid_t tid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	FILE *f = fopen(path, "re");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = 0;
	const char *end = strrchr(buf, ')'); /* the name may hold spaces and parentheses */
	return !end || end[1] != ' ' || end[2] == 'Z' || end[2] == 'X';
}

/* Seizes the threads of /proc/PID/task not seized yet; *added says how many were. */
static bool seize_new(struct ct_stopped *s, unsigned *added, char *why, size_t cap)
{
	char dir[64];
	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)s->pid);
	DIR *d = opendir(dir);
	*added = 0;
	if (!d) {
		snprintf(why, cap, "process %d: %s", (int)s->pid, strerror(errno));
		return false;
	}
	struct dirent *e;
	bool ok = true;
	while (ok && (e = readdir(d))) {
		pid_t tid = (pid_t)atoi(e->d_name);
		if (tid <= 0 || seized(s, tid) || thread_is_zombie(s->pid, tid))
			continue;
		if (s->n >= MAX_THREADS) {
			snprintf(why, cap, "process %d has more than %u threads", (int)s->pid, MAX_THREADS);
			ok = false;
		} else if (ptrace(PTRACE_SEIZE, tid, NULL, NULL) == 0) {
			s->tids[s->n++] = tid;
			(*added)++;
		} else if (errno != ESRCH) { /* ESRCH: the thread ended meanwhile */
			snprintf(why, cap, "ptrace(PTRACE_SEIZE, %d): %s%s", (int)tid, strerror(errno),
				 errno == EPERM
					 ? " (run as the process's user with ptrace allowed, or as root "
					   "with CAP_SYS_PTRACE)"
					 : "");
			ok = false;
		}
	}
	closedir(d);
	return ok;
}

/* The first thread of pid that is not a zombie, or -1. */
static pid_t first_live_thread(pid_t pid)
{
	char dir[64];
	snprintf(dir, sizeof(dir), "/proc/%d/task", (int)pid);
	DIR *d = opendir(dir);
	struct dirent *e;
	pid_t found = -1;
	while (d && found < 0 && (e = readdir(d))) {
		pid_t tid = (pid_t)atoi(e->d_name);
		if (tid > 0 && !thread_is_zombie(pid, tid))
			found = tid;
	}
	if (d)
		closedir(d);
	return found;
}

/* The kernel tells a tracer of its tracees' stops with SIGCHLD, which is blocked and waited for
 * with a deadline (no polling interval added). */
int ct_wait_stop(pid_t tid, int *status, uint64_t limit_ns)
{
	sigset_t chld, old;
	sigemptyset(&chld);
	sigaddset(&chld, SIGCHLD);
	sigprocmask(SIG_BLOCK, &chld, &old);
	uint64_t t0 = ct_clock_ns(CLOCK_MONOTONIC);
	int ret;
	for (;;) {
		pid_t r = waitpid(tid, status, __WALL | WNOHANG);
		if (r == tid) {
			ret = WIFSTOPPED(*status) ? 1 : -1;
			break;
		}
		if (r < 0 && errno != EINTR) {
			ret = -1;
			break;
		}
		uint64_t spent = ct_clock_ns(CLOCK_MONOTONIC) - t0;
		if (spent >= limit_ns) {
			ret = 0;
			break;
		}
		/* a SIGCHLD that came before the waitpid above is still pending: no wake-up lost */
		uint64_t step = limit_ns - spent < 100000000 ? limit_ns - spent : 100000000;
		struct timespec ts = { .tv_sec = 0, .tv_nsec = (long)step };
		sigtimedwait(&chld, NULL, &ts);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	return ret;
}

/* Stops thread tid (seized) and waits until it is (1), or STOP_LIMIT_NS passed (0: a thread in
 * an uninterruptible sleep), or it is gone (-1). A signal that arrives first stops it in
 * signal-delivery-stop: it is stopped all the same, and the signal goes on at detach. */
static int interrupt_one(pid_t tid, int *pending)
{
	int st;
	*pending = 0;
	if (ptrace(PTRACE_INTERRUPT, tid, NULL, NULL) != 0)
		return -1;
	int w = ct_wait_stop(tid, &st, STOP_LIMIT_NS);
	if (w == 1 && (st >> 16) == 0 && WSTOPSIG(st) != SIGTRAP)
		*pending = WSTOPSIG(st);
	return w;
}

static void release_all(struct ct_stopped *s)
{
	for (unsigned i = 0; i < s->n; i++)
		ptrace(PTRACE_DETACH, s->tids[i], NULL, NULL);
	free(s->tids);
	free(s->pending);
	ct_arch_state_free(s->saved);
	memset(s, 0, sizeof(*s));
}

bool ct_stop_process(pid_t pid, bool all_threads, struct ct_stopped *s, char *why, size_t cap)
{
	memset(s, 0, sizeof(*s));
	s->pid = pid;
	s->tids = calloc(MAX_THREADS, sizeof(*s->tids));
	s->pending = calloc(MAX_THREADS, sizeof(*s->pending));
	s->saved = ct_arch_state_new();
	if (!s->tids || !s->pending || !s->saved) {
		snprintf(why, cap, "out of memory");
		release_all(s);
		return false;
	}
	if (!all_threads) {
		/* one thread: the main one (another when it is gone), which a detach then calls into */
		pid_t tid = thread_is_zombie(pid, pid) ? first_live_thread(pid) : pid;
		if (tid <= 0 || ptrace(PTRACE_SEIZE, tid, NULL, NULL) != 0) {
			snprintf(why, cap, "ptrace(PTRACE_SEIZE, %d): %s", (int)tid, strerror(errno));
			release_all(s);
			return false;
		}
		s->tids[s->n++] = tid;
	} else {
		unsigned added = 1;
		for (unsigned round = 0; added && round < SEIZE_ROUNDS; round++)
			if (!seize_new(s, &added, why, cap)) {
				release_all(s);
				return false;
			}
	}
	s->caller = seized(s, pid) ? pid : s->tids[0];
	s->stop0_ns = ct_clock_ns(CLOCK_MONOTONIC);
	for (unsigned i = 0; i < s->n; i++) {
		int w = interrupt_one(s->tids[i], &s->pending[i]);
		if (w == 1) {
			s->stopped++;
			continue;
		}
		if (w == 0 || s->tids[i] == s->caller) {
			/* (one still running is let go by the kernel when we exit, which is next) */
			snprintf(why, cap, "thread %d of process %d did not stop within %llu s%s",
				 (int)s->tids[i], (int)pid, STOP_LIMIT_NS / 1000000000ull,
				 w == 0 ? " (an uninterruptible sleep?); nothing was changed" : "");
			release_all(s);
			return false;
		}
		s->n--; /* ended meanwhile */
		s->tids[i] = s->tids[s->n];
		s->pending[i--] = s->pending[s->n];
	}
	unsigned c = 0;
	while (s->tids[c] != s->caller)
		c++;
	if (!ct_arch_save(s->caller, s->saved, &s->pending[c])) {
		snprintf(why, cap, "cannot read the registers of thread %d: %s", (int)s->caller,
			 strerror(errno));
		release_all(s);
		return false;
	}
	return true;
}

/* The threads other than the caller: let go (run) or stopped again. */
static void others(struct ct_stopped *s, bool run)
{
	for (unsigned i = 0; i < s->n; i++) {
		if (s->tids[i] == s->caller)
			continue;
		if (run)
			ptrace(PTRACE_CONT, s->tids[i], NULL, (void *)(uintptr_t)s->pending[i]);
		else
			interrupt_one(s->tids[i], &s->pending[i]);
	}
}

/* Waits for the caller's next stop (ct_wait_stop), letting the other threads go after
 * CALL_ALONE_NS; 0 when CALL_LIMIT_NS passed, -1 when it went away. */
static int wait_call_stop(struct ct_stopped *s, int *status, uint64_t t0, bool *others_run)
{
	if (!*others_run && s->stopped > 1) {
		uint64_t spent = ct_clock_ns(CLOCK_MONOTONIC) - t0;
		int w = ct_wait_stop(s->caller, status, spent < CALL_ALONE_NS ? CALL_ALONE_NS - spent : 0);
		if (w != 0)
			return w;
		others(s, true);
		*others_run = true;
	}
	uint64_t spent = ct_clock_ns(CLOCK_MONOTONIC) - t0;
	return ct_wait_stop(s->caller, status, spent < CALL_LIMIT_NS ? CALL_LIMIT_NS - spent : 0);
}

bool ct_remote_call(struct ct_stopped *s, uint64_t fn, const uint64_t *args, const char *const *strs,
		    unsigned nargs, uint64_t *ret, char *why, size_t cap)
{
	uint64_t a[6];
	if (nargs > 6)
		return false;
	/* the strings, just below the red zone; the call's stack below them */
	uint64_t top = ct_arch_sp(s->saved) - ct_arch_red_zone();
	uint64_t at = top;
	for (unsigned i = 0; i < nargs; i++) {
		a[i] = args ? args[i] : 0;
		if (strs && strs[i]) {
			at -= strlen(strs[i]) + 1;
			a[i] = at;
		}
	}
	uint64_t sp = (at - SLACK) & ~(uint64_t)15;
	uint64_t low = sp - SLACK;
	size_t len = (size_t)(top - low);
	uint8_t *keep = malloc(len);
	if (!keep || !ct_remote_read(s->pid, low, keep, len)) {
		snprintf(why, cap, "cannot read thread %d's stack: %s", (int)s->caller, strerror(errno));
		free(keep);
		return false;
	}
	bool ok = true;
	for (unsigned i = 0; ok && strs && i < nargs; i++)
		if (strs[i])
			ok = ct_remote_write(s->pid, a[i], strs[i], strlen(strs[i]) + 1);
	ok = ok && ct_arch_call_setup(s->caller, s->saved, fn, a, nargs, sp);
	if (!ok)
		snprintf(why, cap, "cannot set up the call in thread %d: %s", (int)s->caller,
			 strerror(errno));
	bool others_run = false, done = false;
	uint64_t t0 = ct_clock_ns(CLOCK_MONOTONIC);
	int sig = 0, status;
	while (ok && !done) {
		if (ptrace(PTRACE_CONT, s->caller, NULL, (void *)(uintptr_t)sig) != 0) {
			snprintf(why, cap, "thread %d: %s", (int)s->caller, strerror(errno));
			ok = false;
			break;
		}
		sig = 0;
		int w = wait_call_stop(s, &status, t0, &others_run);
		if (w < 0) {
			snprintf(why, cap, "process %d ended during the call", (int)s->pid);
			free(keep);
			return false; /* nothing left to restore */
		}
		if (w == 0) {
			int pend;
			snprintf(why, cap, "the call in thread %d did not return in %llu s; abandoned",
				 (int)s->caller, CALL_LIMIT_NS / 1000000000ull);
			interrupt_one(s->caller, &pend);
			ok = false;
			break;
		}
		int stopsig = WSTOPSIG(status);
		if ((status >> 16) == 0 && stopsig == SIGSEGV && ct_arch_call_returned(s->caller, ret))
			done = true;
		else if ((status >> 16) == 0 && stopsig == SIGSEGV) {
			snprintf(why, cap, "the call in thread %d faulted; its registers are put back",
				 (int)s->caller);
			ok = false;
		} else if ((status >> 16) == 0)
			sig = stopsig; /* the program's own signal: delivered as it would have been */
	}
	if (others_run)
		others(s, false);
	bool put_back = ct_remote_write(s->pid, low, keep, len) && ct_arch_restore(s->caller, s->saved);
	free(keep);
	if (!put_back && ok) {
		snprintf(why, cap, "cannot restore thread %d: %s", (int)s->caller, strerror(errno));
		ok = false;
	}
	return ok;
}

uint64_t ct_resume_process(struct ct_stopped *s)
{
	for (unsigned i = 0; i < s->n; i++)
		ptrace(PTRACE_DETACH, s->tids[i], NULL, (void *)(uintptr_t)s->pending[i]);
	uint64_t ns = ct_clock_ns(CLOCK_MONOTONIC) - s->stop0_ns;
	s->n = 0;
	release_all(s);
	return ns;
}
