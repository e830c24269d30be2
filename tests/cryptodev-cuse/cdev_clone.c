/* SPDX-License-Identifier: MIT */
/*
 * cdev_clone.c - finding the program's descriptor of one open file of the CUSE device, for
 * CRIOGET: /proc/PID/fd names the candidates, pidfd_getfd brings each into the server, and the
 * device itself (CDEV_IOC_IDENT) says which open file it is.
 */
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cdev_clone.h"

#ifndef SYS_pidfd_open
#define SYS_pidfd_open 434
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif

int cdev_caller_fd_of(pid_t tid, uint64_t fh, const char *devname)
{
	char path[64], link[PATH_MAX], want[PATH_MAX];
	pid_t tgid = tid;
	FILE *st;
	int found = -1;

	/* fuse reports the calling thread; pidfds and /proc/PID/fd want its process. */
	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	st = fopen(path, "re");
	if (st) {
		char line[128];
		while (fgets(line, sizeof(line), st))
			if (sscanf(line, "Tgid: %d", &tgid) == 1)
				break;
		fclose(st);
	}
	int pidfd = (int)syscall(SYS_pidfd_open, tgid, 0);
	if (pidfd < 0)
		return -1;
	snprintf(want, sizeof(want), "/dev/%s", devname);
	snprintf(path, sizeof(path), "/proc/%d/fd", (int)tgid);
	DIR *d = opendir(path);
	struct dirent *e;
	while (d && found < 0 && (e = readdir(d))) {
		char fdpath[PATH_MAX];
		ssize_t n;
		if (e->d_name[0] == '.')
			continue;
		snprintf(fdpath, sizeof(fdpath), "%s/%s", path, e->d_name);
		n = readlink(fdpath, link, sizeof(link) - 1);
		if (n <= 0)
			continue;
		link[n] = '\0';
		if (strcmp(link, want))
			continue;
		int fd = atoi(e->d_name);
		int mine = (int)syscall(SYS_pidfd_getfd, pidfd, fd, 0);
		uint64_t id = 0;
		if (mine >= 0 && ioctl(mine, CDEV_IOC_IDENT, &id) == 0 && id == fh)
			found = fd;
		if (mine >= 0)
			close(mine);
	}
	if (d)
		closedir(d);
	close(pidfd);
	return found;
}
