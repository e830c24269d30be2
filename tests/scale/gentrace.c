/* SPDX-License-Identifier: MIT */
/*
 * gentrace.c - writes large traces with the real encoder, as a busy per-call process would, so
 * that the reader's memory and speed can be measured on gigabytes without running a program for
 * minutes:
 *
 *   gentrace FILE BYTES        one process, two threads each on its own path, until FILE holds
 *                              about BYTES: per flush, an OPS batch of 50,000 ops per thread
 *                              (100 ns apart, 64 B each), both paths' cumulative STATS and a PROC
 *   gentrace --spool DIR N     N small processes' traces in DIR (a fleet's spool), one path each
 *
 * Prints what it wrote as JSON (the totals a report must show exactly): ops, calls and bytes per
 * path, the ops' first and last start, the file's size.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tracegen.h"

#define THREADS 2
#define OPS_PER_BATCH 50000u
#define OP_GAP_NS 100u
#define OP_BYTES 64u
#define T0_NS 1000000ull /* the first op's start: after the header's start_mono_ns (1000) */

static void die(const char *what)
{
	fprintf(stderr, "gentrace: %s: %s\n", what, strerror(errno));
	exit(1);
}

/* Writes what g holds and empties it (the preamble and records stay written). */
static void drain(struct tg *g, int fd, uint64_t *written)
{
	size_t off = 0;
	while (off < g->len) {
		ssize_t n = write(fd, g->buf + off, g->len - off);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			die("write");
		off += (size_t)n;
	}
	*written += g->len;
	g->len = 0;
}

/* A path's cumulative STATS after `calls` calls of OP_BYTES, 1 in 64 probed at 40 ns. */
static void stats_of(struct ct_path_stats *s, uint32_t id, uint64_t calls)
{
	tg_fill_stats(s, id, calls, OP_BYTES, 40, -1, 0);
	unsigned b = ct_size_bucket(OP_BYTES);
	s->timed_calls = s->size[b].timed_calls = calls / 64;
	s->timed_ns = s->size[b].timed_ns = calls / 64 * 40;
}

static int one_big(const char *file, uint64_t want)
{
	static const char argv[] = "gentrace\0--busy";
	static const char *ciphers[THREADS] = { "aes-128-ctr", "aes-256-gcm" };
	int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (fd < 0)
		die(file);
	struct tg g;
	tg_init(&g);
	struct ct_header h = tg_default_header(4000, argv, sizeof(argv) - 1);
	h.flags = CT_HDR_PER_CALL;
	tg_header(&g, &h);
	for (uint32_t t = 0; t < THREADS; t++) {
		struct ct_path_def p = tg_evp_path(t, ciphers[t]);
		tg_path(&g, &p);
		struct ct_thread_info ti = { .tid = 4000 + t,
					     .name = ct_str_from(t ? "worker" : "gentrace") };
		tg_thread(&g, &ti);
	}
	struct ct_op *ops = malloc(OPS_PER_BATCH * sizeof(*ops));
	struct ct_path_stats *s = calloc(1, sizeof(*s));
	if (!ops || !s)
		die("malloc");
	uint64_t written = 0, flushes = 0, calls[THREADS] = { 0 }, t = T0_NS, last = T0_NS;
	while (written + g.len < want) {
		for (uint32_t th = 0; th < THREADS; th++) {
			for (uint32_t i = 0; i < OPS_PER_BATCH; i++)
				ops[i] = (struct ct_op){ .start_mono_ns =
								 t + (uint64_t)i * OP_GAP_NS + th * 50u,
							 .dur_ns = 40,
							 .path_id = th,
							 .bytes = OP_BYTES,
							 .weight = 1 };
			last = t + (uint64_t)(OPS_PER_BATCH - 1) * OP_GAP_NS + th * 50u;
			struct ct_ops_batch b = { .tid = 4000 + th, .count = OPS_PER_BATCH };
			tg_ops(&g, &b, ops, OPS_PER_BATCH);
			calls[th] += OPS_PER_BATCH;
		}
		t += (uint64_t)OPS_PER_BATCH * OP_GAP_NS;
		for (uint32_t th = 0; th < THREADS; th++) {
			stats_of(s, th, calls[th]);
			tg_stats(&g, s);
		}
		struct ct_proc pr = { .mono_ns = t,
				      .flags = CT_PROC_HAS_LIBCRYPTO,
				      .threads_seen = THREADS,
				      .hooked_calls = calls[0] + calls[1],
				      .libcrypto = ct_str_from("OpenSSL 3.0.19 1 Jan 2026") };
		tg_proc(&g, &pr);
		flushes++;
		drain(&g, fd, &written);
	}
	struct ct_proc pr = { .mono_ns = t,
			      .flags = CT_PROC_HAS_LIBCRYPTO | CT_PROC_FINAL,
			      .threads_seen = THREADS,
			      .hooked_calls = calls[0] + calls[1],
			      .libcrypto = ct_str_from("OpenSSL 3.0.19 1 Jan 2026") };
	tg_proc(&g, &pr);
	struct ct_end e = { .mono_ns = t + 1, .reason = CT_END_EXIT };
	tg_end(&g, &e);
	drain(&g, fd, &written);
	if (close(fd) < 0)
		die("close");
	printf("{\"file\": \"%s\", \"bytes_written\": %" PRIu64 ", \"flushes\": %" PRIu64
	       ", \"ops\": %" PRIu64 ", \"first_ns\": %llu, \"last_ns\": %" PRIu64
	       ", \"op_gap_ns\": %u, \"paths\": [",
	       file, written, flushes, calls[0] + calls[1], T0_NS, last, OP_GAP_NS);
	for (uint32_t th = 0; th < THREADS; th++)
		printf("%s{\"cipher\": \"%s\", \"calls\": %" PRIu64 ", \"bytes\": %" PRIu64 "}",
		       th ? ", " : "", ciphers[th], calls[th], calls[th] * OP_BYTES);
	printf("]}\n");
	free(ops);
	free(s);
	tg_free(&g);
	return 0;
}

static int spool(const char *dir, unsigned n)
{
	uint64_t calls = 0;
	for (unsigned i = 0; i < n; i++) {
		char path[4096];
		snprintf(path, sizeof(path), "%s/proc%u.%u.ctrace", dir, i, 10000 + i);
		struct tg g;
		tg_init(&g);
		tg_simple_process(&g, 10000 + i, i % 2 ? "aes-256-gcm" : "aes-128-cbc", 1000 + i, 1024);
		if (!tg_write_file(&g, path))
			die(path);
		calls += 1000 + i;
		tg_free(&g);
	}
	printf("{\"files\": %u, \"calls\": %" PRIu64 "}\n", n, calls);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "--spool"))
		return spool(argv[2], (unsigned)strtoul(argv[3], NULL, 10));
	if (argc == 3)
		return one_big(argv[1], strtoull(argv[2], NULL, 10));
	fprintf(stderr, "usage: gentrace FILE BYTES | gentrace --spool DIR N\n");
	return 2;
}
