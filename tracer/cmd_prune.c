/* SPDX-License-Identifier: MIT */
/*
 * cmd_prune.c - `cryptrace prune`: keeps the always-on spool under its total size and age caps
 * (max_spool_bytes, max_age in /etc/cryptrace.conf; docs/fleet.md), oldest traces first. Run by
 * root from a timer, never by the preload: a process deletes nothing, so no user's process can
 * be made to delete another's files, and the traced programs pay nothing for it.
 *
 * Every user's directory is opened with O_NOFOLLOW relative to the spool root's fd, checked to
 * belong to the uid it is named after, and its files are removed with unlinkat relative to that
 * directory fd: a user who swaps their directory for a symlink meanwhile makes no difference
 * (the fd is still the directory that was checked), and a name is only ever unlinked, never
 * followed, so a link to somebody else's file loses the link and nothing else.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "commands.h"
#include "trace_format.h"
#include "tracer.h"
#include "../preload/conffile.h"

struct spooled {
	int dir; /* index into dirs[] */
	char name[256];
	uint64_t size;
	int64_t mtime_ns; /* to the nanosecond: an age cap of 1 s means 1 s, not 1-2 s */
};

#define MAX_DIRS 4096

static int dirs[MAX_DIRS];
static char dir_names[MAX_DIRS][24]; /* the uid each is named after */
static int ndirs;
static struct spooled *files;
static size_t nfiles, cap_files;

/* Lists the trace files of the directory open as dfd (a dup is consumed by fdopendir). */
static void list_dir(int idx)
{
	int dup_fd = dup(dirs[idx]);
	DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	if (!d) {
		if (dup_fd >= 0)
			close(dup_fd);
		return;
	}
	struct dirent *e;
	while ((e = readdir(d))) {
		struct stat st;
		if (ct_trace_name_part(e->d_name) < 0 || strlen(e->d_name) >= sizeof(files->name) ||
		    fstatat(dirs[idx], e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
			continue;
		if (nfiles == cap_files) {
			size_t n = cap_files ? cap_files * 2 : 1024;
			struct spooled *f = realloc(files, n * sizeof(*f));
			if (!f)
				break;
			files = f;
			cap_files = n;
		}
		struct spooled *f = &files[nfiles++];
		f->dir = idx;
		snprintf(f->name, sizeof(f->name), "%s", e->d_name);
		f->size = (uint64_t)st.st_blocks * 512 > (uint64_t)st.st_size ? (uint64_t)st.st_blocks * 512
									      : (uint64_t)st.st_size;
		f->mtime_ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
	}
	closedir(d);
}

/* Opens the spool's user directories: named by a uid, a real directory, owned by that uid. */
static int open_spool(const char *spool)
{
	int root = open(spool, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (root < 0) {
		fprintf(stderr, "cryptrace prune: %s: %s\n", spool, strerror(errno));
		return -1;
	}
	int dup_fd = dup(root);
	DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	if (!d) {
		fprintf(stderr, "cryptrace prune: %s: %s\n", spool, strerror(errno));
		close(root);
		return -1;
	}
	struct dirent *e;
	while ((e = readdir(d)) && ndirs < MAX_DIRS) {
		char *end;
		errno = 0;
		unsigned long uid = strtoul(e->d_name, &end, 10);
		if (e->d_name[0] < '0' || e->d_name[0] > '9' || *end || errno)
			continue;
		int fd = openat(root, e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		struct stat st;
		if (fd < 0)
			continue; /* a symlink or a file in a directory's place: the preload refuses it too */
		if (fstat(fd, &st) != 0 || st.st_uid != (uid_t)uid) {
			close(fd); /* another user's directory under this uid's name: not a spool directory */
			continue;
		}
		dirs[ndirs] = fd;
		snprintf(dir_names[ndirs], sizeof(dir_names[ndirs]), "%lu", uid);
		list_dir(ndirs++);
	}
	closedir(d);
	close(root);
	return 0;
}

static int by_age(const void *a, const void *b)
{
	const struct spooled *x = a, *y = b;
	return (x->mtime_ns > y->mtime_ns) - (x->mtime_ns < y->mtime_ns);
}

int command_prune(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "config", required_argument, NULL, 'c' },
		{ "dry-run", no_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *path = getenv("CRYPTRACE_CONFIG");
	if (!path || !*path)
		path = CT_CONF_DEFAULT_PATH;
	bool dry = false;
	int c;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":nh", longopts, NULL)) != -1) {
		switch (c) {
		case 'c':
			path = optarg;
			break;
		case 'n':
			dry = true;
			break;
		case 'h':
			ct_usage_prune(stdout);
			return 0;
		default:
			return ct_option_error("prune", c, argv);
		}
	}
	if (optind < argc) {
		fprintf(stderr, "cryptrace prune: unexpected argument '%s'\n", argv[optind]);
		return CT_EXIT_USAGE;
	}
	static struct ct_conffile conf;
	if (ct_conffile_load(path, &conf, NULL, NULL) <= 0 || !conf.spool[0]) {
		fprintf(stderr, "cryptrace prune: %s names no spool (docs/fleet.md)\n", path);
		return 1;
	}
	if (open_spool(conf.spool) != 0)
		return 1;
	qsort(files, nfiles, sizeof(*files), by_age);
	uint64_t total = 0, freed = 0;
	for (size_t i = 0; i < nfiles; i++)
		total += files[i].size;
	struct timespec now;
	clock_gettime(CLOCK_REALTIME, &now);
	int64_t oldest_kept = INT64_MIN; /* no age cap, or one older than the epoch */
	if (conf.max_age_s && conf.max_age_s < (uint64_t)now.tv_sec)
		oldest_kept = ((int64_t)now.tv_sec - (int64_t)conf.max_age_s) * 1000000000 + now.tv_nsec;
	size_t removed = 0;
	for (size_t i = 0; i < nfiles; i++) {
		struct spooled *f = &files[i];
		bool too_old = f->mtime_ns < oldest_kept;
		bool too_big = conf.max_spool_bytes && total > conf.max_spool_bytes;
		if (!too_old && !too_big)
			break; /* oldest first: everything after is newer, and the spool fits */
		if (!dry && unlinkat(dirs[f->dir], f->name, 0) != 0)
			continue;
		if (dry)
			printf("would remove %s/%s/%s (%llu bytes)\n", conf.spool, dir_names[f->dir], f->name,
			       (unsigned long long)f->size);
		total -= f->size;
		freed += f->size;
		removed++;
	}
	printf("%s%zu trace files, %llu bytes; the spool %s %llu bytes in %zu files\n",
	       dry ? "would remove " : "removed ", removed, (unsigned long long)freed,
	       dry ? "would then hold" : "now holds", (unsigned long long)total, nfiles - removed);
	for (int i = 0; i < ndirs; i++)
		close(dirs[i]);
	free(files);
	return 0;
}
