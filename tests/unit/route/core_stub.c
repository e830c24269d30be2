/* SPDX-License-Identifier: MIT */
/*
 * core_stub.c - the few preload core functions that preload/route/ uses, for test programs that
 * link the route code without the rest of libcryptrace.so: real functions come straight from the
 * libcrypto the test links, events are counted so tests can assert fallbacks.
 */
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core.h"
#include "core_stub.h"

struct ct_stub_events ct_stub_events;
static struct ct_config stub_config = { .enabled = true, .route_direct = true };

void ct_stub_set_route(const char *spec)
{
	stub_config.route_spec = spec;
}

void *ct_resolve(const char *name)
{
	return dlsym(RTLD_DEFAULT, name);
}

void (*ct_stub_on_ctx_freed)(void);

void ct_route_ctx_freed(void)
{
	if (ct_stub_on_ctx_freed)
		ct_stub_on_ctx_freed();
}

const struct ct_config *ct_config(void)
{
	return &stub_config;
}

void ct_event(enum ct_event_kind kind, const char *call, int err, int64_t ret, uint32_t path_id,
	      bool want_callsite, const char *detail_fmt, ...)
{
	(void)call;
	(void)err;
	(void)ret;
	(void)path_id;
	(void)want_callsite;
	if (kind < sizeof(ct_stub_events.count) / sizeof(ct_stub_events.count[0]))
		ct_stub_events.count[kind]++;
	va_list ap;
	va_start(ap, detail_fmt);
	vsnprintf(ct_stub_events.last_detail, sizeof(ct_stub_events.last_detail), detail_fmt, ap);
	va_end(ap);
	if (getenv("CT_STUB_VERBOSE"))
		fprintf(stderr, "event %d: %s\n", (int)kind, ct_stub_events.last_detail);
}

void ct_log(unsigned level, const char *fmt, ...)
{
	(void)level;
	(void)fmt;
}
