/* SPDX-License-Identifier: MIT */
/*
 * test_report.c - the reporter on hand-built trace files: merging processes, newest snapshots,
 * derived figures from sampled timings, filters, damaged and foreign input (exit codes and the
 * one-line messages), directories, the nothing-intercepted line, JSON that parses, the
 * kernel-interface section of the text and HTML reports, and the --since/--until cut of path
 * totals from cumulative snapshots.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <fcntl.h>

#include <cmocka.h>

#include "commands.h"
#include "errno_abi.h"
#include "model.h"
#include "report.h"
#include "tracegen.h"
#include "views.h"

static char tmpdir[64];

static int setup(void **state)
{
	(void)state;
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/ct-unit-XXXXXX");
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	(void)state;
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd) == 0 ? 0 : -1;
}

static const char *tpath(const char *name)
{
	static char buf[4][256];
	static int i;
	i = (i + 1) % 4;
	snprintf(buf[i], sizeof(buf[i]), "%s/%s", tmpdir, name);
	return buf[i];
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return strdup("");
	char *buf = calloc(1, 1 << 20);
	size_t n = fread(buf, 1, (1 << 20) - 1, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

/* Runs `report` (command_report) with stdout/stderr captured into files; returns its exit code. */
static int run_report(char **out, char **err, int argc, const char **args)
{
	const char *argv[32] = { "report" };
	for (int i = 0; i < argc; i++)
		argv[i + 1] = args[i];
	fflush(stdout);
	fflush(stderr);
	int so = dup(1), se = dup(2);
	int fo = open(tpath("stdout.txt"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
	int fe = open(tpath("stderr.txt"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
	dup2(fo, 1);
	dup2(fe, 2);
	int rc = command_report(argc + 1, (char **)argv);
	fflush(stdout);
	fflush(stderr);
	dup2(so, 1);
	dup2(se, 2);
	close(so);
	close(se);
	close(fo);
	close(fe);
	*out = slurp(tpath("stdout.txt"));
	*err = slurp(tpath("stderr.txt"));
	return rc;
}

static void write_simple(const char *name, uint32_t pid, const char *cipher, uint64_t calls, uint64_t size)
{
	struct tg g;
	tg_init(&g);
	tg_simple_process(&g, pid, cipher, calls, size);
	assert_true(tg_write_file(&g, tpath(name)));
	tg_free(&g);
}

static void load_ok(struct rp_model *m, const char *name)
{
	char msg[256];
	assert_int_equal(rp_load_file(m, tpath(name), msg, sizeof(msg)), 0);
}

/* A process of user_s user CPU (final or not) whose profile has `samples` at period_us. */
static double profile_sample_us(double user_s, uint32_t flags, uint32_t period_us, uint64_t samples)
{
	static const char argv[] =
		"profile_loop\0"
		"1";
	struct tg g;
	tg_init(&g);
	struct ct_header h = tg_default_header(300, argv, sizeof(argv) - 1);
	tg_header(&g, &h);
	struct ct_proc pr = {
		.mono_ns = 2000, .flags = flags, .threads_seen = 1, .utime_ns = (uint64_t)(user_s * 1e9)
	};
	tg_proc(&g, &pr);
	struct ct_end e = { .mono_ns = 3000, .reason = CT_END_EXIT };
	tg_end(&g, &e);
	tg_profile_totals(&g, period_us, samples);
	assert_true(tg_write_file(&g, tpath("prof.ctrace")));
	tg_free(&g);
	struct rp_model m;
	rp_model_init(&m);
	load_ok(&m, "prof.ctrace");
	rp_model_merge(&m);
	assert_int_equal(m.nprocs, 1);
	assert_true(m.procs[0].prof.has);
	double us = rp_profile_sample_s(&m.procs[0].prof) * 1e6;
	rp_model_free(&m);
	return us;
}

/* The sampling clock ahead of the process's own CPU (a VM's steal): a sample counts its share of
 * the user CPU the kernel gave the process at exit; within the sampler's error, or against an
 * older snapshot, or when the profile has fewer samples than the CPU (it began late), the period. */
static void test_profile_sample_time(void **state)
{
	(void)state;
	/* 320 samples of 4 ms (1.28 s) against 1.01 s of user CPU: CI's ASan pass, 2026-12-02 */
	assert_float_equal(profile_sample_us(1.01, CT_PROC_FINAL, 4000, 320), 1.01e6 / 320, 0.01);
	assert_float_equal(profile_sample_us(1.25, CT_PROC_FINAL, 4000, 320), 4000, 1e-9);
	assert_float_equal(profile_sample_us(1.01, 0, 4000, 320), 4000, 1e-9);
	assert_float_equal(profile_sample_us(9.0, CT_PROC_FINAL, 4000, 320), 4000, 1e-9);
	assert_float_equal(profile_sample_us(0.05, CT_PROC_FINAL, 4000, 60), 4000, 1e-9); /* too few */
}

static void test_merge_two_processes(void **state)
{
	(void)state;
	write_simple("m1.ctrace", 100, "aes-128-cbc", 1000, 16);
	write_simple("m2.ctrace", 101, "aes-128-cbc", 500, 8192);
	write_simple("m3.ctrace", 102, "aes-256-gcm", 7, 64);
	struct rp_model m;
	rp_model_init(&m);
	load_ok(&m, "m1.ctrace");
	load_ok(&m, "m2.ctrace");
	load_ok(&m, "m3.ctrace");
	rp_model_merge(&m);
	assert_int_equal(m.nprocs, 3);
	assert_int_equal(m.npaths, 2);
	const struct rp_path *p = &m.paths[0]; /* sorted by bytes */
	assert_true(rp_str_is(p->def.cipher, "aes-128-cbc"));
	assert_int_equal(p->st.calls, 1500);
	assert_int_equal(p->st.bytes, 1000 * 16 + 500 * 8192);
	assert_int_equal(p->pids.n, 2);
	assert_int_equal(p->st.size[ct_size_bucket(16)].calls, 1000);
	assert_int_equal(p->st.size[ct_size_bucket(8192)].calls, 500);
	/* per-process figures stay */
	assert_int_equal(m.procs[0].paths[0].st.calls, 1000);
	assert_int_equal(m.procs[1].paths[0].st.calls, 500);
	/* every call timed: wall is exact, the sum of both processes */
	assert_true(p->d.wall_exact);
	assert_int_equal((uint64_t)p->d.wall_ns, 1000 * (100 + 8) + 500 * (100 + 4096));
	rp_model_free(&m);
}

static void test_newest_snapshot_wins(void **state)
{
	(void)state;
	struct tg g;
	tg_init(&g);
	static const char argv[] = "prog";
	struct ct_header h = tg_default_header(7, argv, 4);
	tg_header(&g, &h);
	struct ct_path_def p = { .path_id = 3,
				 .api = CT_API_EVP,
				 .dir = CT_DIR_ENCRYPT,
				 .impl = ct_str_from("provider:default"),
				 .cipher = ct_str_from("aes-128-ctr") };
	tg_path(&g, &p);
	struct ct_path_stats *s = calloc(1, sizeof(*s));
	tg_fill_stats(s, 3, 10, 64, 200, -1, 0);
	tg_stats(&g, s);
	struct ct_event e = { .event_id = 1,
			      .kind = CT_EV_CALL_FAILED,
			      .err = 2,
			      .ret = -1,
			      .count = 1,
			      .call = ct_str_from("open") };
	tg_event(&g, &e);
	tg_fill_stats(s, 3, 25, 64, 200, -1, 0);
	tg_stats(&g, s);
	e.count = 4;
	tg_event(&g, &e);
	assert_true(tg_write_file(&g, tpath("snap.ctrace")));
	struct rp_model m;
	rp_model_init(&m);
	load_ok(&m, "snap.ctrace");
	rp_model_merge(&m);
	assert_int_equal(m.npaths, 1);
	assert_int_equal(m.paths[0].st.calls, 25);
	assert_int_equal(m.nevents, 1);
	assert_int_equal(m.events[0].ev.count, 4);
	/* no END record: the process is incomplete (killed or still running) */
	assert_int_equal(rp_proc_status(&m.procs[0]), RP_INCOMPLETE);
	rp_model_free(&m);
	free(s);
	tg_free(&g);
}

static void test_derived_from_samples(void **state)
{
	(void)state;
	struct rp_path p;
	memset(&p, 0, sizeof(p));
	p.tsc_hz = 1000000000ull; /* 1 cycle per ns */
	struct ct_path_stats *s = &p.st;
	/* 1000 calls of 16 B, 10 of them timed at 1000 ns each; 100 calls of 8 KiB, none timed. */
	unsigned b16 = ct_size_bucket(16), b8k = ct_size_bucket(8192);
	s->calls = 1100;
	s->bytes = 1000 * 16 + 100 * 8192;
	s->size[b16] = (struct ct_size_bucket){
		.calls = 1000, .bytes = 16000, .timed_calls = 10, .timed_ns = 10000
	};
	s->size[b8k] = (struct ct_size_bucket){ .calls = 100, .bytes = 819200 };
	s->timed_calls = 10;
	s->timed_ns = 10000;
	s->cpu_samples = 4;
	s->cpu_sample_wall_ns = 4000;
	s->cpu_sample_user_ns = 1000;
	s->cpu_sample_sys_ns = 2000;
	s->lat[ct_lat_bucket(1000)] = 10;
	rp_derive(&p);
	assert_true(p.d.wall_known);
	assert_false(p.d.wall_exact);
	/* the untimed bucket falls back to the path's mean per call (1000 ns) */
	assert_true(p.d.bucket_wall_ns[b16] == 1000.0 * 1000);
	assert_true(p.d.bucket_wall_ns[b8k] == 100.0 * 1000);
	assert_true(p.d.wall_ns == 1100000.0);
	assert_true(p.d.cpu_known);
	assert_true(p.d.user_ns == 275000.0);
	assert_true(p.d.sys_ns == 550000.0);
	assert_true(p.d.cycles_per_byte > 1.3170 && p.d.cycles_per_byte < 1.3171); /* 1.1e6/835200 */
	assert_true(p.d.lat_known);
	assert_int_equal(p.d.p50_ns, ct_lat_bucket_low(ct_lat_bucket(1000)));
	/* No CPU samples: user/sys unknown, not zero. */
	s->cpu_samples = 0;
	s->cpu_sample_wall_ns = 0;
	rp_derive(&p);
	assert_false(p.d.cpu_known);
	/* No TSC frequency: cycles unknown. */
	p.tsc_hz = 0;
	rp_derive(&p);
	assert_true(p.d.cycles_per_byte < 0);
}

static void test_filters(void **state)
{
	(void)state;
	write_simple("f1.ctrace", 200, "aes-128-cbc", 1000, 16);
	write_simple("f2.ctrace", 201, "aes-256-gcm", 10, 16384);
	struct rp_model m;
	rp_model_init(&m);
	load_ok(&m, "f1.ctrace");
	load_ok(&m, "f2.ctrace");
	m.filter.cipher_glob = "aes-*-cbc";
	rp_model_merge(&m);
	assert_int_equal(m.npaths, 1);
	assert_true(rp_str_is(m.paths[0].def.cipher, "aes-128-cbc"));
	m.filter.cipher_glob = NULL;
	m.filter.pid = 201;
	rp_model_merge(&m);
	assert_int_equal(m.npaths, 1);
	assert_true(rp_str_is(m.paths[0].def.cipher, "aes-256-gcm"));
	m.filter.pid = -1;
	m.filter.api = "aes";
	rp_model_merge(&m);
	assert_int_equal(m.npaths, 0);
	m.filter.api = NULL;
	m.filter.min_size = 1024;
	rp_model_merge(&m);
	assert_int_equal(m.npaths, 2);
	for (size_t i = 0; i < m.npaths; i++)
		assert_int_equal(m.paths[i].st.calls,
				 rp_str_is(m.paths[i].def.cipher, "aes-256-gcm") ? 10 : 0);
	rp_model_free(&m);
}

static void test_truncated_and_corrupt_files(void **state)
{
	(void)state;
	struct tg g;
	tg_init(&g);
	tg_simple_process(&g, 300, "aes-128-cbc", 4242, 16);
	g.len -= 3; /* cut inside the END record */
	assert_true(tg_write_file(&g, tpath("cut.ctrace")));
	char *out, *err;
	const char *args[] = { "--json", tpath("cut.ctrace") };
	assert_int_equal(run_report(&out, &err, 2, args), 1);
	assert_non_null(strstr(out, "\"calls\":4242"));
	assert_non_null(strstr(out, "\"status\":\"truncated\""));
	assert_non_null(strstr(err, "cut.ctrace: trace truncated at byte"));
	assert_non_null(strstr(err, "everything before it was read"));
	assert_int_equal(strchr(err, '\n') - err + 1, (long)strlen(err)); /* one line */
	free(out);
	free(err);
	g.len += 3;
	g.buf[g.len - 30] ^= 0x10; /* damage the last record's payload */
	assert_true(tg_write_file(&g, tpath("bad.ctrace")));
	const char *args2[] = { tpath("bad.ctrace") };
	assert_int_equal(run_report(&out, &err, 1, args2), 1);
	assert_non_null(strstr(out, "4242"));
	assert_non_null(strstr(out, "corrupt at"));
	assert_non_null(strstr(err, "bad checksum"));
	free(out);
	free(err);
	tg_free(&g);
}

static void test_foreign_and_usage(void **state)
{
	(void)state;
	FILE *f = fopen(tpath("foreign.ctrace"), "w");
	fputs("#!/bin/sh\necho not a trace\n", f);
	fclose(f);
	char *out, *err;
	const char *args[] = { tpath("foreign.ctrace") };
	assert_int_equal(run_report(&out, &err, 1, args), 2);
	assert_string_equal(out, "");
	assert_non_null(strstr(err, "cryptrace report: "));
	assert_non_null(strstr(err, "foreign.ctrace: not a cryptrace trace file (bad magic)\n"));
	assert_int_equal(strchr(err, '\n') - err + 1, (long)strlen(err)); /* one line */
	free(out);
	free(err);
	const char *missing[] = { tpath("nope.ctrace") };
	assert_int_equal(run_report(&out, &err, 1, missing), 2);
	assert_non_null(strstr(err, "No such file"));
	free(out);
	free(err);
	assert_int_equal(run_report(&out, &err, 0, NULL), 2);
	free(out);
	free(err);
	const char *bad_api[] = { "--api", "nss", "x" };
	assert_int_equal(run_report(&out, &err, 3, bad_api), 2);
	assert_non_null(strstr(err, "--api"));
	free(out);
	free(err);
	const char *bad_size[] = { "--min-size", "12k", "x" };
	assert_int_equal(run_report(&out, &err, 3, bad_size), 2);
	free(out);
	free(err);
	const char *help[] = { "--help" };
	assert_int_equal(run_report(&out, &err, 1, help), 0);
	assert_non_null(strstr(out, "usage: cryptrace report"));
	free(out);
	free(err);
}

static void test_directory_input(void **state)
{
	(void)state;
	assert_int_equal(mkdir(tpath("dir"), 0700), 0);
	assert_int_equal(mkdir(tpath("empty"), 0700), 0);
	write_simple("dir/a.ctrace", 400, "aes-128-cbc", 10, 16);
	write_simple("dir/b.ctrace", 401, "aes-128-cbc", 20, 16);
	write_simple("dir/c.ctrace.bak", 402, "aes-128-cbc", 1000, 16); /* not *.ctrace: ignored */
	FILE *f = fopen(tpath("dir/notes.txt"), "w");
	fputs("hello\n", f);
	fclose(f);
	char *out, *err;
	const char *args[] = { "--json", tpath("dir") };
	assert_int_equal(run_report(&out, &err, 2, args), 0);
	assert_non_null(strstr(out, "\"calls\":30,"));
	assert_string_equal(err, "");
	free(out);
	free(err);
	const char *args2[] = { tpath("empty") };
	assert_int_equal(run_report(&out, &err, 1, args2), 2);
	assert_non_null(strstr(err, "no .ctrace files"));
	free(out);
	free(err);
	/* -o writes the report to a file */
	const char *args3[] = { "-o", tpath("report.txt"), tpath("dir") };
	assert_int_equal(run_report(&out, &err, 3, args3), 0);
	assert_string_equal(out, "");
	free(out);
	out = slurp(tpath("report.txt"));
	assert_non_null(strstr(out, "Throughput by request size"));
	assert_non_null(strstr(out, "16 bytes"));
	free(out);
	free(err);
}

static void write_idle_process(const char *name, uint32_t pid, uint32_t flags, const char *libs)
{
	struct tg g;
	tg_init(&g);
	static const char argv[] = "ls\0-l";
	struct ct_header h = tg_default_header(pid, argv, sizeof(argv) - 1);
	h.libcrypto = ct_str_from("");
	tg_header(&g, &h);
	struct ct_proc pr = { .flags = flags | CT_PROC_FINAL, .crypto_libs = ct_str_from(libs) };
	tg_proc(&g, &pr);
	struct ct_end e = { .reason = CT_END_EXIT };
	tg_end(&g, &e);
	assert_true(tg_write_file(&g, tpath(name)));
	tg_free(&g);
}

static void test_nothing_intercepted_line(void **state)
{
	(void)state;
	write_idle_process("ls.ctrace", 500, 0, "");
	char *out, *err;
	const char *args[] = { tpath("ls.ctrace") };
	assert_int_equal(run_report(&out, &err, 1, args), 0);
	assert_non_null(
		strstr(out, "no crypto calls were seen in 1 process(es): libcrypto was never loaded"));
	free(out);
	free(err);
	write_idle_process("sodium.ctrace", 501, 0, "/usr/lib/libsodium.so.23");
	const char *args2[] = { tpath("sodium.ctrace") };
	assert_int_equal(run_report(&out, &err, 1, args2), 0);
	assert_non_null(strstr(out,
			       "it used libsodium (/usr/lib/libsodium.so.23), which cryptrace does "
			       "not hook"));
	free(out);
	free(err);
	/* libgcrypt is hooked: loaded without a path, it made no cipher call */
	write_idle_process("gcrypt.ctrace", 503, 0, "/usr/lib/libgcrypt.so.20");
	const char *args_gcrypt[] = { tpath("gcrypt.ctrace") };
	assert_int_equal(run_report(&out, &err, 1, args_gcrypt), 0);
	assert_non_null(strstr(out,
			       "it loaded libgcrypt (/usr/lib/libgcrypt.so.20) but made no cipher call "
			       "through it"));
	free(out);
	free(err);
	/* GnuTLS is hooked: loaded without a path, it made no call the hooks count */
	write_idle_process("gnutls.ctrace", 502, 0, "/usr/lib/libgnutls.so.30");
	const char *args_gnutls[] = { tpath("gnutls.ctrace") };
	assert_int_equal(run_report(&out, &err, 1, args_gnutls), 0);
	assert_non_null(strstr(out,
			       "it loaded GnuTLS (/usr/lib/libgnutls.so.30) but made no cipher or TLS "
			       "record call through it"));
	free(out);
	free(err);
	write_idle_process("idle.ctrace", 502, CT_PROC_HAS_LIBCRYPTO, "/usr/lib/libcrypto.so.3");
	const char *args3[] = { tpath("idle.ctrace") };
	assert_int_equal(run_report(&out, &err, 1, args3), 0);
	assert_non_null(strstr(out, "no cipher work was done"));
	free(out);
	free(err);
	/* the end-of-run summary says it too */
	const char *paths[] = { tpath("ls.ctrace") };
	FILE *f = fopen(tpath("summary.txt"), "w");
	assert_int_equal(ct_report_summary(paths, 1, f), 0);
	fclose(f);
	out = slurp(tpath("summary.txt"));
	assert_non_null(strstr(out, "no crypto calls were seen in 1 process(es)"));
	free(out);
}

static void test_summary_table(void **state)
{
	(void)state;
	write_simple("s1.ctrace", 600, "aes-128-cbc", 123456, 16);
	const char *paths[] = { tpath("s1.ctrace") };
	FILE *f = fopen(tpath("summary2.txt"), "w");
	assert_int_equal(ct_report_summary(paths, 1, f), 0);
	fclose(f);
	char *out = slurp(tpath("summary2.txt"));
	assert_non_null(strstr(out, "123456"));
	assert_non_null(strstr(out, "evp provider:default aes-128-cbc encrypt"));
	free(out);
}

/* Odd strings everywhere a program controls them; JSON must stay valid and keep their value. */
static void test_json_parses_and_escapes(void **state)
{
	(void)state;
	if (system("python3 -c pass >/dev/null 2>&1") != 0)
		skip();
	struct tg g;
	tg_init(&g);
	static const char argv[] =
		"we\"ird\0back\\slash\0ctl\x01\x1f\x7f\0bad\xff\xc3utf8\0\xc3\xa9t\xc3\xa9";
	struct ct_header h = tg_default_header(700, argv, sizeof(argv) - 1);
	h.exe = ct_str_from("/tmp/a \"quoted\"\n\tname");
	h.ia32cap = ct_str_from("~0x200000200000000");
	tg_header(&g, &h);
	struct ct_path_def p = { .path_id = 1,
				 .api = CT_API_AFALG,
				 .dir = CT_DIR_DECRYPT,
				 .impl = ct_str_from("kernel:</script>\\u0000"),
				 .cipher = ct_str_from("aes-128-cbc"),
				 .callsite = ct_str_from("a!b+0x1\nc!d+0x2") };
	tg_path(&g, &p);
	struct ct_path_stats *s = calloc(1, sizeof(*s));
	tg_fill_stats(s, 1, 50, 16, 3000, 0.05, 0.9);
	tg_stats(&g, s);
	free(s);
	struct ct_event e = { .event_id = 1,
			      .kind = CT_EV_CALL_FAILED,
			      .err = EAFNOSUPPORT, /* 97 on x86, 124 on MIPS */
			      .ret = -1,
			      .path_id = CT_NO_PATH,
			      .count = 2,
			      .call = ct_str_from("socket"),
			      .detail = ct_str_from("family=\"AF_ALG\"\x02") };
	tg_event(&g, &e);
	assert_true(tg_write_file(&g, tpath("odd.ctrace")));
	tg_free(&g);
	char *out, *err;
	const char *args[] = { "--json", "-o", tpath("odd.json"), tpath("odd.ctrace") };
	assert_int_equal(run_report(&out, &err, 4, args), 0);
	free(out);
	free(err);
	char cmd[1024];
	snprintf(
		cmd, sizeof(cmd),
		"python3 -c 'import json,sys; d=json.load(open(sys.argv[1], encoding=\"utf-8\"));"
		"p=d[\"processes\"][0]; a=p[\"argv\"];"
		"assert a[0]==\"we\\\"ird\" and a[1]==\"back\\\\slash\", a;"
		"assert a[2]==\"ctl\\x01\\x1f\\x7f\", a; assert a[3]==\"bad\\ufffd\\ufffdutf8\", a;"
		"assert a[4]==\"\\u00e9t\\u00e9\", a; assert p[\"exe\"].endswith(\"\\n\\tname\");"
		"q=d[\"paths\"][0]; assert q[\"impl\"]==\"kernel:</script>\\\\u0000\", q[\"impl\"];"
		"assert q[\"calls\"]==50 and q[\"user_ns\"] is not None and q[\"sizes\"][0][\"bucket_low\"]==16;"
		"assert d[\"events\"][0][\"errno_name\"]==\"EAFNOSUPPORT\";"
		"assert set(d) >= {\"format_version\",\"processes\",\"paths\",\"events\",\"findings\",\"warnings\"}' '%s'",
		tpath("odd.json"));
	assert_int_equal(system(cmd), 0);
	/* the text report neutralizes control characters (no terminal escapes from a trace) */
	const char *targs[] = { tpath("odd.ctrace") };
	assert_int_equal(run_report(&out, &err, 1, targs), 0);
	assert_null(strchr(out, '\x01'));
	assert_null(strchr(out, '\x1f'));
	assert_null(strchr(out, '\x7f'));
	assert_non_null(strstr(out, "ctl???"));
	free(out);
	free(err);
	/* and the standard tool agrees */
	snprintf(cmd, sizeof(cmd), "python3 -m json.tool '%s' >/dev/null", tpath("odd.json"));
	assert_int_equal(system(cmd), 0);
}

/* A trace with one refused socket(AF_ALG) whose errno is err in the numbering label. */
static void write_refused_afalg(const char *name, const char *label, int err)
{
	struct tg g;
	tg_init(&g);
	struct ct_header h = tg_default_header(800, "kcapi-enc", 9);
	h.errno_abi = ct_str_from(label);
	tg_header(&g, &h);
	struct ct_event e = { .event_id = 1,
			      .kind = CT_EV_CALL_FAILED,
			      .err = err,
			      .ret = -1,
			      .path_id = CT_NO_PATH,
			      .count = 1,
			      .call = ct_str_from("socket"),
			      .detail = ct_str_from("family=AF_ALG type=SOCK_SEQPACKET protocol=0") };
	tg_event(&g, &e);
	assert_true(tg_write_file(&g, tpath(name)));
	tg_free(&g);
}

/* The text report with its line wrapping undone: every run of blanks one space. */
static void unwrap(char *s)
{
	char *o = s;
	for (const char *i = s; *i; i++)
		if (!(*i == ' ' || *i == '\n') || (o > s && o[-1] != ' '))
			*o++ = *i == '\n' ? ' ' : *i;
	*o = 0;
}

/* errno as the traced program's architecture numbers it: 124 is EAFNOSUPPORT in a trace written
 * on MIPS (and kernel-refused explains it as on x86), EMEDIUMTYPE in one written elsewhere, and a
 * MIPS-only errno is neither named with this machine's table nor left silent. */
static void test_errno_numbering(void **state)
{
	(void)state;
	char *out, *err;
	write_refused_afalg("mips.ctrace", "mips", 124);
	const char *args[] = { tpath("mips.ctrace") };
	assert_int_equal(run_report(&out, &err, 1, args), 0);
	unwrap(out);
	assert_non_null(strstr(out, "refused with EAFNOSUPPORT"));
	assert_non_null(strstr(out, "af_alg and algif_skcipher"));
	assert_null(strstr(out, "EMEDIUMTYPE"));
	assert_null(strstr(out, "warning:"));
	free(out);
	free(err);
	if (system("python3 -c pass >/dev/null 2>&1") == 0) {
		const char *jargs[] = { "--json", "-o", tpath("mips.json"), tpath("mips.ctrace") };
		assert_int_equal(run_report(&out, &err, 4, jargs), 0);
		free(out);
		free(err);
		char cmd[1024];
		snprintf(cmd, sizeof(cmd),
			 "python3 -c 'import json,sys; d=json.load(open(sys.argv[1]));"
			 "e=d[\"events\"][0]; assert e[\"errno_name\"]==\"EAFNOSUPPORT\", e;"
			 "assert e[\"errno\"]==%d, e;"
			 "assert d[\"processes\"][0][\"errno_abi\"]==\"mips\";"
			 "assert [f for f in d[\"findings\"] if f[\"kind\"]==\"kernel-refused\"]' '%s'",
			 EAFNOSUPPORT /* this build's: python's errno is the host's */, tpath("mips.json"));
		assert_int_equal(system(cmd), 0);
	}

	/* the same number from a generic (x86, ARM) trace, and from one older than the label */
	write_refused_afalg("generic.ctrace", "generic", 124);
	write_refused_afalg("old.ctrace", "", 124);
	for (int i = 0; i < 2; i++) {
		const char *gargs[] = { tpath(i ? "old.ctrace" : "generic.ctrace") };
		assert_int_equal(run_report(&out, &err, 1, gargs), 0);
		unwrap(out);
		assert_non_null(strstr(out, "refused with EMEDIUMTYPE"));
		assert_null(strstr(out, "EAFNOSUPPORT"));
		assert_null(strstr(out, "af_alg and algif_skcipher"));
		free(out);
		free(err);
	}

	/* EINIT (141) exists only on MIPS: elsewhere a warning, and a number no table names */
	write_refused_afalg("einit.ctrace", "mips", 141);
	const char *eargs[] = { tpath("einit.ctrace") };
	assert_int_equal(run_report(&out, &err, 1, eargs), 0);
	unwrap(out);
	if (ct_errno_abi_own() == CT_ERRNO_ABI_MIPS) {
		/* its own numbering: kept as it is, named as the C library names it */
		assert_null(strstr(out, "no counterpart"));
		assert_null(strstr(out, "-141"));
	} else {
		assert_non_null(strstr(
			out, "errno 141 (EINIT in the trace's \"mips\" numbering) has no counterpart"));
		assert_non_null(strstr(out, "refused with errno -141"));
	}
	free(out);
	free(err);
	/* a numbering without a table here: said, and nothing named by this machine's */
	write_refused_afalg("alpha.ctrace", "alpha", 124);
	const char *aargs[] = { tpath("alpha.ctrace") };
	assert_int_equal(run_report(&out, &err, 1, aargs), 0);
	unwrap(out);
	assert_non_null(strstr(out, "\"alpha\" numbering, which this reporter has no table for"));
	assert_null(strstr(out, "EMEDIUMTYPE"));
	assert_null(strstr(out, "EAFNOSUPPORT"));
	free(out);
	free(err);
}

/* JSON text well formed: brackets balanced and closed in order, strings closed, no raw control
 * character inside a string, nothing after the top-level value but a newline. */
static bool json_well_formed(const char *s, size_t len)
{
	char stack[64];
	size_t depth = 0, i = 0;
	bool seen_value = false;
	for (; i < len; i++) {
		const unsigned char c = (unsigned char)s[i];
		if (c == '"') {
			for (i++; i < len && s[i] != '"'; i++) {
				if ((unsigned char)s[i] < 0x20)
					return false;
				if (s[i] == '\\')
					i++;
			}
			if (i >= len)
				return false;
		} else if (c == '{' || c == '[') {
			if (depth == sizeof(stack) || (depth == 0 && seen_value))
				return false;
			stack[depth++] = c == '{' ? '}' : ']';
		} else if (c == '}' || c == ']') {
			if (depth == 0 || stack[--depth] != c)
				return false;
			seen_value = depth == 0;
		} else if (depth == 0 && c != '\n') {
			return false;
		}
	}
	return depth == 0 && seen_value;
}

/* Printed text holds no terminal control character: only newlines and printable bytes (UTF-8
 * included), whatever bytes the trace's strings carried. */
static bool text_printable(const char *s, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		const unsigned char c = (unsigned char)s[i];
		if ((c < 0x20 && c != '\n') || c == 0x7f)
			return false;
	}
	return true;
}

/* Payloads with valid CRCs but arbitrary values (bogus enums, huge counts, odd strings) in one
 * record go through the whole pipeline: load, merge, findings, text and JSON. The loader says 0,
 * 1 or 2 with a one-line reason, keeps what came before the damaged record (the path's 1000
 * calls, when the damage is in a later record), and every printer writes well-formed output:
 * the text report's first line and no control character, JSON that is well formed. The CI's
 * ASan+UBSan pass also fails it on a memory error or undefined behaviour. */
static void test_garbage_values_load_and_print(void **state)
{
	(void)state;
	struct tg g;
	tg_init(&g);
	tg_simple_process(&g, 800, "aes-128-cbc", 1000, 16);
	struct ct_event e = { .event_id = 1,
			      .kind = CT_EV_ENGINE_REQUEST,
			      .ret = 0,
			      .count = 1,
			      .call = ct_str_from("ENGINE_by_id"),
			      .detail = ct_str_from("id=afalg") };
	tg_event(&g, &e);
	/* records: 0 HEADER, 1 PATH, 2 STATS, 3 PROC, 4 END, 5 EVENT */
	assert_int_equal(g.nrecords, 6);
	uint8_t *copy = malloc(g.len);
	assert_non_null(copy);
	unsigned status_seen[3] = { 0 };
	srand(12345);
	for (int round = 0; round < 3000; round++) {
		memcpy(copy, g.buf, g.len);
		size_t k = (size_t)rand() % g.nrecords;
		size_t start = k ? g.ends[k - 1] : CT_PREAMBLE_SIZE, end = g.ends[k];
		size_t plen = end - start - 12;
		for (int n = 1 + rand() % 4; n > 0 && plen; n--) {
			size_t at = start + 8 + (size_t)rand() % plen;
			copy[at] = (uint8_t)(rand() % 4 == 0 ? 0xff : rand());
		}
		ct_put_le32(copy + end - 4, ct_crc32c(0, copy + start, end - start - 4));
		struct rp_model m;
		rp_model_init(&m);
		char msg[256] = "";
		const int rc = rp_load_buffer(&m, "garbage", copy, g.len, msg, sizeof(msg));
		assert_in_range(rc, 0, 2);
		status_seen[rc]++;
		if (rc != 0) {
			if (!msg[0] || strchr(msg, '\n'))
				fail_msg("round %d, record %zu: status %d with message [%s]", round, k, rc,
					 msg);
		}
		rp_model_merge(&m);
		if (rc != 2 && k >= 3) {
			if (m.npaths != 1 || m.paths[0].st.calls != 1000)
				fail_msg(
					"round %d, record %zu damaged: %zu paths, %llu calls kept "
					"(want the 1000 before it)",
					round, k, m.npaths,
					m.npaths ? (unsigned long long)m.paths[0].st.calls : 0ULL);
		}
		rp_findings_evaluate(&m);
		char *buf = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&buf, &len);
		assert_non_null(f);
		rp_print_text(&m, f);
		fclose(f);
		if (rc != 2 && (strncmp(buf, "cryptrace report: ", 18) || !text_printable(buf, len)))
			fail_msg("round %d, record %zu: text report [%.300s]", round, k, buf);
		free(buf);
		f = open_memstream(&buf, &len);
		assert_non_null(f);
		rp_print_json(&m, f);
		fclose(f);
		if (!json_well_formed(buf, len))
			fail_msg("round %d, record %zu: JSON not well formed [%.300s]", round, k, buf);
		free(buf);
		f = open_memstream(&buf, &len);
		assert_non_null(f);
		rp_print_summary(&m, f);
		fclose(f);
		if (!text_printable(buf, len))
			fail_msg("round %d, record %zu: summary [%.300s]", round, k, buf);
		free(buf);
		rp_model_free(&m);
	}
	/* both outcomes were reached: a bogus value is damage to the reader or just a value */
	print_message("load status 0/1/2: %u/%u/%u\n", status_seen[0], status_seen[1], status_seen[2]);
	assert_true(status_seen[0] > 0 && status_seen[1] > 0);
	free(copy);
	tg_free(&g);
}

/* An AF_ALG path (3 sessions, 150 operations of 16 B and 4 KiB, 4 syscalls each, 120 spliced)
 * beside an in-process EVP path, in one process. */
static void write_kernel_process(const char *name)
{
	static const char argv[] = "afalg_bench\0--mode\0splice";
	struct tg g;
	tg_init(&g);
	struct ct_header h = tg_default_header(300, argv, sizeof(argv) - 1);
	tg_header(&g, &h);
	struct ct_path_def k = {
		.path_id = 0,
		.api = CT_API_AFALG,
		.dir = CT_DIR_ENCRYPT,
		.key_bits = 128,
		.entry = CT_ENTRY_AFALG_SPLICE,
		.flags = CT_PATH_CPU_DRIVER,
		.impl = ct_str_from("kernel:cbc-aes-aesni"),
		.cipher = ct_str_from("aes-128-cbc"),
		.callsite = ct_str_from("afalg_bench!main+0x10"),
	};
	struct ct_path_def e = k;
	e.path_id = 1;
	e.api = CT_API_EVP;
	e.entry = CT_ENTRY_EVP_UPDATE;
	e.flags = 0;
	e.impl = ct_str_from("provider:default");
	tg_path(&g, &k);
	tg_path(&g, &e);
	struct ct_path_stats *s = calloc(1, sizeof(*s));
	assert_non_null(s);
	s->path_id = 0;
	tg_add_calls(s, 100, 16, 2000);
	tg_add_calls(s, 50, 4096, 10000);
	s->setup_calls = 3;
	s->setup_ns = 30000;
	s->teardown_calls = 3;
	s->teardown_ns = 9000;
	s->syscalls = 600;
	s->spliced_calls = 120;
	tg_stats(&g, s);
	tg_fill_stats(s, 1, 1000, 4096, 1000, 0.98, 0.01);
	tg_stats(&g, s);
	free(s);
	struct ct_proc pr = { .mono_ns = 2000,
			      .flags = CT_PROC_HAS_LIBCRYPTO | CT_PROC_FINAL,
			      .threads_seen = 1,
			      .hooked_calls = 1200,
			      .libcrypto = ct_str_from("OpenSSL 3.0.19 1 Jan 2026") };
	tg_proc(&g, &pr);
	struct ct_end end = { .mono_ns = 3000, .reason = CT_END_EXIT };
	tg_end(&g, &end);
	assert_true(tg_write_file(&g, tpath(name)));
	tg_free(&g);
}

/* The lines of the text report's kernel section (up to the blank line after it). */
static char *kernel_section(const char *text)
{
	const char *at = strstr(text, "Kernel interfaces");
	if (!at)
		return NULL;
	const char *end = strstr(at, "\n\n");
	return strndup(at, end ? (size_t)(end - at) : strlen(at));
}

static void test_kernel_section(void **state)
{
	(void)state;
	write_kernel_process("k.ctrace");
	struct rp_model m;
	rp_model_init(&m);
	load_ok(&m, "k.ctrace");
	rp_model_merge(&m);
	assert_int_equal(m.npaths, 2);
	const struct rp_path *kp = NULL;
	for (size_t i = 0; i < m.npaths; i++)
		if (rp_path_is_kernel(&m.paths[i]))
			kp = &m.paths[i];
	assert_non_null(kp);
	struct rp_kernel_fig k;
	rp_kernel_figures(kp, &k);
	assert_int_equal(k.ops, 150);
	assert_int_equal(k.setup_calls, 3);
	assert_int_equal(k.teardown_calls, 3);
	assert_float_equal(k.setup_ns, 10000, 1e-9);
	assert_float_equal(k.teardown_ns, 3000, 1e-9);
	assert_float_equal(k.syscalls_per_op, 4.0, 1e-12);
	assert_float_equal(k.session_ns_per_op, 39000.0 / 150, 1e-9);
	assert_int_equal(k.spliced, 120);
	assert_int_equal(k.copied, 30);
	unsigned b16 = ct_size_bucket(16), b4k = ct_size_bucket(4096);
	assert_float_equal(rp_kernel_op_ns(kp, b16), 2000, 1e-9);
	assert_float_equal(rp_kernel_op_ns(kp, b4k), 10000, 1e-9);
	assert_float_equal(rp_kernel_op_bps(kp, b16), 16e9 / 2000, 1e-3);
	assert_float_equal(rp_kernel_full_bps(kp, b16), 16e9 / 2260, 1e-3);
	assert_float_equal(rp_kernel_full_bps(kp, b4k), 4096e9 / 10260, 1e-3);
	rp_model_free(&m);

	char *out, *err;
	const char *args[] = { tpath("k.ctrace") };
	assert_int_equal(run_report(&out, &err, 1, args), 0);
	char *sec = kernel_section(out);
	assert_non_null(sec);
	for (char *line = sec; *line;) { /* the section fits 80 columns */
		size_t n = strcspn(line, "\n");
		assert_true(n <= 80);
		line += n + (line[n] ? 1 : 0);
	}
	assert_non_null(strstr(sec, "#2 afalg kernel:cbc-aes-aesni aes-128-cbc encrypt")); /* by bytes */
	assert_non_null(strstr(sec, "init          3 x 10.0us"));
	assert_non_null(strstr(sec, "deinit        3 x 3.00us"));
	assert_non_null(strstr(sec, "ops         150, 4.00 syscalls each, 120 spliced, 30 copied"));
	/* SIZE CALLS TIME/OP OP-MB/s +INIT+DEINIT */
	assert_non_null(strstr(sec, "16        100     2.00us            8           7.08"));
	assert_non_null(strstr(sec, "4096         50     10.0us        409.6          399.2"));
	assert_null(strstr(sec, "provider:default")); /* in-process paths are not in it */
	free(sec);
	free(out);
	free(err);

	/* The HTML section carries the same figures, full precision */
	const char *hargs[] = { "--html", tpath("k.html"), tpath("k.ctrace") };
	assert_int_equal(run_report(&out, &err, 3, hargs), 0);
	free(out);
	free(err);
	char *html = slurp(tpath("k.html"));
	char want[256];
	assert_non_null(strstr(html, "<section id=\"kernel\">"));
	assert_non_null(strstr(html, "<a href=\"#kernel\">"));
	assert_non_null(strstr(html,
			       "data-setup-calls=\"3\" data-teardown-calls=\"3\" data-ops=\"150\" "
			       "data-spliced=\"120\" data-copied=\"30\" data-setup-ns=\"10000\" "
			       "data-teardown-ns=\"3000\" data-syscalls-per-op=\"4\""));
	snprintf(want, sizeof(want),
		 "data-size=\"16\" data-calls=\"100\" data-op-ns=\"2000\" "
		 "data-op-bps=\"8000000\" data-full-bps=\"%.17g\"",
		 16e9 / (2000 + 39000.0 / 150));
	assert_non_null(strstr(html, want));
	snprintf(want, sizeof(want),
		 "data-size=\"4096\" data-calls=\"50\" data-op-ns=\"10000\" "
		 "data-op-bps=\"%.17g\" data-full-bps=\"%.17g\"",
		 4096e9 / 10000, 4096e9 / (10000 + 39000.0 / 150));
	assert_non_null(strstr(html, want));
	free(html);

	/* --max-size keeps the 16 B bucket; syscalls and sessions are still per operation of all
	 * sizes (they cannot be split by size) */
	const char *margs[] = { "--max-size", "16", tpath("k.ctrace") };
	assert_int_equal(run_report(&out, &err, 3, margs), 0);
	sec = kernel_section(out);
	assert_non_null(sec);
	assert_non_null(strstr(sec, "150, 4.00 syscalls each"));
	assert_non_null(strstr(sec, "16        100     2.00us            8           7.08"));
	assert_null(strstr(sec, "4096"));
	free(sec);
	free(out);
	free(err);

	/* no kernel path, no section */
	write_simple("nok.ctrace", 301, "aes-128-cbc", 10, 16);
	const char *nargs[] = { tpath("nok.ctrace") };
	assert_int_equal(run_report(&out, &err, 1, nargs), 0);
	assert_null(strstr(out, "Kernel interfaces"));
	free(out);
	free(err);
	const char *nhargs[] = { "--html", tpath("nok.html"), tpath("nok.ctrace") };
	assert_int_equal(run_report(&out, &err, 3, nhargs), 0);
	free(out);
	free(err);
	html = slurp(tpath("nok.html"));
	assert_null(strstr(html, "id=\"kernel\""));
	assert_null(strstr(html, "href=\"#kernel\""));
	free(html);
}

/* One process flushed three times (0.5 s, 1.0 s, 1.5 s after its start; END at 1.6 s): 100 calls
 * of 16 B before the first flush, 50 of 1 KiB before the second, 20 of 8 KiB before the third;
 * utime 0.1, 0.3, 0.5 s at the flushes. */
static void write_flushed_process(const char *name)
{
	static const char argv[] = "openssl\0speed";
	const uint64_t s0 = 1000, sec = 1000000000ull;
	struct tg g;
	tg_init(&g);
	struct ct_header h = tg_default_header(400, argv, sizeof(argv) - 1);
	tg_header(&g, &h);
	struct ct_path_def p = {
		.path_id = 0,
		.api = CT_API_EVP,
		.dir = CT_DIR_ENCRYPT,
		.key_bits = 128,
		.entry = CT_ENTRY_EVP_UPDATE,
		.impl = ct_str_from("provider:default"),
		.cipher = ct_str_from("aes-128-cbc"),
	};
	tg_path(&g, &p);
	struct ct_path_stats *s = calloc(1, sizeof(*s));
	assert_non_null(s);
	s->path_id = 0;
	const uint64_t calls[3] = { 100, 50, 20 }, size[3] = { 16, 1024, 8192 };
	for (int f = 0; f < 3; f++) {
		tg_add_calls(s, calls[f], size[f], 100 + size[f] / 4);
		s->cpu_samples += calls[f];
		s->cpu_sample_wall_ns += calls[f] * (100 + size[f] / 4);
		s->cpu_sample_user_ns += calls[f] * (100 + size[f] / 4);
		tg_stats(&g, s);
		struct ct_proc pr = { .mono_ns = s0 + (uint64_t)(f + 1) * sec / 2,
				      .utime_ns = (uint64_t)(2 * f + 1) * sec / 10,
				      .flags = CT_PROC_HAS_LIBCRYPTO | (f == 2 ? CT_PROC_FINAL : 0),
				      .libcrypto = ct_str_from("OpenSSL 3.0.19 1 Jan 2026") };
		tg_proc(&g, &pr);
	}
	free(s);
	struct ct_end end = { .mono_ns = s0 + 16 * sec / 10, .reason = CT_END_EXIT };
	tg_end(&g, &end);
	assert_true(tg_write_file(&g, tpath(name)));
	tg_free(&g);
}

/* Loads the trace, applies --since/--until (< 0: not given); the model is left for checks. */
static void load_window(struct rp_model *m, const char *name, double since, double until)
{
	rp_model_init(m);
	load_ok(m, name);
	struct rp_view v = {
		.has_since = since >= 0, .since_s = since, .has_until = until >= 0, .until_s = until
	};
	char msg[300];
	assert_true(rp_view_apply(m, &v, msg, sizeof(msg)));
}

static void test_time_window(void **state)
{
	(void)state;
	write_flushed_process("w.ctrace");
	struct rp_model m;
	const unsigned b16 = ct_size_bucket(16), b1k = ct_size_bucket(1024), b8k = ct_size_bucket(8192);

	/* before the second flush: the first snapshot only */
	load_window(&m, "w.ctrace", -1, 0.7);
	assert_int_equal(m.npaths, 1);
	assert_int_equal(m.paths[0].st.calls, 100);
	assert_int_equal(m.paths[0].st.size[b16].calls, 100);
	assert_int_equal(m.paths[0].st.size[b1k].calls, 0);
	assert_int_equal(m.paths[0].st.timed_ns, 100 * 104);
	assert_true(m.procs[0].win_cut);
	assert_float_equal(m.procs[0].win_from_s, 0, 1e-9);
	assert_float_equal(m.procs[0].win_to_s, 0.5, 1e-9);
	assert_float_equal(m.procs[0].fig.cpu_ns, 0.1e9, 1);
	assert_float_equal(m.procs[0].fig.wall_ns, 0.5e9, 1);
	rp_model_free(&m);

	/* between: the second snapshot minus the first, latency and CPU samples too */
	load_window(&m, "w.ctrace", 0.7, 1.2);
	assert_int_equal(m.npaths, 1);
	const struct ct_path_stats *st = &m.paths[0].st;
	assert_int_equal(st->calls, 50);
	assert_int_equal(st->bytes, 50 * 1024);
	assert_int_equal(st->size[b16].calls, 0);
	assert_int_equal(st->size[b1k].calls, 50);
	assert_int_equal(st->lat[ct_lat_bucket(100 + 1024 / 4)], 50);
	assert_int_equal(st->lat[ct_lat_bucket(104)], 0);
	assert_int_equal(st->cpu_samples, 50);
	assert_float_equal(m.procs[0].win_from_s, 0.5, 1e-9);
	assert_float_equal(m.procs[0].win_to_s, 1.0, 1e-9);
	assert_float_equal(m.procs[0].fig.cpu_ns, 0.2e9, 1);
	char note[1200];
	rp_window_note(&m, note, sizeof(note));
	assert_non_null(strstr(note, "--since 0.700 s --until 1.200 s"));
	assert_non_null(strstr(note, "every 1000 ms"));
	assert_non_null(strstr(note, "pid 400 0.500-1.000 s"));
	rp_model_free(&m);

	/* to the end of the trace: the newest snapshot, up to END */
	load_window(&m, "w.ctrace", 1.2, -1);
	assert_int_equal(m.paths[0].st.calls, 20);
	assert_int_equal(m.paths[0].st.size[b8k].calls, 20);
	assert_float_equal(m.procs[0].win_from_s, 1.0, 1e-9);
	assert_float_equal(m.procs[0].win_to_s, 1.6, 1e-9);
	rp_model_free(&m);

	/* inside one flush interval: no snapshot difference, so no path */
	load_window(&m, "w.ctrace", 0.6, 0.9);
	assert_int_equal(m.npaths, 0);
	rp_model_free(&m);

	/* the windows partition the trace: their totals add up to the whole */
	uint64_t sum = 0;
	const double cuts[] = { 0, 0.3, 0.75, 1.25, 9 };
	for (int i = 0; i < 4; i++) {
		load_window(&m, "w.ctrace", cuts[i], cuts[i + 1]);
		for (size_t k = 0; k < m.npaths; k++)
			sum += m.paths[k].st.calls;
		rp_model_free(&m);
	}
	assert_int_equal(sum, 170);

	/* every output says so: text and JSON */
	char *out, *err;
	const char *args[] = { "--since", "0.7", "--until", "1.2", tpath("w.ctrace") };
	assert_int_equal(run_report(&out, &err, 5, args), 0);
	assert_non_null(strstr(out, "Time window --since 0.700 s --until 1.200 s"));
	assert_non_null(strstr(out, "0.500-1.000 s")); /* the text wraps after "pid 400" */
	free(out);
	free(err);
	const char *jargs[] = { "--json", "--until", "0.7", tpath("w.ctrace") };
	assert_int_equal(run_report(&out, &err, 4, jargs), 0);
	assert_non_null(strstr(out,
			       "\"window\":{\"since_s\":null,\"until_s\":0.7,"
			       "\"flush_interval_ms\":1000,\"method\":\"snapshot-difference\""));
	assert_non_null(strstr(out, "\"window_from_s\":0,\"window_to_s\":0.5"));
	assert_non_null(strstr(out, "\"calls\":100,"));
	free(out);
	free(err);
	const char *nargs[] = { "--json", tpath("w.ctrace") };
	assert_int_equal(run_report(&out, &err, 2, nargs), 0);
	assert_non_null(strstr(out, "\"window\":null"));
	assert_null(strstr(out, "window_from_s"));
	free(out);
	free(err);

	/* --pid does not apply to --diff: exit 2 with the reason */
	const char *dargs[] = { "--diff", "--pid", "400", tpath("w.ctrace"), tpath("w.ctrace") };
	assert_int_equal(run_report(&out, &err, 5, dargs), 2);
	assert_non_null(strstr(err, "--pid does not apply to --diff"));
	assert_string_equal(out, "");
	free(out);
	free(err);
}

/* A per-call trace whose 1100 threads each ran one operation and ended before any THREAD record
 * was written: Perfetto names the track of every one of them ("N aes-128-gcm encrypt"), not only
 * the first 1024. */
static void test_perfetto_many_threads(void **state)
{
	(void)state;
	static const char argv[] = "pool";
	enum { NT = 1100 };
	struct tg g;
	tg_init(&g);
	struct ct_header h = tg_default_header(500, argv, sizeof(argv) - 1);
	h.flags |= CT_HDR_PER_CALL;
	tg_header(&g, &h);
	struct ct_path_def p = {
		.path_id = 0,
		.api = CT_API_EVP,
		.dir = CT_DIR_ENCRYPT,
		.key_bits = 128,
		.entry = CT_ENTRY_EVP_UPDATE,
		.impl = ct_str_from("provider:default"),
		.cipher = ct_str_from("aes-128-gcm"),
	};
	tg_path(&g, &p);
	struct ct_path_stats *s = calloc(1, sizeof(*s));
	assert_non_null(s);
	tg_fill_stats(s, 0, NT, 64, 500, 0.9, 0.05);
	tg_stats(&g, s);
	free(s);
	for (uint32_t t = 0; t < NT; t++) {
		struct ct_op op = {
			.start_mono_ns = 2000 + t * 1000, .dur_ns = 500, .path_id = 0, .bytes = 64
		};
		struct ct_ops_batch b = { .tid = 10001 + t, .count = 1 };
		tg_ops(&g, &b, &op, 1);
	}
	struct ct_proc pr = { .mono_ns = 5000000, .flags = CT_PROC_HAS_LIBCRYPTO | CT_PROC_FINAL };
	tg_proc(&g, &pr);
	struct ct_end end = { .mono_ns = 6000000, .reason = CT_END_EXIT };
	tg_end(&g, &end);
	assert_true(tg_write_file(&g, tpath("pool.ctrace")));
	tg_free(&g);
	char *out, *err;
	const char *args[] = { "--perfetto", tpath("pool.json"), tpath("pool.ctrace") };
	assert_int_equal(run_report(&out, &err, 3, args), 0);
	free(out);
	free(err);
	char *json = slurp(tpath("pool.json"));
	size_t names = 0, ops = 0;
	for (const char *q = json; (q = strstr(q, "\"name\":\"thread_name\"")); q++)
		names++;
	for (const char *q = json; (q = strstr(q, "\"ph\":\"X\"")); q++)
		ops++;
	assert_int_equal(ops, NT);
	assert_int_equal(names, NT + 1); /* and the main thread */
	assert_non_null(strstr(json,
			       "\"name\":\"thread_name\",\"args\":"
			       "{\"name\":\"11100 aes-128-gcm encrypt\"}"));
	free(json);

	/* A window far shorter than the flush interval holds no snapshot difference, but its
	 * per-call operations are cut exactly: those starting 1 us + t us for t = 99..499 */
	const char *wargs[] = { "--perfetto", tpath("pool-w.json"), "--since", "0.0001", "--until",
				"0.0005",     tpath("pool.ctrace") };
	assert_int_equal(run_report(&out, &err, 7, wargs), 0);
	free(out);
	free(err);
	json = slurp(tpath("pool-w.json"));
	ops = 0;
	for (const char *q = json; (q = strstr(q, "\"ph\":\"X\"")); q++)
		ops++;
	assert_int_equal(ops, 401);
	free(json);
}

/* Call-site frames: the module is what precedes '!' or the last '+' (module names may hold a
 * '+': libstdc++), and the creator is the first frame outside libcrypto. */
static void test_frame_module(void **state)
{
	(void)state;
	static const struct {
		const char *frame, *module;
		bool named;
	} cases[] = {
		{ "ssh+0x632ac", "ssh", false },
		{ "ssh!main+0x1c", "ssh", true },
		{ "libstdc++.so.6+0x9a1c", "libstdc++.so.6", false },
		{ "libstdc++.so.6!_ZNSt6thread+0x2", "libstdc++.so.6", true },
		{ "nomodule", "nomodule", false },
		{ "", "", false },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ct_str f = ct_str_from(cases[i].frame);
		struct ct_str m = rp_frame_module(f);
		assert_int_equal(m.len, strlen(cases[i].module));
		assert_memory_equal(m.p, cases[i].module, m.len);
		assert_int_equal(rp_frame_has_symbol(f), cases[i].named);
	}
	struct rp_creator c;
	assert_true(rp_callsite_creator(ct_str_from("libcrypto.so.3!EVP_CipherInit_ex+0x4\n"
						    "libstdc++.so.6+0x9a1c\nprog+0x10"),
					&c));
	assert_string_equal(c.module, "libstdc++.so.6");
	assert_string_equal(c.created_by, "libstdc++.so.6+0x9a1c");
	assert_string_equal(c.via, "libcrypto.so.3!EVP_CipherInit_ex");
}

/* Metrics counters summed over forged traces saturate rather than wrap (a wrap is a counter
 * going backwards, a reset to Prometheus). */
static void test_om_counters_saturate(void **state)
{
	(void)state;
	struct rp_om_counters c = { 0 };
	assert_true(rp_om_add(&c, "cipher=\"aes-128-cbc\"", UINT64_MAX - 1, 10, 1.0));
	assert_true(rp_om_add(&c, "cipher=\"aes-128-cbc\"", 5, UINT64_MAX, 2.0));
	assert_true(rp_om_add(&c, "cipher=\"aes-256-ctr\"", 3, 4, 0.5));
	assert_int_equal(c.n, 2);
	assert_true(c.v[0].calls == UINT64_MAX && c.v[0].bytes == UINT64_MAX);
	assert_true(c.v[0].seconds == 3.0);
	assert_true(c.v[1].calls == 3 && c.v[1].bytes == 4);
	rp_om_counters_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merge_two_processes),
		cmocka_unit_test(test_errno_numbering),
		cmocka_unit_test(test_newest_snapshot_wins),
		cmocka_unit_test(test_derived_from_samples),
		cmocka_unit_test(test_filters),
		cmocka_unit_test(test_truncated_and_corrupt_files),
		cmocka_unit_test(test_foreign_and_usage),
		cmocka_unit_test(test_directory_input),
		cmocka_unit_test(test_nothing_intercepted_line),
		cmocka_unit_test(test_summary_table),
		cmocka_unit_test(test_json_parses_and_escapes),
		cmocka_unit_test(test_garbage_values_load_and_print),
		cmocka_unit_test(test_kernel_section),
		cmocka_unit_test(test_time_window),
		cmocka_unit_test(test_perfetto_many_threads),
		cmocka_unit_test(test_frame_module),
		cmocka_unit_test(test_om_counters_saturate),
		cmocka_unit_test(test_profile_sample_time),
	};
	return cmocka_run_group_tests_name("report", tests, setup, teardown);
}
