/* SPDX-License-Identifier: MIT */
/*
 * doctor_fleet.c - the always-on mode's set-up (docs/fleet.md), checked only where it is
 * configured: the configuration file (CRYPTRACE_CONFIG or /etc/cryptrace.conf) parses and only
 * root can change it, the spool root is root's and 1733 (every user may create, none may list
 * or rename another's directory), and every libcryptrace entry of /etc/ld.so.preload names a
 * library that exists (a missing one makes the loader complain in every program on the host).
 * CRYPTRACE_LD_SO_PRELOAD names another file in /etc/ld.so.preload's place (the tests' way).
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "doctor.h"
#include "../preload/conffile.h"

struct conf_warnings {
	char text[600];
	size_t used;
	unsigned n;
};

static void collect(void *arg, unsigned line, const char *what)
{
	struct conf_warnings *w = arg;
	w->n++;
	if (w->used < sizeof(w->text) - 1) {
		int k = snprintf(w->text + w->used, sizeof(w->text) - w->used, "%sline %u: %s",
				 w->used ? "; " : "", line, what);
		if (k > 0)
			w->used += (size_t)k;
		if (w->used > sizeof(w->text) - 1)
			w->used = sizeof(w->text) - 1;
	}
}

static void check_conf_file(struct dr_report *r, const char *path, const struct stat *st)
{
	if (st->st_uid != 0 || (st->st_mode & (S_IWGRP | S_IWOTH))) {
		dr_add(r, "fleet:config-owner", DR_FAIL,
		       "the always-on configuration can be changed by others",
		       "%s: owner uid %u, mode %04o: whoever can write it chooses where every user's "
		       "traces go",
		       path, (unsigned)st->st_uid, (unsigned)(st->st_mode & 07777));
		dr_recommend(r, "chown root:root %s && chmod 0644 %s", path, path);
	}
}

static void check_spool(struct dr_report *r, const char *spool)
{
	struct stat st;
	if (lstat(spool, &st) != 0) {
		dr_add(r, "fleet:spool", DR_FAIL, "the spool root does not exist", "%s: %s", spool,
		       strerror(errno));
		dr_recommend(r, "install -d -o root -g root -m 1733 %s", spool);
		return;
	}
	unsigned mode = (unsigned)(st.st_mode & 07777);
	if (!S_ISDIR(st.st_mode) || st.st_uid != 0) {
		dr_add(r, "fleet:spool", DR_FAIL, "the spool root is not a directory of root's",
		       "%s: %s, owner uid %u", spool,
		       S_ISLNK(st.st_mode) ? "a symlink" : "type or owner wrong", (unsigned)st.st_uid);
		dr_recommend(r, "install -d -o root -g root -m 1733 %s", spool);
	} else if ((mode & (S_IWGRP | S_IWOTH)) && !(mode & S_ISVTX)) {
		dr_add(r, "fleet:spool", DR_FAIL, "the spool root is writable by all without the sticky bit",
		       "%s: mode %04o: any user could rename another's directory away; the preload refuses "
		       "this spool, nothing is traced",
		       spool, mode);
		dr_recommend(r, "chmod 1733 %s", spool);
	} else if (mode != 01733) {
		dr_add(r, "fleet:spool", DR_WARN, "the spool root's mode is not 1733", "%s: mode %04o: %s",
		       spool, mode,
		       !(mode & S_IWOTH) ? "users other than root cannot create their directories, so their "
					   "processes are not traced"
					 : "users can list the spool (which users run traced programs)");
		dr_recommend(r, "chmod 1733 %s", spool);
	} else
		dr_add(r, "fleet:spool", DR_OK, "spool root is root's, mode 1733", "%s", spool);
}

/* The users' directories: what the preload would refuse, so that user's processes go untraced
 * (the refusal is logged only where CRYPTRACE_LOG sends it: here root sees it). */
static void check_user_dirs(struct dr_report *r, const char *spool)
{
	int root = open(spool, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	DIR *d = root >= 0 ? fdopendir(root) : NULL;
	if (!d) {
		if (root >= 0)
			close(root);
		return; /* not root: the spool cannot be listed, and that is how it should be */
	}
	char bad[600] = "";
	size_t used = 0;
	unsigned nbad = 0, ndirs = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		char *end;
		unsigned long uid = strtoul(e->d_name, &end, 10);
		if (e->d_name[0] < '0' || e->d_name[0] > '9' || *end)
			continue;
		ndirs++;
		struct stat st;
		if (fstatat(root, e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0)
			continue;
		const char *why = !S_ISDIR(st.st_mode)
					  ? (S_ISLNK(st.st_mode) ? "a symlink" : "not a directory")
				  : st.st_uid != (uid_t)uid            ? "owned by another uid"
				  : (st.st_mode & (S_IRWXG | S_IRWXO)) ? "open to other users"
								       : NULL;
		if (!why)
			continue;
		nbad++;
		if (used < sizeof(bad) - 1) {
			int k = snprintf(bad + used, sizeof(bad) - used, "%s%s: %s (owner uid %u)",
					 used ? "; " : "", e->d_name, why, (unsigned)st.st_uid);
			used = k > 0 && used + (size_t)k < sizeof(bad) ? used + (size_t)k : sizeof(bad) - 1;
		}
	}
	closedir(d);
	if (nbad) {
		dr_add(r, "fleet:spool-dirs", DR_FAIL, "users' spool directories the preload refuses",
		       "%s: %s; these users' processes are not traced", spool, bad);
		dr_recommend(r, "remove the refused entries of %s (each user's processes recreate theirs)",
			     spool);
	} else
		dr_add(r, "fleet:spool-dirs", DR_OK, "users' spool directories are theirs, 0700",
		       "%s: %u user directories", spool, ndirs);
}

static void check_ld_so_preload(struct dr_report *r)
{
	const char *path = getenv("CRYPTRACE_LD_SO_PRELOAD");
	if (!path || !*path)
		path = "/etc/ld.so.preload";
	char buf[4096];
	FILE *f = fopen(path, "re");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = 0;
	unsigned found = 0;
	/* entries are separated by white space or ':' (ld.so(8)); '#' starts no comment there */
	for (char *save = NULL, *e = strtok_r(buf, " \t\n:", &save); e; e = strtok_r(NULL, " \t\n:", &save)) {
		if (!strstr(e, "libcryptrace"))
			continue;
		found++;
		struct stat st;
		if (stat(e, &st) != 0 || !S_ISREG(st.st_mode)) {
			dr_add(r, "fleet:ld.so.preload", DR_FAIL,
			       "/etc/ld.so.preload names a missing library",
			       "%s: %s: %s; the loader prints an error in every program it starts", path, e,
			       strerror(errno ? errno : ENOENT));
			dr_recommend(r, "fix or remove the libcryptrace line of %s", path);
		} else
			dr_add(r, "fleet:ld.so.preload", DR_OK, "/etc/ld.so.preload loads cryptrace",
			       "%s: %s", path, e);
	}
	if (!found)
		dr_add(r, "fleet:ld.so.preload", DR_INFO, "cryptrace is not in /etc/ld.so.preload",
		       "%s names no libcryptrace: only programs started with LD_PRELOAD (systemd "
		       "drop-ins, docs/fleet.md) are traced always-on",
		       path);
}

void dr_probe_fleet(struct dr_report *r)
{
	const char *path = getenv("CRYPTRACE_CONFIG");
	if (!path || !*path)
		path = CT_CONF_DEFAULT_PATH;
	struct stat st;
	if (stat(path, &st) != 0)
		return; /* not configured: the always-on mode is not this machine's business */
	static struct ct_conffile conf;
	struct conf_warnings w = { 0 };
	int rc = ct_conffile_load(path, &conf, collect, &w);
	if (rc < 0) {
		dr_add(r, "fleet:config", DR_FAIL, "the always-on configuration cannot be read", "%s: %s",
		       path, w.text);
		return;
	}
	check_conf_file(r, path, &st);
	if (w.n) {
		dr_add(r, "fleet:config", DR_WARN, "the always-on configuration has lines that are ignored",
		       "%s: %s", path, w.text);
		dr_recommend(r, "fix the ignored lines of %s (docs/fleet.md lists the keys)", path);
	} else {
		struct dr_check *c = dr_add(r, "fleet:config", DR_OK, "always-on configuration parses",
					    "%s: spool %s, %u include and %u exclude globs, mode %s", path,
					    conf.spool[0] ? conf.spool : "(none)", conf.n_include,
					    conf.n_exclude, conf.mode == 1 ? "calls" : "stats");
		dr_value(c, "spool", false, "%s", conf.spool);
		dr_value(c, "max_file_bytes", true, "%llu", (unsigned long long)conf.max_file_bytes);
		dr_value(c, "max_spool_bytes", true, "%llu", (unsigned long long)conf.max_spool_bytes);
		dr_value(c, "max_age_s", true, "%llu", (unsigned long long)conf.max_age_s);
	}
	if (!conf.spool[0]) {
		dr_add(r, "fleet:spool", DR_FAIL, "the always-on configuration names no spool",
		       "%s: without `spool = DIR` no process is traced always-on", path);
		return;
	}
	check_spool(r, conf.spool);
	check_user_dirs(r, conf.spool);
	check_ld_so_preload(r);
}
