/* SPDX-License-Identifier: MIT */
/*
 * kbuf.h - a bounded string appender for the decoders (internal to common/kernel/): appends
 * with printf formatting, never overflows, remembers the length written so far.
 */
#ifndef CT_KBUF_H
#define CT_KBUF_H

#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>

struct ct_kbuf {
	char *p;
	size_t cap, len;
};

static inline struct ct_kbuf ct_kbuf_init(char *p, size_t cap)
{
	if (cap)
		p[0] = '\0';
	return (struct ct_kbuf){ .p = p, .cap = cap, .len = 0 };
}

__attribute__((format(printf, 2, 3))) static inline void ct_kbuf_add(struct ct_kbuf *b, const char *fmt, ...)
{
	if (b->len + 1 >= b->cap)
		return;
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	b->len += (size_t)n;
	if (b->len >= b->cap)
		b->len = b->cap - 1; /* truncated: keep the terminated prefix */
}

#endif
