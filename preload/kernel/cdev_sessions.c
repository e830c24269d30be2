/* SPDX-License-Identifier: MIT */
/*
 * cdev_sessions.c - open addressing over an mmap'd array (no malloc in hooks); deleted slots are
 * tombstones reused by later inserts. 4096 live sessions is far beyond what cryptodev users hold.
 */
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>

#include "cdev_sessions.h"

#define SLOTS 4096u

static struct ct_cdev_session *slots;
static atomic_flag lock = ATOMIC_FLAG_INIT;

static void spin_lock(void)
{
	while (atomic_flag_test_and_set_explicit(&lock, memory_order_acquire))
		;
}

static void spin_unlock(void)
{
	atomic_flag_clear_explicit(&lock, memory_order_release);
}

static void after_fork_child(void)
{
	atomic_flag_clear(&lock);
}

__attribute__((constructor)) static void sessions_init(void)
{
	pthread_atfork(NULL, NULL, after_fork_child);
}

static uint64_t make_key(const struct ct_kfd_state *file, uint32_t ses)
{
	uint64_t k = ((uint64_t)(uintptr_t)file * 0x9e3779b97f4a7c15ull) ^ ((uint64_t)ses << 1);
	return k < 2 ? k + 2 : k;
}

static unsigned slot_of(uint64_t key)
{
	return (unsigned)(key >> 40) & (SLOTS - 1);
}

struct ct_cdev_session *ct_cdev_session_find(const struct ct_kfd_state *file, uint32_t ses)
{
	struct ct_cdev_session *tab = __atomic_load_n(&slots, __ATOMIC_ACQUIRE);
	uint64_t key = make_key(file, ses);

	if (!tab)
		return NULL;
	for (unsigned i = 0, at = slot_of(key); i < SLOTS; i++, at = (at + 1) & (SLOTS - 1)) {
		uint64_t k = atomic_load_explicit(&tab[at].key, memory_order_acquire);
		if (k == 0)
			return NULL;
		if (k == key && tab[at].file == file && tab[at].ses == ses)
			return &tab[at];
	}
	return NULL;
}

struct ct_cdev_session *ct_cdev_session_add(const struct ct_kfd_state *file, uint32_t ses)
{
	uint64_t key = make_key(file, ses);
	struct ct_cdev_session *found = NULL;

	spin_lock();
	if (!slots) {
		void *p = mmap(NULL, SLOTS * sizeof(*slots), PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p != MAP_FAILED)
			__atomic_store_n(&slots, p, __ATOMIC_RELEASE);
	}
	for (unsigned i = 0, at = slot_of(key); slots && i < SLOTS; i++, at = (at + 1) & (SLOTS - 1)) {
		uint64_t k = atomic_load(&slots[at].key);
		if (k > 1 && !(k == key && slots[at].file == file && slots[at].ses == ses))
			continue;
		/* free, tombstone, or a stale entry with the same id (the kernel reused it) */
		struct ct_cdev_session *s = &slots[at];
		atomic_store(&s->key, 1);
		memset((char *)s + sizeof(s->key), 0, sizeof(*s) - sizeof(s->key));
		s->file = file;
		s->ses = ses;
		s->last_path = CT_NO_PATH;
		atomic_store_explicit(&s->key, key, memory_order_release);
		found = s;
		break;
	}
	spin_unlock();
	return found;
}

void ct_cdev_session_del(struct ct_cdev_session *s)
{
	if (s)
		atomic_store_explicit(&s->key, 1, memory_order_release);
}

void ct_cdev_session_del_file(const struct ct_kfd_state *file)
{
	if (!slots)
		return;
	spin_lock();
	for (unsigned i = 0; i < SLOTS; i++)
		if (atomic_load(&slots[i].key) > 1 && slots[i].file == file)
			atomic_store(&slots[i].key, 1);
	spin_unlock();
}
