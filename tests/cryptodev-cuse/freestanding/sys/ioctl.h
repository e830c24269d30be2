/* SPDX-License-Identifier: MIT */
/*
 * sys/ioctl.h for the freestanding 32-bit test client (cdev_compat32.c): the host has no 32-bit
 * libc headers, and cryptodev_abi.h needs only the asm-generic ioctl request encoding.
 */
#ifndef CDEV_FREESTANDING_SYS_IOCTL_H
#define CDEV_FREESTANDING_SYS_IOCTL_H

#define _IOC(dir, type, nr, size) (((dir) << 30) | ((size) << 16) | ((type) << 8) | (nr))
#define _IOW(type, nr, t) _IOC(1u, (unsigned)(type), (nr), sizeof(t))
#define _IOR(type, nr, t) _IOC(2u, (unsigned)(type), (nr), sizeof(t))
#define _IOWR(type, nr, t) _IOC(3u, (unsigned)(type), (nr), sizeof(t))
#define _IOC_TYPE(r) (((r) >> 8) & 0xff)
#define _IOC_NR(r) ((r)&0xff)

#endif
