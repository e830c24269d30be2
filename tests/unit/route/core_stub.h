/* SPDX-License-Identifier: MIT */
/* core_stub.h - what tests see of core_stub.c: the route spec to serve and the events seen. */
#ifndef CT_ROUTE_CORE_STUB_H
#define CT_ROUTE_CORE_STUB_H

struct ct_stub_events {
	unsigned count[16]; /* by enum ct_event_kind */
	char last_detail[256];
};
extern struct ct_stub_events ct_stub_events;

/* Must be called before the first ct_route_* call (the table is parsed once). */
void ct_stub_set_route(const char *spec);

/* Called when the route's provider frees a context (ct_route_ctx_freed), if set. */
extern void (*ct_stub_on_ctx_freed)(void);

#endif
