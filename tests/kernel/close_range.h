/* SPDX-License-Identifier: MIT */
/*
 * close_range.h - close_range(2) and closefrom(3) for the test programs, on any C library: glibc
 * (2.34+) has both, musl has neither, where the system call is made directly (and a preload's
 * hooks are not in the way: on musl no program can call them).
 */
#ifndef CT_TEST_CLOSE_RANGE_H
#define CT_TEST_CLOSE_RANGE_H

#include <sys/syscall.h>
#include <unistd.h>

#include "ct_config.h"

#ifdef CT_HAVE_CLOSE_RANGE
int close_range(unsigned int first, unsigned int last, int flags); /* glibc declares it in 2.34+ */
#else
static inline int ct_close_range(unsigned int first, unsigned int last, int flags)
{
	return (int)syscall(SYS_close_range, first, last, flags);
}
#define close_range ct_close_range
#endif
#ifdef CT_HAVE_CLOSEFROM
void closefrom(int lowfd);
#else
static inline void ct_closefrom(int lowfd)
{
	close_range((unsigned int)lowfd, ~0U, 0);
}
#define closefrom ct_closefrom
#endif

#endif
