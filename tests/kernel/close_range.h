/* SPDX-License-Identifier: MIT */
/*
 * close_range.h - close_range(2) for the test programs, on any C library: glibc (2.34+) has the
 * wrapper, musl has none, where the system call is made directly (and a preload's close_range
 * hook is not in the way: on musl no program can call it).
 */
#ifndef CT_TEST_CLOSE_RANGE_H
#define CT_TEST_CLOSE_RANGE_H

#include <sys/syscall.h>
#include <unistd.h>

#include "ct_config.h"

#ifndef CT_HAVE_CLOSE_RANGE
#define close_range(first, last, flags) ((int)syscall(SYS_close_range, first, last, flags))
#endif

#endif
