/* SPDX-License-Identifier: MIT */
/*
 * flusher.h - the preload's one thread: it writes a snapshot every CRYPTRACE_FLUSH_MS while the
 * counts change, so that a process that goes quiet and is then killed (SIGKILL) still has its
 * last burst in the trace (flusher.c).
 */
#ifndef CT_FLUSHER_H
#define CT_FLUSHER_H

#include <stdbool.h>

#pragma GCC visibility push(hidden)

void ct_flusher_start(void);   /* lazily: at the first cipher path, and in fork children */
bool ct_flusher_running(void); /* for the PROC record's CT_PROC_PERIODIC */
void ct_flusher_stop(void);    /* a sandbox is coming: ask it to end, and wait */
void ct_flusher_rearm(void);   /* after a stop: a later start may start it again (a new attach) */
/* unshare/setns want a single-threaded process: end it for the call (true if it was running),
 * and start it again after. */
bool ct_flusher_pause(void);
void ct_flusher_resume(void);
void ct_flusher_after_fork_child(void); /* restarts it in the child if the parent had one */
void ct_flusher_main_exiting(void);     /* pthread_exit() of the main thread */

#pragma GCC visibility pop

#endif
