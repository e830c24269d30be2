/* SPDX-License-Identifier: MIT */
/*
 * signals.c - the last snapshot of a process ended by a signal's default action.
 *
 * SIGTERM, SIGINT, SIGHUP, SIGQUIT and SIGPIPE end a process that leaves them at SIG_DFL without
 * running anything of it: no exit handler, no destructor, so the trace lost everything since its
 * last flush. Wherever the kernel holds SIG_DFL for one of them (at start, and whenever the
 * program sets SIG_DFL again), the preload puts its own handler instead and remembers the
 * program's SIG_DFL exactly as the kernel stored it (flags, mask). The handler writes the last
 * snapshot and END (reason signal), puts that SIG_DFL back, unblocks the signal on its thread
 * and raises it again: the process ends by the same signal, with a core where the program would
 * have dumped one. What the program can observe stays as without us:
 *
 *  - sigaction()/signal()... report SIG_DFL (with the program's own flags and mask) where our
 *    handler stands (hooks/signal.c), and a handler the program installs simply replaces ours;
 *  - SIG_IGN is never touched (and so inherited across exec as usual); a caught signal reverts
 *    to SIG_DFL at exec, as the kernel does with every handler, and the new image's preload
 *    catches it again;
 *  - masks are the program's: a blocked signal stays pending for sigwait() or a signalfd, and
 *    our handler only runs where the kernel would have ended the process;
 *  - a vfork child (shared memory) only dies, it never writes.
 *
 * The handler may land anywhere. Where its thread holds one of the preload's locks (a flush, an
 * event), it notes the signal and returns, and the thread ends the process when it lets go of
 * its last lock (signals.h). Other threads' locks are waited for, at most a couple of seconds.
 * While the handler runs every other signal is blocked on its thread.
 *
 * Sandboxes: a seccomp filter may kill a process for rt_sigaction, tgkill or rt_sigreturn
 * (sshd's pre-auth child allows none of them). When the program installs a filter through
 * prctl(PR_SET_SECCOMP) or seccomp(2), its SIG_DFL dispositions are put back first and nothing
 * of ours starts again in that process (no handler, no flusher thread). A filter the process was
 * started under (a container, a systemd unit) is there for any program and does not stop us.
 */
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "flusher.h"
#include "signals.h"

__thread unsigned ct_sig_crit __attribute__((tls_model("initial-exec")));
__thread int ct_sig_deferred __attribute__((tls_model("initial-exec")));
static __thread sigset_t fork_saved_mask __attribute__((tls_model("initial-exec")));

#define LOCK_WAIT_S 2 /* the longest the last write waits for another thread's flush */

static const int caught[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE };
/* The program's SIG_DFL of each caught signal, as the kernel stored it. */
static struct sigaction program_dfl[NSIG];
static _Atomic bool sandboxed;
/* Seccomp state at start: a filter present then is the environment's, not the program's. */
static int start_mode = -1, start_filters = -1;
static bool start_known;

static bool is_caught(int sig)
{
	for (size_t i = 0; i < sizeof(caught) / sizeof(caught[0]); i++)
		if (caught[i] == sig)
			return true;
	return false;
}

bool ct_lock_bounded(pthread_mutex_t *m)
{
	struct timespec until;
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += LOCK_WAIT_S;
	ct_crit_enter();
	if (pthread_mutex_timedlock(m, &until) == 0)
		return true;
	ct_crit_leave();
	return false;
}

/* ---- the handler ------------------------------------------------------------------------- */

/* The signal's default action, after the last snapshot. Returns only if the process survived
 * it (the program changed the disposition meanwhile, on another thread). */
static void end_by_signal(int sig)
{
	int saved = errno;
	if (ct_ready() && getpid() == (pid_t)ct_g.pid) /* never from a vfork child */
		ct_writer_end(CT_END_SIGNAL, sig);
	struct sigaction now;
	if (ct_real_sigaction(sig, NULL, &now) == 0 && ct_sig_handler_is_ours(&now))
		ct_real_sigaction(sig, &program_dfl[sig], NULL);
	sigset_t one, old;
	sigemptyset(&one);
	sigaddset(&one, sig);
	pthread_sigmask(SIG_UNBLOCK, &one, &old);
	raise(sig); /* SIG_DFL: the process ends here, as it would have without us */
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	errno = saved;
}

static void on_fatal_signal(int sig, siginfo_t *si, void *uc)
{
	(void)si;
	(void)uc;
	if (ct_sig_crit) {
		ct_sig_deferred = sig; /* this thread is inside the writer: it ends when it is out */
		return;
	}
	end_by_signal(sig);
}

void ct_signals_deferred_now(void)
{
	int sig = ct_sig_deferred;
	ct_sig_deferred = 0;
	if (sig)
		end_by_signal(sig);
}

bool ct_sig_handler_is_ours(const struct sigaction *sa)
{
	return (sa->sa_flags & SA_SIGINFO) && sa->sa_sigaction == on_fatal_signal;
}

/* ---- installing and stepping aside ------------------------------------------------------ */

static void install(int sig, const struct sigaction *dfl)
{
	program_dfl[sig] = *dfl;
	struct sigaction ours = { .sa_sigaction = on_fatal_signal, .sa_flags = SA_SIGINFO | SA_RESTART };
	sigfillset(&ours.sa_mask);
	struct sigaction was;
	if (ct_real_sigaction(sig, &ours, &was) != 0)
		return;
	if (was.sa_handler != SIG_DFL) /* the program set something else meanwhile: keep it */
		ct_real_sigaction(sig, &was, NULL);
}

bool ct_sig_managed(int sig)
{
	return is_caught(sig) && ct_ready() && !atomic_load_explicit(&sandboxed, memory_order_relaxed) &&
	       !atomic_load_explicit(&ct_g.start_pending, memory_order_relaxed);
}

void ct_sig_program_view(int sig, struct sigaction *old)
{
	if (sig > 0 && sig < NSIG && ct_sig_handler_is_ours(old))
		*old = program_dfl[sig];
}

ct_sighandler ct_sig_program_handler(int sig, ct_sighandler prev)
{
	if (sig > 0 && sig < NSIG && prev == (ct_sighandler)(void *)on_fatal_signal)
		return program_dfl[sig].sa_handler;
	return prev;
}

void ct_sig_take(int sig)
{
	struct sigaction dfl;
	if (!ct_sig_managed(sig) || ct_proc_is_vfork_child() || ct_real_sigaction(sig, NULL, &dfl) != 0 ||
	    dfl.sa_handler != SIG_DFL)
		return; /* a vfork child may be sandboxed on its own: it keeps the kernel's SIG_DFL */
	install(sig, &dfl);
}

/* Our handler wherever the kernel holds SIG_DFL for a caught signal. */
static void install_where_default(void)
{
	ct_signal_hooks_resolve();
	for (size_t i = 0; i < sizeof(caught) / sizeof(caught[0]); i++) {
		struct sigaction now;
		if (ct_real_sigaction(caught[i], NULL, &now) == 0 && now.sa_handler == SIG_DFL)
			install(caught[i], &now);
	}
}

void ct_signals_init(void)
{
	if (atomic_load(&sandboxed))
		return; /* a start completed late (ct_start_complete) after the program's filter */
	start_known = ct_seccomp_state(&start_mode, &start_filters);
	install_where_default();
}

/* `cryptrace attach`: the seccomp state now is what later filters are told from, and the
 * handlers stand where the kernel holds SIG_DFL, as at a traced process's start. A process
 * attached under a filter (--allow-seccomp) gets neither handler nor thread of ours: the filter's
 * rules cannot be read back, and one that forbids rt_sigaction or clone would kill it. */
void ct_signals_attach_begin(void)
{
	start_known = ct_seccomp_state(&start_mode, &start_filters);
	if (!start_known || start_mode != 0)
		atomic_store(&sandboxed, true);
	if (!atomic_load(&sandboxed))
		install_where_default();
}

static void step_aside(void);

/* The detach: the program's SIG_DFL back wherever our handler still stands. */
void ct_signals_attach_end(void)
{
	step_aside();
}

static void step_aside(void)
{
	for (size_t i = 0; i < sizeof(caught) / sizeof(caught[0]); i++) {
		struct sigaction now;
		int sig = caught[i];
		if (ct_real_sigaction(sig, NULL, &now) == 0 && ct_sig_handler_is_ours(&now))
			ct_real_sigaction(sig, &program_dfl[sig], NULL);
	}
}

void ct_signals_before_sandbox(void)
{
	if (!ct_ready())
		return;
	int e = errno;
	step_aside(); /* a vfork child's dispositions are its own; the rest is the parent's */
	if (!ct_proc_is_vfork_child() && !atomic_exchange(&sandboxed, true)) {
		ct_flusher_stop();
		ct_log(2, "a seccomp filter is being installed: SIG_DFL restored, no flusher thread");
		ct_flush_now(); /* its PROC says that snapshots are no longer periodic */
	}
	errno = e;
}

bool ct_signals_sandboxed(void)
{
	if (atomic_load(&sandboxed))
		return true;
	int mode, filters;
	if (!start_known || !ct_seccomp_state(&mode, &filters))
		return true; /* cannot tell: a sandbox may be what denies the read */
	if (mode == start_mode && filters == start_filters && (filters >= 0 || mode == 0))
		return false;
	/* a filter installed without our hooks (a raw syscall): too late to step aside safely */
	atomic_store(&sandboxed, true);
	return true;
}

bool ct_seccomp_state(int *mode, int *filters)
{
	char buf[4096];
	size_t n;
	ct_read_small_file("/proc/self/status", buf, sizeof(buf), &n);
	if (!n)
		return false;
	*mode = 0; /* a kernel without seccomp shows neither line */
	*filters = -1;
	const char *s = strstr(buf, "\nSeccomp:");
	if (s) {
		s += 9;
		while (*s == ' ' || *s == '\t')
			s++;
		if (*s < '0' || *s > '9')
			return false;
		*mode = *s - '0';
	}
	s = strstr(buf, "\nSeccomp_filters:");
	if (s) {
		s += 17;
		while (*s == ' ' || *s == '\t')
			s++;
		int v = 0;
		while (*s >= '0' && *s <= '9')
			v = v * 10 + (*s++ - '0');
		*filters = v;
	}
	return true;
}

/* ---- fork --------------------------------------------------------------------------------- */

void ct_signals_fork_prepare(void)
{
	sigset_t all;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &fork_saved_mask);
}

void ct_signals_fork_done(void)
{
	pthread_sigmask(SIG_SETMASK, &fork_saved_mask, NULL);
}
