/* SPDX-License-Identifier: MIT */
/*
 * writer.h - what the fd-bookkeeping hooks (preload/kernel/) need to know about the preload's own
 * trace file descriptor: a program that closes every fd (close_range, closefrom) must not make us
 * write into whatever file later gets that number.
 */
#ifndef CT_WRITER_H
#define CT_WRITER_H

#include <stdbool.h>

/* True if fd is the preload's trace file (or its log file). */
bool ct_writer_owns_fd(int fd);
/* The program closed our fd anyway: forget it; the next flush reopens a new "<name>.N" file
 * (never truncating the old one) that repeats the header and every path. */
void ct_writer_fd_closed(void);

#endif
