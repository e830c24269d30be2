/* SPDX-License-Identifier: MIT */
/*
 * registry.c - path definitions: id -> (api, impl, cipher, key bits, dir, entry, route, flags).
 * Interning takes a lock (context init, session set-up: never per operation). Ids are dense and
 * never reused; definitions are immutable once published, so the flusher reads them unlocked up
 * to the published count. Variants (same key, another dir or entry) are cached per path so that
 * the EVP hooks can switch a context's path without the lock.
 */
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

#include "internal.h"
#include "flusher.h"

#define IMPL_MAX 64
#define CIPHER_MAX 48
#define REQ_MAX 64
#define PROTO_MAX 16
#define CALLSITE_ARENA (1u << 20)
#define VARIANT_DIRS 3
#define VARIANT_ENTRIES CT_ENTRIES /* a variant per entry (enum ct_entry) */

struct path_slot {
	struct ct_path_key key; /* strings point at the arrays below */
	char impl[IMPL_MAX], cipher[CIPHER_MAX], requested[REQ_MAX], proto[PROTO_MAX];
	const char *callsite;
	uint32_t hash;
};

static pthread_mutex_t reg_lock = PTHREAD_MUTEX_INITIALIZER;
static struct path_slot *slots; /* CT_PATH_CAPACITY, mmap'd on first intern */
static _Atomic uint32_t npaths;
static uint8_t path_entry[CT_PATH_CAPACITY], path_dir[CT_PATH_CAPACITY], path_api[CT_PATH_CAPACITY],
	path_route[CT_PATH_CAPACITY];
/* variant[id][dir][entry] = id + 1 of that variant, 0 = not looked up yet */
static _Atomic uint32_t (*variant)[VARIANT_DIRS][VARIANT_ENTRIES];
static char *callsite_arena;
static size_t callsite_used;
static _Atomic uint32_t usage_marks[CT_PATH_CAPACITY];

void ct_registry_lock(void)
{
	pthread_mutex_lock(&reg_lock);
}

void ct_registry_unlock(void)
{
	pthread_mutex_unlock(&reg_lock);
}

uint32_t ct_path_count(void)
{
	return atomic_load_explicit(&npaths, memory_order_acquire);
}

uint8_t ct_path_entry(uint32_t id)
{
	return id < CT_PATH_CAPACITY ? path_entry[id] : 0;
}

uint8_t ct_path_api(uint32_t id)
{
	return id < CT_PATH_CAPACITY ? path_api[id] : 0;
}

uint8_t ct_path_route(uint32_t id)
{
	return id < CT_PATH_CAPACITY ? path_route[id] : 0;
}

uint8_t ct_path_dir(uint32_t id)
{
	return id < CT_PATH_CAPACITY ? path_dir[id] : 0;
}

static uint32_t hash_str(uint32_t h, const char *s)
{
	for (; s && *s; s++)
		h = (h ^ (uint8_t)*s) * 16777619u;
	return (h ^ 0xff) * 16777619u;
}

static uint32_t key_hash(const struct ct_path_key *k)
{
	uint32_t h = 2166136261u;
	h = (h ^ k->api) * 16777619u;
	h = (h ^ k->dir) * 16777619u;
	h = (h ^ k->entry) * 16777619u;
	h = (h ^ k->route) * 16777619u;
	h = (h ^ k->key_bits) * 16777619u;
	h = (h ^ k->flags) * 16777619u;
	h = hash_str(h, k->impl);
	h = hash_str(h, k->cipher);
	h = hash_str(h, k->proto);
	return hash_str(h, k->requested);
}

static bool str_eq(const char *a, const char *b)
{
	return strcmp(a ? a : "", b ? b : "") == 0;
}

static bool key_eq(const struct ct_path_key *a, const struct ct_path_key *b)
{
	return a->api == b->api && a->dir == b->dir && a->entry == b->entry && a->route == b->route &&
	       a->key_bits == b->key_bits && a->flags == b->flags && str_eq(a->impl, b->impl) &&
	       str_eq(a->cipher, b->cipher) && str_eq(a->requested, b->requested) &&
	       str_eq(a->proto, b->proto);
}

static void copy_str(char *dst, size_t cap, const char *src)
{
	size_t n = src ? strnlen(src, cap - 1) : 0;
	if (n)
		memcpy(dst, src, n);
	dst[n] = 0;
}

static bool ensure_tables(void)
{
	if (slots)
		return true;
	void *s = mmap(NULL, CT_PATH_CAPACITY * sizeof(*slots), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	void *v = mmap(NULL, CT_PATH_CAPACITY * sizeof(*variant), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (s == MAP_FAILED || v == MAP_FAILED)
		return false;
	variant = v;
	slots = s;
	return true;
}

/* Caller holds reg_lock. Linear scan with a hash pre-check: paths are few (tens), and interning
 * is rare thanks to the per-context and per-thread caches in front of it. */
static uint32_t intern_locked(const struct ct_path_key *key)
{
	if (!ensure_tables())
		return CT_NO_PATH;
	uint32_t h = key_hash(key);
	uint32_t n = atomic_load_explicit(&npaths, memory_order_relaxed);
	for (uint32_t i = 0; i < n; i++)
		if (slots[i].hash == h && key_eq(&slots[i].key, key))
			return i;
	if (n >= CT_PATH_CAPACITY) {
		atomic_fetch_add(&ct_g.lost_paths, 1);
		return CT_NO_PATH;
	}
	struct path_slot *s = &slots[n];
	copy_str(s->impl, sizeof(s->impl), key->impl);
	copy_str(s->cipher, sizeof(s->cipher), key->cipher);
	copy_str(s->requested, sizeof(s->requested), key->requested);
	copy_str(s->proto, sizeof(s->proto), key->proto);
	s->key = *key;
	s->key.impl = s->impl;
	s->key.cipher = s->cipher;
	s->key.requested = key->requested ? s->requested : NULL;
	s->key.proto = key->proto ? s->proto : NULL;
	s->hash = h;
	s->callsite = NULL;
	path_entry[n] = key->entry;
	path_dir[n] = key->dir;
	path_api[n] = key->api;
	path_route[n] = key->route;
	atomic_store_explicit(&npaths, n + 1, memory_order_release);
	return n;
}

uint32_t ct_path_intern(const struct ct_path_key *key)
{
	if (CT_UNLIKELY(atomic_load_explicit(&ct_g.start_pending, memory_order_relaxed)))
		ct_start_complete(); /* the first cipher path of an always-on process */
	pthread_mutex_lock(&reg_lock);
	uint32_t id = intern_locked(key);
	pthread_mutex_unlock(&reg_lock);
	if (id != CT_NO_PATH)
		ct_flusher_start(); /* the first cipher path: from now on there is work to keep */
	return id;
}

uint32_t ct_path_variant(uint32_t id, uint8_t dir, uint8_t entry)
{
	if (id >= ct_path_count() || dir >= VARIANT_DIRS || entry >= VARIANT_ENTRIES)
		return id;
	uint32_t v = atomic_load_explicit(&variant[id][dir][entry], memory_order_acquire);
	if (CT_LIKELY(v))
		return v - 1;
	pthread_mutex_lock(&reg_lock);
	struct ct_path_key k = slots[id].key;
	k.dir = dir;
	k.entry = entry;
	uint32_t nid = intern_locked(&k);
	if (nid != CT_NO_PATH) {
		atomic_store_explicit(&variant[id][dir][entry], nid + 1, memory_order_release);
		/* the flusher reads a published slot's call site without reg_lock: store atomically */
		const char *site = __atomic_load_n(&slots[id].callsite, __ATOMIC_RELAXED);
		if (!__atomic_load_n(&slots[nid].callsite, __ATOMIC_RELAXED) && site)
			__atomic_store_n(&slots[nid].callsite, site, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&reg_lock);
	return nid == CT_NO_PATH ? id : nid;
}

uint32_t ct_path_intern_here(const struct ct_path_key *key)
{
	uint32_t id = ct_path_intern(key);
	if (id != CT_NO_PATH && !ct_path_has_callsite(id)) {
		char site[1024];
		ct_callsite(site, sizeof(site), 0);
		ct_path_set_callsite(id, site);
	}
	return id;
}

void ct_path_set_callsite(uint32_t path_id, const char *callsite)
{
	if (!callsite || path_id >= ct_path_count())
		return;
	pthread_mutex_lock(&reg_lock);
	if (!callsite_arena) {
		void *a = mmap(NULL, CALLSITE_ARENA, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		callsite_arena = a == MAP_FAILED ? NULL : a;
	}
	size_t n = strlen(callsite) + 1;
	if (callsite_arena && !slots[path_id].callsite && callsite_used + n <= CALLSITE_ARENA) {
		char *dst = callsite_arena + callsite_used;
		memcpy(dst, callsite, n);
		callsite_used += n;
		__atomic_store_n(&slots[path_id].callsite, dst, __ATOMIC_RELEASE);
	}
	pthread_mutex_unlock(&reg_lock);
}

bool ct_path_def_get(uint32_t id, struct ct_path_def *def)
{
	if (id >= ct_path_count())
		return false;
	const struct path_slot *s = &slots[id];
	*def = (struct ct_path_def){
		.path_id = id,
		.api = s->key.api,
		.dir = s->key.dir,
		.key_bits = s->key.key_bits,
		.entry = s->key.entry,
		.route = s->key.route,
		.flags = s->key.flags,
		.impl = ct_str_from(s->impl),
		.cipher = ct_str_from(s->cipher),
		.requested = ct_str_from(s->key.requested ? s->requested : NULL),
		.callsite = ct_str_from(__atomic_load_n(&s->callsite, __ATOMIC_ACQUIRE)),
		.proto = ct_str_from(s->key.proto ? s->proto : NULL),
	};
	return true;
}

bool ct_path_usage_seen(uint32_t id, uint32_t bit)
{
	return id < CT_PATH_CAPACITY && (atomic_load_explicit(&usage_marks[id], memory_order_relaxed) & bit);
}

bool ct_path_mark_usage(uint32_t id, uint32_t bit)
{
	if (id >= CT_PATH_CAPACITY || ct_path_usage_seen(id, bit))
		return false;
	return !(atomic_fetch_or_explicit(&usage_marks[id], bit, memory_order_relaxed) & bit);
}

bool ct_path_has_callsite(uint32_t id)
{
	return id < ct_path_count() && __atomic_load_n(&slots[id].callsite, __ATOMIC_ACQUIRE);
}

void ct_registry_after_fork_child(void)
{
	pthread_mutex_init(&reg_lock, NULL);
	/* the child's trace starts without events: its usage patterns are recorded anew */
	for (uint32_t i = 0; i < CT_PATH_CAPACITY; i++)
		atomic_store_explicit(&usage_marks[i], 0, memory_order_relaxed);
}
