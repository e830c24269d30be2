/* SPDX-License-Identifier: MIT */
/*
 * spool.h - the always-on spool's directory of this process's user (spool.c, docs/fleet.md).
 */
#ifndef CT_SPOOL_H
#define CT_SPOOL_H

#include <stdbool.h>

/* Opens <root>/<euid>, creating it 0700 if missing, after checking the root (a directory owned
 * by root or by us, not writable by others without the sticky bit) and the user's directory (a
 * real directory, owned by euid, no group or other permission). Returns a directory fd, or -1
 * when refused or impossible: the refusal is logged once per process, never fatal. */
int ct_spool_open_dir(const char *root);

/* The file openat(dirfd, name) gave: a regular file of ours with one link, or refused (logged
 * once). */
bool ct_spool_file_ok(int fd, const char *root, const char *name);

#endif
