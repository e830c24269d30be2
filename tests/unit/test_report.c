/* SPDX-License-Identifier: MIT */
/*
 * test_report.c - the reporter on hand-built trace files: merging processes, newest snapshots,
 * derived figures from sampled timings, filters, damaged and foreign input (exit codes and the
 * one-line messages), directories, the nothing-intercepted line, and JSON that parses.
 */
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

#include "model.h"
#include "report.h"
#include "tracegen.h"

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

/* Runs ct_report_main with stdout/stderr captured into files; returns its exit code. */
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
	int rc = ct_report_main(argc + 1, (char **)argv);
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

static void write_simple(const char *name, uint32_t pid, const char *cipher, uint64_t calls,
			 uint64_t size)
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
	struct ct_path_def p = { .path_id = 3, .api = CT_API_EVP, .dir = CT_DIR_ENCRYPT,
				 .impl = ct_str_from("provider:default"), .cipher = ct_str_from("aes-128-ctr") };
	tg_path(&g, &p);
	struct ct_path_stats *s = calloc(1, sizeof(*s));
	tg_fill_stats(s, 3, 10, 64, 200, -1, 0);
	tg_stats(&g, s);
	struct ct_event e = { .event_id = 1, .kind = CT_EV_CALL_FAILED, .err = 2, .ret = -1,
			      .count = 1, .call = ct_str_from("open") };
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
	s->size[b16] = (struct ct_size_bucket){ .calls = 1000, .bytes = 16000, .timed_calls = 10,
						.timed_ns = 10000 };
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
		assert_int_equal(m.paths[i].st.calls, rp_str_is(m.paths[i].def.cipher, "aes-256-gcm") ? 10 : 0);
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
	const char *bad_api[] = { "--api", "gnutls", "x" };
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
	assert_non_null(strstr(out, "no crypto calls were seen in 1 process(es): libcrypto was never loaded"));
	free(out);
	free(err);
	write_idle_process("gnutls.ctrace", 501, 0, "/usr/lib/libgnutls.so.30");
	const char *args2[] = { tpath("gnutls.ctrace") };
	assert_int_equal(run_report(&out, &err, 1, args2), 0);
	assert_non_null(strstr(out, "it used /usr/lib/libgnutls.so.30 which cryptrace does not hook"));
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
	static const char argv[] = "we\"ird\0back\\slash\0ctl\x01\x1f\x7f\0bad\xff\xc3utf8\0\xc3\xa9t\xc3\xa9";
	struct ct_header h = tg_default_header(700, argv, sizeof(argv) - 1);
	h.exe = ct_str_from("/tmp/a \"quoted\"\n\tname");
	h.ia32cap = ct_str_from("~0x200000200000000");
	tg_header(&g, &h);
	struct ct_path_def p = { .path_id = 1, .api = CT_API_AFALG, .dir = CT_DIR_DECRYPT,
				 .impl = ct_str_from("kernel:</script>\\u0000"), .cipher = ct_str_from("aes-128-cbc"),
				 .callsite = ct_str_from("a!b+0x1\nc!d+0x2") };
	tg_path(&g, &p);
	struct ct_path_stats *s = calloc(1, sizeof(*s));
	tg_fill_stats(s, 1, 50, 16, 3000, 0.05, 0.9);
	tg_stats(&g, s);
	free(s);
	struct ct_event e = { .event_id = 1, .kind = CT_EV_CALL_FAILED, .err = 97, .ret = -1,
			      .path_id = CT_NO_PATH, .count = 2, .call = ct_str_from("socket"),
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
	snprintf(cmd, sizeof(cmd),
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

/* Payloads with valid CRCs but arbitrary values (bogus enums, huge counts, odd strings) go
 * through the whole pipeline: load, merge, findings, text and JSON. Nothing may crash. */
static void test_garbage_values_never_crash(void **state)
{
	(void)state;
	struct tg g;
	tg_init(&g);
	tg_simple_process(&g, 800, "aes-128-cbc", 1000, 16);
	struct ct_event e = { .event_id = 1, .kind = CT_EV_ENGINE_REQUEST, .ret = 0, .count = 1,
			      .call = ct_str_from("ENGINE_by_id"), .detail = ct_str_from("id=afalg") };
	tg_event(&g, &e);
	uint8_t *copy = malloc(g.len);
	FILE *null = fopen("/dev/null", "w");
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
		char msg[256];
		rp_load_buffer(&m, "garbage", copy, g.len, msg, sizeof(msg));
		rp_model_merge(&m);
		rp_findings_evaluate(&m);
		rp_print_text(&m, null);
		rp_print_json(&m, null);
		rp_print_summary(&m, null);
		rp_model_free(&m);
	}
	fclose(null);
	free(copy);
	tg_free(&g);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_merge_two_processes),
		cmocka_unit_test(test_newest_snapshot_wins),
		cmocka_unit_test(test_derived_from_samples),
		cmocka_unit_test(test_filters),
		cmocka_unit_test(test_truncated_and_corrupt_files),
		cmocka_unit_test(test_foreign_and_usage),
		cmocka_unit_test(test_directory_input),
		cmocka_unit_test(test_nothing_intercepted_line),
		cmocka_unit_test(test_summary_table),
		cmocka_unit_test(test_json_parses_and_escapes),
		cmocka_unit_test(test_garbage_values_never_crash),
	};
	return cmocka_run_group_tests_name("report", tests, setup, teardown);
}
