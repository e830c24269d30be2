/* SPDX-License-Identifier: MIT */
/* tracegen.c - in-memory trace builder for the unit tests (see tracegen.h). */
#include "tracegen.h"
#include "errno_abi.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint8_t *room(struct tg *g, size_t n)
{
	if (g->len + n > g->cap) {
		size_t ncap = (g->len + n) * 2;
		uint8_t *p = realloc(g->buf, ncap);
		if (!p)
			abort(); /* test helper: out of memory ends the test */
		g->buf = p;
		g->cap = ncap;
	}
	return g->buf + g->len;
}

static void done(struct tg *g, size_t n)
{
	if (n == 0)
		abort(); /* an encoder refused: the test data is wrong */
	g->len += n;
	if (g->nrecords < sizeof(g->ends) / sizeof(g->ends[0]))
		g->ends[g->nrecords] = g->len;
	g->nrecords++;
}

#define CAP (CT_MAX_PAYLOAD + 64)

void tg_init(struct tg *g)
{
	memset(g, 0, sizeof(*g));
	size_t n = ct_encode_preamble(room(g, CT_PREAMBLE_SIZE), CT_PREAMBLE_SIZE);
	g->len += n;
}

void tg_free(struct tg *g)
{
	free(g->buf);
	memset(g, 0, sizeof(*g));
}

void tg_header(struct tg *g, const struct ct_header *h)
{
	done(g, ct_encode_header(room(g, CAP), CAP, h));
}
void tg_profile_totals(struct tg *g, uint32_t period_us, uint64_t samples)
{
	struct ct_profile p = { .period_us = period_us, .samples = samples };
	done(g, ct_encode_profile(room(g, CAP), CAP, &p, NULL, NULL, 0));
}
void tg_path(struct tg *g, const struct ct_path_def *p)
{
	done(g, ct_encode_path(room(g, CAP), CAP, p));
}
void tg_stats(struct tg *g, const struct ct_path_stats *s)
{
	done(g, ct_encode_stats(room(g, CAP), CAP, s));
}
void tg_event(struct tg *g, const struct ct_event *e)
{
	done(g, ct_encode_event(room(g, CAP), CAP, e));
}
void tg_proc(struct tg *g, const struct ct_proc *p)
{
	done(g, ct_encode_proc(room(g, CAP), CAP, p));
}
void tg_end(struct tg *g, const struct ct_end *e)
{
	done(g, ct_encode_end(room(g, CAP), CAP, e));
}
void tg_thread(struct tg *g, const struct ct_thread_info *t)
{
	done(g, ct_encode_thread(room(g, CAP), CAP, t));
}

void tg_ops(struct tg *g, const struct ct_ops_batch *b, const struct ct_op *ops, uint32_t n)
{
	done(g, ct_encode_ops(room(g, CAP), CAP, b, ops, n));
}

void tg_raw(struct tg *g, const void *p, size_t n)
{
	memcpy(room(g, n), p, n);
	g->len += n;
}

struct ct_header tg_default_header(uint32_t pid, const char *argv, size_t argv_len)
{
	return (struct ct_header){
		.pid = pid,
		.ppid = 1,
		.start_realtime_ns = 1764480000000000000ull,
		.start_mono_ns = 1000,
		.tsc_hz = 2000000000ull,
		.cpu_flags = CT_CPU_AES | CT_CPU_PCLMULQDQ | CT_CPU_AVX | CT_CPU_AVX2,
		.sample_period = 1,
		.sample_all_bytes = 0,
		.flush_interval_ms = 1000,
		.exe = ct_str_from("/usr/bin/openssl"),
		.argv = { .p = argv, .len = (uint32_t)argv_len },
		.cpu_model = ct_str_from("Test CPU"),
		.kernel = ct_str_from("6.1.0-test"),
		.hostname = ct_str_from("testhost"),
		.libcrypto = ct_str_from("OpenSSL 3.0.19 1 Jan 2026"),
		.ia32cap = ct_str_from(""),
		.route_spec = ct_str_from(""),
		.timing = ct_str_from("every call timed with the TSC"),
		/* as this build's preload writes it: the tests' errno constants are this machine's */
		.errno_abi = ct_str_from(ct_errno_abi_label(ct_errno_abi_own())),
	};
}

void tg_add_calls(struct ct_path_stats *s, uint64_t calls, uint64_t size, uint64_t ns_per_call)
{
	unsigned b = ct_size_bucket(size);
	s->calls += calls;
	s->bytes += calls * size;
	s->timed_calls += calls;
	s->timed_ns += calls * ns_per_call;
	s->size[b].calls += calls;
	s->size[b].bytes += calls * size;
	s->size[b].timed_calls += calls;
	s->size[b].timed_ns += calls * ns_per_call;
	s->lat[ct_lat_bucket(ns_per_call)] += calls;
}

void tg_fill_stats(struct ct_path_stats *s, uint32_t path_id, uint64_t calls, uint64_t size,
		   uint64_t ns_per_call, double user_share, double sys_share)
{
	memset(s, 0, sizeof(*s));
	s->path_id = path_id;
	tg_add_calls(s, calls, size, ns_per_call);
	if (user_share >= 0) {
		s->cpu_samples = calls / 10 + 1;
		s->cpu_sample_wall_ns = s->cpu_samples * ns_per_call;
		s->cpu_sample_user_ns = (uint64_t)((double)s->cpu_sample_wall_ns * user_share);
		s->cpu_sample_sys_ns = (uint64_t)((double)s->cpu_sample_wall_ns * sys_share);
	}
}

struct ct_path_def tg_evp_path(uint32_t path_id, const char *cipher)
{
	return (struct ct_path_def){
		.path_id = path_id,
		.api = CT_API_EVP,
		.dir = CT_DIR_ENCRYPT,
		.key_bits = 128,
		.entry = CT_ENTRY_EVP_UPDATE,
		.impl = ct_str_from("provider:default"),
		.cipher = ct_str_from(cipher),
		.callsite = ct_str_from("openssl!main+0x10"),
	};
}

void tg_simple_process(struct tg *g, uint32_t pid, const char *cipher, uint64_t calls, uint64_t size)
{
	static const char argv[] = "openssl\0speed\0-evp\0aes-128-cbc";
	struct ct_header h = tg_default_header(pid, argv, sizeof(argv) - 1);
	tg_header(g, &h);
	struct ct_path_def p = tg_evp_path(0, cipher);
	tg_path(g, &p);
	struct ct_path_stats *s = calloc(1, sizeof(*s));
	if (!s)
		abort();
	tg_fill_stats(s, 0, calls, size, 100 + size / 2, 0.98, 0.01);
	tg_stats(g, s);
	free(s);
	struct ct_proc pr = {
		.mono_ns = 2000,
		.flags = CT_PROC_HAS_LIBCRYPTO | CT_PROC_FINAL,
		.threads_seen = 1,
		.hooked_calls = calls + 3,
		.crypto_libs = ct_str_from("/usr/lib/x86_64-linux-gnu/libcrypto.so.3"),
		.libcrypto = ct_str_from("OpenSSL 3.0.19 1 Jan 2026"),
	};
	tg_proc(g, &pr);
	struct ct_end e = { .mono_ns = 3000, .reason = CT_END_EXIT, .status = 0 };
	tg_end(g, &e);
}

bool tg_write_file(const struct tg *g, const char *path)
{
	FILE *f = fopen(path, "wb");
	if (!f)
		return false;
	bool ok = fwrite(g->buf, 1, g->len, f) == g->len;
	return fclose(f) == 0 && ok;
}
