/* SPDX-License-Identifier: MIT */
/*
 * sock_cost.c - what the kTLS and AF_ALG socket hooks cost a socket that is neither: a 16-byte
 * send + recv (or write + read) round on a UNIX socketpair in a loop, timed with this thread's
 * CPU clock, best of ROUNDS batches. bench/sock_cost.sh runs it natively and under the preload,
 * alternating, and prints the ratios; run alone it prints "ns_per_pair <best>".
 *
 * usage: sock_cost [send|write [PAIRS_PER_BATCH [ROUNDS [LEN]]]]   (defaults send, 200000, 9, 16)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

static double thread_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	int use_write = argc > 1 && !strcmp(argv[1], "write");
	long pairs = argc > 2 ? atol(argv[2]) : 200000;
	int rounds = argc > 3 ? atoi(argv[3]) : 9;
	size_t len = argc > 4 ? (size_t)atol(argv[4]) : 16;
	int sv[2];
	static char buf[65536];

	if (pairs <= 0 || rounds <= 0 || len == 0 || len > sizeof(buf) ||
	    socketpair(AF_UNIX, SOCK_STREAM, 0, sv) < 0) {
		fprintf(stderr, "usage: sock_cost [send|write [PAIRS_PER_BATCH [ROUNDS [LEN]]]]\n");
		return 2;
	}
	double best = 0;
	for (int r = 0; r < rounds; r++) {
		double t0 = thread_ns();
		for (long i = 0; i < pairs; i++) {
			ssize_t s = use_write ? write(sv[0], buf, len) : send(sv[0], buf, len, 0);
			ssize_t g = use_write ? read(sv[1], buf, len) : recv(sv[1], buf, len, 0);
			if (s != (ssize_t)len || g != (ssize_t)len) {
				perror("sock_cost");
				return 1;
			}
		}
		double ns = (thread_ns() - t0) / (double)pairs;
		if (r == 0 || ns < best)
			best = ns;
	}
	printf("ns_per_pair %.3f\n", best);
	return 0;
}
