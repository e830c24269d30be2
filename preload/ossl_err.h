/* SPDX-License-Identifier: MIT */
/*
 * ossl_err.h - why a libcrypto call failed, from OpenSSL's own error queue, read with the peek
 * functions only (the queue belongs to the program: what it prints or clears afterwards must not
 * change). Used by the engine and provider hooks, which record the reason in their event.
 */
#ifndef CT_OSSL_ERR_H
#define CT_OSSL_ERR_H

#include <stdbool.h>
#include <stddef.h>

#pragma GCC visibility push(hidden)

/* The newest entry of the calling thread's queue before a call, to tell the entries the call
 * added from older ones. */
struct ct_err_mark {
	bool usable;        /* the peek functions were found */
	bool empty;         /* the queue was empty: every entry after the call is the call's */
	unsigned long code; /* identity of the newest entry: code, file pointer, line, data pointer */
	const void *file, *data;
	int line;
};

/* Takes the mark; peeks only. Cheap enough for rare calls (engine and provider set-up). */
void ct_err_mark(struct ct_err_mark *m);

/* After a failed call: the errors it added, as one line of text: the oldest (usually the root
 * cause, such as a missing shared object) and the newest (what the failed function itself said),
 * each "library: reason: data". Returns the length written; 0 (buf "") when the call added
 * nothing or the queue cannot be read. Never changes the queue. */
size_t ct_err_reason(const struct ct_err_mark *before, char *buf, size_t cap);

#pragma GCC visibility pop

#endif
