/* SPDX-License-Identifier: MIT */
/*
 * doctor_libfind.c - which libcrypto the doctor measures: the one `openssl` loads, asked from the
 * dynamic loader itself (LD_TRACE_LOADED_OBJECTS), then the other copies in the usual library
 * directories, split by architecture: only those this process can load are measured; the
 * others (an arm64 or i386 libssl3 installed beside the native one) are listed as a fact.
 */
#include <dirent.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "doctor.h"

/* GLOB_ONLYDIR is glibc's, and only a hint there (other names may still match); musl has none.
 * scan_dir reads nothing from a name it cannot open as a directory. */
#ifndef GLOB_ONLYDIR
#define GLOB_ONLYDIR 0
#endif
#include "tracer.h"

#define FOREIGN_LIST_CAP 600 /* the paths of the foreign copies, in one evidence line */

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

bool dr_foreign_program(const char *path, char *arch, size_t cap)
{
	struct ct_elf_id self, id;

	if (!ct_elf_identify("/proc/self/exe", &self) || !ct_elf_identify(path, &id) ||
	    ct_elf_same_arch(&self, &id))
		return false;
	ct_elf_arch_name(&id, arch, cap);
	return true;
}

/* The libcrypto the dynamic loader gives `openssl`, asked from the loader itself. */
bool dr_openssl_libcrypto(char *openssl, size_t ocap, char *lib, size_t lcap)
{
	if (!ct_which("openssl", openssl, ocap))
		return false;

	char *out = ct_child_output(ldd_body, openssl);

	/* "\tlibcrypto.so.3 => /lib/x86_64-linux-gnu/libcrypto.so.3 (0x...)" */
	const char *l = out ? strstr(out, "libcrypto.so") : NULL;
	const char *arrow = l ? strstr(l, "=> ") : NULL;
	bool found = arrow && arrow[3] == '/';

	if (found) {
		const char *e = strchr(arrow + 3, ' ');

		snprintf(lib, lcap, "%.*s", (int)(e ? e - arrow - 3 : (long)strlen(arrow + 3)), arrow + 3);
	}
	free(out);
	return found;
}

static void scan_dir(const char *dir, const struct ct_elf_id *self, char reals[][PATH_MAX], int *nreal,
		     struct dr_lib_scan *ls)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	while (d && (de = readdir(d))) {
		char path[PATH_MAX], real[PATH_MAX];
		bool seen = false;
		struct ct_elf_id id;

		/* libcrypto.so.3, libcrypto.so.1.1: the loadable ones (not .a, not .hmac). */
		if (strncmp(de->d_name, "libcrypto.so", 12) || (de->d_name[12] && de->d_name[12] != '.') ||
		    strstr(de->d_name, "hmac"))
			continue;
		if (snprintf(path, sizeof(path), "%s/%s", dir, de->d_name) >= (int)sizeof(path) ||
		    !realpath(path, real))
			continue;
		for (int k = 0; k < *nreal; k++)
			seen |= !strcmp(reals[k], real);
		if (seen || *nreal > 2 * DR_MAX_LIBS)
			continue;
		snprintf(reals[(*nreal)++], PATH_MAX, "%s", real);
		if (self && ct_elf_identify(real, &id) && !ct_elf_same_arch(self, &id)) {
			if (ls->nforeign < DR_MAX_LIBS) {
				snprintf(ls->foreign[ls->nforeign], PATH_MAX, "%s", path);
				ct_elf_arch_name(&id, ls->foreign_arch[ls->nforeign],
						 sizeof(ls->foreign_arch[0]));
				ls->nforeign++;
			}
		} else if (ls->nnative < DR_MAX_LIBS) {
			snprintf(ls->native[ls->nnative++], PATH_MAX, "%s", path);
		}
	}
	if (d)
		closedir(d);
}

void dr_find_libcryptos(const char *skip_real, struct dr_lib_scan *ls)
{
	static const char *const dirs[] = {
		"/lib",
		"/lib64",
		"/usr/lib",
		"/usr/lib64",
		"/usr/local/lib",
		"/usr/local/lib64",
		"/usr/local/ssl/lib",
		"/usr/local/ssl/lib64",
		"/opt/openssl/lib",
		"/opt/openssl/lib64",
	};
	static char reals[2 * DR_MAX_LIBS + 2][PATH_MAX];
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

	/* Debian/Ubuntu multiarch: x86_64-linux-gnu, aarch64-linux-gnu, i386-linux-gnu, ... */
	static const char *const multiarch[] = { "/usr/lib/*-linux-*", "/lib/*-linux-*" };

	for (size_t m = 0; m < sizeof(multiarch) / sizeof(multiarch[0]); m++) {
		glob_t g;

		if (glob(multiarch[m], GLOB_ONLYDIR, NULL, &g) != 0)
			continue;
		for (size_t i = 0; i < g.gl_pathc; i++)
			scan_dir(g.gl_pathv[i], self, reals, &nreal, ls);
		globfree(&g);
	}
}

/* Libraries of other architectures: facts (qemu-user or a cross toolchain uses them), not
 * something to measure or fix here. */
void dr_foreign_check(struct dr_report *r, const struct dr_lib_scan *ls)
{
	char list[FOREIGN_LIST_CAP] = "", self[48] = "?";
	struct ct_elf_id id;
	size_t len = 0;

	if (!ls->nforeign)
		return;
	if (ct_elf_identify("/proc/self/exe", &id))
		ct_elf_arch_name(&id, self, sizeof(self));
	for (int i = 0; i < ls->nforeign; i++)
		len += (size_t)snprintf(list + len, len < sizeof(list) ? sizeof(list) - len : 0, "%s%s (%s)",
					i ? ", " : "", ls->foreign[i], ls->foreign_arch[i]);

	struct dr_check *c = dr_add(r, "libcrypto:foreign", DR_INFO, "",
				    "%s: not loadable by this doctor (%s), so not measured; programs "
				    "of %s architecture (run by qemu-user, or in a chroot) use %s",
				    list, self, ls->nforeign > 1 ? "their" : "its",
				    ls->nforeign > 1 ? "them" : "it");

	snprintf(c->title, sizeof(c->title), "%d libcrypto of another architecture found", ls->nforeign);
	if (ls->nforeign > 1)
		snprintf(c->title, sizeof(c->title), "%d libcrypto copies of other architectures found",
			 ls->nforeign);
	dr_value(c, "count", true, "%d", ls->nforeign);
	dr_value(c, "paths", false, "%s", list);
}
