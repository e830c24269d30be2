/* SPDX-License-Identifier: MIT */
/*
 * doctor_libcrypto_child.c - the process that loads a libcrypto for the doctor. It dlopens the
 * library, measures EVP aes-128-ctr and aes-128-cbc encryption, tries the engines and providers,
 * and answers its parent (doctor_libcrypto.c) in "key value" lines on a pipe:
 *
 *   version OpenSSL 3.0.19 27 Jan 2026  its OpenSSL_version()
 *   error <why>                         it could not be loaded or has no EVP API (then exits)
 *   ctr 0.3125                          per byte, EVP aes-128-ctr at 8 KiB; < 0: failed (the unit
 *                                       of ct_aesni_clock: TSC cycles on x86, else ns)
 *   cbc 1.2500                          the same for aes-128-cbc encryption
 *   engines_dir <dir>                   (full only) $OPENSSL_ENGINES or OPENSSL_ENGINES_DIR, then:
 *   engine <id> ok|fail|initfail present|absent|builtin <its name, or OpenSSL's errors>
 *   modules_dir <dir>                   (full only) $OPENSSL_MODULES or OPENSSL_MODULES_DIR, then:
 *   provider <name> ok|fail|absent [<OpenSSL's errors, or the missing file>]
 *
 * Why a child: the launcher links no OpenSSL, two libcrypto versions must never meet in one
 * process, and a hanging engine cannot hang the doctor (the child has CHILD_TIMEOUT_S seconds).
 * The child inherits the environment, so an OPENSSL_ia32cap (OPENSSL_armcap) mask acts on it
 * exactly as on a program.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "aesni.h"
#include "cpu.h"
#include "doctor.h"
#include "tracer.h"

#define MEASURE_BYTES 8192
#define MEASURE_NS 50000000ull /* per cipher: long enough to leave turbo/frequency noise behind */
#define CHILD_TIMEOUT_S 15
#define MAX_ENGINES 16

typedef void *(*cipher_fn)(void);
struct ossl {
	const char *(*version)(int);
	void *(*ctx_new)(void);
	void (*ctx_free)(void *);
	int (*enc_init)(void *, const void *, void *, const unsigned char *, const unsigned char *);
	int (*enc_update)(void *, unsigned char *, int *, const unsigned char *, int);
	cipher_fn aes_128_ctr, aes_128_cbc;
	unsigned long (*err_get)(void);
	void (*err_string)(unsigned long, char *, size_t);
	void (*err_clear)(void);
	void *(*engine_by_id)(const char *);
	int (*engine_init)(void *);
	int (*engine_finish)(void *);
	int (*engine_free)(void *);
	const char *(*engine_name)(const void *);
	void *(*prov_load)(void *, const char *);
	int (*prov_unload)(void *);
};

/* ct_aesni_clock units (TSC cycles, ns elsewhere) per byte of one EVP cipher, encrypting 8 KiB per call for ~50 ms; < 0 on error.
 * The fastest of many short slices (8 calls each) counts: a slice in which the process was
 * preempted or interrupted is slower, never faster, so the minimum is the library's own speed
 * even on a loaded machine, where one 50 ms average can read several times slower than the
 * library runs (and AES-NI code would pass for software). */
static double measure(const struct ossl *o, cipher_fn cipher)
{
	static unsigned char in[MEASURE_BYTES] __attribute__((aligned(64)));
	static unsigned char out[MEASURE_BYTES + 32] __attribute__((aligned(64)));
	static const unsigned char key[16], iv[16];
	void *ctx = o->ctx_new ? o->ctx_new() : NULL;
	int outl;

	if (!ctx || !cipher || !o->enc_init(ctx, cipher(), NULL, key, iv))
		return -1;
	for (int i = 0; i < 64; i++) /* warm up caches and the clock */
		o->enc_update(ctx, out, &outl, in, MEASURE_BYTES);

	uint64_t t0 = ct_clock_ns(CLOCK_MONOTONIC), best = UINT64_MAX;

	do {
		uint64_t c0 = ct_aesni_clock();

		for (int i = 0; i < 8; i++)
			o->enc_update(ctx, out, &outl, in, MEASURE_BYTES);

		uint64_t c1 = ct_aesni_clock();

		if (c1 > c0 && c1 - c0 < best)
			best = c1 - c0;
	} while (ct_clock_ns(CLOCK_MONOTONIC) - t0 < MEASURE_NS);
	o->ctx_free(ctx);
	if (best == UINT64_MAX)
		return -1;
	return (double)best / (8.0 * MEASURE_BYTES);
}

/* OpenSSL's error queue as one line ("; "-joined, newest last). */
static void errors_line(const struct ossl *o, char *buf, size_t cap)
{
	unsigned long e;
	size_t len = 0;

	buf[0] = '\0';
	while (o->err_get && (e = o->err_get()) != 0) {
		char one[256];

		o->err_string(e, one, sizeof(one));
		len += (size_t)snprintf(buf + len, len < cap ? cap - len : 0, "%s%s", len ? "; " : "", one);
		if (len >= cap)
			break;
	}
	if (!buf[0])
		snprintf(buf, cap, "no reason in OpenSSL's error queue");
}

/* The directory libcrypto loads modules from: the environment variable when set (OPENSSL_ENGINES,
 * OPENSSL_MODULES: 1.1 and 3.x both read it before their built-in path), else the built-in one,
 * "ENGINESDIR: \"/usr/lib/...\"" -> the path. */
static void module_dir(const char *env, const char *s, char *buf, size_t cap)
{
	const char *v = secure_getenv(env);
	const char *a = s ? strchr(s, '"') : NULL, *b = a ? strchr(a + 1, '"') : NULL;

	buf[0] = '\0';
	if (v && *v)
		snprintf(buf, cap, "%s", v);
	else if (a && b)
		snprintf(buf, cap, "%.*s", (int)(b - a - 1), a + 1);
}

static void child_engines(const struct ossl *o, FILE *w)
{
	char dir[PATH_MAX], ids[MAX_ENGINES][64];
	int n = 0;
	static const char *const wanted[] = { "afalg", "padlock", "devcrypto" };

	if (!o->engine_by_id)
		return;
	module_dir("OPENSSL_ENGINES", o->version ? o->version(5) : NULL, dir, sizeof(dir)); /* ENGINES_DIR */
	fprintf(w, "engines_dir %s\n", dir);
	for (size_t i = 0; i < sizeof(wanted) / sizeof(wanted[0]); i++)
		snprintf(ids[n++], sizeof(ids[0]), "%s", wanted[i]);

	DIR *d = dir[0] ? opendir(dir) : NULL;
	struct dirent *de;

	while (d && (de = readdir(d)) && n < MAX_ENGINES) {
		size_t len = strlen(de->d_name);
		bool dup = false;

		if (len < 4 || strcmp(de->d_name + len - 3, ".so"))
			continue;
		for (int i = 0; i < n; i++)
			dup |= !strncmp(ids[i], de->d_name, len - 3) && !ids[i][len - 3];
		if (!dup)
			snprintf(ids[n++], sizeof(ids[0]), "%.*s", (int)(len - 3), de->d_name);
	}
	if (d)
		closedir(d);

	for (int i = 0; i < n; i++) {
		char err[600], file[2 * PATH_MAX];
		struct stat st;

		snprintf(file, sizeof(file), "%s/%s.so", dir, ids[i]);
		bool present = dir[0] && stat(file, &st) == 0;

		if (o->err_clear)
			o->err_clear();
		void *e = o->engine_by_id(ids[i]);

		if (!e) {
			errors_line(o, err, sizeof(err));
			fprintf(w, "engine %s fail %s %s\n", ids[i], present ? "present" : "absent", err);
			continue;
		}
		if (o->engine_init && !o->engine_init(e)) {
			errors_line(o, err, sizeof(err));
			fprintf(w, "engine %s initfail %s %s\n", ids[i], present ? "present" : "builtin",
				err);
		} else {
			fprintf(w, "engine %s ok %s %s\n", ids[i], present ? "present" : "builtin",
				o->engine_name ? o->engine_name(e) : "");
			if (o->engine_finish)
				o->engine_finish(e);
		}
		o->engine_free(e);
	}
}

static void child_providers(const struct ossl *o, FILE *w)
{
	char dir[PATH_MAX];
	static const char *const names[] = { "default", "base", "legacy", "fips" };

	if (!o->prov_load)
		return;
	module_dir("OPENSSL_MODULES", o->version ? o->version(8) : NULL, dir, sizeof(dir)); /* MODULES_DIR */
	fprintf(w, "modules_dir %s\n", dir);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char err[600], file[2 * PATH_MAX];
		struct stat st;

		/* fips ships as a separate module: absent is a fact, not a failure. */
		snprintf(file, sizeof(file), "%s/%s.so", dir, names[i]);
		if (!strcmp(names[i], "fips") && stat(file, &st) != 0) {
			fprintf(w, "provider fips absent %s\n", file);
			continue;
		}
		if (o->err_clear)
			o->err_clear();
		void *p = o->prov_load(NULL, names[i]);

		if (!p) {
			errors_line(o, err, sizeof(err));
			fprintf(w, "provider %s fail %s\n", names[i], err);
		} else {
			fprintf(w, "provider %s ok\n", names[i]);
			o->prov_unload(p);
		}
	}
}

static void __attribute__((noreturn)) child_main(const char *path, bool full, int fd)
{
	FILE *w = fdopen(fd, "w");

	alarm(CHILD_TIMEOUT_S);
	if (!w)
		_exit(1);
	setvbuf(w, NULL, _IOLBF, 0);

	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		fprintf(w, "error %s\n", dlerror());
		_exit(1);
	}

	struct ossl o = { 0 };

#define SYM(field, name) (*(void **)&o.field = dlsym(h, name))
	if (!SYM(version, "OpenSSL_version"))
		SYM(version, "SSLeay_version");
	SYM(ctx_new, "EVP_CIPHER_CTX_new");
	SYM(ctx_free, "EVP_CIPHER_CTX_free");
	SYM(enc_init, "EVP_EncryptInit_ex");
	SYM(enc_update, "EVP_EncryptUpdate");
	SYM(aes_128_ctr, "EVP_aes_128_ctr");
	SYM(aes_128_cbc, "EVP_aes_128_cbc");
	SYM(err_get, "ERR_get_error");
	SYM(err_string, "ERR_error_string_n");
	SYM(err_clear, "ERR_clear_error");
	SYM(engine_by_id, "ENGINE_by_id");
	SYM(engine_init, "ENGINE_init");
	SYM(engine_finish, "ENGINE_finish");
	SYM(engine_free, "ENGINE_free");
	SYM(engine_name, "ENGINE_get_name");
	SYM(prov_load, "OSSL_PROVIDER_load");
	SYM(prov_unload, "OSSL_PROVIDER_unload");
#undef SYM
	fprintf(w, "version %s\n", o.version ? o.version(0) : "unknown");
	if (!o.enc_init || !o.enc_update || !o.ctx_free || !o.err_string) {
		fprintf(w, "error no EVP cipher API in this library\n");
		_exit(1);
	}
	fprintf(w, "ctr %.4f\n", measure(&o, o.aes_128_ctr));
	fprintf(w, "cbc %.4f\n", measure(&o, o.aes_128_cbc));
	if (full) {
		child_engines(&o, w);
		child_providers(&o, w);
	}
	fflush(w);
	_exit(0);
}

struct child_args {
	const char *path;
	bool full;
};

static void child_body(void *arg, int wfd)
{
	const struct child_args *a = arg;

	child_main(a->path, a->full, wfd);
}

char *dr_libcrypto_child(const char *path, bool full)
{
	struct child_args a = { .path = path, .full = full };

	return ct_child_output(child_body, &a);
}
