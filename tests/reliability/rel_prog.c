/* SPDX-License-Identifier: MIT */
/*
 * rel_prog.c - the process-level scenarios of the reliability suite, one per mode:
 *   work N CIPHER        N encrypt updates of 64 bytes, then exit 0 (the child of the others)
 *   fork-threads N       4 threads in EVP loops while main forks N children, each running
 *                        `work`-like 100 updates of aes-192-cbc in the child (atfork handlers)
 *   spawn SELF           vfork+execve, posix_spawn, and execve with an empty environment of
 *                        `SELF work ...`, each with its own cipher
 *   daemon DONEFILE      double fork + setsid, close_range(0, ~0) and closefrom(0), then 500
 *                        updates of aes-256-cbc; creates DONEFILE when the work is done
 *   sigalrm SECONDS      a 200 us interval timer whose handler encrypts 16 bytes (aes-128-ctr)
 *                        while main loops on aes-128-cbc: crypto inside a signal handler
 *   sidefile PATH        aes-128-cbc updates forever; every 2 ms appends "calls" to PATH (to be
 *                        killed: the test compares the side file with the trace)
 *   write-lots N         N updates, printing one line per update on stdout (full-disk tests
 *                        check that the output is unchanged)
 * Every mode prints `expect api=evp cipher=.. dir=encrypt calls=N bytes=N` for what it did in
 * the process that prints it. The watchdog (alarm) ends a hung run.
 */

#include <fcntl.h>
#include <openssl/evp.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <spawn.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include "close_range.h"

extern char **environ;

static const uint8_t key[32] = "Qz7#kP2!xW9@mR4$vL6%nT8^bY3&hJ5*";
static const uint8_t iv[16] = "Fq1~Gw3`Hx5|Jy7;";
static uint8_t inbuf[4096], outbuf[4096 + 32];

static EVP_CIPHER_CTX *start(const char *cipher)
{
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	const EVP_CIPHER *c = EVP_get_cipherbyname(cipher);

	if (!ctx || !c || EVP_EncryptInit_ex(ctx, c, NULL, key, iv) != 1) {
		fprintf(stderr, "rel_prog: cannot start %s\n", cipher);
		exit(1);
	}
	EVP_CIPHER_CTX_set_padding(ctx, 0);
	return ctx;
}

static void updates(EVP_CIPHER_CTX *ctx, long n, int len)
{
	int outl;

	for (long i = 0; i < n; i++)
		if (EVP_EncryptUpdate(ctx, outbuf, &outl, inbuf, len) != 1) {
			fprintf(stderr, "rel_prog: update failed\n");
			exit(1);
		}
}

static void expect(const char *cipher, long calls, long bytes)
{
	printf("expect api=evp cipher=%s dir=encrypt calls=%ld bytes=%ld\n", cipher, calls, bytes);
	fflush(stdout);
}

static int mode_work(long n, const char *cipher)
{
	EVP_CIPHER_CTX *ctx = start(cipher);

	updates(ctx, n, 64);
	EVP_CIPHER_CTX_free(ctx);
	return 0;
}

static atomic_bool stop;
static atomic_long thread_calls;
static atomic_int threads_ready;

static void *busy(void *arg)
{
	(void)arg;
	EVP_CIPHER_CTX *ctx = start("aes-128-cbc");
	long n = 0;

	atomic_fetch_add(&threads_ready, 1);
	while (!atomic_load(&stop)) {
		updates(ctx, 1, 32);
		n++;
	}
	EVP_CIPHER_CTX_free(ctx);
	atomic_fetch_add(&thread_calls, n);
	return NULL;
}

static int mode_fork_threads(long nchildren)
{
	pthread_t th[4];

	for (int i = 0; i < 4; i++)
		pthread_create(&th[i], NULL, busy, NULL);
	/* Fork only once every thread is in its update loop: OpenSSL itself is not fork-safe while
	 * a thread holds one of its locks (cipher lookup), with or without the preload - a child
	 * would hang in OPENSSL_cleanup at exit. The updates hold no OpenSSL lock; the preload's
	 * hooks around them are what this test forks through. */
	while (atomic_load(&threads_ready) < 4)
		sched_yield();
	int bad = 0;
	for (long i = 0; i < nchildren; i++) {
		pid_t pid = fork();
		if (pid == 0) {
			mode_work(100, "aes-192-cbc");
			exit(0);
		}
		int st = 0;
		if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st))
			bad++;
	}
	atomic_store(&stop, true);
	for (int i = 0; i < 4; i++)
		pthread_join(th[i], NULL);
	expect("aes-128-cbc", atomic_load(&thread_calls), atomic_load(&thread_calls) * 32);
	printf("children=%ld failed=%d child_expect=aes-192-cbc:100:6400\n", nchildren, bad);
	return bad ? 1 : 0;
}

static int wait_ok(pid_t pid)
{
	int st = 0;

	return pid > 0 && waitpid(pid, &st, 0) == pid && WIFEXITED(st) && WEXITSTATUS(st) == 0;
}

static int mode_spawn(const char *self)
{
	int ok = 0;

	/* vfork: the child shares our memory until it execs */
	char *vargv[] = { (char *)self, "work", "300", "aes-128-ofb", NULL };
	pid_t pid = vfork();
	if (pid == 0) {
		execve(self, vargv, environ);
		_exit(127);
	}
	ok += wait_ok(pid);

	char *sargv[] = { (char *)self, "work", "400", "aes-256-ofb", NULL };
	pid_t spid = -1;
	if (posix_spawn(&spid, self, NULL, NULL, sargv, environ) == 0)
		ok += wait_ok(spid);

	/* an environment scrubbed of everything, LD_PRELOAD and CRYPTRACE_* too */
	char *eargv[] = { (char *)self, "work", "500", "aes-192-ofb", NULL };
	char *empty_env[] = { NULL };
	pid = fork();
	if (pid == 0) {
		execve(self, eargv, empty_env);
		_exit(127);
	}
	ok += wait_ok(pid);
	printf("spawned_ok=%d\n", ok);
	return ok == 3 ? 0 : 1;
}

static int mode_daemon(const char *donefile)
{
	pid_t pid = fork();

	if (pid < 0)
		return 1;
	if (pid > 0)
		return wait_ok(pid) ? 0 : 1;
	setsid();
	if (fork() != 0)
		_exit(0);
	/* the grandchild: a daemon that closes every descriptor, as many do */
	close_range(0, ~0u, 0);
	closefrom(0);
	mode_work(500, "aes-256-cbc");
	int fd = open(donefile, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd >= 0)
		close(fd);
	exit(0);
}

static EVP_CIPHER_CTX *sig_ctx;
static volatile sig_atomic_t sig_calls;

static void on_alarm(int sig)
{
	int outl;
	static uint8_t out[32];

	(void)sig;
	/* key schedule done before the timer started: an update allocates nothing */
	if (EVP_EncryptUpdate(sig_ctx, out, &outl, inbuf, 16) == 1)
		sig_calls++;
}

static int mode_sigalrm(double seconds)
{
	sig_ctx = start("aes-128-ctr");
	EVP_CIPHER_CTX *ctx = start("aes-128-cbc");
	struct sigaction sa = { .sa_handler = on_alarm, .sa_flags = SA_RESTART };
	sigaction(SIGALRM, &sa, NULL);
	struct itimerval it = { .it_interval = { .tv_usec = 200 }, .it_value = { .tv_usec = 200 } };
	setitimer(ITIMER_REAL, &it, NULL);
	struct timeval t0, now;
	gettimeofday(&t0, NULL);
	long n = 0;
	do {
		for (int i = 0; i < 256; i++)
			updates(ctx, 1, 64);
		n += 256;
		gettimeofday(&now, NULL);
	} while ((double)(now.tv_sec - t0.tv_sec) + (now.tv_usec - t0.tv_usec) / 1e6 < seconds);
	struct itimerval off = { 0 };
	setitimer(ITIMER_REAL, &off, NULL);
	signal(SIGALRM, SIG_IGN);
	expect("aes-128-cbc", n, n * 64);
	expect("aes-128-ctr", sig_calls, (long)sig_calls * 16);
	return sig_calls > 0 ? 0 : 1;
}

static int mode_sidefile(const char *path)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0600);
	EVP_CIPHER_CTX *ctx = start("aes-128-cbc");
	struct timeval last, now;

	if (fd < 0)
		return 1;
	gettimeofday(&last, NULL);
	for (long n = 0;;) {
		updates(ctx, 64, 256);
		n += 64;
		gettimeofday(&now, NULL);
		if ((now.tv_sec - last.tv_sec) * 1000000 + (now.tv_usec - last.tv_usec) >= 2000) {
			char line[32];
			int len = snprintf(line, sizeof(line), "%ld\n", n);
			if (write(fd, line, (size_t)len) != len)
				return 1;
			last = now;
		}
	}
}

static int mode_write_lots(long n)
{
	EVP_CIPHER_CTX *ctx = start("aes-128-cbc");

	for (long i = 0; i < n; i++) {
		updates(ctx, 1, 64);
		printf("line %ld\n", i);
	}
	expect("aes-128-cbc", n, n * 64);
	return 0;
}

int main(int argc, char **argv)
{
	alarm(300); /* watchdog: SIGALRM's default action (sigalrm mode installs its handler) */
	memset(inbuf, 0x3c, sizeof(inbuf));
	if (argc >= 4 && !strcmp(argv[1], "work"))
		return mode_work(atol(argv[2]), argv[3]);
	if (argc >= 3 && !strcmp(argv[1], "fork-threads"))
		return mode_fork_threads(atol(argv[2]));
	if (argc >= 3 && !strcmp(argv[1], "spawn"))
		return mode_spawn(argv[2]);
	if (argc >= 3 && !strcmp(argv[1], "daemon"))
		return mode_daemon(argv[2]);
	if (argc >= 3 && !strcmp(argv[1], "sigalrm"))
		return mode_sigalrm(atof(argv[2]));
	if (argc >= 3 && !strcmp(argv[1], "sidefile"))
		return mode_sidefile(argv[2]);
	if (argc >= 3 && !strcmp(argv[1], "write-lots"))
		return mode_write_lots(atol(argv[2]));
	fprintf(stderr, "usage: rel_prog work|fork-threads|spawn|daemon|sigalrm|sidefile|write-lots ...\n");
	return 2;
}
