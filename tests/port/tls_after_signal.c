/* SPDX-License-Identifier: MIT */
/*
 * tls_after_signal.c - does the main thread keep its own thread-local storage after a signal
 * handler returns, once the process has a second thread? A kernel always does. qemu-i386 7.2
 * (Debian 12's qemu-user-static) does not: after the handler, the main thread's %gs reaches the
 * thread-local storage of the thread created last. An i386 program traced under it then finds
 * the preload's flusher thread's state where its own should be, once `openssl speed`'s SIGALRM
 * has been handled, and its call in flight goes uncounted (tests/port/cross_check.py runs the
 * exact-count check without the flusher thread there: docs/port.md).
 *
 * Prints one line and exits 0 when the main thread's TLS is its own after the handler, 1 when it
 * is another thread's, 2 when the probe itself could not run.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

static volatile sig_atomic_t handled;
static __thread int whose;

static void on_alarm(int sig)
{
	(void)sig;
	handled = 1;
}

static void *second_thread(void *arg)
{
	(void)arg;
	whose = 2;
	for (;;)
		pause();
	return NULL;
}

int main(void)
{
	whose = 1;
	/* only this thread takes the signal: the second one starts with it blocked */
	sigset_t alrm;
	sigemptyset(&alrm);
	sigaddset(&alrm, SIGALRM);
	pthread_sigmask(SIG_BLOCK, &alrm, NULL);
	pthread_t t;
	if (pthread_create(&t, NULL, second_thread, NULL) != 0 || signal(SIGALRM, on_alarm) == SIG_ERR) {
		puts("probe failed: no second thread or no handler");
		return 2;
	}
	pthread_sigmask(SIG_UNBLOCK, &alrm, NULL);
	alarm(1);
	while (!handled)
		;
	int after = *(volatile int *)&whose;
	printf("main thread's TLS after a signal handler: %s\n", after == 1 ? "its own" : "another thread's");
	return after == 1 ? 0 : 1;
}
