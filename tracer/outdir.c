/* SPDX-License-Identifier: MIT */
/*
 * outdir.c - the directory that receives one trace file per traced process. The launcher checks
 * that it can write there BEFORE running anything: a traced command that cannot leave its trace
 * would have run for nothing. Also lists the *.ctrace files a run produced.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tracer.h"

/* mkdir -p, each created component 0700: traces name programs and arguments, keep them private. */
static int mkdir_parents(const char *dir)
{
	char path[PATH_MAX];

	if (snprintf(path, sizeof(path), "%s", dir) >= (int)sizeof(path)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	for (char *p = path + 1; *p; p++) {
		if (*p != '/')
			continue;
		*p = '\0';
		if (mkdir(path, 0700) != 0 && errno != EEXIST)
			return -1;
		*p = '/';
	}
	if (mkdir(path, 0700) != 0 && errno != EEXIST)
		return -1;
	return 0;
}

bool ct_outdir_prepare(const char *dir, char *why, size_t why_cap)
{
	struct stat st;

	if (mkdir_parents(dir) != 0) {
		snprintf(why, why_cap, "cannot create output directory %s: %s", dir, strerror(errno));
		return false;
	}
	if (stat(dir, &st) != 0 || !S_ISDIR(st.st_mode)) {
		snprintf(why, why_cap, "output path %s is not a directory", dir);
		return false;
	}

	/* access() says yes to root everywhere, even on a read-only mount: really try a file. */
	char probe[PATH_MAX];

	snprintf(probe, sizeof(probe), "%s/.cryptrace-probe.%ld", dir, (long)getpid());
	int fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);

	if (fd < 0) {
		snprintf(why, why_cap, "cannot write in output directory %s: %s", dir, strerror(errno));
		return false;
	}
	close(fd);
	unlink(probe);
	return true;
}

void ct_outdir_default(const char *prefix, char *buf, size_t cap)
{
	char stamp[32];
	time_t now = time(NULL);
	struct tm tm;
	struct stat st;

	localtime_r(&now, &tm);
	strftime(stamp, sizeof(stamp), "%Y%m%d-%H%M%S", &tm);
	snprintf(buf, cap, "%s-%s", prefix, stamp);
	/* Two runs in the same second must not mix their traces. */
	for (int i = 2; stat(buf, &st) == 0 && i < 1000; i++)
		snprintf(buf, cap, "%s-%s-%d", prefix, stamp, i);
}

static bool has_trace_suffix(const char *name)
{
	static const char suffix[] = ".ctrace";
	size_t len = strlen(name), slen = sizeof(suffix) - 1;

	/* The writer adds ".N" on a name clash: "openssl.42.ctrace.1" is a trace too. */
	if (len > slen && !strcmp(name + len - slen, suffix))
		return true;
	const char *p = strstr(name, ".ctrace.");

	if (!p)
		return false;
	p += slen + 1;
	if (!*p)
		return false;
	for (; *p; p++)
		if (*p < '0' || *p > '9')
			return false;
	return true;
}

static int cmp_names(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

int ct_outdir_list(const char *dir, char ***names)
{
	DIR *d = opendir(dir);

	*names = NULL;
	if (!d)
		return -1;

	int n = 0, cap = 0;
	struct dirent *de;

	while ((de = readdir(d))) {
		if (de->d_name[0] == '.' || !has_trace_suffix(de->d_name))
			continue;
		if (n == cap) {
			int ncap = cap ? cap * 2 : 16;
			char **grown = realloc(*names, (size_t)ncap * sizeof(**names));

			if (!grown)
				break;
			*names = grown;
			cap = ncap;
		}
		char *copy = strdup(de->d_name);

		if (!copy)
			break;
		(*names)[n++] = copy;
	}
	closedir(d);
	if (n > 1)
		qsort(*names, (size_t)n, sizeof(**names), cmp_names);
	return n;
}

void ct_names_free(char **names, int n)
{
	for (int i = 0; i < n; i++)
		free(names[i]);
	free(names);
}

bool ct_outdir_name_in(char **names, int n, const char *name)
{
	for (int i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return true;
	return false;
}

int ct_outdir_new_traces(const char *dir, char **before, int nbefore, char ***paths)
{
	char **after;
	int nafter = ct_outdir_list(dir, &after);
	int nnew = 0;
	*paths = calloc(nafter > 0 ? (size_t)nafter : 1, sizeof(**paths));
	for (int i = 0; *paths && i < nafter; i++) {
		if (ct_outdir_name_in(before, nbefore, after[i]))
			continue;
		size_t len = strlen(dir) + 1 + strlen(after[i]) + 1;
		(*paths)[nnew] = malloc(len);
		if (!(*paths)[nnew])
			break;
		snprintf((*paths)[nnew], len, "%s/%s", dir, after[i]);
		nnew++;
	}
	if (nafter > 0)
		ct_names_free(after, nafter);
	return nnew;
}
