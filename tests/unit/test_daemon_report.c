/* SPDX-License-Identifier: MIT */
/*
 * test_daemon_report.c - the reporter's end-to-end features on hand-built traces (cmocka, suite
 * e2e, no daemon needed): who created a path's contexts (callsites.c), sshd's process roles and
 * the per-process crypto shares (merge.c), a later file of the same process superseding an
 * earlier one, and the --folded output (folded.c).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "model.h"
#include "tracegen.h"

static struct ct_str S(const char *s) {
	return ct_str_from(s);
}

static void
test_creator(void **state)
{
	(void)state;
	struct rp_creator c;
	assert_false(rp_callsite_creator(S(""), &c));

	assert_true(rp_callsite_creator(S("libcrypto.so.3+0x1\nlibcrypto.so.3!EVP_CipherInit_ex+0x20\n"
					  "ssh!cipher_init+0x4c\nssh+0x100"),
					&c));
	assert_string_equal(c.created_by, "ssh!cipher_init");
	assert_string_equal(c.module, "ssh");
	assert_string_equal(c.via, "libcrypto.so.3!EVP_CipherInit_ex");
	assert_string_equal(c.purpose, "SSH transport");

	/* a stripped module keeps its offset: it is all that tells two call sites apart */
	assert_true(rp_callsite_creator(S("libcrypto.so.3+0x1\nlibssl.so.3+0x43978\ncurl+0x10"), &c));
	assert_string_equal(c.created_by, "libssl.so.3+0x43978");
	assert_string_equal(c.module, "libssl.so.3");
	assert_string_equal(c.via, "");
	assert_string_equal(c.purpose, "TLS");

	/* the DRBG: the purpose comes from the libcrypto API it went through */
	assert_true(rp_callsite_creator(S("libcrypto.so.3+0x32e25d\nlibcrypto.so.3!RAND_status+0x2f\n"
					  "sshd+0xaffab"),
					&c));
	assert_string_equal(c.created_by, "sshd+0xaffab");
	assert_string_equal(c.via, "libcrypto.so.3!RAND_status");
	assert_string_equal(c.purpose, "random numbers (DRBG)");

	/* a stack cut short inside libcrypto: its outermost frame */
	assert_true(rp_callsite_creator(S("libcrypto.so.3+0x1\nlibcrypto.so.3!EVP_EncryptInit+0x2"), &c));
	assert_string_equal(c.created_by, "libcrypto.so.3!EVP_EncryptInit");
	assert_string_equal(c.purpose, "");

	assert_true(rp_callsite_creator(S("python3+0x10"), &c));
	assert_string_equal(c.created_by, "python3+0x10");
	assert_string_equal(c.purpose, "");
}

/* One sshd process file: header (start at start_ns), optionally a path with `bytes` of
 * aes-128-ctr decrypt taking `wall_ns` in all, a PROC with CPU, and an END. */
/* A trace of /usr/sbin/sshd started at start_ns: the listener's argv, or with -R the re-exec'd
 * connection's. */
static void sshd_header(struct tg *g, uint32_t pid, uint32_t ppid, bool rexec, uint64_t start_ns)
{
	static const char argv_l[] =
		"/usr/sbin/sshd\0-D\0-p\0"
		"22";
	static const char argv_r[] =
		"/usr/sbin/sshd\0-D\0-p\0"
		"22\0-R";
	tg_init(g);
	struct ct_header h = rexec ? tg_default_header(pid, argv_r, sizeof(argv_r) - 1)
				   : tg_default_header(pid, argv_l, sizeof(argv_l) - 1);
	h.ppid = ppid;
	h.start_mono_ns = start_ns;
	h.exe = S("/usr/sbin/sshd");
	tg_header(g, &h);
}

static void add_sshd(struct rp_model *m, const char *name, uint32_t pid, uint32_t ppid, bool rexec,
		     uint64_t start_ns, uint64_t end_ns, int end_reason, uint64_t bytes, uint64_t cpu_ns)
{
	struct tg g;
	sshd_header(&g, pid, ppid, rexec, start_ns);
	if (bytes) {
		struct ct_path_def p = {
			.path_id = 0,
			.api = CT_API_EVP,
			.dir = CT_DIR_DECRYPT,
			.key_bits = 128,
			.entry = CT_ENTRY_EVP_CIPHER,
			.impl = S("provider:default"),
			.cipher = S("aes-128-ctr"),
			.callsite = S("libcrypto.so.3!EVP_CipherInit+0x5\nsshd+0x84c2c\nsshd+0x8f847"),
		};
		tg_path(&g, &p);
		struct ct_path_stats *s = calloc(1, sizeof(*s));
		assert_non_null(s);
		/* 32 KiB calls, 16 us each (2 GB/s), user-only CPU */
		tg_fill_stats(s, 0, bytes / 32768, 32768, 16000, 1.0, 0);
		tg_stats(&g, s);
		free(s);
	}
	struct ct_proc pr = {
		.mono_ns = end_ns,
		.utime_ns = cpu_ns,
		.flags = CT_PROC_HAS_LIBCRYPTO,
		.hooked_calls = 1,
	};
	tg_proc(&g, &pr);
	if (end_reason) {
		struct ct_end e = { .mono_ns = end_ns, .reason = (uint32_t)end_reason };
		tg_end(&g, &e);
	}
	char msg[200];
	assert_int_equal(rp_load_buffer(m, name, g.buf, g.len, msg, sizeof(msg)), 0);
	tg_free(&g);
}

static const struct rp_proc *proc_by(const struct rp_model *m, uint32_t pid, bool rexec_file)
{
	for (size_t i = 0; i < m->nprocs; i++) {
		const struct rp_proc *p = &m->procs[i];
		bool r = strstr(p->role, "monitor") || strstr(p->role, "child");
		if (p->hdr.pid == pid && !p->superseded && (r == rexec_file || pid != 101))
			return p;
	}
	return NULL;
}

#define MIB (1ull << 20)
#define SEC 1000000000ull

/* listener 100 -> fork 101 (execs sshd -R) -> monitor 101 -> pre-auth child 102, then a
 * session child 103; the monitor carries 64 MiB (a root login). */
static void build_sshd(struct rp_model *m)
{
	rp_model_init(m);
	add_sshd(m, "sshd.100.ctrace", 100, 1, false, 1000, 10 * SEC, CT_END_EXIT, 0, 10000000);
	add_sshd(m, "sshd.101.ctrace", 101, 100, false, 2 * SEC, 2 * SEC + 5000, CT_END_EXEC, 0, 0);
	add_sshd(m, "sshd.101.ctrace.1", 101, 100, true, 2 * SEC + 10000, 6 * SEC + 10000, CT_END_EXIT,
		 64 * MIB, 1 * SEC);
	add_sshd(m, "sshd.102.ctrace", 102, 101, true, 2 * SEC + 50000, 3 * SEC, 0, 0, 1000000);
	add_sshd(m, "sshd.103.ctrace", 103, 101, true, 3 * SEC + 50000, 5 * SEC, CT_END_EXIT, 0, 0);
	rp_model_merge(m);
	rp_findings_evaluate(m);
}

static void test_roles_and_shares(void **state)
{
	(void)state;
	struct rp_model m;
	build_sshd(&m);
	assert_string_equal(proc_by(&m, 100, false)->role, "sshd listener");
	assert_string_equal(proc_by(&m, 101, false)->role, "sshd: connection fork (re-execs with -R)");
	const struct rp_proc *mon = proc_by(&m, 101, true);
	assert_non_null(mon);
	assert_non_null(strstr(mon->role, "monitor [priv]"));
	assert_non_null(strstr(proc_by(&m, 102, true)->role, "pre-auth"));
	assert_non_null(strstr(proc_by(&m, 103, true)->role, "session child"));

	/* lifetime 4 s, CPU 1 s; 2048 calls x 16 us = 32.768 ms of crypto, all of it user CPU */
	const struct rp_proc_figures *f = &mon->fig;
	assert_true(f->wall_known && f->cpu_known && f->crypto_wall_known && f->crypto_cpu_known);
	assert_true(f->wall_ns == 4.0 * SEC);
	assert_true(f->cpu_ns == 1.0 * SEC);
	assert_int_equal(f->crypto_bytes, 64 * MIB);
	assert_true(f->crypto_wall_ns > 32.7e6 && f->crypto_wall_ns < 32.8e6);
	assert_true(f->crypto_cpu_ns > 32.7e6 && f->crypto_cpu_ns < 32.8e6);
	/* a process without crypto has no crypto time, not a zero share of an unknown */
	assert_false(proc_by(&m, 102, true)->fig.crypto_wall_known);
	rp_model_free(&m);
}

/* A non-root login: the monitor forks the pre-auth child, then the user@notty child that carries
 * the traffic, which forks the session child. */
static void test_nonroot_roles(void **state)
{
	(void)state;
	struct rp_model m;
	rp_model_init(&m);
	add_sshd(&m, "sshd.200.ctrace", 200, 1, false, 1000, 10 * SEC, CT_END_EXIT, 0, 0);
	add_sshd(&m, "sshd.201.ctrace", 201, 200, false, 2 * SEC, 2 * SEC + 5000, CT_END_EXEC, 0, 0);
	add_sshd(&m, "sshd.201.ctrace.1", 201, 200, true, 2 * SEC + 10000, 6 * SEC, CT_END_EXIT, 0, 0);
	add_sshd(&m, "sshd.202.ctrace", 202, 201, true, 2 * SEC + 50000, 3 * SEC, 0, 0, 0);
	add_sshd(&m, "sshd.203.ctrace", 203, 201, true, 3 * SEC + 50000, 5 * SEC, CT_END_EXIT, 64 * MIB, SEC);
	add_sshd(&m, "sshd.204.ctrace", 204, 203, true, 3 * SEC + 90000, 5 * SEC, CT_END_EXIT, 0, 0);
	rp_model_merge(&m);
	assert_string_equal(m.procs[2].role, "sshd: monitor [priv]");
	assert_string_equal(m.procs[3].role, "sshd: [net] pre-auth child (sandboxed)");
	assert_string_equal(m.procs[4].role, "sshd: user@notty (carries the traffic)");
	assert_string_equal(m.procs[5].role, "sshd: session child");
	rp_model_free(&m);
}

static char *capture(void (*fn)(const struct rp_model *, FILE *), const struct rp_model *m, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);
	assert_non_null(f);
	fn(m, f);
	fclose(f);
	return buf;
}

static void test_text_and_json(void **state)
{
	(void)state;
	struct rp_model m;
	build_sshd(&m);
	size_t len;
	char *t = capture(rp_print_text, &m, &len);
	assert_non_null(strstr(t, "Cipher-call share per process"));
	assert_null(strstr(t, "crypto share")); /* only cipher calls are measured */
	assert_null(strstr(t, ", crypto "));
	assert_non_null(strstr(t, "pid 101  sshd: monitor [priv]"));
	assert_non_null(
		strstr(t, "wall 4.000s, cipher calls 0.8% of it; CPU 1.000s, cipher calls 3.3% of it"));
	assert_non_null(strstr(t,
			       "aes-128-ctr decrypt contexts created by sshd for SSH transport "
			       "(sshd+0x84c2c)"));
	free(t);
	char *j = capture(rp_print_json, &m, &len);
	assert_non_null(strstr(j, "\"role\":\"sshd listener\""));
	assert_non_null(strstr(j,
			       "\"created_by\":{\"frame\":\"sshd+0x84c2c\",\"module\":\"sshd\","
			       "\"via\":\"libcrypto.so.3!EVP_CipherInit\",\"purpose\":\"SSH transport\"}"));
	assert_non_null(strstr(j, "\"crypto_bytes\":67108864"));
	assert_non_null(strstr(j, "\"crypto_cpu_share\":0.0327"));
	free(j);
	rp_model_free(&m);
}

static void test_superseded(void **state)
{
	(void)state;
	struct rp_model m;
	rp_model_init(&m);
	/* the program closed the trace fd after 16 MiB; the .1 file repeats the cumulative 64 MiB */
	add_sshd(&m, "d/sshd.7.ctrace", 7, 1, true, 5000, 1 * SEC, 0, 16 * MIB, 0);
	add_sshd(&m, "d/sshd.7.ctrace.1", 7, 1, true, 5000, 3 * SEC, CT_END_EXIT, 64 * MIB, SEC);
	/* same pid after an exec: another image (another start), counted on its own */
	add_sshd(&m, "d/sshd.7.ctrace.2", 7, 1, true, 4 * SEC, 5 * SEC, CT_END_EXIT, 1 * MIB, SEC);
	rp_model_merge(&m);
	assert_true(m.procs[0].superseded);
	assert_false(m.procs[1].superseded);
	assert_false(m.procs[2].superseded);
	assert_int_equal(m.npaths, 1);
	assert_int_equal(m.paths[0].st.bytes, 65 * MIB);
	rp_model_free(&m);
}

static void folded_bytes(const struct rp_model *m, FILE *out)
{
	rp_print_folded(m, RP_FOLD_BYTES, out);
}

static void folded_time(const struct rp_model *m, FILE *out)
{
	rp_print_folded(m, RP_FOLD_TIME, out);
}

static void test_folded(void **state)
{
	(void)state;
	struct rp_model m;
	build_sshd(&m);
	size_t len;
	char *b = capture(folded_bytes, &m, &len);
	/* root first: role, outer frame, inner frames, the path as the leaf; weight = bytes */
	assert_string_equal(b,
			    "sshd: monitor [priv] (carries the traffic: a root login);"
			    "sshd+0x8f847;sshd+0x84c2c;libcrypto.so.3!EVP_CipherInit+0x5;"
			    "[evp provider:default aes-128-ctr decrypt] 67108864\n");
	free(b);
	char *t = capture(folded_time, &m, &len);
	assert_non_null(strstr(t, "decrypt] 32768000\n")); /* 2048 calls x 16 us in ns */
	free(t);
	rp_model_free(&m);
}

/* One sshd process with OpenSSH's own paths: for each of n_paths, a path (dir, cipher, entry
 * EVP_Cipher) with `calls` data calls of 128 bytes and a CONTEXT event counting `setups` set-ups
 * at cipher_init (sshd+0x84c2c), as the preload records them. */
struct ssh_path {
	int dir;
	const char *cipher;
	uint64_t calls, setups;
};

static void add_sshd_ctx(struct rp_model *m, const char *name, uint32_t pid, uint32_t ppid, bool rexec,
			 uint64_t start_ns, const struct ssh_path *paths, size_t n)
{
	struct tg g;
	sshd_header(&g, pid, ppid, rexec, start_ns);
	static const char site[] = "sshd+0x84c2c\nsshd+0x6915d\nsshd+0xf736";
	for (size_t i = 0; i < n; i++) {
		struct ct_path_def p = {
			.path_id = (uint32_t)(2 * i),
			.api = CT_API_EVP,
			.dir = (uint8_t)paths[i].dir,
			.key_bits = 256,
			.entry = CT_ENTRY_UNKNOWN,
			.impl = S("provider:default"),
			.cipher = S(paths[i].cipher),
			.callsite = S(site),
		};
		tg_path(&g, &p); /* the init path, where set-ups are counted */
		p.path_id++;
		p.entry = CT_ENTRY_EVP_CIPHER; /* the data variant */
		tg_path(&g, &p);
		struct ct_path_stats *st = calloc(1, sizeof(*st));
		assert_non_null(st);
		tg_fill_stats(st, p.path_id, paths[i].calls, 128, 1000, 1.0, 0);
		tg_stats(&g, st);
		free(st);
		struct ct_event e = { .event_id = (uint32_t)i + 1,
				      .kind = CT_EV_CONTEXT,
				      .path_id = (uint32_t)(2 * i),
				      .count = paths[i].setups,
				      .call = S("EVP_CipherInit"),
				      .detail = S(""),
				      .callsite = S(site) };
		tg_event(&g, &e);
	}
	struct ct_proc pr = { .mono_ns = start_ns + SEC,
			      .utime_ns = SEC / 10,
			      .flags = CT_PROC_HAS_LIBCRYPTO,
			      .hooked_calls = 1 };
	tg_proc(&g, &pr);
	struct ct_end e = { .mono_ns = start_ns + SEC, .reason = CT_END_EXIT };
	tg_end(&g, &e);
	char msg[200];
	assert_int_equal(rp_load_buffer(m, name, g.buf, g.len, msg, sizeof(msg)), 0);
	tg_free(&g);
}

/* OpenSSH's cipher_init serves the transport and host-key shielding alike: the listener's
 * aes256-ctr contexts (one key blob each, once) are shielding, not "SSH transport"; a monitor
 * that only unshields the host key to sign carries no traffic; one that also carries aes256-ctr
 * transport gets both named. */
static void test_sshd_key_shielding(void **state)
{
	(void)state;
	struct rp_model m;
	rp_model_init(&m);
	static const struct ssh_path listener[] = { { CT_DIR_ENCRYPT, "aes-256-ctr", 2, 2 },
						    { CT_DIR_DECRYPT, "aes-256-ctr", 1, 1 } };
	static const struct ssh_path monitor[] = { { CT_DIR_DECRYPT, "aes-256-ctr", 2, 2 } };
	add_sshd_ctx(&m, "sshd.300.ctrace", 300, 1, false, 1000, listener, 2);
	add_sshd_ctx(&m, "sshd.301.ctrace", 301, 300, true, 2 * SEC, monitor, 1);
	rp_model_merge(&m);
	assert_string_equal(m.procs[0].role, "sshd listener");
	assert_string_equal(m.procs[1].role, "sshd: monitor [priv]"); /* no "(carries the traffic" */
	size_t len;
	char *t = capture(rp_print_text, &m, &len);
	assert_non_null(strstr(t,
			       "aes-256-ctr decrypt contexts created by sshd for private-key "
			       "shielding"));
	assert_non_null(strstr(t,
			       "aes-256-ctr encrypt contexts created by sshd for private-key "
			       "shielding"));
	assert_null(strstr(t, "SSH transport"));
	free(t);
	char *j = capture(rp_print_json, &m, &len);
	assert_non_null(strstr(j,
			       "\"purpose\":\"private-key shielding (OpenSSH keeps keys encrypted "
			       "in memory)\""));
	assert_null(strstr(j, "SSH transport"));
	free(j);
	rp_model_free(&m);

	/* the monitor of a root login with -c aes256-ctr: transport and unshielding at one site */
	rp_model_init(&m);
	static const struct ssh_path carrying[] = { { CT_DIR_DECRYPT, "aes-256-ctr", 500, 3 } };
	add_sshd_ctx(&m, "sshd.400.ctrace", 400, 1, false, 1000, listener, 2);
	add_sshd_ctx(&m, "sshd.401.ctrace", 401, 400, true, 2 * SEC, carrying, 1);
	rp_model_merge(&m);
	assert_string_equal(m.procs[1].role, "sshd: monitor [priv] (carries the traffic: a root login)");
	t = capture(rp_print_text, &m, &len);
	assert_non_null(strstr(t,
			       "decrypt contexts created by sshd for SSH transport and private-key "
			       "shielding"));
	free(t);
	rp_model_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_creator),
		cmocka_unit_test(test_roles_and_shares),
		cmocka_unit_test(test_nonroot_roles),
		cmocka_unit_test(test_text_and_json),
		cmocka_unit_test(test_superseded),
		cmocka_unit_test(test_folded),
		cmocka_unit_test(test_sshd_key_shielding),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
