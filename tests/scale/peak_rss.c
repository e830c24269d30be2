/* SPDX-License-Identifier: MIT */
/*
 * peak_rss.c - `peak_rss OUT CMD ARGS...`: runs CMD and writes its exit status and peak resident
 * set (KiB, wait4's ru_maxrss) to OUT. A test cannot measure that from Python: a child inherits
 * the peak of the process it was forked from (the kernel keeps the larger of the two across
 * fork and exec), and a test holding a parsed 50 MB JSON document would read its own size. Forked
 * from this small process instead, CMD's peak is its own.
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: peak_rss OUT CMD [ARGS...]\n");
		return 2;
	}
	pid_t pid = fork();
	if (pid < 0) {
		perror("peak_rss: fork");
		return 2;
	}
	if (pid == 0) {
		execvp(argv[2], argv + 2);
		perror("peak_rss: exec");
		_exit(127);
	}
	int status;
	struct rusage ru;
	if (wait4(pid, &status, 0, &ru) < 0) {
		perror("peak_rss: wait4");
		return 2;
	}
	FILE *f = fopen(argv[1], "w");
	if (!f) {
		perror(argv[1]);
		return 2;
	}
	fprintf(f, "%d %ld\n", WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status),
		ru.ru_maxrss);
	return fclose(f) ? 2 : 0;
}
