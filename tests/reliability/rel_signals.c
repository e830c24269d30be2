/* SPDX-License-Identifier: MIT */
/*
 * rel_signals.c - signal scenarios for the fatal-signals test (fatal_signals.py): what a program
 * sees of its signal dispositions and how it ends must be the same with and without the preload,
 * and a process ended by a default action must leave its counts and END. One mode per run:
 *   query SELF         print every disposition the program can observe (sigaction, the signal()
 *                      family, set and restored, act aliasing old), then exec `SELF query-child`
 *                      with SIGHUP ignored and SIGINT caught: the child prints what it inherited
 *   die SIG            3 threads and main encrypt, then idle; main blocks SIG and sends it to the
 *                      process: a worker thread takes it and the default action ends everything
 *   epipe              encrypt, then write to a pipe without reader: the kernel's own SIGPIPE
 *   reraise SIG        the program's handler prints, sets SIG_DFL again and raises SIG
 *   handled SIG        the program's handler, installed after our start, runs; exit 0
 *   signalfd           SIGTERM blocked and read from a signalfd: never taken from the program
 *   sigwait            SIGTERM blocked everywhere, a thread takes it with sigwait()
 *   vfork SIG          a vfork child is ended by SIG before it execs; the parent goes on
 *   fork SIG           a fork child encrypts and is ended by SIG
 *   fork-idle          main encrypts (the flusher thread starts) and forks; the child goes on
 *                      with the parent's context (no new cipher path), prints `child ready`
 *                      and idles: the test kills it with SIGKILL
 *   storm SEED         a thread sets up, uses and frees contexts in a loop (each set-up counts an
 *                      event under the preload's events lock); 1-20 ms (pseudo-random) after its
 *                      first round, main sends it SIGTERM: sometimes it lands inside the
 *                      preload's writer
 *   namespaces         encrypt (the flusher thread starts), then setns() into this process's
 *                      own mount namespace and unshare(CLONE_NEWUSER), which the kernel refuses
 *                      to a process with threads; the same in a fork child
 *   main-exit          main encrypts (the flusher thread starts), starts a worker that encrypts
 *                      and calls pthread_exit: the process ends with status 0 when the worker
 *                      returns
 *   sandbox prctl|tsync  encrypt, install a seccomp filter like OpenSSH's pre-auth sandbox (no
 *                      rt_sigaction, rt_sigreturn, kill, tgkill or clone; open denied), through
 *                      prctl() or seccomp(2) with TSYNC, encrypt, print "ready" and sleep: the
 *                      test sends SIGTERM, which must end it as SIGTERM, not as SIGSYS
 * Every process that encrypts prints `expect api=evp cipher=.. dir=encrypt calls=N bytes=N`
 * for what it did. alarm() is the watchdog (SIGALRM is not one of the preload's signals).
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "ct_config.h"

typedef void (*handler_fn)(int);
handler_fn bsd_signal(int sig, handler_fn h);
handler_fn sysv_signal(int sig, handler_fn h);

static const unsigned char sig_key[32] = "k9$Lw2!pZ7@rT4#xQ1%vB8^nM3&cF6*d";
static const unsigned char sig_iv[16] = "u5(Jh0)Ye2-Rg7=S";
static unsigned char in[1024], out[1024 + 32];

/* n encrypt updates of len bytes on a new context of cipher, then `expect`. */
static EVP_CIPHER_CTX *encrypt_n(const char *cipher, long n, int len)
{
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	const EVP_CIPHER *c = EVP_get_cipherbyname(cipher);
	int outl;

	if (!ctx || !c || EVP_EncryptInit_ex(ctx, c, NULL, sig_key, sig_iv) != 1) {
		fprintf(stderr, "rel_signals: cannot start %s\n", cipher);
		exit(1);
	}
	EVP_CIPHER_CTX_set_padding(ctx, 0);
	for (long i = 0; i < n; i++)
		if (EVP_EncryptUpdate(ctx, out, &outl, in, len) != 1)
			exit(1);
	return ctx;
}

static void expect(const char *cipher, long calls, long bytes)
{
	printf("expect api=evp cipher=%s dir=encrypt calls=%ld bytes=%ld\n", cipher, calls, bytes);
	fflush(stdout);
}

static void work(const char *cipher, long n, int len)
{
	EVP_CIPHER_CTX_free(encrypt_n(cipher, n, len));
	expect(cipher, n, n * len);
}

/* ---- query ------------------------------------------------------------------------------ */

static void on_sig(int sig)
{
	(void)sig;
}

static const char *kind(handler_fn h)
{
	return h == SIG_DFL    ? "SIG_DFL"
	       : h == SIG_IGN  ? "SIG_IGN"
	       : h == SIG_ERR  ? "SIG_ERR"
	       : h == SIG_HOLD ? "SIG_HOLD"
	       : h == on_sig   ? "on_sig"
			       : "other";
}

static void show(const char *when, int sig, const struct sigaction *sa)
{
	unsigned long long mask = 0;
	for (int s = 1; s <= 64; s++)
		if (sigismember(&sa->sa_mask, s) == 1)
			mask |= 1ull << (s - 1);
	printf("%s %s: %s flags=%#x mask=%#llx restorer=%s\n", when, strsignal(sig), kind(sa->sa_handler),
	       (unsigned)sa->sa_flags, mask, sa->sa_restorer ? "set" : "none");
}

static void show_all(const char *when)
{
	static const int sigs[] = { SIGTERM, SIGINT, SIGHUP, SIGQUIT, SIGPIPE, SIGUSR1 };
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct sigaction sa;
		memset(&sa, 0x55, sizeof(sa)); /* what the call does not fill shows */
		if (sigaction(sigs[i], NULL, &sa) != 0)
			printf("%s %s: sigaction failed: %s\n", when, strsignal(sigs[i]), strerror(errno));
		else
			show(when, sigs[i], &sa);
	}
}

static int mode_query(const char *self)
{
	work("aes-128-cbc", 10, 64); /* a cipher path: the flusher thread runs during all this */
	show_all("start");
	printf("signal(TERM, on_sig) was %s\n", kind(signal(SIGTERM, on_sig)));
	show_all("caught");
	printf("signal(TERM, SIG_DFL) was %s\n", kind(signal(SIGTERM, SIG_DFL)));
	struct sigaction sa = { .sa_handler = SIG_DFL, .sa_flags = SA_RESTART | SA_NODEFER }, old;
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGUSR2);
	memset(&old, 0x55, sizeof(old));
	sigaction(SIGTERM, &sa, &old);
	show("set-dfl old", SIGTERM, &old);
	show_all("flags");
	/* act and old are the same struct; sigset and sigignore are old, and programs call them */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wrestrict"
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
	sa = (struct sigaction){ .sa_handler = on_sig };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGHUP, &sa, &sa);
	show("alias old", SIGHUP, &sa);
	sigaction(SIGHUP, &sa, &sa);
	show("alias back", SIGHUP, &sa);
	printf("bsd_signal(INT, SIG_IGN) was %s\n", kind(bsd_signal(SIGINT, SIG_IGN)));
#ifdef CT_HAVE_SYSV_SIGNAL /* glibc's; musl has none */
	printf("sysv_signal(INT, SIG_DFL) was %s\n", kind(sysv_signal(SIGINT, SIG_DFL)));
#endif
	printf("sigset(QUIT, SIG_HOLD) was %s\n", kind(sigset(SIGQUIT, SIG_HOLD)));
	printf("sigset(QUIT, SIG_DFL) was %s\n", kind(sigset(SIGQUIT, SIG_DFL)));
	printf("sigset(QUIT, SIG_DFL) again was %s\n", kind(sigset(SIGQUIT, SIG_DFL)));
	sigset_t now;
	sigprocmask(SIG_SETMASK, NULL, &now);
	printf("QUIT blocked: %d\n", sigismember(&now, SIGQUIT));
	printf("sigignore(PIPE): %d\n", sigignore(SIGPIPE));
#pragma GCC diagnostic pop
	printf("signal(PIPE, SIG_DFL) was %s\n", kind(signal(SIGPIPE, SIG_DFL)));
	show_all("end");
	/* across exec: ignored stays ignored, caught reverts to SIG_DFL */
	signal(SIGHUP, SIG_IGN);
	signal(SIGINT, on_sig);
	fflush(stdout);
	execl(self, self, "query-child", (char *)NULL);
	perror("execl");
	return 1;
}

/* ---- ending by a default action ----------------------------------------------------------- */

static pthread_barrier_t die_barrier;

static void *die_worker(void *arg)
{
	work(arg, 500, 128);
	pthread_barrier_wait(&die_barrier);
	for (;;)
		pause();
	return NULL;
}

static int mode_die_threads(int sig)
{
	static const char *const ciphers[] = { "aes-128-ctr", "aes-192-cbc", "aes-256-ofb" };
	pthread_t th[3];
	pthread_barrier_init(&die_barrier, NULL, 4);
	for (int i = 0; i < 3; i++)
		pthread_create(&th[i], NULL, die_worker, (void *)ciphers[i]);
	work("aes-128-cbc", 1000, 64);
	pthread_barrier_wait(&die_barrier);
	sigset_t one;
	sigemptyset(&one);
	sigaddset(&one, sig);
	pthread_sigmask(SIG_BLOCK, &one, NULL); /* a worker takes it */
	kill(getpid(), sig);
	for (;;)
		pause();
	return 1; /* not reached: the signal ends the process */
}

static int mode_epipe(void)
{
	int fds[2];
	work("aes-128-cbc", 300, 64);
	if (pipe(fds) != 0)
		return 1;
	close(fds[0]);
	ssize_t w = write(fds[1], "x", 1); /* SIGPIPE, from the kernel, to this thread */
	printf("write returned %zd: %s\n", w, strerror(errno));
	return 1;
}

static volatile sig_atomic_t got;

static void on_sig_record(int sig)
{
	got = sig;
}

static void on_sig_reraise(int sig)
{
	static const char msg[] = "handler: cleaning up, then the default action\n";
	ssize_t w = write(1, msg, sizeof(msg) - 1);
	(void)w;
	signal(sig, SIG_DFL);
	raise(sig);
}

static int mode_reraise(int sig)
{
	work("aes-128-cbc", 700, 32);
	signal(sig, on_sig_reraise);
	raise(sig);
	printf("still alive\n");
	return 1;
}

static int mode_handled(int sig)
{
	work("aes-128-cbc", 700, 32);
	struct sigaction sa = { .sa_handler = on_sig_record };
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
	raise(sig);
	printf("handled %s: %d\n", strsignal(sig), got == sig);
	return got == sig ? 0 : 1;
}

static int mode_signalfd(void)
{
	sigset_t one;
	sigemptyset(&one);
	sigaddset(&one, SIGTERM);
	sigprocmask(SIG_BLOCK, &one, NULL);
	int fd = signalfd(-1, &one, SFD_CLOEXEC);
	if (fd < 0)
		return 1;
	work("aes-128-cbc", 400, 64);
	kill(getpid(), SIGTERM);
	struct signalfd_siginfo si;
	ssize_t r = read(fd, &si, sizeof(si));
	printf("signalfd read %zd: signal %u\n", r, r == sizeof(si) ? si.ssi_signo : 0);
	return r == sizeof(si) && si.ssi_signo == SIGTERM ? 0 : 1;
}

static sigset_t waited;

static void *waiter(void *arg)
{
	int sig = 0;
	(void)arg;
	sigwait(&waited, &sig);
	printf("sigwait took %s\n", strsignal(sig));
	fflush(stdout);
	return NULL;
}

static int mode_sigwait(void)
{
	sigemptyset(&waited);
	sigaddset(&waited, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &waited, NULL); /* every thread made from here blocks it too */
	pthread_t th;
	pthread_create(&th, NULL, waiter, NULL);
	work("aes-128-cbc", 400, 64);
	kill(getpid(), SIGTERM);
	pthread_join(th, NULL);
	return 0;
}

static void report_child(const char *what, int st)
{
	if (WIFSIGNALED(st))
		printf("%s child: signal %s\n", what, strsignal(WTERMSIG(st)));
	else
		printf("%s child: exit %d\n", what, WEXITSTATUS(st));
}

static int mode_vfork(int sig)
{
	work("aes-128-cbc", 200, 64);
	pid_t pid = vfork();
	if (pid == 0) {
		kill(getpid(), sig);
		_exit(99);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	report_child("vfork", st);
	work("aes-256-cbc", 100, 64);
	return 0;
}

static int mode_fork(int sig)
{
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		work("aes-192-ctr", 333, 48);
		raise(sig);
		_exit(99);
	}
	int st = 0;
	waitpid(pid, &st, 0);
	report_child("fork", st);
	return 0;
}

static int mode_fork_idle(void)
{
	EVP_CIPHER_CTX *ctx = encrypt_n("aes-128-cbc", 100, 64);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0) {
		int outl;
		for (int i = 0; i < 400; i++) /* counted on the path the parent's init chose */
			EVP_EncryptUpdate(ctx, out, &outl, in, 64);
		expect("aes-128-cbc", 400, 400 * 64);
		printf("child ready %d\n", (int)getpid());
		fflush(stdout);
		for (;;)
			pause();
	}
	int st = 0;
	waitpid(pid, &st, 0);
	report_child("fork-idle", st);
	return 0;
}

static atomic_int storm_started;

static void *storm_worker(void *arg)
{
	(void)arg;
	for (;;) {
		EVP_CIPHER_CTX_free(encrypt_n("aes-128-cbc", 1, 16));
		atomic_store(&storm_started, 1);
	}
	return NULL;
}

static int mode_storm(unsigned seed)
{
	pthread_t th;
	srand(seed);
	pthread_create(&th, NULL, storm_worker, NULL);
	while (!atomic_load(&storm_started))
		sched_yield();
	struct timespec ts = { .tv_nsec = (1 + rand() % 20) * 1000 * 1000 };
	nanosleep(&ts, NULL);
	pthread_kill(th, SIGTERM);
	for (;;)
		pause();
	return 1; /* not reached: the signal ends the process */
}

static void enter_namespaces(const char *who)
{
	int fd = open("/proc/self/ns/mnt", O_RDONLY | O_CLOEXEC);
	int r = fd >= 0 ? setns(fd, CLONE_NEWNS) : -1;
	printf("%s: setns(mnt) %s\n", who, r == 0 ? "ok" : strerror(errno));
	if (fd >= 0)
		close(fd);
	r = unshare(CLONE_NEWUSER);
	printf("%s: unshare(CLONE_NEWUSER) %s\n", who, r == 0 ? "ok" : strerror(errno));
	fflush(stdout);
}

static int mode_namespaces(void)
{
	work("aes-128-cbc", 100, 64);
	pid_t pid = fork();
	if (pid == 0) {
		work("aes-192-cbc", 50, 64);
		enter_namespaces("fork child");
		_exit(0);
	}
	waitpid(pid, NULL, 0);
	enter_namespaces("process");
	work("aes-256-cbc", 20, 64); /* the flusher thread is back */
	return 0;
}

static void *main_exit_worker(void *arg)
{
	(void)arg;
	work("aes-128-cbc", 500, 64);
	struct timespec ts = { .tv_nsec = 300 * 1000 * 1000 }; /* main has left by then */
	nanosleep(&ts, NULL);
	printf("worker done\n");
	fflush(stdout);
	return NULL;
}

static int mode_main_exit(void)
{
	pthread_t th;
	work("aes-256-ctr", 100, 64); /* the flusher thread runs from here */
	pthread_create(&th, NULL, main_exit_worker, NULL);
	pthread_exit(NULL);
}

/* ---- a sandbox like OpenSSH's pre-authentication child ------------------------------------ */

#if defined(__x86_64__)
#define SB_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define SB_ARCH AUDIT_ARCH_AARCH64
#elif defined(__i386__)
#define SB_ARCH AUDIT_ARCH_I386
#endif
#ifndef SECCOMP_RET_KILL_PROCESS
#define SECCOMP_RET_KILL_PROCESS SECCOMP_RET_KILL
#endif

#define SB_ALLOW(nr)                                                                                         \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW)
#define SB_DENY(nr, e)                                                                                       \
	BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (nr), 0, 1), BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (e))

static int mode_sandbox(const char *how)
{
#ifndef SB_ARCH
	(void)how;
	printf("sandbox: no filter for this architecture\n");
	return 77;
#else
	EVP_CIPHER_CTX *ctx = encrypt_n("aes-128-cbc", 600, 64);
	static struct sock_filter insns[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SB_ARCH, 1, 0),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
#ifdef __NR_open
		SB_DENY(__NR_open, EACCES),
#endif
		SB_DENY(__NR_openat, EACCES),
#ifdef __NR_newfstatat
		SB_DENY(__NR_newfstatat, EACCES),
#endif
		SB_DENY(__NR_fstat, EACCES),
		SB_ALLOW(__NR_read),
		SB_ALLOW(__NR_write),
		SB_ALLOW(__NR_close),
		SB_ALLOW(__NR_exit),
		SB_ALLOW(__NR_exit_group),
		SB_ALLOW(__NR_futex),
		SB_ALLOW(__NR_clock_gettime),
		SB_ALLOW(__NR_clock_nanosleep),
#ifdef __NR_nanosleep
		SB_ALLOW(__NR_nanosleep),
#endif
		SB_ALLOW(__NR_restart_syscall),
		SB_ALLOW(__NR_getpid),
		SB_ALLOW(__NR_brk),
		SB_ALLOW(__NR_mmap),
		SB_ALLOW(__NR_munmap),
		SB_ALLOW(__NR_madvise),
		SB_ALLOW(__NR_rt_sigprocmask),
		SB_ALLOW(__NR_getrandom),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS),
	};
	static const struct sock_fprog prog = { .len = sizeof(insns) / sizeof(insns[0]), .filter = insns };
	printf("sandbox: entering (%s)\n", how);
	fflush(stdout);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return 77;
	long r = !strcmp(how, "tsync")
			 ? syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &prog)
			 : prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0);
	if (r != 0) {
		printf("sandbox: refused: %s\n", strerror(errno));
		return 77;
	}
	int outl;
	for (int i = 0; i < 400; i++)
		EVP_EncryptUpdate(ctx, out, &outl, in, 64);
	expect("aes-128-cbc", 1000, 1000 * 64);
	printf("ready\n");
	fflush(stdout);
	for (;;) {
		struct timespec ts = { .tv_sec = 1 };
		nanosleep(&ts, NULL);
	}
#endif
}

int main(int argc, char **argv)
{
	alarm(120);
	memset(in, 0x5a, sizeof(in));
	int sig = argc >= 3 ? atoi(argv[2]) : 0;
	if (argc >= 3 && !strcmp(argv[1], "query"))
		return mode_query(argv[2]);
	if (argc >= 2 && !strcmp(argv[1], "query-child")) {
		show_all("exec child");
		return 0;
	}
	if (argc >= 3 && !strcmp(argv[1], "die"))
		return mode_die_threads(sig);
	if (argc >= 2 && !strcmp(argv[1], "epipe"))
		return mode_epipe();
	if (argc >= 3 && !strcmp(argv[1], "reraise"))
		return mode_reraise(sig);
	if (argc >= 3 && !strcmp(argv[1], "handled"))
		return mode_handled(sig);
	if (argc >= 2 && !strcmp(argv[1], "signalfd"))
		return mode_signalfd();
	if (argc >= 2 && !strcmp(argv[1], "sigwait"))
		return mode_sigwait();
	if (argc >= 3 && !strcmp(argv[1], "vfork"))
		return mode_vfork(sig);
	if (argc >= 3 && !strcmp(argv[1], "fork"))
		return mode_fork(sig);
	if (argc >= 3 && !strcmp(argv[1], "storm"))
		return mode_storm((unsigned)sig);
	if (argc >= 2 && !strcmp(argv[1], "namespaces"))
		return mode_namespaces();
	if (argc >= 2 && !strcmp(argv[1], "fork-idle"))
		return mode_fork_idle();
	if (argc >= 2 && !strcmp(argv[1], "main-exit"))
		return mode_main_exit();
	if (argc >= 3 && !strcmp(argv[1], "sandbox"))
		return mode_sandbox(argv[2]);
	fprintf(stderr,
		"usage: rel_signals query SELF|die SIG|epipe|reraise SIG|handled SIG|signalfd|"
		"sigwait|vfork SIG|fork SIG|fork-idle|storm SEED|namespaces|main-exit|\n"
		"sandbox prctl|tsync\n");
	return 2;
}
