/* SPDX-License-Identifier: MIT */
/*
 * test_findings.c - every finding kind on hand-built models, on both sides of its threshold,
 * plus a clean run that must raise nothing of warning severity.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "model.h"
#include "owner.h"
#include "tracegen.h"

static struct rp_proc *mk_proc(struct rp_model *m, uint32_t pid)
{
	static const char argv[] = "prog";
	struct rp_proc *p = rp_model_add_proc(m);
	assert_non_null(p);
	p->hdr = tg_default_header(pid, argv, 4);
	p->has_hdr = p->has_proc = p->has_end = true;
	p->proc.flags = CT_PROC_HAS_LIBCRYPTO | CT_PROC_FINAL;
	p->proc.crypto_libs = ct_str_from("/usr/lib/libcrypto.so.3");
	p->end.reason = CT_END_EXIT;
	return p;
}

static struct rp_path *mk_path(struct rp_proc *p, uint32_t id, uint8_t api, const char *impl,
			       const char *cipher, uint32_t flags)
{
	struct rp_path *path = rp_proc_path(p, id);
	assert_non_null(path);
	path->has_def = path->has_stats = true;
	path->def.api = api;
	path->def.dir = CT_DIR_ENCRYPT;
	path->def.key_bits = 128;
	path->def.entry = api == CT_API_AFALG ? CT_ENTRY_AFALG_SENDMSG
			  : api == CT_API_AES ? CT_ENTRY_AES_LOWLEVEL
					      : CT_ENTRY_EVP_UPDATE;
	path->def.flags = flags;
	path->def.impl = ct_str_from(impl);
	path->def.cipher = ct_str_from(cipher);
	return path;
}

static void mk_event(struct rp_proc *p, uint32_t id, uint16_t kind, const char *call, int err, int64_t ret,
		     const char *detail)
{
	struct ct_event e = { .event_id = id,
			      .kind = kind,
			      .err = err,
			      .ret = ret,
			      .count = 1,
			      .path_id = CT_NO_PATH,
			      .call = ct_str_from(call),
			      .detail = ct_str_from(detail),
			      .callsite = ct_str_from("prog!main+0x1") };
	rp_proc_set_event(p, &e);
}

static const struct rp_finding *find(struct rp_model *m, const char *kind)
{
	rp_model_merge(m);
	rp_findings_evaluate(m);
	for (size_t i = 0; i < m->nfindings; i++)
		if (!strcmp(m->findings[i].kind, kind))
			return &m->findings[i];
	return NULL;
}

#define MODEL(m)                                                                                             \
	struct rp_model m;                                                                                   \
	rp_model_init(&m)

static void test_lowlevel_api(void **state)
{
	(void)state;
	MODEL(m);
	struct rp_proc *p = mk_proc(&m, 1);
	struct rp_path *a = mk_path(p, 0, CT_API_AES, "lowlevel", "aes-256-cbc", 0);
	tg_fill_stats(&a->st, 0, 100, 8192, 3000, 0.99, 0);
	const struct rp_finding *f = find(&m, "lowlevel-api");
	assert_non_null(f);
	if (!f)
		return;
	assert_int_equal(f->severity, RP_WARNING);
	assert_non_null(strstr(f->message, "100 calls"));
	assert_non_null(strstr(f->fix, "EVP_CipherInit_ex2")); /* whose code: unknown, so the reader's */
	a->def.api = CT_API_EVP;
	a->def.entry = CT_ENTRY_EVP_UPDATE;
	assert_null(find(&m, "lowlevel-api"));
	/* EVP_Cipher in the reader's code: costs nothing, said as info without a speed fix */
	a->def.entry = CT_ENTRY_EVP_CIPHER;
	f = find(&m, "lowlevel-api");
	assert_non_null(f);
	if (!f) /* unreachable; tells gcc's -Wstringop-overread that f is not NULL below */
		return;
	assert_non_null(strstr(f->message, "EVP_Cipher()"));
	assert_non_null(strstr(f->message, "costs nothing measurable"));
	assert_int_equal(f->severity, RP_INFO); /* still the provider's speed: not a warning */
	assert_non_null(strstr(f->fix, "Nothing to change for speed"));
	/* `openssl speed` without -evp: the reader's command line, not OpenSSL's code, to change */
	static const char speed_argv[] = "openssl\0speed\0aes-128-cbc";
	p->hdr = tg_default_header(1, speed_argv, sizeof(speed_argv) - 1);
	a->def.callsite = ct_str_from("openssl+0x5a1c0\nlibc.so.6!__libc_start_main+0x85");
	f = find(&m, "lowlevel-api");
	assert_non_null(f);
	if (!f)
		return;
	assert_int_equal(f->severity, RP_INFO);
	assert_non_null(strstr(f->message, "what `openssl speed` without -evp measures"));
	assert_non_null(strstr(f->fix, "Add -evp"));
	assert_null(strstr(f->fix, "EVP_CipherInit_ex2"));
	rp_model_free(&m);
}

/* A route that could not serve (OpenSSL 1.1 has no providers for the EVP route): silent-fallback
 * says it was the route, and why, not "offload was requested" with an engine's fix; with an
 * engine failure too, the offload wording stays. */
static void test_silent_fallback_route(void **state)
{
	(void)state;
	MODEL(m);
	struct rp_proc *p = mk_proc(&m, 1);
	p->hdr.route_spec = ct_str_from("aes-*=aesni");
	struct rp_path *a = mk_path(p, 0, CT_API_EVP, "builtin", "aes-256-cbc", 0);
	tg_fill_stats(&a->st, 0, 256, 4096, 3000, 0.99, 0);
	mk_event(p, 1, CT_EV_FALLBACK, "EVP_CipherInit_ex", 0, 0,
		 "route aesni -> native: aes-256-cbc enc: libcrypto has no providers (OpenSSL 1.x)");
	const struct rp_finding *f = find(&m, "silent-fallback");
	assert_non_null(f);
	if (!f)
		return;
	assert_non_null(strstr(f->message, "CRYPTRACE_ROUTE=aes-*=aesni"));
	assert_non_null(strstr(f->message, "no providers (OpenSSL 1.x)"));
	assert_null(strstr(f->message, "Offload was requested"));
	assert_null(strstr(f->fix, "engine-failed"));
	mk_event(p, 2, CT_EV_ENGINE_REQUEST, "ENGINE_by_id", 0, 0, "id=afalg");
	f = find(&m, "silent-fallback");
	assert_non_null(f);
	if (!f)
		return;
	assert_non_null(strstr(f->message, "Offload was requested"));
	rp_model_free(&m);
}

/* On OpenSSL 1.1 the advice names 1.1's calls (no EVP_CIPHER_fetch, no EVP_CipherInit_ex2, no
 * providers there); the same path on 3.x keeps the 3.0 advice. */
static void test_lowlevel_api_openssl1(void **state)
{
	(void)state;
	MODEL(m);
	struct rp_proc *p = mk_proc(&m, 1);
	p->hdr.libcrypto = ct_str_from("OpenSSL 1.1.1w  11 Sep 2023");
	struct rp_path *a = mk_path(p, 0, CT_API_AES, "lowlevel", "aes-128-cbc", 0);
	tg_fill_stats(&a->st, 0, 100, 8192, 3000, 0.99, 0);
	const struct rp_finding *f = find(&m, "lowlevel-api");
	assert_non_null(f);
	if (!f)
		return;
	assert_non_null(strstr(f->message, "OpenSSL 1.1 has no providers"));
	assert_non_null(strstr(f->fix, "EVP_CipherInit_ex with EVP_aes_128_cbc()"));
	assert_null(strstr(f->fix, "EVP_CIPHER_fetch"));
	a->def.api = CT_API_EVP;
	a->def.entry = CT_ENTRY_EVP_CIPHER;
	f = find(&m, "lowlevel-api");
	assert_non_null(f);
	if (!f)
		return;
	assert_null(strstr(f->fix, "EVP_CIPHER_fetch"));
	/* the version read at exit (loaded later) counts the same */
	p->hdr.libcrypto = ct_str_from("");
	p->proc.libcrypto = ct_str_from("OpenSSL 3.5.9 29 Sep 2026");
	f = find(&m, "lowlevel-api");
	assert_non_null(f);
	if (!f)
		return;
	assert_non_null(strstr(f->fix, "EVP_CIPHER_fetch"));
	rp_model_free(&m);
}

/* OpenSSH (a packaged program: /usr/bin/ssh) calls EVP_Cipher for every packet and AES_* for a
 * few UMAC blocks. Neither costs anything measurable, and neither is the reader's code to
 * rewrite: no finding. The same AES_* carrying a real share of the bytes is a warning whose fix
 * is not a rewrite of OpenSSH. */
static void test_lowlevel_api_packaged(void **state)
{
	(void)state;
	MODEL(m);
	static const char argv[] = "ssh\0-c\0aes256-ctr\0host";
	struct rp_proc *p = mk_proc(&m, 1);
	p->hdr = tg_default_header(1, argv, sizeof(argv) - 1);
	p->hdr.exe = ct_str_from("/usr/bin/ssh");
	struct rp_path *bulk = mk_path(p, 0, CT_API_EVP, "provider:default", "aes-256-ctr", 0);
	bulk->def.entry = CT_ENTRY_EVP_CIPHER;
	bulk->def.callsite = ct_str_from("ssh+0x632ac\nssh+0x5a000");
	tg_fill_stats(&bulk->st, 0, 1000, 32768, 3000, 0.99, 0);
	struct rp_path *umac = mk_path(p, 1, CT_API_AES, "lowlevel", "aes-128-ecb", 0);
	umac->def.callsite = ct_str_from("ssh+0xb2482\nssh+0x5a100");
	tg_fill_stats(&umac->st, 1, 389, 16, 300, 0.99, 0);
	assert_null(find(&m, "lowlevel-api"));
	/* the same code in the reader's own build of ssh: said, as info */
	p->hdr.exe = ct_str_from("/home/dev/openssh/ssh");
	const struct rp_finding *f = find(&m, "lowlevel-api");
	assert_non_null(f);
	if (!f)
		return;
	assert_int_equal(f->severity, RP_INFO);
	p->hdr.exe = ct_str_from("/usr/bin/ssh");
	/* UMAC's AES_* as most of the bytes: costs, so a warning, with a fix that is not a rewrite */
	tg_fill_stats(&umac->st, 1, 100000, 65536, 3000, 0.99, 0);
	f = find(&m, "lowlevel-api");
	assert_non_null(f);
	if (!f)
		return;
	assert_int_equal(f->severity, RP_WARNING);
	assert_non_null(strstr(f->message, "called by ssh+0xb2482 (/usr/bin/ssh"));
	assert_non_null(strstr(f->fix, "Nothing to change in your code"));
	assert_null(strstr(f->fix, "EVP_CipherInit_ex2"));
	rp_model_free(&m);
}

/* A few AES_* blocks beside a bulk EVP path in the reader's code: said, but only as info. */
static void test_lowlevel_api_small_share(void **state)
{
	(void)state;
	MODEL(m);
	struct rp_proc *p = mk_proc(&m, 1);
	struct rp_path *bulk = mk_path(p, 0, CT_API_EVP, "provider:default", "aes-128-ctr", 0);
	tg_fill_stats(&bulk->st, 0, 1000, 65536, 3000, 0.99, 0);
	struct rp_path *few = mk_path(p, 1, CT_API_AES, "lowlevel", "aes-128-ecb", 0);
	tg_fill_stats(&few->st, 1, 100, 16, 3000, 0.99, 0);
	const struct rp_finding *f = find(&m, "lowlevel-api");
	assert_non_null(f);
	assert_int_equal(f->severity, RP_INFO);
	/* the same AES_* path carrying a real share of the bytes is a warning */
	tg_fill_stats(&few->st, 1, 100, 65536, 3000, 0.99, 0);
	f = find(&m, "lowlevel-api");
	assert_non_null(f);
	assert_int_equal(f->severity, RP_WARNING);
	rp_model_free(&m);
}

static void test_user_time_misleads(void **state)
{
	(void)state;
	MODEL(m);
	struct rp_proc *p = mk_proc(&m, 1);
	struct rp_path *a =
		mk_path(p, 0, CT_API_AFALG, "kernel:cbc-aes-aesni", "aes-128-cbc", CT_PATH_CPU_DRIVER);
	tg_fill_stats(&a->st, 0, 1000, 4096, 10000, 0.3, 0.6); /* wall = 3.3x user */
	const struct rp_finding *f = find(&m, "user-time-misleads");
	assert_non_null(f);
	assert_non_null(strstr(f->message, "3.3x"));
	tg_fill_stats(&a->st, 0, 1000, 4096, 10000, 0.6, 0.3); /* 1.7x: below the threshold */
	assert_null(find(&m, "user-time-misleads"));
	tg_fill_stats(&a->st, 0, 50, 4096, 10000, 0.1, 0.8); /* too few calls to judge */
	assert_null(find(&m, "user-time-misleads"));
	tg_fill_stats(&a->st, 0, 1000, 4096, 10000, -1, 0); /* no CPU samples: no claim */
	assert_null(find(&m, "user-time-misleads"));
	/* in-process software preempted on a busy machine: wall 3.3x user, but no kernel part */
	struct rp_path *e = mk_path(p, 1, CT_API_EVP, "provider:default", "aes-128-cbc", 0);
	tg_fill_stats(&e->st, 1, 1000, 4096, 10000, 0.3, 0.0);
	a->st.calls = 0;
	assert_null(find(&m, "user-time-misleads"));
	/* the same through an engine (afalg: the work is in the kernel) is the real case */
	e->def.impl = ct_str_from("engine:afalg");
	assert_non_null(find(&m, "user-time-misleads"));
	/* with the engine's nested kernel path also slow, it is still said once */
	a->def.flags |= CT_PATH_NESTED;
	tg_fill_stats(&a->st, 0, 1000, 4096, 10000, 0.0, 0.95);
	find(&m, "user-time-misleads");
	size_t n = 0;
	for (size_t i = 0; i < m.nfindings; i++)
		n += !strcmp(m.findings[i].kind, "user-time-misleads");
	assert_int_equal(n, 1);
	assert_non_null(strstr(find(&m, "user-time-misleads")->message, "engine:afalg"));
	rp_model_free(&m);
}

static void test_nothing_intercepted(void **state)
{
	(void)state;
	MODEL(m);
	struct rp_proc *p = mk_proc(&m, 1);
	p->proc.flags = CT_PROC_FINAL;
	p->proc.crypto_libs = ct_str_from("");
	const struct rp_finding *f = find(&m, "nothing-intercepted");
	assert_non_null(f);
	assert_int_equal(f->severity, RP_INFO);
	assert_non_null(strstr(f->message, "libcrypto was never loaded"));
	/* wget maps nettle before GnuTLS: the TLS library is named. GnuTLS is hooked (its cipher
	 * API and its records): loaded without a path, it did no such work, nothing to change
	 * wherever the program comes from */
	p->proc.crypto_libs = ct_str_from(
		"/lib/x86_64-linux-gnu/libnettle.so.8\n"
		"/lib/x86_64-linux-gnu/libgnutls.so.30");
	f = find(&m, "nothing-intercepted");
	assert_non_null(f);
	if (!f) /* unreachable; tells gcc's -Wstringop-overread that f is not NULL below */
		return;
	assert_non_null(strstr(f->message,
			       "it loaded GnuTLS (/lib/x86_64-linux-gnu/libgnutls.so.30) but made no "
			       "cipher or TLS record call through it"));
	assert_null(strstr(f->message, "nettle.so"));
	assert_int_equal(f->severity, RP_INFO);
	assert_non_null(strstr(f->fix, "Nothing to change here"));
	p->hdr.exe = ct_str_from("/home/dev/build/tlsclient");
	f = find(&m, "nothing-intercepted");
	assert_non_null(f);
	assert_int_equal(f->severity, RP_INFO);
	/* a TLS library the hooks do not see, before the crypto library beneath it */
	p->hdr.exe = ct_str_from("/usr/bin/openssl");
	p->proc.crypto_libs = ct_str_from(
		"/lib/x86_64-linux-gnu/libmbedcrypto.so.7\n"
		"/lib/x86_64-linux-gnu/libmbedtls.so.14");
	f = find(&m, "nothing-intercepted");
	assert_non_null(f);
	if (!f)
		return;
	assert_non_null(strstr(f->message,
			       "it used Mbed TLS (/lib/x86_64-linux-gnu/libmbedtls.so.14), "
			       "which cryptrace does not hook"));
	/* a packaged program (/usr/bin) doing its own crypto is information, with nothing to change */
	assert_int_equal(f->severity, RP_INFO);
	assert_non_null(strstr(f->fix, "Nothing to change here"));
	/* the same in a program the reader builds is a warning: they can build it against OpenSSL */
	p->hdr.exe = ct_str_from("/home/dev/build/tlsclient");
	f = find(&m, "nothing-intercepted");
	assert_non_null(f);
	assert_int_equal(f->severity, RP_WARNING);
	assert_non_null(strstr(f->fix, "build it against OpenSSL"));
	p->hdr.exe = ct_str_from("/usr/bin/openssl");
	struct rp_proc *q = mk_proc(&m, 2);
	q->hdr.flags = CT_HDR_SECURE_EXEC;
	q->has_proc = false;
	f = find(&m, "nothing-intercepted");
	assert_non_null(f);
	assert_non_null(strstr(f->message, "tracing is disabled in setuid/setgid programs (1 process(es))"));
	struct rp_path *a = mk_path(p, 0, CT_API_EVP, "provider:default", "aes-128-cbc", 0);
	tg_fill_stats(&a->st, 0, 1, 16, 100, -1, 0);
	assert_null(find(&m, "nothing-intercepted"));
	rp_model_free(&m);
}

/* An attached process (`cryptrace attach`) with libcrypto and no path did no cipher call while
 * attached: the report does not claim it never did cipher work. */
static void test_nothing_intercepted_attached(void **state)
{
	(void)state;
	MODEL(m);
	struct rp_proc *p = mk_proc(&m, 1);
	p->proc.flags = CT_PROC_FINAL | CT_PROC_HAS_LIBCRYPTO;
	p->proc.crypto_libs = ct_str_from("/lib/x86_64-linux-gnu/libcrypto.so.3");
	const struct rp_finding *f = find(&m, "nothing-intercepted");
	assert_non_null(f);
	assert_non_null(strstr(f->message, "no cipher work was done"));
	p->hdr.flags |= CT_HDR_ATTACHED;
	f = find(&m, "nothing-intercepted");
	assert_non_null(f);
	if (!f)
		return;
	assert_null(strstr(f->message, "no cipher work was done"));
	assert_non_null(strstr(f->message, "no cipher call was made while cryptrace was attached"));
	rp_model_free(&m);
}

/* A trace the launcher wrote for a statically linked program (tracer/static_trace.c): a header,
 * the static-executable event, process facts, END; nothing else. */
static void load_static_trace(struct rp_model *m, const char *exe, const char *detail)
{
	struct tg g;
	tg_init(&g);
	static const char argv[] = "prog";
	struct ct_header h = tg_default_header(77, argv, 4);
	h.exe = ct_str_from(exe);
	h.tsc_hz = 0;
	h.libcrypto = ct_str_from("");
	tg_header(&g, &h);
	struct ct_event e = { .event_id = 1,
			      .kind = CT_EV_TRACE_WARNING,
			      .path_id = CT_NO_PATH,
			      .count = 1,
			      .call = ct_str_from("static-executable"),
			      .detail = ct_str_from(detail),
			      .callsite = ct_str_from("") };
	tg_event(&g, &e);
	struct ct_proc pr = { .mono_ns = 2000,
			      .flags = CT_PROC_FINAL,
			      .crypto_libs = ct_str_from(""),
			      .libcrypto = ct_str_from("") };
	tg_proc(&g, &pr);
	struct ct_end end = { .mono_ns = 3000, .reason = CT_END_EXIT };
	tg_end(&g, &end);
	char msg[200];
	rp_model_init(m);
	assert_int_equal(rp_load_buffer(m, "static.ctrace", g.buf, g.len, msg, sizeof(msg)), 0);
	tg_free(&g);
}

static void test_nothing_intercepted_static(void **state)
{
	(void)state;
	struct rp_model m;
	/* the executable is not on this host and the launcher found no crypto in it: info */
	load_static_trace(&m, "/nonexistent/dir/prog",
			  "/nonexistent/dir/prog is statically linked (no dynamic loader): LD_PRELOAD "
			  "cannot load cryptrace into it, so none of its calls are seen");
	const struct rp_finding *f = find(&m, "nothing-intercepted");
	assert_non_null(f);
	if (!f)
		return;
	assert_int_equal(f->severity, RP_INFO);
	assert_non_null(strstr(f->message,
			       "it is statically linked, so LD_PRELOAD cannot load "
			       "cryptrace into it"));
	assert_non_null(strstr(f->message, "/nonexistent/dir/prog is not on this host"));
	assert_non_null(strstr(f->evidence, "written by the launcher"));
	char why[300];
	rp_nothing_reason(&m, why, sizeof(why));
	assert_non_null(strstr(why, "statically linked"));
	rp_model_free(&m);
	/* ... but it found an OpenSSL inside when it ran: a warning that says so */
	load_static_trace(&m, "/nonexistent/dir/prog",
			  "/nonexistent/dir/prog is statically linked (no dynamic loader): LD_PRELOAD "
			  "cannot load cryptrace into it, so none of its calls are seen; it carries "
			  "OpenSSL 3.x itself");
	f = find(&m, "nothing-intercepted");
	assert_non_null(f);
	if (!f)
		return;
	assert_int_equal(f->severity, RP_WARNING);
	assert_non_null(strstr(f->message, "the launcher found that it carries OpenSSL 3.x itself."));
	assert_non_null(strstr(f->fix, "libcrypto.so"));
	rp_model_free(&m);
}

/* A dynamic process that saw nothing, whose executable holds OpenSSL's own texts (an ELF header,
 * no program headers: nothing imported): the reporter looks inside and names it. */
static void test_nothing_intercepted_embedded(void **state)
{
	(void)state;
	char path[] = "/tmp/ct-test-exe-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	static const unsigned char ident[64] = { 0x7f, 'E', 'L', 'F', 2, 1, 1 };
	static const char body[] =
		"\0\0OpenSSL 1.1.1w  11 Sep 2023\0AES for Intel AES-NI, "
		"CRYPTOGAMS by <appro@openssl.org>\0";
	assert_int_equal(write(fd, ident, sizeof(ident)), (ssize_t)sizeof(ident));
	assert_int_equal(write(fd, body, sizeof(body)), (ssize_t)sizeof(body));
	close(fd);
	MODEL(m);
	struct rp_proc *p = mk_proc(&m, 1);
	p->proc.flags = CT_PROC_FINAL;
	p->proc.crypto_libs = ct_str_from("");
	p->hdr.exe = ct_str_from(path);
	const struct rp_finding *f = find(&m, "nothing-intercepted");
	assert_non_null(f);
	if (!f)
		return;
	assert_int_equal(f->severity, RP_WARNING);
	assert_non_null(strstr(f->message, "libcrypto was never loaded"));
	assert_non_null(strstr(f->message, "has OpenSSL 1.1.1w  11 Sep 2023 linked in statically"));
	assert_non_null(strstr(f->evidence, "CRYPTOGAMS"));
	char why[400];
	rp_nothing_reason(&m, why, sizeof(why));
	assert_non_null(strstr(why, "linked in statically"));
	/* the same file without the marks: nothing named, info as before */
	fd = open(path, O_WRONLY | O_TRUNC);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, ident, sizeof(ident)), (ssize_t)sizeof(ident));
	close(fd);
	f = find(&m, "nothing-intercepted");
	assert_non_null(f);
	if (!f)
		return;
	assert_int_equal(f->severity, RP_INFO);
	assert_non_null(strstr(f->message, "holds no crypto library cryptrace recognises"));
	unlink(path);
	rp_model_free(&m);
}

/* Writes a file that looks like an ELF object and holds what marks is given; returns 0. */
static int fake_elf(const char *path, const char *marks, size_t len)
{
	static const unsigned char ident[64] = { 0x7f, 'E', 'L', 'F', 2, 1, 1 };
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, ident, sizeof(ident)), (ssize_t)sizeof(ident));
	if (len)
		assert_int_equal(write(fd, marks, len), (ssize_t)len);
	close(fd);
	return 0;
}

static void mk_mapped(struct rp_proc *p, const char *path, uint32_t flags)
{
	const char *base = strrchr(path, '/');
	struct ct_module mod = { .name = ct_str_from(base ? base + 1 : path),
				 .path = ct_str_from(path),
				 .build_id = ct_str_from(""),
				 .flags = flags };
	rp_proc_add_module(p, &mod);
}

/* pip's cryptography wheel carries OpenSSL inside _rust.abi3.so, which python dlopens; a pyenv
 * shim runs bash, env and basename first. The finding names the shared object and the python
 * that mapped it first, ahead of busier helpers, from the MAPPED module records; the other
 * processes are one line. */
static void test_nothing_intercepted_mapped(void **state)
{
	(void)state;
	char dir[] = "/tmp/ct-test-wheel-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char sp[256], so[512], exe[300];
	snprintf(sp, sizeof(sp), "%s/lib/python3.11/site-packages", dir);
	snprintf(exe, sizeof(exe), "%s/python3.11", dir);
	snprintf(so, sizeof(so), "%s/cryptography", sp);
	char mk[600];
	snprintf(mk, sizeof(mk), "mkdir -p %s", so);
	assert_int_equal(system(mk), 0);
	snprintf(so, sizeof(so), "%s/cryptography/_rust.abi3.so", sp);
	static const char marks[] = "\0OpenSSL 4.0.0 14 Apr 2026\0../crypto/evp/evp_enc.c\0";
	fake_elf(so, marks, sizeof(marks));
	fake_elf(exe, "", 0);

	MODEL(m);
	for (uint32_t pid = 10; pid < 13; pid++) { /* the shim's helpers, busier than python */
		struct rp_proc *h = mk_proc(&m, pid);
		h->proc.flags = CT_PROC_FINAL;
		h->proc.crypto_libs = ct_str_from("");
		h->proc.utime_ns = 90000000;
		h->hdr.exe = ct_str_from(pid == 12 ? "/usr/bin/env" : "/usr/bin/bash");
		mk_mapped(h, "/lib/x86_64-linux-gnu/libc.so.6", CT_MODULE_MAPPED);
	}
	struct rp_proc *py = mk_proc(&m, 13);
	py->proc.flags = CT_PROC_FINAL;
	py->proc.crypto_libs = ct_str_from("");
	py->proc.utime_ns = 1000000;
	py->hdr.exe = ct_str_from(exe);
	mk_mapped(py, "/lib/x86_64-linux-gnu/libc.so.6", CT_MODULE_MAPPED);
	mk_mapped(py, so, CT_MODULE_MAPPED);
	const struct rp_finding *f = find(&m, "nothing-intercepted");
	assert_non_null(f);
	if (!f)
		return;
	const char *pid13 = strstr(f->message, "For pid 13 ");
	assert_non_null(pid13);
	assert_null(strstr(f->message, "For pid 10 ")); /* the helpers are summed up, not shown */
	assert_non_null(strstr(f->message, "a shared object it loaded"));
	assert_non_null(strstr(f->message, so));
	assert_non_null(strstr(f->message, "from the Python package cryptography, installed with pip"));
	assert_non_null(strstr(f->message, "has OpenSSL 4.0.0 14 Apr 2026 linked in statically"));
	assert_non_null(strstr(f->message, "The other 3 process(es) (bash x2, env) loaded no crypto"));
	assert_int_equal(f->severity, RP_INFO); /* a pip package: nothing wrong, another build traces it */
	assert_non_null(strstr(f->fix, "pip install --no-binary cryptography cryptography"));
	assert_non_null(strstr(f->fix, "python3-cryptography"));
	char why[600];
	rp_nothing_reason(&m, why, sizeof(why));
	assert_non_null(strstr(why, "_rust.abi3.so has OpenSSL 4.0.0"));
	/* a module record of a call site only (no MAPPED flag) is not a list of what was mapped */
	py->modules[1].flags = 0;
	f = find(&m, "nothing-intercepted");
	assert_non_null(f);
	if (!f)
		return;
	assert_null(strstr(f->message, "_rust.abi3.so"));
	unlink(so);
	unlink(exe);
	snprintf(mk, sizeof(mk), "rm -rf %s", dir);
	assert_int_equal(system(mk), 0);
	rp_model_free(&m);
}

/* Not carriers of OpenSSL: a shared object that imports its functions names them in its file,
 * and has no PT_INTERP as a static executable has none: only the names it defines count
 * (report/exescan.c); OpenSSL's legacy provider holds OpenSSL's assembler, but its ciphers are
 * reached through libcrypto's hooked EVP calls (findings/carried.c). */
static void test_nothing_intercepted_not_carriers(void **state)
{
	(void)state;
	const char *so = getenv("CT_TEST_IMPORTER");
	assert_non_null(so);
	if (!so)
		return;
	char exe[] = "/tmp/ct-test-exe-XXXXXX";
	int fd = mkstemp(exe);
	assert_true(fd >= 0);
	close(fd);
	fake_elf(exe, "", 0);
	MODEL(m);
	struct rp_proc *p = mk_proc(&m, 1);
	p->proc.flags = CT_PROC_FINAL;
	p->proc.crypto_libs = ct_str_from("");
	p->hdr.exe = ct_str_from(exe);
	char dir[] = "/tmp/ct-test-ossl-XXXXXX", legacy[300];
	assert_non_null(mkdtemp(dir));
	snprintf(legacy, sizeof(legacy), "%s/ossl-modules", dir);
	assert_int_equal(mkdir(legacy, 0700), 0);
	snprintf(legacy, sizeof(legacy), "%s/ossl-modules/legacy.so", dir);
	static const char marks[] = "\0DES for x86_64, CRYPTOGAMS by <appro@openssl.org>\0";
	fake_elf(legacy, marks, sizeof(marks));
	mk_mapped(p, so, CT_MODULE_MAPPED);
	mk_mapped(p, legacy, CT_MODULE_MAPPED);
	const struct rp_finding *f = find(&m, "nothing-intercepted");
	assert_non_null(f);
	if (!f)
		return;
	assert_null(strstr(f->message, "linked in statically"));
	assert_null(strstr(f->message, so));
	assert_null(strstr(f->message, "legacy.so"));
	char why[600];
	rp_nothing_reason(&m, why, sizeof(why));
	assert_null(strstr(why, "linked in statically"));
	/* the same file anywhere else is a carrier */
	char elsewhere[300];
	snprintf(elsewhere, sizeof(elsewhere), "%s/legacy.so", dir);
	fake_elf(elsewhere, marks, sizeof(marks));
	mk_mapped(p, elsewhere, CT_MODULE_MAPPED);
	f = find(&m, "nothing-intercepted");
	assert_non_null(f);
	if (f)
		assert_non_null(strstr(f->message, "linked in statically"));
	unlink(elsewhere);
	unlink(legacy);
	snprintf(legacy, sizeof(legacy), "%s/ossl-modules", dir);
	rmdir(legacy);
	rmdir(dir);
	unlink(exe);
	rp_model_free(&m);
}

/* Whose code a file is: dpkg's lists name the package (a merged-/usr path too), a site-packages
 * outside the system's is pip's, /usr/local and the rest are the reader's own. */
static void test_file_owner(void **state)
{
	(void)state;
	char dir[] = "/tmp/ct-test-dpkg-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char f1[300], f2[300];
	snprintf(f1, sizeof(f1), "%s/openssh-client.list", dir);
	snprintf(f2, sizeof(f2), "%s/libssl3:amd64.list", dir);
	FILE *f = fopen(f1, "w");
	assert_non_null(f);
	fputs("/.\n/usr\n/usr/bin\n/usr/bin/ssh\n/usr/bin/scp", f); /* no final newline */
	fclose(f);
	f = fopen(f2, "w");
	assert_non_null(f);
	fputs("/usr/lib/x86_64-linux-gnu/libssl.so.3\n", f);
	fclose(f);
	rp_owner_set_dpkg_dir(dir);
	static const struct {
		const char *path;
		enum rp_owner_kind kind;
		const char *pkg;
	} cases[] = {
		{ "/usr/bin/ssh", RP_OWNER_SYSTEM, "openssh-client" },
		{ "/usr/bin/scp", RP_OWNER_SYSTEM, "openssh-client" },
		{ "/lib/x86_64-linux-gnu/libssl.so.3", RP_OWNER_SYSTEM, "libssl3" },
		{ "/usr/bin/sshd", RP_OWNER_SYSTEM, "" },
		{ "/usr/local/bin/ssh", RP_OWNER_LOCAL, "" },
		{ "/home/u/venv/lib/python3.11/site-packages/cryptography/_rust.abi3.so", RP_OWNER_PIP,
		  "cryptography" },
		{ "/usr/lib/python3/dist-packages/cryptography/_rust.abi3.so", RP_OWNER_SYSTEM, "" },
		{ "/opt/app/bin/app", RP_OWNER_LOCAL, "" },
		{ "prog", RP_OWNER_UNKNOWN, "" },
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rp_owner o;
		rp_file_owner(cases[i].path, &o);
		if (o.kind != cases[i].kind || strcmp(o.package, cases[i].pkg))
			fail_msg("%s: kind %d package '%s', expected %d '%s'", cases[i].path, o.kind,
				 o.package, cases[i].kind, cases[i].pkg);
	}
	rp_owner_set_dpkg_dir(NULL);
	unlink(f1);
	unlink(f2);
	rmdir(dir);
}

/* cryptsetup benchmark: socket(AF_ALG) refused, no engine involved, the program fails. Said as
 * kernel-refused (why, what to do), and nothing-intercepted no longer says "Nothing to fix";
 * inside a failed afalg engine, engine-failed says it instead. */
/* From an ARM CPU the fix routes to target cpu: "aesni" is refused there (route_spec.c). */
static void test_kernel_refused_arm(void **state)
{
	(void)state;
	MODEL(m);
	struct rp_proc *p = mk_proc(&m, 5);
	p->hdr.cpu_flags = CT_CPU_ARM_AES | CT_CPU_ARM_PMULL;
	mk_event(p, 1, CT_EV_CALL_FAILED, "socket", EAFNOSUPPORT, -1,
		 "family=AF_ALG type=SOCK_SEQPACKET protocol=0");
	const struct rp_finding *f = find(&m, "kernel-refused");
	assert_non_null(f);
	if (!f)
		return;
	assert_non_null(strstr(f->fix, "--route 'aes-*=cpu'"));
	assert_null(strstr(f->fix, "aesni"));
	assert_null(strstr(f->fix, "AES-NI"));
	rp_model_free(&m);
}

static void test_kernel_refused(void **state)
{
	(void)state;
	MODEL(m);
	struct rp_proc *p = mk_proc(&m, 5);
	mk_event(p, 1, CT_EV_CALL_FAILED, "socket", EAFNOSUPPORT, -1,
		 "family=AF_ALG type=SOCK_SEQPACKET protocol=0");
	const struct rp_finding *f = find(&m, "kernel-refused");
	assert_non_null(f);
	if (!f)
		return;
	assert_int_equal(f->severity, RP_WARNING);
	assert_int_equal(f->pid, 5);
	assert_non_null(strstr(f->message, "refused with EAFNOSUPPORT"));
	assert_non_null(strstr(f->message, "af_alg and algif_skcipher"));
	assert_non_null(strstr(f->message, "sandbox"));
	assert_non_null(strstr(f->message, "No cipher work ran"));
	assert_non_null(strstr(f->fix, "--route 'aes-*=aesni'"));
	assert_non_null(strstr(f->fix, "modprobe af_alg algif_skcipher"));
	f = find(&m, "nothing-intercepted");
	assert_non_null(f);
	if (!f)
		return;
	assert_non_null(strstr(f->message, "refused (see kernel-refused)"));
	assert_null(strstr(f->fix, "Nothing to fix"));
	/* the program then did its work in software: said, and left to silent-fallback */
	struct rp_path *a = mk_path(p, 0, CT_API_EVP, "provider:default", "aes-256-xts", 0);
	tg_fill_stats(&a->st, 0, 10, 4096, 3000, 0.99, 0);
	f = find(&m, "kernel-refused");
	assert_non_null(f);
	if (!f)
		return;
	assert_non_null(strstr(f->message, "10 cipher calls in their own software"));
	assert_non_null(find(&m, "silent-fallback"));
	/* inside the afalg engine's failed load, engine-failed lists the refused socket itself */
	mk_event(p, 2, CT_EV_ENGINE_REQUEST, "ENGINE_by_id", 0, 0, "id=afalg");
	assert_null(find(&m, "kernel-refused"));
	assert_non_null(find(&m, "engine-failed"));
	rp_model_free(&m);

	MODEL(m2);
	struct rp_proc *q = mk_proc(&m2, 6);
	mk_event(q, 1, CT_EV_CALL_FAILED, "open", ENOENT, -1, "path=/dev/crypto flags=O_RDWR");
	f = find(&m2, "kernel-refused");
	assert_non_null(f);
	if (!f)
		return;
	assert_non_null(strstr(f->message, "through /dev/crypto"));
	assert_non_null(strstr(f->message, "cryptodev-linux module is not loaded"));
	/* a failure of some other open is not a request for kernel crypto */
	mk_event(q, 1, CT_EV_CALL_FAILED, "open", ENOENT, -1, "path=/etc/nothing flags=O_RDONLY");
	assert_null(find(&m2, "kernel-refused"));
	rp_model_free(&m2);
}

static void test_multiple_libcrypto(void **state)
{
	(void)state;
	MODEL(m);
	struct rp_proc *p = mk_proc(&m, 1);
	p->proc.libcrypto = ct_str_from("OpenSSL 3.0.19 1 Jan 2026");
	struct rp_path *a = mk_path(p, 0, CT_API_EVP, "provider:default", "aes-128-cbc", 0);
	tg_fill_stats(&a->st, 0, 100, 64, 100, -1, 0);
	/* one libcrypto beside another crypto library: nothing to say */
	p->proc.crypto_libs = ct_str_from("/usr/lib/libcrypto.so.3\n/usr/lib/libgnutls.so.30");
	assert_null(find(&m, "multiple-libcrypto"));
	/* a second copy of the same version from another directory (tests/reliability/loading.py) */
	p->proc.crypto_libs = ct_str_from(
		"/usr/lib/libcrypto.so.3\n/usr/lib/libgnutls.so.30\n"
		"/opt/app/lib/libcrypto.so.3");
	const struct rp_finding *f = find(&m, "multiple-libcrypto");
	assert_non_null(f);
	if (!f)
		return;
	assert_int_equal(f->severity, RP_WARNING);
	assert_int_equal(f->pid, 1);
	assert_non_null(strstr(f->message,
			       "2 copies of libcrypto are mapped in this process: "
			       "/usr/lib/libcrypto.so.3 and /opt/app/lib/libcrypto.so.3."));
	assert_non_null(strstr(f->message, "(libcrypto.so.3: OpenSSL 3.0.19 1 Jan 2026)"));
	assert_non_null(strstr(f->message, "passed to that copy untouched and untraced"));
	assert_null(strstr(f->message, "Calls passed through from"));
	/* a plugin bound to another version: its calls went there (preload/foreign.c), named */
	p->proc.crypto_libs = ct_str_from("/usr/lib/libcrypto.so.3\n/opt/old/libcrypto.so.1.1");
	mk_event(p, 7, CT_EV_TRACE_WARNING, "foreign-libcrypto", 0, 0,
		 "calls from /opt/app/plugin.so go to its own /opt/old/libcrypto.so.1.1 (passed through, "
		 "not traced: cryptrace traces one libcrypto per process)");
	f = find(&m, "multiple-libcrypto");
	assert_non_null(f);
	if (!f)
		return;
	assert_non_null(
		strstr(f->message, "Calls passed through from: /opt/app/plugin.so (foreign-libcrypto"));
	rp_model_free(&m);
}

static void test_engine_failed(void **state)
{
	(void)state;
	MODEL(m);
	struct rp_proc *p = mk_proc(&m, 1);
	mk_event(p, 1, CT_EV_ENGINE_REQUEST, "ENGINE_by_id", 0, 0, "id=afalg");
	mk_event(p, 2, CT_EV_CALL_FAILED, "socket", EAFNOSUPPORT, -1, "domain=AF_ALG");
	const struct rp_finding *f = find(&m, "engine-failed");
	assert_non_null(f);
	assert_int_equal(f->severity, RP_ERROR);
	assert_non_null(strstr(f->message, "id=afalg"));
	assert_non_null(strstr(f->message, "socket"));
	assert_non_null(strstr(f->message, "EAFNOSUPPORT"));
	assert_int_equal(f->pid, 1);
	/* the same engine loading fine is no finding */
	mk_event(p, 1, CT_EV_ENGINE_REQUEST, "ENGINE_by_id", 0, 0x5555, "id=afalg");
	assert_null(find(&m, "engine-failed"));
	/* a provider that fails to load is (a vendor's: an offload) */
	mk_event(p, 3, CT_EV_PROVIDER_LOAD, "OSSL_PROVIDER_load", ENOENT, 0, "name=pkcs11");
	assert_non_null(find(&m, "engine-failed"));
	rp_model_free(&m);
}

/* `-engine devcrypto`: a libcrypto without it (Debian's: the option is off) is told apart from
 * one that has it built in and could not open /dev/crypto, which registers no engine either. */
static void test_engine_devcrypto(void **state)
{
	(void)state;
	MODEL(m);
	struct rp_proc *p = mk_proc(&m, 1);
	mk_event(p, 1, CT_EV_ENGINE_REQUEST, "ENGINE_by_id", 0, 0, "id=devcrypto");
	const struct rp_finding *f = find(&m, "engine-failed");
	assert_non_null(f);
	if (!f)
		return;
	assert_non_null(strstr(f->message, "enable-devcryptoeng"));
	assert_non_null(strstr(f->fix, "-engine afalg"));
	assert_null(strstr(f->fix, "Install the module"));
	/* built in, and its open of /dev/crypto failed: load the module, not rebuild OpenSSL */
	mk_event(p, 2, CT_EV_CALL_FAILED, "open", ENOENT, -1, "/dev/crypto");
	f = find(&m, "engine-failed");
	assert_non_null(f);
	if (!f)
		return;
	assert_null(strstr(f->message, "enable-devcryptoeng"));
	assert_non_null(strstr(f->message, "/dev/crypto"));
	assert_non_null(strstr(f->fix, "modprobe cryptodev"));
	rp_model_free(&m);
}

/* stunnel probes for the FIPS provider at start: an absent module that is not an offload is no
 * engine-failed and makes no silent-fallback of the work that ran in the default provider; an
 * absent offload provider or engine still is both. */
static void test_provider_absent(void **state)
{
	(void)state;
	static const char *const not_offload[] = {
		"name=fips retain_fallbacks=1; openssl error: DSO: could not load the shared library: "
		"filename(/usr/lib/ossl-modules/fips.so): /usr/lib/ossl-modules/fips.so: cannot open "
		"shared object file: No such file or directory",
		"name=legacy",
		"name=/usr/lib/ossl-modules/base.so",
		"name=default",
		"name=null",
	};
	for (size_t i = 0; i < sizeof(not_offload) / sizeof(not_offload[0]); i++) {
		MODEL(m);
		struct rp_proc *p = mk_proc(&m, 7);
		struct rp_path *a = mk_path(p, 0, CT_API_EVP, "provider:default", "aes-256-gcm", 0);
		tg_fill_stats(&a->st, 0, 2303, 8192, 3000, 0.99, 0);
		mk_event(p, 1, CT_EV_PROVIDER_LOAD, "OSSL_PROVIDER_try_load", 0, 0, not_offload[i]);
		assert_null(find(&m, "engine-failed"));
		assert_null(find(&m, "silent-fallback"));
		const struct rp_finding *f = find(&m, "provider-absent");
		assert_non_null(f);
		if (!f)
			return;
		assert_int_equal(f->severity, RP_INFO);
		assert_non_null(strstr(f->message, "not a crypto offload"));
		assert_non_null(strstr(f->message, "2303 cipher calls"));
		assert_non_null(strstr(f->message, "provider:default"));
		if (i == 0) {
			assert_non_null(strstr(f->message, "asked for the fips provider"));
			assert_non_null(strstr(f->message, "/usr/lib/ossl-modules/fips.so does not exist"));
			assert_non_null(strstr(f->fix, "FIPS mode"));
		}
		/* the same probe succeeding says nothing */
		mk_event(p, 1, CT_EV_PROVIDER_LOAD, "OSSL_PROVIDER_try_load", 0, 0x5555, not_offload[i]);
		assert_null(find(&m, "provider-absent"));
		rp_model_free(&m);
	}
	/* the rdrand engine is no cipher offload either; afalg and a vendor provider are */
	static const struct {
		uint16_t kind;
		const char *call, *detail;
		bool offload;
	} reqs[] = {
		{ CT_EV_ENGINE_REQUEST, "ENGINE_by_id", "id=rdrand", false },
		{ CT_EV_ENGINE_REQUEST, "ENGINE_by_id", "id=afalg", true },
		{ CT_EV_ENGINE_REQUEST, "ENGINE_init", "id=devcrypto", true },
		{ CT_EV_PROVIDER_LOAD, "OSSL_PROVIDER_load", "name=fipsish", true },
	};
	for (size_t i = 0; i < sizeof(reqs) / sizeof(reqs[0]); i++) {
		MODEL(m);
		struct rp_proc *p = mk_proc(&m, 7);
		struct rp_path *a = mk_path(p, 0, CT_API_EVP, "provider:default", "aes-128-cbc", 0);
		tg_fill_stats(&a->st, 0, 100, 8192, 3000, 0.99, 0);
		mk_event(p, 1, reqs[i].kind, reqs[i].call, 0, 0, reqs[i].detail);
		assert_int_equal(find(&m, "engine-failed") != NULL, reqs[i].offload);
		assert_int_equal(find(&m, "silent-fallback") != NULL, reqs[i].offload);
		assert_int_equal(find(&m, "provider-absent") != NULL, !reqs[i].offload);
		rp_model_free(&m);
	}
}

/* The preload appends OpenSSL's error queue to a failed request's parameters; the finding shows
 * it, names a missing module, and says when the configuration file made the request. */
static void test_engine_failed_reason(void **state)
{
	(void)state;
	MODEL(m);
	struct rp_proc *p = mk_proc(&m, 1);
	mk_event(p, 1, CT_EV_ENGINE_REQUEST, "ENGINE_by_id", 0, 0,
		 "id=nosuch; openssl error: DSO: could not load the shared library: "
		 "filename(/usr/lib/engines-3/nosuch.so): /usr/lib/engines-3/nosuch.so: cannot open "
		 "shared object file: No such file or directory; then engine: no such engine: "
		 "id=nosuch");
	const struct rp_finding *f = find(&m, "engine-failed");
	assert_non_null(f);
	if (!f)
		return;
	assert_non_null(strstr(f->message,
			       "The program asked for an engine with ENGINE_by_id "
			       "(id=nosuch) and it could not"));
	assert_non_null(strstr(f->message,
			       "error queue says: DSO: could not load the shared "
			       "library: filename(/usr/lib/engines-3/nosuch.so)"));
	assert_non_null(strstr(f->message, "then engine: no such engine: id=nosuch."));
	assert_non_null(strstr(f->message, "shared object /usr/lib/engines-3/nosuch.so does not exist"));
	assert_non_null(strstr(f->fix, "OPENSSL_ENGINES"));
	/* no reason recorded (an older trace, or an empty queue): said so, no module named */
	mk_event(p, 1, CT_EV_ENGINE_REQUEST, "ENGINE_by_id", 0, 0, "id=nosuch");
	f = find(&m, "engine-failed");
	assert_non_null(f);
	if (!f)
		return;
	assert_non_null(strstr(f->message, "gave no reason"));
	assert_null(strstr(f->message, "does not exist"));
	/* requested by openssl.cnf: the call site runs through CONF_modules_load */
	struct ct_event e = { .event_id = 1,
			      .kind = CT_EV_ENGINE_REQUEST,
			      .ret = 0,
			      .count = 1,
			      .path_id = CT_NO_PATH,
			      .call = ct_str_from("ENGINE_by_id"),
			      .detail = ct_str_from("id=afalg; openssl error: lib(128): reason(109); "
						    "then engine: no such engine: id=afalg"),
			      .callsite = ct_str_from("libcrypto.so.3+0x1e289a\n"
						      "libcrypto.so.3!CONF_modules_load+0x2a1") };
	rp_proc_set_event(p, &e);
	f = find(&m, "engine-failed");
	assert_non_null(f);
	if (!f)
		return;
	assert_non_null(strstr(f->message, "The OpenSSL configuration file"));
	assert_non_null(strstr(f->message, "lib(128): reason(109)"));
	assert_non_null(strstr(f->message, "a code of the module itself"));
	rp_model_free(&m);
}

/* ENGINE_by_id finds the engine, ENGINE_init refuses it: engine-failed says so, and the work in
 * software is a silent fallback; the same engine initialising is neither. */
static void test_silent_fallback_engine_init(void **state)
{
	(void)state;
	MODEL(m);
	struct rp_proc *p = mk_proc(&m, 1);
	mk_event(p, 1, CT_EV_ENGINE_REQUEST, "ENGINE_by_id", 0, 0x5555, "id=afalg");
	mk_event(p, 2, CT_EV_ENGINE_REQUEST, "ENGINE_init", 0, 0, "id=afalg");
	struct rp_path *a = mk_path(p, 0, CT_API_EVP, "provider:default", "aes-128-cbc", 0);
	tg_fill_stats(&a->st, 0, 4000, 8192, 3000, 0.99, 0);
	const struct rp_finding *f = find(&m, "engine-failed");
	assert_non_null(f);
	if (!f)
		return;
	assert_non_null(strstr(f->message,
			       "ENGINE_init (id=afalg) and it was found but could not be "
			       "initialised"));
	f = find(&m, "silent-fallback");
	assert_non_null(f);
	if (!f)
		return;
	assert_non_null(strstr(f->message, "4000 cipher calls"));
	assert_non_null(strstr(f->evidence, "engine-request ENGINE_init"));
	/* ENGINE_init returning 1: the engine works, nothing fell back */
	mk_event(p, 2, CT_EV_ENGINE_REQUEST, "ENGINE_init", 0, 1, "id=afalg");
	assert_null(find(&m, "engine-failed"));
	assert_null(find(&m, "silent-fallback"));
	rp_model_free(&m);
}

/* A trace built with the real encoder and read back by the loader: a kernel AF_ALG path whose
 * operations failed (errors in its stats) beside software paths. */
static void load_ops_failure_trace(struct rp_model *m, uint64_t kernel_errors, uint64_t sw_calls)
{
	struct tg g;
	tg_init(&g);
	static const char argv[] = "app";
	struct ct_header h = tg_default_header(42, argv, 3);
	tg_header(&g, &h);
	struct ct_path_def k = { .path_id = 0,
				 .api = CT_API_AFALG,
				 .dir = CT_DIR_ENCRYPT,
				 .key_bits = 128,
				 .entry = CT_ENTRY_AFALG_SENDMSG,
				 .flags = CT_PATH_CPU_DRIVER,
				 .impl = ct_str_from("kernel:cbc-aes-aesni"),
				 .cipher = ct_str_from("aes-128-cbc"),
				 .requested = ct_str_from("cbc(aes)") };
	struct ct_path_def sw = { .path_id = 1,
				  .api = CT_API_EVP,
				  .dir = CT_DIR_ENCRYPT,
				  .key_bits = 128,
				  .entry = CT_ENTRY_EVP_UPDATE,
				  .impl = ct_str_from("provider:default"),
				  .cipher = ct_str_from("aes-128-cbc") };
	struct ct_path_def drbg = sw;
	drbg.path_id = 2;
	drbg.key_bits = 256;
	drbg.cipher = ct_str_from("aes-256-ctr");
	tg_path(&g, &k);
	tg_path(&g, &sw);
	tg_path(&g, &drbg);
	struct ct_path_stats *st = calloc(1, sizeof(*st));
	assert_non_null(st);
	tg_fill_stats(st, 0, 1000, 4096, 20000, 0.1, 0.8);
	st->errors = kernel_errors;
	tg_stats(&g, st);
	if (sw_calls) {
		tg_fill_stats(st, 1, sw_calls, 4096, 2000, 0.99, 0);
		tg_stats(&g, st);
	}
	tg_fill_stats(st, 2, 11, 16, 100, 0.99, 0);
	tg_stats(&g, st);
	free(st);
	struct ct_proc pr = { .mono_ns = 2000,
			      .flags = CT_PROC_HAS_LIBCRYPTO | CT_PROC_FINAL,
			      .threads_seen = 1,
			      .hooked_calls = 2000,
			      .crypto_libs = ct_str_from("/usr/lib/libcrypto.so.3") };
	tg_proc(&g, &pr);
	struct ct_end e = { .mono_ns = 3000, .reason = CT_END_EXIT };
	tg_end(&g, &e);
	char msg[200];
	rp_model_init(m);
	assert_int_equal(rp_load_buffer(m, "ops.ctrace", g.buf, g.len, msg, sizeof(msg)), 0);
	tg_free(&g);
}

static void test_silent_fallback_operation_time(void **state)
{
	(void)state;
	struct rp_model m;
	/* every kernel operation succeeded: the software paths are the program's own choice */
	load_ops_failure_trace(&m, 0, 500);
	assert_null(find(&m, "silent-fallback"));
	rp_model_free(&m);
	/* 3 failed at operation time and the program redid the work in software: a fallback of
	 * that cipher's software path only, not of the DRBG's aes-256-ctr */
	load_ops_failure_trace(&m, 3, 500);
	const struct rp_finding *f = find(&m, "silent-fallback");
	assert_non_null(f);
	if (!f)
		return;
	assert_non_null(strstr(f->message, "500 cipher calls"));
	assert_non_null(strstr(f->message, "aes-128-cbc encrypt in provider:default"));
	assert_null(strstr(f->message, "aes-256-ctr"));
	assert_non_null(strstr(f->evidence, "3 failed afalg operations on kernel:cbc-aes-aesni"));
	assert_int_equal(f->pid, 42);
	rp_model_free(&m);
	/* failed operations but no software work of that cipher: nothing fell back (yet) */
	load_ops_failure_trace(&m, 3, 0);
	assert_null(find(&m, "silent-fallback"));
	rp_model_free(&m);
}

static void test_silent_fallback(void **state)
{
	(void)state;
	MODEL(m);
	struct rp_proc *p = mk_proc(&m, 1);
	mk_event(p, 1, CT_EV_ENGINE_REQUEST, "ENGINE_by_id", 0, 0, "id=afalg");
	struct rp_path *a = mk_path(p, 0, CT_API_EVP, "provider:default", "aes-128-cbc", 0);
	tg_fill_stats(&a->st, 0, 0, 16, 100, -1, 0); /* offload failed but no work done yet */
	assert_null(find(&m, "silent-fallback"));
	tg_fill_stats(&a->st, 0, 12345, 16, 100, -1, 0);
	const struct rp_finding *f = find(&m, "silent-fallback");
	assert_non_null(f);
	assert_int_equal(f->severity, RP_ERROR);
	assert_non_null(strstr(f->message, "12345 cipher calls"));
	assert_non_null(strstr(f->message, "provider:default"));
	assert_non_null(strstr(f->evidence, "197520 bytes"));
	/* an engine that works (it serves CBC) while the DRBG's CTR stays in the provider, and a
	 * kernel path named by its algorithm: no fallback */
	mk_event(p, 1, CT_EV_ENGINE_REQUEST, "ENGINE_by_id", 0, 1, "id=afalg");
	a->def.impl = ct_str_from("engine:afalg");
	struct rp_path *ctr = mk_path(p, 1, CT_API_EVP, "provider:default", "aes-256-ctr", 0);
	ctr->def.requested = ct_str_from("engine:afalg");
	tg_fill_stats(&ctr->st, 1, 11, 16, 100, -1, 0);
	struct rp_path *k = mk_path(p, 2, CT_API_AFALG, "kernel:cbc-aes-aesni", "aes-128-cbc",
				    CT_PATH_NESTED | CT_PATH_CPU_DRIVER);
	k->def.requested = ct_str_from("cbc(aes)");
	tg_fill_stats(&k->st, 2, 12345, 16, 100, -1, 0);
	assert_null(find(&m, "silent-fallback"));
	/* but a CBC context the working engine did not take is one */
	struct rp_path *cbc192 = mk_path(p, 3, CT_API_EVP, "provider:default", "aes-192-cbc", 0);
	cbc192->def.requested = ct_str_from("engine:afalg");
	tg_fill_stats(&cbc192->st, 3, 77, 16, 100, -1, 0);
	f = find(&m, "silent-fallback");
	assert_non_null(f);
	assert_non_null(strstr(f->message, "77 cipher calls"));
	assert_null(strstr(f->message, "aes-256-ctr"));
	cbc192->st.calls = 0;
	k->st.calls = 0;
	ctr->st.calls = 0;
	a->def.impl = ct_str_from("provider:default");
	/* a library-level failure (bad padding at EVP_DecryptFinal_ex) is not an offload failure */
	mk_event(p, 1, CT_EV_ENGINE_REQUEST, "ENGINE_by_id", 0, 1, "id=afalg");
	mk_event(p, 5, CT_EV_CALL_FAILED, "EVP_DecryptFinal_ex", 0, 0, "");
	assert_null(find(&m, "silent-fallback"));
	/* a working engine doing the work itself: no fallback */
	mk_event(p, 1, CT_EV_ENGINE_REQUEST, "ENGINE_by_id", 0, 1, "id=afalg");
	a->def.impl = ct_str_from("engine:afalg");
	assert_null(find(&m, "silent-fallback"));
	/* a kernel session refused at setup (CIOCGSESSION EINVAL), work in software */
	a->def.impl = ct_str_from("provider:default");
	mk_event(p, 2, CT_EV_SESSION, "ioctl(CIOCGSESSION)", EINVAL, -1, "cipher=AES_CBC keylen=24");
	assert_non_null(find(&m, "silent-fallback"));
	rp_model_free(&m);
}

static void test_session_failed(void **state)
{
	(void)state;
	MODEL(m);
	struct rp_proc *p = mk_proc(&m, 1);
	mk_event(p, 1, CT_EV_SESSION, "ioctl(CIOCGSESSION)", 0, 0, "cipher=AES_CBC keylen=16");
	assert_null(find(&m, "session-failed"));
	mk_event(p, 2, CT_EV_SESSION, "ioctl(CIOCGSESSION)", EINVAL, -1, "cipher=AES_CBC keylen=24");
	const struct rp_finding *f = find(&m, "session-failed");
	assert_non_null(f);
	assert_non_null(strstr(f->message, "EINVAL"));
	assert_non_null(strstr(f->message, "keylen=24"));
	assert_non_null(strstr(f->evidence, "prog!main+0x1"));
	rp_model_free(&m);
}

static void test_software_aes(void **state)
{
	(void)state;
	MODEL(m);
	struct rp_proc *p = mk_proc(&m, 1);
	p->hdr.aesni_cpb_milli = 650; /* parallel limit max(3 x 0.65, 4) = 4; CBC encryption is serial:
				       * 4.5 x 10 rounds x 3.5 / 16 = 9.8 cycles/byte */
	struct rp_path *a = mk_path(p, 0, CT_API_EVP, "provider:default", "aes-128-cbc", 0);
	/* TSC 2 GHz: 8192 B in 16384 ns = 4 cycles/byte, exactly at the limit: not above */
	tg_fill_stats(&a->st, 0, 1000, 8192, 16384, 1.0, 0);
	assert_null(find(&m, "software-aes"));
	tg_fill_stats(&a->st, 0, 1000, 8192, 49152, 1.0, 0); /* 12 cycles/byte */
	const struct rp_finding *f = find(&m, "software-aes");
	assert_non_null(f);
	assert_non_null(strstr(f->message, "12.0 cycles per byte"));
	/* a preempted thread: 12 cycles/byte of wall, but only 40% of it on the CPU */
	tg_fill_stats(&a->st, 0, 1000, 8192, 49152, 0.4, 0);
	assert_null(find(&m, "software-aes"));
	/* small requests alone say nothing (per-call overhead dominates them) */
	tg_fill_stats(&a->st, 0, 1000, 16, 1000, 1.0, 0);
	assert_null(find(&m, "software-aes"));
	/* the mask is named when set */
	tg_fill_stats(&a->st, 0, 1000, 8192, 49152, 1.0, 0);
	p->hdr.ia32cap = ct_str_from("~0x200000200000000");
	f = find(&m, "software-aes");
	assert_non_null(f);
	assert_non_null(strstr(f->message, "OPENSSL_ia32cap=~0x200000200000000"));
	assert_non_null(strstr(f->fix, "OPENSSL_ia32cap"));
	/* no AES in this CPU: software speed is expected */
	p->hdr.cpu_flags = CT_CPU_AVX2;
	assert_null(find(&m, "software-aes"));
	/* no calibrated bound: a fixed 5 cycles/byte limit */
	p->hdr.cpu_flags = CT_CPU_AES;
	p->hdr.aesni_cpb_milli = 0;
	p->hdr.ia32cap = ct_str_from("");
	tg_fill_stats(&a->st, 0, 1000, 8192, 18000, 1.0, 0); /* 4.4 cycles/byte */
	assert_null(find(&m, "software-aes"));
	tg_fill_stats(&a->st, 0, 1000, 8192, 24000, 1.0, 0); /* 5.9 cycles/byte */
	assert_non_null(find(&m, "software-aes"));
	/* the same ticks from a timer that is not the CPU clock (aarch64's CNTVCT_EL0): no cycles,
	 * so no verdict by speed, and no CYC/B */
	p->hdr.flags |= CT_HDR_TICKS_NOT_CYCLES;
	assert_null(find(&m, "software-aes"));
	for (size_t i = 0; i < m.npaths; i++)
		assert_true(m.paths[i].tsc_hz == 0 && m.paths[i].d.cycles_per_byte < 0);
	p->hdr.flags &= ~CT_HDR_TICKS_NOT_CYCLES;
	assert_non_null(find(&m, "software-aes"));
	/* no timing at all, but the mask hides AES-NI: still said */
	p->hdr.tsc_hz = 0;
	assert_null(find(&m, "software-aes"));
	p->hdr.ia32cap = ct_str_from("~0x200000000000000");
	assert_non_null(find(&m, "software-aes"));
	p->hdr.ia32cap = ct_str_from("~0x200000000"); /* PCLMULQDQ only */
	assert_null(find(&m, "software-aes"));
	rp_model_free(&m);
}

/* A trace from an ARM CPU (cpu_flags has arm-aes, no TSC): OPENSSL_armcap, which replaces the
 * capability word, is the mask when it leaves ARMV8_AES (0x4) out; the words are ARM's. */
static void test_software_aes_arm(void **state)
{
	(void)state;
	MODEL(m);
	struct rp_proc *p = mk_proc(&m, 1);
	p->hdr.cpu_flags = CT_CPU_ARM_AES | CT_CPU_ARM_PMULL;
	p->hdr.tsc_hz = 0; /* no cycle counter: the mask is the only evidence */
	p->hdr.aesni_cpb_milli = 0;
	struct rp_path *a = mk_path(p, 0, CT_API_EVP, "provider:default", "aes-128-ctr", 0);
	tg_fill_stats(&a->st, 0, 1000, 8192, 49152, 1.0, 0);
	assert_null(find(&m, "software-aes"));
	p->hdr.ia32cap = ct_str_from("0x3d"); /* NEON, TICK, SHA1, SHA256, PMULL: AES kept */
	assert_null(find(&m, "software-aes"));
	p->hdr.ia32cap = ct_str_from("0x39"); /* the same without ARMV8_AES */
	const struct rp_finding *f = find(&m, "software-aes");
	assert_non_null(f);
	assert_non_null(strstr(f->message, "OPENSSL_armcap hides them"));
	assert_non_null(strstr(f->message, "OPENSSL_armcap=0x39"));
	assert_non_null(strstr(f->message, "ARMV8_AES (0x4)"));
	assert_non_null(strstr(f->evidence, "cpu_flags has arm-aes"));
	assert_non_null(strstr(f->evidence, "ARMv8 Crypto Extensions bound"));
	assert_non_null(strstr(f->fix, "Unset OPENSSL_armcap"));
	/* no x86 wording anywhere in it */
	assert_null(strstr(f->message, "AES-NI"));
	assert_null(strstr(f->evidence, "AES-NI"));
	assert_null(strstr(f->fix, "AES-NI"));
	assert_null(strstr(f->message, "ia32cap"));
	assert_null(strstr(f->fix, "ia32cap"));
	/* an x86 mask's "~" form means nothing to OpenSSL's armcap: not read as a mask */
	p->hdr.ia32cap = ct_str_from("~0x200000000000000");
	assert_null(find(&m, "software-aes"));
	rp_model_free(&m);
}

/* The bound the limit rests on, and where it came from: the launcher's (header), one the process
 * measured itself under a bare LD_PRELOAD (PROC record), or none (the fixed limit). */
static void test_software_aes_bound_source(void **state)
{
	(void)state;
	MODEL(m);
	struct rp_proc *p = mk_proc(&m, 1);
	p->hdr.aesni_cpb_milli = 0;
	p->proc.aesni_cpb_milli = 650; /* parallel limit 4; CBC encryption's serial floor 9.8 */
	struct rp_path *a = mk_path(p, 0, CT_API_EVP, "provider:default", "aes-128-ctr", 0);
	tg_fill_stats(&a->st, 0, 1000, 8192, 18000, 1.0, 0); /* 4.4 cycles/byte: above 4 */
	const struct rp_finding *f = find(&m, "software-aes");
	assert_non_null(f);
	if (!f)
		return;
	assert_non_null(strstr(f->message, "the 0.65 cycles/byte measured for AES-NI"));
	assert_non_null(strstr(f->evidence,
			       "AES-NI bound 0.65 cycles/byte, measured inside the "
			       "traced process"));
	/* the launcher's bound wins over the process's, and says so */
	p->hdr.aesni_cpb_milli = 1300; /* limit max(3.9, 4) = 4 */
	f = find(&m, "software-aes");
	assert_non_null(f);
	if (!f)
		return;
	assert_non_null(strstr(f->evidence, "AES-NI bound 1.30 cycles/byte, measured by cryptrace run"));
	/* neither: the fixed 5 cycles/byte limit, and the evidence says why there is no bound */
	p->hdr.aesni_cpb_milli = 0;
	p->proc.aesni_cpb_milli = 0;
	assert_null(find(&m, "software-aes"));               /* 4.4 < 5 */
	tg_fill_stats(&a->st, 0, 1000, 8192, 24000, 1.0, 0); /* 5.9 cycles/byte */
	f = find(&m, "software-aes");
	assert_non_null(f);
	if (!f)
		return;
	assert_non_null(strstr(f->evidence, "AES-NI bound: none in this trace"));
	assert_non_null(strstr(f->evidence, "fixed limit of 5 cycles/byte"));
	rp_model_free(&m);
}

/* A masked multi-process server: one software-aes finding per cause, listing the processes and
 * their share of the slow bytes, not one per process; a process slow for another reason gets
 * its own. */
static void test_software_aes_per_cause(void **state)
{
	(void)state;
	MODEL(m);
	static const uint64_t calls[3] = { 300, 100, 600 };
	for (uint32_t i = 0; i < 3; i++) {
		struct rp_proc *p = mk_proc(&m, 20 + i);
		p->hdr.ia32cap = ct_str_from("~0x200000200000000");
		struct rp_path *a = mk_path(p, 0, CT_API_EVP, "provider:default", "aes-256-gcm", 0);
		tg_fill_stats(&a->st, 0, calls[i], 8192, 3000, 0.99, 0);
		struct rp_path *d = mk_path(p, 1, CT_API_EVP, "provider:default", "aes-256-ctr", 0);
		tg_fill_stats(&d->st, 1, 10, 16, 300, 0.99, 0);
	}
	rp_model_merge(&m);
	rp_findings_evaluate(&m);
	size_t n = 0;
	const struct rp_finding *f = NULL;
	for (size_t i = 0; i < m.nfindings; i++)
		if (!strcmp(m.findings[i].kind, "software-aes")) {
			n++;
			f = &m.findings[i];
		}
	assert_int_equal(n, 1);
	if (!f)
		return;
	assert_int_equal(f->pid, 0);
	assert_non_null(strstr(f->message, "OPENSSL_ia32cap=~0x200000200000000"));
	assert_non_null(strstr(f->message, "In 3 processes (1030 calls,"));
	assert_non_null(strstr(f->message, "pid 20 "));
	assert_non_null(strstr(f->message, "pid 21 "));
	assert_non_null(strstr(f->message, "pid 22 "));
	assert_non_null(strstr(f->message, "(60.0%)")); /* pid 22: 600 of 1000 large calls' bytes */
	assert_non_null(strstr(f->message, "Also affected: aes-256-ctr encrypt (30 calls)."));
	assert_non_null(strstr(f->evidence, "pid 22:")); /* the busiest process carries the evidence */
	/* a fourth process, slow without a mask: a second cause, a second finding */
	struct rp_proc *q = mk_proc(&m, 30);
	struct rp_path *slow = mk_path(q, 0, CT_API_EVP, "provider:default", "aes-128-ctr", 0);
	tg_fill_stats(&slow->st, 0, 100, 65536, 65536 * 5, 0.99, 0); /* 10 cycles/byte at 2 GHz */
	rp_model_merge(&m);
	rp_findings_evaluate(&m);
	n = 0;
	for (size_t i = 0; i < m.nfindings; i++)
		if (!strcmp(m.findings[i].kind, "software-aes")) {
			n++;
			if (m.findings[i].pid == 30)
				assert_non_null(strstr(m.findings[i].message, "no-asm"));
		}
	assert_int_equal(n, 2);
	rp_model_free(&m);
}

/* A busy machine: one timed 16 KiB call preempted for 50 ms among 200 that ran at AES-NI speed
 * (8 us) makes the mean look like software AES; the median does not, so no finding; nor does
 * half of them slow. The same mean from every call being slow is one. */
static void test_software_aes_outlier(void **state)
{
	(void)state;
	MODEL(m);
	struct rp_proc *p = mk_proc(&m, 40);
	struct rp_path *a = mk_path(p, 0, CT_API_EVP, "provider:default", "aes-256-gcm", 0);
	tg_fill_stats(&a->st, 0, 200, 16384, 8000, 1.0, 0);
	tg_add_calls(&a->st, 1, 16384, 50000000);
	assert_null(find(&m, "software-aes"));
	/* a loaded machine: half the calls slowed to software speed, the other half at AES-NI
	 * speed; the fastest are fast, so AES-NI ran (python-cryptography under load 4-6) */
	tg_fill_stats(&a->st, 0, 10, 16384, 8000, 1.0, 0);
	tg_add_calls(&a->st, 10, 16384, 160000);
	assert_null(find(&m, "software-aes"));
	/* every call slow: 16384 B in 80 us at 2 GHz is 9.8 cycles/byte */
	tg_fill_stats(&a->st, 0, 200, 16384, 80000, 1.0, 0);
	const struct rp_finding *f = find(&m, "software-aes");
	assert_non_null(f);
	rp_model_free(&m);
}

/* Large calls: 16 MiB in 1 MiB calls, 14 at AES-NI speed (335 us: 0.64 cycles/byte at 2 GHz)
 * and 2 that took 20 ms (a page-faulting allocator, a preemption). The mean, 5.3 cycles/byte, is
 * above the uncalibrated limit of 5, but each call is measured against a 1 MiB request at the
 * limit (2.6 ms), not an 8 KiB one (20 us, which every 1 MiB call exceeds): 2 of 16 are slow, so
 * no finding. Every call at 3 ms (5.7 cycles/byte) is one. */
static void test_software_aes_large_calls(void **state)
{
	(void)state;
	MODEL(m);
	struct rp_proc *p = mk_proc(&m, 41);
	struct rp_path *a = mk_path(p, 0, CT_API_EVP, "provider:default", "aes-128-gcm", 0);
	tg_fill_stats(&a->st, 0, 14, 1048576, 335000, 1.0, 0);
	tg_add_calls(&a->st, 2, 1048576, 20000000);
	assert_null(find(&m, "software-aes"));
	tg_fill_stats(&a->st, 0, 16, 1048576, 3000000, 1.0, 0);
	assert_non_null(find(&m, "software-aes"));
	rp_model_free(&m);
}

static void test_kernel_software_driver(void **state)
{
	(void)state;
	MODEL(m);
	struct rp_proc *p = mk_proc(&m, 1);
	struct rp_path *k =
		mk_path(p, 0, CT_API_AFALG, "kernel:cbc-aes-generic", "aes-128-cbc", CT_PATH_HW_DRIVER);
	tg_fill_stats(&k->st, 0, 1000, 4096, 20000, 0.05, 0.9);
	k->st.syscalls = 3000;
	assert_null(find(&m, "kernel-software-driver"));
	k->def.flags = CT_PATH_SW_DRIVER;
	struct rp_path *e = mk_path(p, 1, CT_API_EVP, "provider:default", "aes-128-cbc", 0);
	tg_fill_stats(&e->st, 1, 1000, 4096, 2048, 0.99, 0); /* 0.5 ns/byte in-process */
	const struct rp_finding *f = find(&m, "kernel-software-driver");
	assert_non_null(f);
	assert_non_null(strstr(f->message, "generic software"));
	assert_non_null(strstr(f->message, "4.88 ns per byte against 0.50 ns per byte"));
	assert_non_null(strstr(f->evidence, "3.0 per call"));
	k->def.flags = CT_PATH_CPU_DRIVER;
	assert_non_null(find(&m, "kernel-software-driver"));
	rp_model_free(&m);
}

static void test_small_requests_offload(void **state)
{
	(void)state;
	MODEL(m);
	struct rp_proc *p = mk_proc(&m, 1);
	struct rp_path *k =
		mk_path(p, 0, CT_API_AFALG, "kernel:cbc-aes-aesni", "aes-128-cbc", CT_PATH_CPU_DRIVER);
	/* 64 KiB requests at 40 us: overhead about 7 us, crossover about 14 KB: all above it */
	tg_fill_stats(&k->st, 0, 1000, 65536, 40000, 0.1, 0.8);
	assert_null(find(&m, "small-requests-offload"));
	/* plus 16-byte requests at 5 us each: a fit over both sizes puts them far below */
	tg_add_calls(&k->st, 1000, 16, 5000);
	const struct rp_finding *f = find(&m, "small-requests-offload");
	assert_non_null(f);
	assert_non_null(strstr(f->message, "1000 of 2000"));
	assert_non_null(strstr(f->evidence, "crossover"));
	/* only 16-byte requests, but too few of them to matter */
	tg_fill_stats(&k->st, 0, 5, 16, 5000, 0.1, 0.8);
	assert_null(find(&m, "small-requests-offload"));
	tg_fill_stats(&k->st, 0, 500, 16, 5000, 0.1, 0.8);
	f = find(&m, "small-requests-offload");
	assert_non_null(f);
	assert_non_null(strstr(f->message, "500 of 500"));
	/* the same requests served in-process by a route (emulation) never paid for the kernel */
	k->def.route = CT_ROUTE_AESNI;
	k->def.flags |= CT_PATH_ROUTED;
	assert_null(find(&m, "small-requests-offload"));
	rp_model_free(&m);
}

static void test_clean_run_raises_nothing(void **state)
{
	(void)state;
	MODEL(m);
	struct rp_proc *p = mk_proc(&m, 1);
	p->hdr.aesni_cpb_milli = 650;
	struct rp_path *a = mk_path(p, 0, CT_API_EVP, "provider:default", "aes-128-cbc", 0);
	tg_fill_stats(&a->st, 0, 100000, 16, 60, 0.98, 0.01);
	tg_add_calls(&a->st, 10000, 8192, 8500); /* about 2.1 cycles/byte: AES-NI CBC */
	rp_model_merge(&m);
	rp_findings_evaluate(&m);
	/* the evaluators had the work to judge (an empty model would raise nothing as well) */
	assert_int_equal(m.npaths, 1);
	assert_int_equal(m.paths[0].st.calls, 110000);
	for (size_t i = 0; i < m.nfindings; i++)
		if (m.findings[i].severity >= RP_WARNING)
			fail_msg("unexpected finding %s: %s", m.findings[i].kind, m.findings[i].message);
	/* and they judge it: the same large requests at 12 cycles/byte are software AES */
	tg_fill_stats(&a->st, 0, 100000, 16, 60, 0.98, 0.01);
	tg_add_calls(&a->st, 10000, 8192, 49152);
	const struct rp_finding *f = find(&m, "software-aes");
	assert_non_null(f);
	if (f)
		assert_int_equal(f->severity, RP_WARNING);
	rp_model_free(&m);
}

/* A process without END (SIGKILL, a crash, still running): unfinished-trace bounds the loss by
 * what its last PROC record says, and nothing-intercepted does not guess a cause for it. */
static void test_unfinished_trace(void **state)
{
	(void)state;
	MODEL(m);
	struct rp_proc *p = mk_proc(&m, 1);
	struct rp_path *a = mk_path(p, 0, CT_API_EVP, "provider:default", "aes-128-gcm", 0);
	tg_fill_stats(&a->st, 0, 10, 1024, 100, -1, 0);
	p->proc.mono_ns = p->hdr.start_mono_ns + 2500000000ull;
	assert_null(find(&m, "unfinished-trace")); /* it has its END */
	p->has_end = false;
	p->proc.flags = CT_PROC_HAS_LIBCRYPTO | CT_PROC_PERIODIC;
	const struct rp_finding *f = find(&m, "unfinished-trace");
	assert_non_null(f);
	if (!f)
		return;
	assert_int_equal(f->severity, RP_WARNING);
	assert_int_equal(f->pid, 1);
	assert_non_null(strstr(f->message, "written 2.500 s after it started"));
	assert_non_null(strstr(f->message, "at most its last 1000 ms of work are missing"));
	assert_non_null(strstr(f->fix, "SIGTERM"));
	p->proc.flags = CT_PROC_HAS_LIBCRYPTO; /* no flusher thread: no bound */
	f = find(&m, "unfinished-trace");
	assert_non_null(f);
	if (!f)
		return;
	assert_non_null(strstr(f->message, "It had no flusher thread (a seccomp-sandboxed process"));
	assert_null(strstr(f->message, "at most"));
	p->proc.flags = CT_PROC_HAS_LIBCRYPTO | CT_PROC_NO_FLUSHER; /* none by choice: says so */
	f = find(&m, "unfinished-trace");
	assert_non_null(f);
	if (!f)
		return;
	assert_non_null(strstr(f->message, "It had no flusher thread (CRYPTRACE_FLUSHER=0 was set)"));
	assert_non_null(strstr(f->fix, "Leave CRYPTRACE_FLUSHER unset"));
	p->proc.flags = CT_PROC_HAS_LIBCRYPTO | CT_PROC_PERIODIC | CT_PROC_FSIZE_NEAR;
	f = find(&m, "unfinished-trace");
	assert_non_null(f);
	if (!f)
		return;
	assert_int_equal(f->severity, RP_INFO); /* sshd's sandboxed child: nothing to change */
	assert_non_null(strstr(f->message, "RLIMIT_FSIZE"));
	/* killed before any cipher work was written: nothing-intercepted says so, and neither
	 * "no cipher work was done" nor a look inside the executable */
	a->st = (struct ct_path_stats){ 0 };
	p->proc.flags = CT_PROC_HAS_LIBCRYPTO | CT_PROC_PERIODIC;
	f = find(&m, "nothing-intercepted");
	assert_non_null(f);
	if (!f)
		return;
	assert_non_null(strstr(f->message, "ended without an END record"));
	assert_null(strstr(f->message, "no cipher work was done"));
	assert_null(strstr(f->message, "For pid"));
	p->has_proc = false;
	f = find(&m, "unfinished-trace");
	assert_non_null(f);
	if (!f)
		return;
	assert_non_null(strstr(f->message, "before its first snapshot"));
	f = find(&m, "nothing-intercepted");
	assert_non_null(f);
	if (!f)
		return;
	assert_non_null(strstr(f->message, "before its first snapshot"));
	rp_model_free(&m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_lowlevel_api),
		cmocka_unit_test(test_lowlevel_api_openssl1),
		cmocka_unit_test(test_silent_fallback_route),
		cmocka_unit_test(test_lowlevel_api_small_share),
		cmocka_unit_test(test_lowlevel_api_packaged),
		cmocka_unit_test(test_user_time_misleads),
		cmocka_unit_test(test_nothing_intercepted),
		cmocka_unit_test(test_nothing_intercepted_attached),
		cmocka_unit_test(test_nothing_intercepted_static),
		cmocka_unit_test(test_nothing_intercepted_embedded),
		cmocka_unit_test(test_nothing_intercepted_mapped),
		cmocka_unit_test(test_nothing_intercepted_not_carriers),
		cmocka_unit_test(test_file_owner),
		cmocka_unit_test(test_kernel_refused),
		cmocka_unit_test(test_kernel_refused_arm),
		cmocka_unit_test(test_engine_failed),
		cmocka_unit_test(test_engine_devcrypto),
		cmocka_unit_test(test_engine_failed_reason),
		cmocka_unit_test(test_provider_absent),
		cmocka_unit_test(test_multiple_libcrypto),
		cmocka_unit_test(test_silent_fallback),
		cmocka_unit_test(test_silent_fallback_engine_init),
		cmocka_unit_test(test_silent_fallback_operation_time),
		cmocka_unit_test(test_session_failed),
		cmocka_unit_test(test_software_aes),
		cmocka_unit_test(test_software_aes_arm),
		cmocka_unit_test(test_software_aes_bound_source),
		cmocka_unit_test(test_software_aes_per_cause),
		cmocka_unit_test(test_software_aes_outlier),
		cmocka_unit_test(test_software_aes_large_calls),
		cmocka_unit_test(test_kernel_software_driver),
		cmocka_unit_test(test_small_requests_offload),
		cmocka_unit_test(test_clean_run_raises_nothing),
		cmocka_unit_test(test_unfinished_trace),
	};
	return cmocka_run_group_tests_name("findings", tests, NULL, NULL);
}
