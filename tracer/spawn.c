/* SPDX-License-Identifier: MIT */
/*
 * spawn.c - the launcher's child processes. `run` and `compare` start the traced command with
 * the preload in its environment; `doctor` starts probes (a child that dlopens a libcrypto, the
 * dynamic loader listing what `openssl` loads). All of them fork with a pipe back to the parent:
 * for a command, a failed exec sends its errno through that close-on-exec pipe (EOF means CMD
 * runs), so the launcher can tell "not found" from "CMD itself exited 127".
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tracer.h"

void ct_set_preload(const char *lib)
{
	const char *old = getenv("LD_PRELOAD");

	if (!old || !*old) {
		setenv("LD_PRELOAD", lib, 1);
		return;
	}
	/* Keep the user's own preloads, after ours; do not add ours twice (nested runs). */
	if (strstr(old, lib))
		return;

	size_t len = strlen(lib) + 1 + strlen(old) + 1;
	char *v = malloc(len);

	if (!v)
		return;
	snprintf(v, len, "%s:%s", lib, old);
	setenv("LD_PRELOAD", v, 1);
	free(v);
}

void ct_preload_env(const char *lib, const char *outdir, const struct ct_machine_rates *rates)
{
	char v[24];

	ct_set_preload(lib);
	setenv("CRYPTRACE_OUT", outdir, 1);
	if (rates->aesni_cpb_milli) {
		snprintf(v, sizeof(v), "%u", rates->aesni_cpb_milli);
		setenv("CRYPTRACE_AESNI_CPB", v, 1);
	}
	if (rates->tsc_hz) {
		snprintf(v, sizeof(v), "%llu", (unsigned long long)rates->tsc_hz);
		setenv("CRYPTRACE_TSC_HZ", v, 1);
	}
}

pid_t ct_fork_piped(const char *who, void (*body)(void *arg, int wfd), void *arg, int *rfd)
{
	int p[2];

	if (pipe2(p, O_CLOEXEC) != 0) {
		if (who)
			fprintf(stderr, "%s: pipe: %s\n", who, strerror(errno));
		return -1;
	}
	/* What stdio holds would otherwise be written twice, once by the child. */
	fflush(NULL);

	pid_t pid = fork();

	if (pid < 0) {
		if (who)
			fprintf(stderr, "%s: fork: %s\n", who, strerror(errno));
		close(p[0]);
		close(p[1]);
		return -1;
	}
	if (pid == 0) {
		close(p[0]);
		body(arg, p[1]);
		_exit(127); /* body execs or exits; never fall back into the launcher's code */
	}
	close(p[1]);
	*rfd = p[0];
	return pid;
}

char *ct_child_output(void (*body)(void *arg, int wfd), void *arg)
{
	int rfd;
	pid_t pid = ct_fork_piped(NULL, body, arg, &rfd);

	if (pid < 0)
		return NULL;

	char *out = ct_read_all(rfd, NULL);

	/* Closed before the wait: a child still writing gets EPIPE instead of blocking us. */
	close(rfd);
	ct_wait_child(pid, NULL, NULL);
	return out;
}

void ct_exec_or_report(char **cmd, int err_fd)
{
	execvp(cmd[0], cmd);

	int err = errno;
	ssize_t unused = write(err_fd, &err, sizeof(err));

	(void)unused;
	_exit(err == ENOENT ? CT_EXIT_NOT_FOUND : CT_EXIT_NOT_EXEC);
}

int ct_exec_outcome(int rfd)
{
	int err = 0;
	ssize_t n;

	do
		n = read(rfd, &err, sizeof(err));
	while (n < 0 && errno == EINTR);
	close(rfd);
	return n == (ssize_t)sizeof(err) ? err : 0;
}

pid_t ct_wait_child(pid_t pid, int *status, struct rusage *ru)
{
	pid_t w;

	do
		w = ru ? wait4(pid, status, 0, ru) : waitpid(pid, status, 0);
	while (w < 0 && errno == EINTR);
	return w;
}

int ct_shell_status(int status)
{
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return WEXITSTATUS(status);
}
