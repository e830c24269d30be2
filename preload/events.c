/* SPDX-License-Identifier: MIT */
/*
 * events.c - failures, engine/provider requests, sessions, children...: deduplicated in a fixed
 * table keyed by (kind, call, errno, path, detail, call site), counted, and flushed as CT_REC_EVENT with
 * stable ids. A full table counts the loss (dropped_events) instead of growing.
 */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "signals.h"

#define EVENT_SLOTS 1024
#define CALL_MAX 48
#define DETAIL_MAX 512 /* an engine failure carries OpenSSL's reason (a module path, a dlerror) */
#define CALLSITE_MAX 1024

struct event_slot {
	bool used, dirty;
	uint32_t hash;
	struct ct_event ev; /* strings are set at encode time from the arrays below */
	char call[CALL_MAX], detail[DETAIL_MAX], callsite[CALLSITE_MAX];
};

static pthread_mutex_t ev_lock = PTHREAD_MUTEX_INITIALIZER;
static struct event_slot events[EVENT_SLOTS];
static uint32_t nevents;
static uint32_t encode_cursor; /* where the last encode stopped when the buffer filled */

void ct_events_lock(void)
{
	ct_lock(&ev_lock);
}

void ct_events_unlock(void)
{
	ct_unlock(&ev_lock);
}

/* Caller holds ev_lock: an event changed since it was last written. */
bool ct_events_pending(void)
{
	for (uint32_t i = 0; i < nevents; i++)
		if (events[i].dirty)
			return true;
	return false;
}

static uint32_t fnv(uint32_t h, const char *s)
{
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return (h ^ 0xff) * 16777619u;
}

/* Under ev_lock: the slot of this event, merged into an identical one or new; NULL when the table
 * is full (the loss is counted). */
static struct event_slot *event_add_locked(enum ct_event_kind kind, const char *call, int err, int64_t ret,
					   uint32_t path_id, uint32_t tid, const char *detail,
					   const char *callsite, uint64_t now)
{
	uint32_t h = 2166136261u;
	h = (h ^ (uint32_t)kind) * 16777619u;
	h = (h ^ (uint32_t)err) * 16777619u;
	h = (h ^ path_id) * 16777619u;
	h = fnv(fnv(fnv(h, call), detail), callsite);
	struct event_slot *s = NULL;
	for (uint32_t i = 0; i < nevents; i++) {
		struct event_slot *e = &events[i];
		if (e->hash == h && e->ev.kind == kind && e->ev.err == err && e->ev.path_id == path_id &&
		    !strncmp(e->call, call, CALL_MAX - 1) && !strcmp(e->detail, detail) &&
		    !strcmp(e->callsite, callsite)) {
			s = e;
			break;
		}
	}
	if (s) {
		s->ev.count++;
		s->ev.last_mono_ns = now;
		s->ev.ret = ret;
		s->dirty = true;
	} else if (nevents < EVENT_SLOTS) {
		s = &events[nevents];
		*s = (struct event_slot){ .used = true, .dirty = true, .hash = h };
		s->ev = (struct ct_event){
			.event_id = nevents,
			.kind = (uint16_t)kind,
			.err = err,
			.ret = ret,
			.path_id = path_id,
			.tid = tid,
			.first_mono_ns = now,
			.last_mono_ns = now,
			.count = 1,
		};
		snprintf(s->call, sizeof(s->call), "%s", call);
		snprintf(s->detail, sizeof(s->detail), "%s", detail);
		snprintf(s->callsite, sizeof(s->callsite), "%s", callsite);
		nevents++;
	} else {
		atomic_fetch_add(&ct_g.dropped_events, 1);
	}
	return s;
}

static void format_detail(char detail[DETAIL_MAX], const char *fmt, va_list ap)
{
	vsnprintf(detail, DETAIL_MAX, fmt, ap);
}

void ct_event(enum ct_event_kind kind, const char *call, int err, int64_t ret, uint32_t path_id,
	      bool want_callsite, const char *detail_fmt, ...)
{
	if (!ct_ready())
		return;
	struct ct_thread *t = ct_thread_fast();
	/* the unwinder, dladdr and snprintf must not re-enter our hooks */
	struct ct_quiet q = ct_quiet_begin(t);

	char detail[DETAIL_MAX] = "";
	if (detail_fmt) {
		va_list ap;
		va_start(ap, detail_fmt);
		format_detail(detail, detail_fmt, ap);
		va_end(ap);
	}
	char callsite[CALLSITE_MAX] = "";
	if (want_callsite)
		ct_callsite(callsite, sizeof(callsite), 0);
	if (!call)
		call = "";
	uint64_t now = ct_now_ns();

	ct_lock(&ev_lock);
	event_add_locked(kind, call, err, ret, path_id, t ? t->tid : 0, detail, callsite, now);
	ct_unlock(&ev_lock);
	ct_log(2, "event %s %s err=%d ret=%lld %s", ct_event_kind_name(kind), call, err, (long long)ret,
	       detail);
	ct_quiet_end(t, q);
}

/* ---- events counted per call site (ct_event_at_site) --------------------------------------- */

/* (kind, path, site key) -> the event slot that counts it: open addressing, under ev_lock. A full
 * table sends further sites to ct_event's own merging (stack captured each time). */
#define SITE_SLOTS 1024
static struct site_slot {
	uintptr_t key;
	uint32_t kind, path_id;
	struct event_slot *ev;
} sites[SITE_SLOTS];

static struct site_slot *site_find_locked(uint32_t kind, uint32_t path_id, uintptr_t key, bool *found)
{
	uint32_t h = (uint32_t)((key * 0x9e3779b97f4a7c15ull) >> 40) ^ path_id * 2654435761u ^ kind;
	for (uint32_t i = 0; i < SITE_SLOTS; i++) {
		struct site_slot *s = &sites[(h + i) % SITE_SLOTS];
		if (!s->ev) {
			*found = false;
			return s;
		}
		if (s->key == key && s->kind == kind && s->path_id == path_id) {
			*found = true;
			return s;
		}
	}
	*found = false;
	return NULL;
}

static void site_count_locked(struct site_slot *site, uint64_t now)
{
	site->ev->ev.count++;
	site->ev->ev.last_mono_ns = now;
	site->ev->dirty = true;
}

void ct_event_at_site(enum ct_event_kind kind, const char *call, uint32_t path_id, uintptr_t site_key,
		      const char *detail_fmt, ...)
{
	if (!ct_ready())
		return;
	struct ct_thread *t = ct_thread_fast();
	struct ct_quiet q = ct_quiet_begin(t);
	uint64_t now = ct_now_ns();
	bool found;
	/* the detail is part of what is counted: one site that sets up sessions of two algorithms
	 * makes two events (formatting it costs far less than the unwinding it spares) */
	char detail[DETAIL_MAX] = "";
	if (detail_fmt) {
		va_list ap;
		va_start(ap, detail_fmt);
		format_detail(detail, detail_fmt, ap);
		va_end(ap);
		uint64_t h = 1469598103934665603ull; /* FNV-1a */
		for (const char *c = detail; *c; c++)
			h = (h ^ (unsigned char)*c) * 1099511628211ull;
		site_key ^= (uintptr_t)h;
	}

	ct_lock(&ev_lock);
	struct site_slot *site = site_find_locked(kind, path_id, site_key, &found);
	if (found)
		site_count_locked(site, now);
	ct_unlock(&ev_lock);
	if (!found) {
		/* a new site: unwind outside the lock, as ct_event does */
		char callsite[CALLSITE_MAX] = "";
		ct_callsite(callsite, sizeof(callsite), 0);
		ct_lock(&ev_lock);
		/* another thread may have added this site meanwhile: look again */
		site = site_find_locked(kind, path_id, site_key, &found);
		if (found) {
			site_count_locked(site, now);
		} else {
			struct event_slot *e = event_add_locked(kind, call ? call : "", 0, 0, path_id,
								t ? t->tid : 0, detail, callsite, now);
			if (site && e)
				*site = (struct site_slot){
					.key = site_key, .kind = kind, .path_id = path_id, .ev = e
				};
		}
		ct_unlock(&ev_lock);
	}
	ct_quiet_end(t, q);
}

/* Caller holds ev_lock (the flusher). */
size_t ct_events_encode(uint8_t *buf, size_t cap, bool *more)
{
	size_t used = 0;
	*more = false;
	for (uint32_t i = encode_cursor; i < nevents; i++) {
		struct event_slot *s = &events[i];
		if (!s->dirty)
			continue;
		s->ev.call = ct_str_from(s->call);
		s->ev.detail = ct_str_from(s->detail);
		s->ev.callsite = ct_str_from(s->callsite);
		size_t n = ct_encode_event(buf + used, cap - used, &s->ev);
		if (!n) {
			encode_cursor = i;
			*more = true;
			return used;
		}
		used += n;
		s->dirty = false;
	}
	encode_cursor = 0;
	return used;
}

/* Fork child: the parent's events belong to the parent's trace. */
void ct_events_reset(void)
{
	pthread_mutex_init(&ev_lock, NULL);
	nevents = 0;
	encode_cursor = 0;
	memset(sites, 0, sizeof(sites));
}

/* Every event is written again into a new file (the fd was closed and the file reopened). */
void ct_events_mark_all_dirty(void)
{
	for (uint32_t i = 0; i < nevents; i++)
		events[i].dirty = true;
}
