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
#include <string.h>
#include <sys/stat.h>
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
