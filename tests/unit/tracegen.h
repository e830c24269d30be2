/* SPDX-License-Identifier: MIT */
/*
 * tracegen.h - builds trace files in memory with the real encoder, so the unit tests need no
 * binary fixtures: a preamble, then records appended one by one.
 */
#ifndef CT_TEST_TRACEGEN_H
#define CT_TEST_TRACEGEN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace_format.h"

struct tg {
	uint8_t *buf;
	size_t len, cap;
	size_t nrecords;
	size_t ends[256]; /* end offset of each record (the first 256) */
};

void tg_init(struct tg *g);
void tg_free(struct tg *g);
void tg_header(struct tg *g, const struct ct_header *h);
void tg_path(struct tg *g, const struct ct_path_def *p);
void tg_stats(struct tg *g, const struct ct_path_stats *s);
void tg_event(struct tg *g, const struct ct_event *e);
void tg_proc(struct tg *g, const struct ct_proc *p);
void tg_end(struct tg *g, const struct ct_end *e);
void tg_thread(struct tg *g, const struct ct_thread_info *t);
void tg_ops(struct tg *g, const struct ct_ops_batch *b, const struct ct_op *ops, uint32_t n);
/* A profile's totals record (module ""), as the launcher appends after the END. */
void tg_profile_totals(struct tg *g, uint32_t period_us, uint64_t samples);
/* Appends raw bytes (to build damaged or foreign files). */
void tg_raw(struct tg *g, const void *p, size_t n);

/* A header like the preload writes on this kind of host (AES-NI, TSC at 2 GHz). */
struct ct_header tg_default_header(uint32_t pid, const char *argv_nul_joined, size_t argv_len);
/* Stats for calls of one size, each timed at ns_per_call, with CPU samples user/sys shares. */
void tg_fill_stats(struct ct_path_stats *s, uint32_t path_id, uint64_t calls, uint64_t size,
		   uint64_t ns_per_call, double user_share, double sys_share);
/* Adds a bucket of calls of one size to existing stats (every call timed). */
void tg_add_calls(struct ct_path_stats *s, uint64_t calls, uint64_t size, uint64_t ns_per_call);

/* An EVP encrypt path of `cipher` (128-bit key, provider:default), as openssl speed makes. */
struct ct_path_def tg_evp_path(uint32_t path_id, const char *cipher);
/* A complete process running `openssl speed`-like EVP work: header, path, stats, proc, end. */
void tg_simple_process(struct tg *g, uint32_t pid, const char *cipher, uint64_t calls, uint64_t size);

bool tg_write_file(const struct tg *g, const char *path);

#endif
