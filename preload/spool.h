/* SPDX-License-Identifier: MIT */
/*
 * spool.h - the always-on spool's directory of this process's user (spool.c, docs/fleet.md).
 */
#ifndef CT_SPOOL_H
#define CT_SPOOL_H

#include <stdbool.h>
#include <stdint.h>

/* Opens <root>/<euid>, creating it 0700 if missing, after checking the root (a directory owned
 * by root or by us, not writable by others without the sticky bit) and the user's directory (a
 * real directory, owned by euid, no group or other permission). Returns a directory fd, or -1
 * when refused or impossible: the refusal is logged once per process, never fatal. */
int ct_spool_open_dir(const char *root);

/* The file openat(dirfd, name) gave: a regular file of ours with one link, or refused (logged
 * once). */
bool ct_spool_file_ok(int fd, const char *root, const char *name);

/* Before a new trace file: whether the spool has room for need more bytes under cap
 * (max_spool_bytes; 0: no cap). The spool's use is its whole file system's when it is a file
 * system of its own, else this user's directory's. Over the cap, this user's oldest traces are
 * removed (at most SPOOL_MAX_REMOVALS, relative to dirfd, never through a path); when that is
 * not enough the new file is refused (logged once). */
bool ct_spool_make_room(int dirfd, const char *root, uint64_t cap, uint64_t need);
#define SPOOL_MAX_REMOVALS 64

#endif
