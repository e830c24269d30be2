/* SPDX-License-Identifier: MIT */
/*
 * cdev_clone.h - what CRIOGET needs and CUSE lacks: which of a program's descriptors is a given
 * open file of the device. The server duplicates each candidate descriptor into itself
 * (pidfd_getfd) and asks it CDEV_IOC_IDENT, which another server thread answers with that open
 * file's handle.
 */
#ifndef CDEV_CLONE_H
#define CDEV_CLONE_H

#include <stdint.h>
#include <sys/ioctl.h>
#include <sys/types.h>

/* The server's question to itself: which open file is this descriptor? A number cryptodev does
 * not use; the answer is the FUSE file handle (uint64_t). */
#define CDEV_NR_IDENT 200
#define CDEV_IOC_IDENT _IOR('c', CDEV_NR_IDENT, uint64_t)

/* The descriptor number, in the process of thread tid, of the open file whose FUSE handle is fh
 * (a descriptor of /dev/<devname>), or -1. Must run while another thread serves the device. */
int cdev_caller_fd_of(pid_t tid, uint64_t fh, const char *devname);

#endif
