/* SPDX-License-Identifier: MIT */
/*
 * doctor_libcrypto.c - the doctor's OpenSSL checks: which libcrypto `openssl` loads (asked from
 * the dynamic loader itself, LD_TRACE_LOADED_OBJECTS), which others sit in the usual library
 * directories, how fast each runs EVP aes-128-ctr and aes-128-cbc encryption at 8 KiB against
 * cryptrace's own AES-NI code, what OPENSSL_ia32cap in the environment masks, and which engines
 * and providers load (with OpenSSL's own error strings when they do not).
 *
 * Every libcrypto is dlopen'ed in a CHILD process: the launcher links no OpenSSL, two libcrypto
 * versions must never meet in one process, and a hanging engine cannot hang the doctor. The child
 * inherits the environment, so an OPENSSL_ia32cap mask acts on it exactly as on a program.
 */
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cpu.h"
#include "doctor.h"
#include "trace_format.h"
#include "tracer.h"
#include "aesni.h"

#define MEASURE_BYTES 8192
#define MEASURE_NS 50000000ull /* per cipher: long enough to leave turbo/frequency noise behind */
#define CHILD_TIMEOUT_S 15
#define MAX_LIBS 8
#define MAX_ENGINES 16
#define DR_EVIDENCE_LIST 600

/* OPENSSL_ia32cap bits (first word: CPUID.1 EDX | ECX << 32). */
#define IA32CAP_AESNI (1ull << 57)
#define IA32CAP_PCLMULQDQ (1ull << 33)

/* ---- the child: dlopen, measure, load engines and providers, print "key value" lines ------- */

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

/* TSC cycles per byte of one EVP cipher, encrypting 8 KiB per call for ~50 ms; < 0 on error.
 * The fastest of many short slices (8 calls each) counts: a slice in which the process was
 * preempted or interrupted is slower, never faster, so the minimum is the library's own speed
 * even on a loaded machine (a single 50 ms figure read 1.8 instead of 0.35 cycles/byte here
 * while another program ran on both cores). */
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
		uint64_t c0 = ct_rdtsc();

		for (int i = 0; i < 8; i++)
			o->enc_update(ctx, out, &outl, in, MEASURE_BYTES);

		uint64_t c1 = ct_rdtsc();

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
		len += (size_t)snprintf(buf + len, len < cap ? cap - len : 0, "%s%s",
					len ? "; " : "", one);
		if (len >= cap)
			break;
	}
	if (!buf[0])
		snprintf(buf, cap, "no reason in OpenSSL's error queue");
}

/* "ENGINESDIR: \"/usr/lib/...\"" -> the path. */
static void quoted_dir(const char *s, char *buf, size_t cap)
{
	const char *a = s ? strchr(s, '"') : NULL, *b = a ? strchr(a + 1, '"') : NULL;

	buf[0] = '\0';
	if (a && b)
		snprintf(buf, cap, "%.*s", (int)(b - a - 1), a + 1);
}

static void child_engines(const struct ossl *o, FILE *w)
{
	char dir[PATH_MAX], ids[MAX_ENGINES][64];
	int n = 0;
	static const char *const wanted[] = { "afalg", "padlock", "devcrypto" };

	if (!o->engine_by_id)
		return;
	quoted_dir(o->version ? o->version(5) : NULL, dir, sizeof(dir)); /* OPENSSL_ENGINES_DIR */
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
			fprintf(w, "engine %s fail %s %s\n", ids[i], present ? "present" : "absent",
				err);
			continue;
		}
		if (o->engine_init && !o->engine_init(e)) {
			errors_line(o, err, sizeof(err));
			fprintf(w, "engine %s initfail %s %s\n", ids[i],
				present ? "present" : "builtin", err);
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
	quoted_dir(o->version ? o->version(8) : NULL, dir, sizeof(dir)); /* OPENSSL_MODULES_DIR */
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

/* Runs child_main for path; returns its output (malloc'ed, NUL-terminated) or NULL. */
static char *probe_in_child(const char *path, bool full)
{
	struct child_args a = { .path = path, .full = full };
	int rfd;
	pid_t pid = ct_fork_piped(NULL, child_body, &a, &rfd);

	if (pid < 0)
		return NULL;

	char *buf = ct_read_all(rfd, NULL);

	close(rfd);
	ct_wait_child(pid, NULL, NULL);
	return buf;
}

/* The value of "key ..." in the child's output, up to the end of its line. */
static bool child_value(const char *text, const char *key, char *buf, size_t cap)
{
	size_t klen = strlen(key);

	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		if (!strncmp(l, key, klen) && l[klen] == ' ') {
			const char *v = l + klen + 1, *e = strchr(v, '\n');

			snprintf(buf, cap, "%.*s", (int)(e ? e - v : (long)strlen(v)), v);
			return true;
		}
	}
	buf[0] = '\0';
	return false;
}

/* ---- which libcryptos ------------------------------------------------------------------- */

/* In the child: the dynamic loader lists what `openssl` would load (LD_TRACE_LOADED_OBJECTS),
 * on the pipe, without our preload. */
static void ldd_body(void *arg, int wfd)
{
	const char *openssl = arg;
	int null = open("/dev/null", O_RDWR);

	dup2(wfd, 1);
	if (null >= 0)
		dup2(null, 2);
	unsetenv("LD_PRELOAD");
	setenv("LD_TRACE_LOADED_OBJECTS", "1", 1);
	execl(openssl, openssl, (char *)NULL);
	_exit(127);
}

/* The libcrypto the dynamic loader gives `openssl`, asked from the loader itself. */
static bool openssl_libcrypto(char *openssl, size_t ocap, char *lib, size_t lcap)
{
	if (!ct_which("openssl", openssl, ocap))
		return false;

	int rfd;
	pid_t pid = ct_fork_piped(NULL, ldd_body, openssl, &rfd);

	if (pid < 0)
		return false;

	char *out = ct_read_all(rfd, NULL);

	close(rfd);
	ct_wait_child(pid, NULL, NULL);

	/* "\tlibcrypto.so.3 => /lib/x86_64-linux-gnu/libcrypto.so.3 (0x...)" */
	const char *l = out ? strstr(out, "libcrypto.so") : NULL;
	const char *arrow = l ? strstr(l, "=> ") : NULL;
	bool found = arrow && arrow[3] == '/';

	if (found) {
		const char *e = strchr(arrow + 3, ' ');

		snprintf(lib, lcap, "%.*s", (int)(e ? e - arrow - 3 : (long)strlen(arrow + 3)),
			 arrow + 3);
	}
	free(out);
	return found;
}

/* The libcrypto copies beside the one `openssl` loads: in the usual directories, every
 * multiarch directory (/usr/lib/<triplet>) and, for the tests, CRYPTRACE_DOCTOR_LIBDIRS
 * (colon-separated, searched first). Only those of this process's own architecture can be
 * loaded and measured here; the others (an arm64 or i386 libssl3 installed beside the native
 * one) are listed apart. */
struct lib_scan {
	char native[MAX_LIBS][PATH_MAX];
	int nnative;
	char foreign[MAX_LIBS][PATH_MAX];
	char foreign_arch[MAX_LIBS][48];
	int nforeign;
};

static void scan_dir(const char *dir, const struct ct_elf_id *self, char reals[][PATH_MAX],
		     int *nreal, struct lib_scan *ls)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	while (d && (de = readdir(d))) {
		char path[PATH_MAX], real[PATH_MAX];
		bool seen = false;
		struct ct_elf_id id;

		/* libcrypto.so.3, libcrypto.so.1.1: the loadable ones (not .a, not .hmac). */
		if (strncmp(de->d_name, "libcrypto.so", 12) ||
		    (de->d_name[12] && de->d_name[12] != '.') || strstr(de->d_name, "hmac"))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= (int)sizeof(path) ||
		    !realpath(path, real))
			continue;
		for (int k = 0; k < *nreal; k++)
			seen |= !strcmp(reals[k], real);
		if (seen || *nreal > 2 * MAX_LIBS)
			continue;
		snprintf(reals[(*nreal)++], PATH_MAX, "%s", real);
		if (self && ct_elf_identify(real, &id) && !ct_elf_same_arch(self, &id)) {
			if (ls->nforeign < MAX_LIBS) {
				snprintf(ls->foreign[ls->nforeign], PATH_MAX, "%s", path);
				ct_elf_arch_name(&id, ls->foreign_arch[ls->nforeign],
						 sizeof(ls->foreign_arch[0]));
				ls->nforeign++;
			}
		} else if (ls->nnative < MAX_LIBS) {
			snprintf(ls->native[ls->nnative++], PATH_MAX, "%s", path);
		}
	}
	if (d)
		closedir(d);
}

static void find_others(const char *skip_real, struct lib_scan *ls)
{
	static const char *const dirs[] = {
		"/lib", "/lib64", "/usr/lib", "/usr/lib64", "/usr/local/lib", "/usr/local/lib64",
		"/usr/local/ssl/lib", "/usr/local/ssl/lib64", "/opt/openssl/lib", "/opt/openssl/lib64",
	};
	static char reals[2 * MAX_LIBS + 2][PATH_MAX];
	int nreal = 0;
	struct ct_elf_id self_id;
	const struct ct_elf_id *self = ct_elf_identify("/proc/self/exe", &self_id) ? &self_id : NULL;
	const char *extra = getenv("CRYPTRACE_DOCTOR_LIBDIRS");

	memset(ls, 0, sizeof(*ls));
	snprintf(reals[nreal++], PATH_MAX, "%s", skip_real);
	for (const char *p = extra; p && *p;) {
		const char *e = strchrnul(p, ':');
		char dir[PATH_MAX];

		if (e > p && snprintf(dir, sizeof(dir), "%.*s", (int)(e - p), p) < (int)sizeof(dir))
			scan_dir(dir, self, reals, &nreal, ls);
		p = *e ? e + 1 : e;
	}
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		scan_dir(dirs[i], self, reals, &nreal, ls);

	glob_t g;

	/* Debian/Ubuntu multiarch: x86_64-linux-gnu, aarch64-linux-gnu, i386-linux-gnu, ... */
	if (glob("/usr/lib/*-linux-*", GLOB_ONLYDIR, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc; i++)
			scan_dir(g.gl_pathv[i], self, reals, &nreal, ls);
		globfree(&g);
	}
	if (glob("/lib/*-linux-*", GLOB_ONLYDIR, NULL, &g) == 0) {
		for (size_t i = 0; i < g.gl_pathc; i++)
			scan_dir(g.gl_pathv[i], self, reals, &nreal, ls);
		globfree(&g);
	}
}

/* Libraries of other architectures: facts (qemu-user or a cross toolchain uses them), not
 * something to measure or fix here. */
static void foreign_check(struct dr_report *r, const struct lib_scan *ls)
{
	char list[DR_EVIDENCE_LIST] = "", self[48] = "?";
	struct ct_elf_id id;
	size_t len = 0;

	if (!ls->nforeign)
		return;
	if (ct_elf_identify("/proc/self/exe", &id))
		ct_elf_arch_name(&id, self, sizeof(self));
	for (int i = 0; i < ls->nforeign; i++)
		len += (size_t)snprintf(list + len, len < sizeof(list) ? sizeof(list) - len : 0,
					"%s%s (%s)", i ? ", " : "", ls->foreign[i], ls->foreign_arch[i]);

	struct dr_check *c = dr_add(r, "libcrypto:foreign", DR_INFO, "",
				    "%s: not loadable by this doctor (%s), so not measured; programs "
				    "of %s architecture (run by qemu-user, or in a chroot) use %s",
				    list, self, ls->nforeign > 1 ? "their" : "its",
				    ls->nforeign > 1 ? "them" : "it");

	snprintf(c->title, sizeof(c->title), "%d libcrypto of another architecture found",
		 ls->nforeign);
	if (ls->nforeign > 1)
		snprintf(c->title, sizeof(c->title), "%d libcrypto copies of other architectures found",
			 ls->nforeign);
	dr_value(c, "count", true, "%d", ls->nforeign);
	dr_value(c, "paths", false, "%s", list);
}

/* ---- OPENSSL_ia32cap ---------------------------------------------------------------------- */

static void probe_ia32cap(struct dr_report *r)
{
	const char *v = getenv("OPENSSL_ia32cap");

	r->ia32cap = v;
	if (!v || !*v) {
		dr_add(r, "ia32cap", DR_OK, "OPENSSL_ia32cap is not set",
		       "OpenSSL uses the CPU features CPUID reports");
		return;
	}

	bool clear = v[0] == '~';
	unsigned long long word = strtoull(v + clear, NULL, 0);
	bool aes_off = clear ? (word & IA32CAP_AESNI) : !(word & IA32CAP_AESNI);
	bool clmul_off = clear ? (word & IA32CAP_PCLMULQDQ) : !(word & IA32CAP_PCLMULQDQ);
	struct dr_check *c;

	r->ia32cap_masks_aes = aes_off;
	if (aes_off)
		c = dr_add(r, "ia32cap", DR_FAIL, "OPENSSL_ia32cap masks AES-NI",
			   "OPENSSL_ia32cap=%s in the environment %s AES-NI (bit 57)%s: every "
			   "OpenSSL program started from here runs software AES", v,
			   clear ? "clears" : "leaves out",
			   clmul_off ? " and PCLMULQDQ (bit 33, GCM's GHASH)" : "");
	else
		c = dr_add(r, "ia32cap", DR_WARN, "OPENSSL_ia32cap is set",
			   "OPENSSL_ia32cap=%s in the environment; it keeps AES-NI (bit 57)%s", v,
			   clmul_off ? " but not PCLMULQDQ (bit 33): GCM's GHASH runs in software" : "");
	dr_value(c, "value", false, "%s", v);
	dr_value(c, "masks_aesni", true, "%s", aes_off ? "true" : "false");
	dr_value(c, "masks_pclmulqdq", true, "%s", clmul_off ? "true" : "false");
	dr_recommend(r, "unset OPENSSL_ia32cap (it is %s here)", v);
}

/* ---- checks ------------------------------------------------------------------------------- */

/* Software AES: CTR (a parallel mode, so AES-NI pipelines fully) far above our AES-NI bound.
 * Measured here (fastest slice): OpenSSL's AES-NI CTR 0.31-0.33 cycles/byte, also with both
 * cores busy, against a bound of 0.15; the same library with AES-NI masked (vector-permute
 * AES) 3.9. The limit sits between them: above 2 cycles/byte and 8x the bound. */
static bool software_speed(double ctr, double bound)
{
	if (ctr <= 0)
		return false;
	if (bound > 0)
		return ctr > 8 * bound && ctr > 2.0;
	return ctr > 2.5;
}

static void libcrypto_check(struct dr_report *r, const char *path, const char *used_by,
			    const char *out, double bound, bool main_lib)
{
	char version[200], ctr_s[32], cbc_s[32], err[300];
	const char *id = main_lib ? "libcrypto" : "libcrypto:other";

	if (!out || child_value(out, "error", err, sizeof(err)) ||
	    !child_value(out, "ctr", ctr_s, sizeof(ctr_s))) {
		struct dr_check *c = dr_add(r, id, DR_WARN, "libcrypto could not be measured",
					    "%s: %s", path, out ? err : "the probe process failed");

		dr_value(c, "path", false, "%s", path);
		return;
	}
	child_value(out, "version", version, sizeof(version));
	child_value(out, "cbc", cbc_s, sizeof(cbc_s));

	double ctr = atof(ctr_s), cbc = atof(cbc_s);
	bool sw = software_speed(ctr, bound) || (main_lib && r->ia32cap_masks_aes);
	char bound_s[80] = "no AES-NI bound here (no AES-NI or no TSC)";
	char title[160];
	enum dr_status st = sw ? DR_FAIL : DR_OK;

	if (bound > 0)
		snprintf(bound_s, sizeof(bound_s), "cryptrace's AES-NI CTR: %.2f", bound);
	if (sw && !(r->cpu_flags & (CT_CPU_AES | CT_CPU_ARM_AES)))
		st = DR_INFO; /* nothing faster exists on this CPU: a fact, nothing to change */
	snprintf(title, sizeof(title), "%s runs AES at %s speed", main_lib ? "libcrypto" : path,
		 sw ? "software" : "AES-NI");

	struct dr_check *c = dr_add(r, id, st, title,
				    "%s, %s%s%s%s: EVP aes-128-ctr %.2f, aes-128-cbc encrypt %.2f "
				    "cycles/byte at 8 KiB (%s)%s%s%s",
				    version, path, used_by ? " (used by " : "", used_by ? used_by : "",
				    used_by ? ")" : "", ctr, cbc, bound_s,
				    sw && r->ia32cap_masks_aes ? "; OPENSSL_ia32cap=" : "",
				    sw && r->ia32cap_masks_aes ? r->ia32cap : "",
				    sw && r->ia32cap_masks_aes ? " masks AES-NI" : "");

	dr_value(c, "path", false, "%s", path);
	dr_value(c, "version", false, "%s", version);
	dr_value(c, "ctr_cpb", true, "%.4f", ctr);
	dr_value(c, "cbc_cpb", true, "%.4f", cbc);
	dr_value(c, "aesni_bound_cpb", true, "%s", "");
	if (bound > 0)
		snprintf(c->values[c->nvalues - 1].val, sizeof(c->values[0].val), "%.4f", bound);
	dr_value(c, "software_aes", true, "%s", sw ? "true" : "false");
	if (main_lib) {
		r->aes_software = sw;
		if (sw && !r->ia32cap_masks_aes && (r->cpu_flags & CT_CPU_AES))
			dr_recommend(r, "%s runs AES in software on an AES-NI CPU: use a libcrypto "
					"built with its assembler (no-asm builds never use AES-NI)",
				     path);
	}
}

static void engine_checks(struct dr_report *r, const char *out)
{
	char dir[PATH_MAX];

	child_value(out, "engines_dir", dir, sizeof(dir));
	for (const char *l = strstr(out, "engine "); l; l = strstr(l + 1, "\nengine ")) {
		if (*l == '\n')
			l++;
		char id[64], state[16], where[16], id_key[80];
		int used = 0;
		const char *e = strchr(l, '\n');
		char rest[700];

		if (sscanf(l, "engine %63s %15s %15s %n", id, state, where, &used) < 3)
			continue;
		snprintf(rest, sizeof(rest), "%.*s", (int)(e ? e - l - used : (long)strlen(l + used)),
			 l + used);
		snprintf(id_key, sizeof(id_key), "engine:%s", id);

		struct dr_check *c;

		if (!strcmp(state, "ok")) {
			c = dr_add(r, id_key, DR_OK, "", "%s%s%s", rest,
				   strcmp(where, "builtin") ? " from " : " (built in)",
				   strcmp(where, "builtin") ? dir : "");
			snprintf(c->title, sizeof(c->title), "engine %s loads", id);
		} else if (!strcmp(where, "absent") && strcmp(id, "afalg")) {
			c = dr_add(r, id_key, DR_INFO, "", "not built into this libcrypto and no "
				   "%s.so in %s", id, dir[0] ? dir : "the engines directory");
			snprintf(c->title, sizeof(c->title), "engine %s is not available", id);
		} else {
			/* An engine for what this machine does not have (a VIA PadLock unit, a kernel
			 * with AF_ALG, /dev/crypto) cannot load here, and nothing here needs it: a
			 * fact, not something to change. A warning is for an engine that should work
			 * here and does not. */
			char extra[200] = "", vendor[16], why[48] = "";
			int err = r->afalg_errno, cdev_err = 0;

			if (!strcmp(id, "afalg") && !r->afalg_ok) {
				snprintf(extra, sizeof(extra), "; socket(AF_ALG) fails here with %s "
					 "(probed by the doctor)", err ? strerrorname_np(err) : "?");
				snprintf(why, sizeof(why), "no AF_ALG");
			} else if (!strcmp(id, "padlock") && !ct_cpu_padlock_ace()) {
				ct_cpu_vendor(vendor, sizeof(vendor));
				snprintf(extra, sizeof(extra), "; it needs a VIA or Zhaoxin CPU with a "
					 "PadLock unit, and this CPU is %s", vendor[0] ? vendor : "not x86");
				snprintf(why, sizeof(why), "no PadLock CPU");
			} else if (!strcmp(id, "devcrypto") && !ct_cryptodev_usable(&cdev_err)) {
				snprintf(extra, sizeof(extra), "; open(\"/dev/crypto\") fails here with %s",
					 strerrorname_np(cdev_err) ?: "?");
				snprintf(why, sizeof(why), "no /dev/crypto");
			}
			c = dr_add(r, id_key, why[0] ? DR_INFO : DR_WARN, "", "%s: %s%s",
				   state[0] == 'i' ? "ENGINE_init failed" : "ENGINE_by_id failed", rest,
				   extra);
			if (why[0])
				snprintf(c->title, sizeof(c->title), "engine %s cannot work here (%s)", id,
					 why);
			else
				snprintf(c->title, sizeof(c->title), "engine %s fails to load", id);
		}
		dr_value(c, "engine", false, "%s", id);
		dr_value(c, "loads", true, "%s", strcmp(state, "ok") ? "false" : "true");
		dr_value(c, "reason", false, "%s", strcmp(state, "ok") ? rest : "");
	}
}

static void provider_checks(struct dr_report *r, const char *out)
{
	for (const char *l = strstr(out, "provider "); l; l = strstr(l + 1, "\nprovider ")) {
		if (*l == '\n')
			l++;
		char name[64], state[16], id_key[80], rest[700] = "";
		int used = 0;
		const char *e = strchr(l, '\n');

		if (sscanf(l, "provider %63s %15s %n", name, state, &used) < 2)
			continue;
		if (used)
			snprintf(rest, sizeof(rest), "%.*s",
				 (int)(e ? e - l - used : (long)strlen(l + used)), l + used);
		snprintf(id_key, sizeof(id_key), "provider:%s", name);

		struct dr_check *c;

		if (!strcmp(state, "ok"))
			c = dr_add(r, id_key, DR_OK, "", "OSSL_PROVIDER_load(NULL, \"%s\") succeeded",
				   name);
		else if (!strcmp(state, "absent"))
			c = dr_add(r, id_key, DR_INFO, "", "not installed (%s)", rest);
		else
			c = dr_add(r, id_key, !strcmp(name, "default") ? DR_FAIL : DR_WARN, "",
				   "OSSL_PROVIDER_load failed: %s", rest);
		snprintf(c->title, sizeof(c->title), "provider %s %s", name,
			 !strcmp(state, "ok") ? "loads" : !strcmp(state, "absent") ? "is not installed"
										: "fails to load");
		dr_value(c, "provider", false, "%s", name);
		dr_value(c, "loads", true, "%s", strcmp(state, "ok") ? "false" : "true");
	}
}

/* The major version in "OpenSSL 3.0.19 27 Jan 2026" ("OpenSSL 1.1.1w ..." -> 1); 0 unknown.
 * LibreSSL and BoringSSL name themselves otherwise: unknown too. */
static int openssl_major(const char *version)
{
	int major = 0;

	return sscanf(version, "OpenSSL %d.", &major) == 1 ? major : 0;
}

/*
 * What `openssl speed` without -evp measures depends on the version: OpenSSL 3 fetches the
 * cipher from the providers and calls EVP_Cipher() on it (tests/integration/
 * speed_cipher_lowlevel.py), the same AES-NI code as -evp through the raw one-shot entry; 1.1
 * and older time the low-level AES_* functions, which on x86-64 are table code without AES-NI.
 */
static void speed_recommendation(struct dr_report *r)
{
	int major = openssl_major(r->libcrypto_version);

	if (major >= 3)
		dr_recommend(r, "measure with `openssl speed -evp aes-128-ctr`: it times "
				"EVP_EncryptUpdate, the call applications make; without -evp, "
				"%s's speed times EVP_Cipher(), the raw one-shot call, on the same "
				"provider code (AES-NI speed, but not what applications call)",
			     r->libcrypto_version_short);
	else if (major > 0)
		dr_recommend(r, "measure with `openssl speed -evp aes-128-ctr`: without -evp, "
				"%s's speed times the low-level AES_* functions, which do not use "
				"AES-NI", r->libcrypto_version_short);
	else
		dr_recommend(r, "measure with `openssl speed -evp aes-128-ctr`: without -evp, "
				"OpenSSL 3 times EVP_Cipher() (the same provider code, AES-NI "
				"included) and OpenSSL 1.1 and older time the low-level AES_* "
				"functions, which do not use AES-NI");
}

void dr_probe_libcrypto(struct dr_report *r)
{
	char openssl[PATH_MAX] = "", lib[PATH_MAX] = "", real[PATH_MAX] = "";
	double bound = 0;

	bound = ct_aesni_cpb_bound();
	r->afalg_ok = ct_afalg_usable(&r->afalg_errno);
	probe_ia32cap(r);

	if (openssl_libcrypto(openssl, sizeof(openssl), lib, sizeof(lib))) {
		snprintf(r->libcrypto_path, sizeof(r->libcrypto_path), "%s", lib);
		if (!realpath(lib, real))
			snprintf(real, sizeof(real), "%s", lib);

		char *out = probe_in_child(lib, true);

		if (out && child_value(out, "version", r->libcrypto_version,
				       sizeof(r->libcrypto_version))) {
			/* "OpenSSL 3.0.19 27 Jan 2026" -> "OpenSSL 3.0.19" */
			char *sp = strchr(r->libcrypto_version, ' ');

			sp = sp ? strchr(sp + 1, ' ') : NULL;
			snprintf(r->libcrypto_version_short, sizeof(r->libcrypto_version_short), "%.*s",
				 (int)(sp ? sp - r->libcrypto_version : (long)strlen(r->libcrypto_version)),
				 r->libcrypto_version);
		}
		libcrypto_check(r, lib, openssl, out, bound, true);
		if (out) {
			engine_checks(r, out);
			provider_checks(r, out);
		}
		free(out);
	} else {
		dr_add(r, "libcrypto", DR_INFO, "no openssl program to ask which libcrypto it loads",
		       "%s", openssl[0] ? "the dynamic loader did not list a libcrypto for it"
					: "openssl is not in PATH (install it for this check)");
	}

	struct lib_scan *ls = malloc(sizeof(*ls));

	if (ls) {
		find_others(real, ls);
		for (int i = 0; i < ls->nnative; i++) {
			char *out = probe_in_child(ls->native[i], false);

			libcrypto_check(r, ls->native[i], NULL, out, bound, false);
			free(out);
		}
		foreign_check(r, ls);
		free(ls);
	}
	speed_recommendation(r);
}
