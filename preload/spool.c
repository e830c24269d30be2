/* SPDX-License-Identifier: MIT */
/*
 * spool.c - the trust boundary of the always-on mode (docs/fleet.md). Under /etc/ld.so.preload
 * this code runs in every user's processes, root's too, and the spool root is writable by every
 * user: nothing another user can put there may make a process write anywhere but into its own
 * user's 0700 directory. Every step is relative to a directory fd that was checked after it was
 * opened (fstat), never a path looked up again: pre-created directories of another owner,
 * symlinks (O_NOFOLLOW), hard links and other files in the directory's place are refused, and
 * a directory swapped after the check is harmless because the fd still names the checked one.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <dirent.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "core.h"
#include "internal.h"
#include "spool.h"

/* The root is opened for lookups only: in a 1733 root a user may create but not list. */
#ifdef O_PATH
#define ROOT_OPEN_FLAGS (O_PATH | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
#else
#define ROOT_OPEN_FLAGS (O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
#endif

static bool refusal_logged;
static bool root_is_mount; /* the spool root is its own file system: statvfs counts it whole */

static void refuse(const char *root, const char *what, const char *why)
{
	if (refusal_logged)
		return;
	refusal_logged = true;
	ct_log(1, "spool %s, %s: %s; this process is not traced", root, what, why);
	ct_syslog("spool %s, %s: %s; %s is not traced", root, what, why, ct_g.comm);
}

int ct_spool_open_dir(const char *root)
{
	int rootfd = open(root, ROOT_OPEN_FLAGS);
	if (rootfd < 0) {
		refuse(root, "root", strerror(errno));
		return -1;
	}
	uid_t me = geteuid();
	struct stat st;
	if (fstat(rootfd, &st) != 0 || (st.st_uid != 0 && st.st_uid != me)) {
		refuse(root, "root", "is owned by neither root nor this user");
		close(rootfd);
		return -1;
	}
	if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX)) {
		/* without the sticky bit anyone could rename our directory away and put theirs */
		refuse(root, "root", "is writable by others without the sticky bit");
		close(rootfd);
		return -1;
	}
	struct stat parent;
	root_is_mount = fstatat(rootfd, "..", &parent, 0) == 0 && parent.st_dev != st.st_dev;
	char name[24];
	snprintf(name, sizeof(name), "%u", (unsigned)me);
	int fd = openat(rootfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 && errno == ENOENT) {
		if (mkdirat(rootfd, name, 0700) != 0 && errno != EEXIST) {
			refuse(root, name, strerror(errno));
			close(rootfd);
			return -1;
		}
		fd = openat(rootfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	}
	if (fd < 0) {
		/* O_NOFOLLOW|O_DIRECTORY fails with ENOTDIR on a symlink too: say which it was */
		int err = errno;
		struct stat lst;
		bool link = fstatat(rootfd, name, &lst, AT_SYMLINK_NOFOLLOW) == 0 && S_ISLNK(lst.st_mode);
		refuse(root, name,
		       link || err == ELOOP ? "is a symlink"
		       : err == ENOTDIR     ? "is not a directory (a file or a hard link in its place)"
					    : strerror(err));
		close(rootfd);
		return -1;
	}
	close(rootfd);
	if (fstat(fd, &st) != 0 || !S_ISDIR(st.st_mode) || st.st_uid != me) {
		refuse(root, name, "is not a directory of this user's (pre-created by someone else?)");
		close(fd);
		return -1;
	}
	if (st.st_mode & (S_IRWXG | S_IRWXO)) {
		refuse(root, name, "is open to other users (mode must be 0700)");
		close(fd);
		return -1;
	}
	return fd;
}

bool ct_spool_file_ok(int fd, const char *root, const char *name)
{
	struct stat st;
	if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_uid != geteuid() || st.st_nlink != 1) {
		refuse(root, name, "is not a new file of this user's with one link");
		return false;
	}
	return true;
}

/* This user's trace files: their total size, and the oldest one's name (by mtime). */
static uint64_t scan_own(int dirfd, char *oldest, size_t cap)
{
	uint64_t total = 0;
	int64_t oldest_ns = INT64_MAX;
	oldest[0] = 0;
	int dup_fd = fcntl(dirfd, F_DUPFD_CLOEXEC, 0);
	DIR *d = dup_fd >= 0 ? fdopendir(dup_fd) : NULL;
	if (!d) {
		if (dup_fd >= 0)
			close(dup_fd);
		return 0;
	}
	struct dirent *de;
	while ((de = readdir(d))) {
		struct stat st;
		if (ct_trace_name_part(de->d_name) < 0 ||
		    fstatat(dirfd, de->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
			continue;
		total += (uint64_t)st.st_size;
		int64_t ns = (int64_t)st.st_mtim.tv_sec * 1000000000 + st.st_mtim.tv_nsec;
		if (ns < oldest_ns && strlen(de->d_name) < cap) {
			oldest_ns = ns;
			memcpy(oldest, de->d_name, strlen(de->d_name) + 1);
		}
	}
	closedir(d);
	return total;
}

/* The spool's bytes in use: the whole file system when the spool is one of its own (every
 * user's traces), else this user's directory (the only one a process may look into). */
static uint64_t spool_used(int dirfd, char *oldest, size_t cap)
{
	uint64_t own = scan_own(dirfd, oldest, cap);
	struct statvfs vfs;
	if (root_is_mount && fstatvfs(dirfd, &vfs) == 0)
		return (uint64_t)(vfs.f_blocks - vfs.f_bfree) * vfs.f_frsize;
	return own;
}

bool ct_spool_make_room(int dirfd, const char *root, uint64_t cap, uint64_t need)
{
	if (!cap)
		return true;
	char oldest[256];
	for (unsigned removed = 0; removed <= SPOOL_MAX_REMOVALS; removed++) {
		uint64_t used = spool_used(dirfd, oldest, sizeof(oldest));
		if (used + need <= cap)
			return true;
		if (!oldest[0] || removed == SPOOL_MAX_REMOVALS || unlinkat(dirfd, oldest, 0) != 0)
			break;
		ct_log(2, "spool %s: removed this user's oldest trace %s to stay under max_spool_bytes", root,
		       oldest);
	}
	refuse(root, "max_spool_bytes", "full (this user's own traces removed, and still no room)");
	return false;
}
