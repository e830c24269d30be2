/* SPDX-License-Identifier: MIT */
/*
 * ctxmap.h - a lock-free pointer -> u32 map: open addressing, linear probing, one multiply-shift
 * hash. Insert claims an empty (or tombstoned) slot with a CAS; delete leaves a tombstone. Pure
 * logic over a caller-provided slot array, so that unit tests can drive it without the preload.
 * Keys 0 and 1 are reserved (empty, tombstone); values are stored +1 so that 0 means "none".
 */
#ifndef CT_CTXMAP_H
#define CT_CTXMAP_H

#include <stdbool.h>
#include <stdint.h>

struct ct_ctxmap_slot {
	uintptr_t key; /* 0 empty, 1 tombstone */
	uint32_t val;  /* value + 1; 0 while the slot is being filled */
	uint32_t pad;
};

struct ct_ctxmap {
	struct ct_ctxmap_slot *slots;
	unsigned bits; /* 1 << bits slots */
	uint64_t full; /* inserts refused because no slot was free */
};

#define CT_CTXMAP_KEY_EMPTY ((uintptr_t)0)
#define CT_CTXMAP_KEY_TOMB ((uintptr_t)1)

/* slots must hold (1 << bits) zeroed entries. */
void ct_ctxmap_init(struct ct_ctxmap *m, struct ct_ctxmap_slot *slots, unsigned bits);
/* false when the table is full (the loss is counted in m->full). */
bool ct_ctxmap_put(struct ct_ctxmap *m, const void *key, uint32_t val);
/* CT_NO_PATH (0xffffffff) if absent. */
uint32_t ct_ctxmap_lookup(const struct ct_ctxmap *m, const void *key);
void ct_ctxmap_remove(struct ct_ctxmap *m, const void *key);

static inline uint32_t ct_ctxmap_hash(uintptr_t key, unsigned bits)
{
	/* Fibonacci hashing: allocator addresses share low bits; the top bits of the product mix them. */
	return (uint32_t)(((uint64_t)key * 0x9E3779B97F4A7C15ull) >> (64 - bits));
}

/* Longest probe sequence: beyond it a lookup answers "absent" and an insert "full". Keeps the
 * worst case bounded when tombstones pile up. */
#define CT_CTXMAP_MAX_PROBE 4096u

static inline uint32_t ct_ctxmap_lookup_inline(const struct ct_ctxmap *m, const void *key)
{
	uintptr_t k = (uintptr_t)key;
	const struct ct_ctxmap_slot *slots = m->slots;
	if (__builtin_expect(!slots, 0))
		return 0xffffffffu;
	uint32_t mask = (1u << m->bits) - 1;
	uint32_t i = ct_ctxmap_hash(k, m->bits);
	for (unsigned n = 0; n < CT_CTXMAP_MAX_PROBE; n++, i = (i + 1) & mask) {
		uintptr_t sk = __atomic_load_n(&slots[i].key, __ATOMIC_ACQUIRE);
		if (sk == k) {
			uint32_t v = __atomic_load_n(&slots[i].val, __ATOMIC_ACQUIRE);
			return v ? v - 1 : 0xffffffffu;
		}
		if (sk == CT_CTXMAP_KEY_EMPTY)
			break;
	}
	return 0xffffffffu;
}

#endif
