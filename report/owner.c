/* SPDX-License-Identifier: MIT */
/*
 * owner.c - whose code a file is, so that a finding's advice fits the reader: a program or
 * library the distribution installed (OpenSSH's /usr/bin/ssh, libssl) is not theirs to rewrite;
 * a Python package pip installed is theirs to reinstall differently; anything else (a build
 * tree, /usr/local, /opt, a home directory) is taken to be their own. The package is named from
 * dpkg's file lists when this host has them (read once, only when a finding asks); elsewhere the
 * directory alone decides. Reads files only; never runs a package manager.
 */
#include "owner.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DPKG_INFO_DIR "/var/lib/dpkg/info"
/* dpkg's lists on a desktop hold some 20 MB of paths; beyond this the index gives up. */
#define DPKG_MAX_BYTES (256u << 20)

static const char *dpkg_dir = DPKG_INFO_DIR;
static size_t text_cap;

/* Every *.list file of dpkg_dir in one buffer, each file's lines preceded by "\n" so that a
 * path is found as "\n<path>\n"; pkg_at[i] is where package i's text starts. */
static struct {
	bool loaded;
	char *text;
	size_t len;
	size_t *pkg_at;
	char (*pkg_name)[64];
	size_t npkg;
} dpkg;

void rp_owner_set_dpkg_dir(const char *dir)
{
	free(dpkg.text);
	free(dpkg.pkg_at);
	free(dpkg.pkg_name);
	memset(&dpkg, 0, sizeof(dpkg));
	text_cap = 0;
	dpkg_dir = dir ? dir : DPKG_INFO_DIR;
}

/* Appends n bytes and keeps the text ending in "\n" (not counted in len, so that the next file's
 * bytes follow its last line directly) and a NUL. */
static bool append(const char *data, size_t n)
{
	if (dpkg.len + n + 2 > text_cap) {
		size_t ncap = text_cap ? text_cap : 1u << 20;
		while (ncap < dpkg.len + n + 2)
			ncap *= 2;
		char *p = realloc(dpkg.text, ncap);
		if (!p)
			return false;
		dpkg.text = p;
		text_cap = ncap;
	}
	memcpy(dpkg.text + dpkg.len, data, n);
	dpkg.len += n;
	dpkg.text[dpkg.len] = '\n';
	dpkg.text[dpkg.len + 1] = '\0';
	return true;
}

static void dpkg_load(void)
{
	if (dpkg.loaded)
		return;
	dpkg.loaded = true;
	DIR *d = opendir(dpkg_dir);
	if (!d)
		return;
	struct dirent *de;
	size_t cap = 0;
	while ((de = readdir(d))) {
		size_t nl = strlen(de->d_name);
		if (nl < 6 || strcmp(de->d_name + nl - 5, ".list") || dpkg.len > DPKG_MAX_BYTES)
			continue;
		char path[PATH_MAX];
		snprintf(path, sizeof(path), "%s/%s", dpkg_dir, de->d_name);
		FILE *f = fopen(path, "re");
		if (!f)
			continue;
		char chunk[65536];
		size_t start = dpkg.len, n;
		bool ok = append("\n", 1); /* every file's first line follows a "\n" too */
		while (ok && (n = fread(chunk, 1, sizeof(chunk), f)) > 0)
			ok = append(chunk, n);
		fclose(f);
		if (!ok)
			break;
		if (dpkg.npkg == cap) {
			size_t ncap = cap ? cap * 2 : 1024;
			size_t *a = realloc(dpkg.pkg_at, ncap * sizeof(*a));
			if (a)
				dpkg.pkg_at = a;
			char(*b)[64] = realloc(dpkg.pkg_name, ncap * sizeof(*b));
			if (b)
				dpkg.pkg_name = b;
			if (!a || !b)
				break;
			cap = ncap;
		}
		/* "openssh-client.list", "libssl3:amd64.list" -> the package name */
		size_t pl = strcspn(de->d_name, ":");
		if (pl > nl - 5)
			pl = nl - 5;
		dpkg.pkg_at[dpkg.npkg] = start;
		snprintf(dpkg.pkg_name[dpkg.npkg], sizeof(dpkg.pkg_name[0]), "%.*s", (int)pl, de->d_name);
		dpkg.npkg++;
	}
	closedir(d);
}

/* The package whose list holds path ("" when none does). */
static const char *dpkg_find(const char *path)
{
	size_t n = strlen(path);
	if (!dpkg.text || !n || n > PATH_MAX)
		return "";
	char needle[PATH_MAX + 3];
	snprintf(needle, sizeof(needle), "\n%s\n", path);
	/* len + 1: the "\n" kept after the last line ends it too */
	const char *hit = memmem(dpkg.text, dpkg.len + 1, needle, n + 2);
	if (!hit)
		return "";
	size_t at = (size_t)(hit - dpkg.text), lo = 0, hi = dpkg.npkg;
	while (hi - lo > 1) { /* the last package starting at or before the hit */
		size_t mid = (lo + hi) / 2;
		if (dpkg.pkg_at[mid] <= at)
			lo = mid;
		else
			hi = mid;
	}
	return dpkg.npkg ? dpkg.pkg_name[lo] : "";
}

/* A file the loader found under /lib may be listed under /usr/lib (merged /usr) or the other
 * way round, or under the name a symbolic link points to (libssl.so.3 -> libssl.so.3.0.x). */
static const char *dpkg_owner(const char *path)
{
	dpkg_load();
	const char *pkg = dpkg_find(path);
	char alt[PATH_MAX + 8];
	if (!pkg[0] && !strncmp(path, "/usr/", 5)) {
		snprintf(alt, sizeof(alt), "%s", path + 4);
		pkg = dpkg_find(alt);
	} else if (!pkg[0]) {
		snprintf(alt, sizeof(alt), "/usr%s", path);
		pkg = dpkg_find(alt);
	}
	char real[PATH_MAX];
	if (!pkg[0] && realpath(path, real) && strcmp(real, path)) {
		pkg = dpkg_find(real);
		if (!pkg[0] && !strncmp(real, "/usr/", 5))
			pkg = dpkg_find(real + 4);
	}
	return pkg;
}

static bool starts(const char *s, const char *prefix)
{
	return !strncmp(s, prefix, strlen(prefix));
}

/* Directories a distribution installs into; /usr/local is the administrator's. */
static bool system_dir(const char *path)
{
	static const char *const dirs[] = { "/usr/",    "/lib/", "/lib32/", "/lib64/",
					    "/libx32/", "/bin/", "/sbin/" };
	if (starts(path, "/usr/local/"))
		return false;
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (starts(path, dirs[i]))
			return true;
	return false;
}

void rp_file_owner(const char *path, struct rp_owner *o)
{
	memset(o, 0, sizeof(*o));
	o->kind = RP_OWNER_UNKNOWN;
	if (!path || path[0] != '/')
		return;
	const char *pkg = dpkg_owner(path);
	if (pkg[0]) {
		o->kind = RP_OWNER_SYSTEM;
		snprintf(o->package, sizeof(o->package), "%s", pkg);
		snprintf(o->desc, sizeof(o->desc), "from the package %s", pkg);
		return;
	}
	/* .../site-packages/<package>/...: a Python package pip (or a virtualenv) installed */
	const char *sp = strstr(path, "/site-packages/");
	if (!sp)
		sp = strstr(path, "/dist-packages/");
	if (sp && !starts(path, "/usr/lib/python3/dist-packages/")) {
		const char *name = strchr(sp + 1, '/') + 1;
		size_t len = strcspn(name, "/");
		if (len > 3 && strchr(name, '/') == NULL)
			len = strcspn(name, "."); /* a top-level module file: _cffi_backend.cpython-... */
		o->kind = RP_OWNER_PIP;
		snprintf(o->package, sizeof(o->package), "%.*s", (int)len, name);
		snprintf(o->desc, sizeof(o->desc), "from the Python package %s, installed with pip",
			 o->package);
		return;
	}
	if (system_dir(path)) {
		o->kind = RP_OWNER_SYSTEM;
		snprintf(o->desc, sizeof(o->desc), "installed with the system");
		return;
	}
	o->kind = RP_OWNER_LOCAL;
	snprintf(o->desc, sizeof(o->desc), "not from a package: your own build or installation");
}

bool rp_owner_is_readers(const struct rp_owner *o)
{
	return o->kind == RP_OWNER_LOCAL || o->kind == RP_OWNER_PIP || o->kind == RP_OWNER_UNKNOWN;
}
