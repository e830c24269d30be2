/* SPDX-License-Identifier: MIT */
/*
 * ctxmap.c - the context -> path map (see ctxmap.h), plus the process-wide instance behind
 * core.h's ct_ctxmap_set/get/del: 2^18 slots mmap'd MAP_NORESERVE, so untouched pages cost
 * nothing.
 */
#include <sys/mman.h>

#include "ctxmap.h"
#ifndef CT_CTXMAP_STANDALONE
#include "internal.h"
#endif

#define GLOBAL_BITS 18

void ct_ctxmap_init(struct ct_ctxmap *m, struct ct_ctxmap_slot *slots, unsigned bits)
{
	m->slots = slots;
	m->bits = bits;
	m->full = 0;
}

static bool key_ok(uintptr_t k)
{
	return k != CT_CTXMAP_KEY_EMPTY && k != CT_CTXMAP_KEY_TOMB;
}

bool ct_ctxmap_put(struct ct_ctxmap *m, const void *key, uint32_t val)
{
	uintptr_t k = (uintptr_t)key;
	if (!m->slots || !key_ok(k))
		return false;
	uint32_t mask = (1u << m->bits) - 1;
	uint32_t i = ct_ctxmap_hash(k, m->bits);
	uint32_t tomb = UINT32_MAX;
	for (unsigned n = 0; n < CT_CTXMAP_MAX_PROBE && n <= mask; n++, i = (i + 1) & mask) {
		uintptr_t sk = __atomic_load_n(&m->slots[i].key, __ATOMIC_ACQUIRE);
		if (sk == k) {
			__atomic_store_n(&m->slots[i].val, val + 1, __ATOMIC_RELEASE);
			return true;
		}
		if (sk == CT_CTXMAP_KEY_TOMB) {
			if (tomb == UINT32_MAX)
				tomb = i;
			continue;
		}
		if (sk != CT_CTXMAP_KEY_EMPTY)
			continue;
		/* The key is not in the table: take the first tombstone seen, else this slot. */
		uint32_t at = tomb != UINT32_MAX ? tomb : i;
		uintptr_t expect = tomb != UINT32_MAX ? CT_CTXMAP_KEY_TOMB : CT_CTXMAP_KEY_EMPTY;
		/* val is 0 here (never used, or cleared by remove before the tombstone): writing it
		 * before winning the slot could clobber the winner's value */
		if (__atomic_compare_exchange_n(&m->slots[at].key, &expect, k, false, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE)) {
			__atomic_store_n(&m->slots[at].val, val + 1, __ATOMIC_RELEASE);
			return true;
		}
		/* Lost a race for that slot: probe again from the start. */
		tomb = UINT32_MAX;
		i = ct_ctxmap_hash(k, m->bits) - 1;
		n = 0;
		if (expect == k) { /* someone inserted the same key meanwhile */
			__atomic_store_n(&m->slots[at].val, val + 1, __ATOMIC_RELEASE);
			return true;
		}
	}
	if (tomb != UINT32_MAX) {
		uintptr_t expect = CT_CTXMAP_KEY_TOMB;
		if (__atomic_compare_exchange_n(&m->slots[tomb].key, &expect, k, false, __ATOMIC_ACQ_REL,
						__ATOMIC_ACQUIRE)) {
			__atomic_store_n(&m->slots[tomb].val, val + 1, __ATOMIC_RELEASE);
			return true;
		}
	}
	__atomic_fetch_add(&m->full, 1, __ATOMIC_RELAXED);
	return false;
}

uint32_t ct_ctxmap_lookup(const struct ct_ctxmap *m, const void *key)
{
	return ct_ctxmap_lookup_inline(m, key); /* 0xffffffff (CT_NO_PATH) when absent */
}

void ct_ctxmap_remove(struct ct_ctxmap *m, const void *key)
{
	uintptr_t k = (uintptr_t)key;
	if (!m->slots || !key_ok(k))
		return;
	uint32_t mask = (1u << m->bits) - 1;
	uint32_t i = ct_ctxmap_hash(k, m->bits);
	for (unsigned n = 0; n < CT_CTXMAP_MAX_PROBE && n <= mask; n++, i = (i + 1) & mask) {
		uintptr_t sk = __atomic_load_n(&m->slots[i].key, __ATOMIC_ACQUIRE);
		if (sk == k) {
			__atomic_store_n(&m->slots[i].val, 0, __ATOMIC_RELAXED);
			__atomic_store_n(&m->slots[i].key, CT_CTXMAP_KEY_TOMB, __ATOMIC_RELEASE);
			return;
		}
		if (sk == CT_CTXMAP_KEY_EMPTY)
			return;
	}
}

#ifndef CT_CTXMAP_STANDALONE
/* ---- the process-wide map --------------------------------------------------------------- */

struct ct_ctxmap ct_global_ctxmap;
_Atomic uint32_t ct_ctxmap_gen = 1;

static bool global_ready(void)
{
	if (CT_LIKELY(__atomic_load_n(&ct_global_ctxmap.slots, __ATOMIC_ACQUIRE)))
		return true;
	return false;
}

/* Called once from ct_init (before any hook records). */
void ct_ctxmap_global_init(void)
{
	size_t len = sizeof(struct ct_ctxmap_slot) << GLOBAL_BITS;
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return;
	ct_global_ctxmap.bits = GLOBAL_BITS;
	__atomic_store_n(&ct_global_ctxmap.slots, (struct ct_ctxmap_slot *)p, __ATOMIC_RELEASE);
}

void ct_ctxmap_set(const void *key, uint32_t path_id)
{
	if (!global_ready())
		return;
	atomic_fetch_add_explicit(&ct_ctxmap_gen, 1, memory_order_relaxed);
	if (path_id == CT_NO_PATH) { /* unclassifiable: forget any stale mapping */
		ct_ctxmap_remove(&ct_global_ctxmap, key);
		return;
	}
	if (!ct_ctxmap_put(&ct_global_ctxmap, key, path_id))
		atomic_fetch_add(&ct_g.lost_paths, 1);
}

uint32_t ct_ctxmap_get(const void *key)
{
	return ct_ctxmap_lookup(&ct_global_ctxmap, key);
}

void ct_ctxmap_del(const void *key)
{
	if (!global_ready())
		return;
	atomic_fetch_add_explicit(&ct_ctxmap_gen, 1, memory_order_relaxed);
	ct_ctxmap_remove(&ct_global_ctxmap, key);
}

_Atomic uint32_t ct_lane_gen = 1;

/* The direct lane's entries are checked against ct_lane_gen, the hot caches (which may hold a
 * lane too) against ct_ctxmap_gen. */
void ct_route_ctx_freed(void)
{
	atomic_fetch_add_explicit(&ct_lane_gen, 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&ct_ctxmap_gen, 1, memory_order_relaxed);
}

uint64_t ct_ctxmap_full_count(void)
{
	return __atomic_load_n(&ct_global_ctxmap.full, __ATOMIC_RELAXED);
}
#endif
