/* SPDX-License-Identifier: MIT */
/*
 * kfd.c - the fd table and its state objects. The table is one mmap (MAP_NORESERVE: untouched
 * pages cost nothing) sized from the RLIMIT_NOFILE hard limit at the first tracked fd. States
 * come from mmap'd slabs with a free list, so no hook ever calls malloc.
 */
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>

#include "emul.h"
#include "kfd.h"

#define KFD_MAX_CAP (1u << 22) /* 4M fds: 32 MiB of address space, reserved not committed */
#define KFD_SLAB 64

_Atomic(struct ct_kfd_state *) *ct_kfd_table;
_Atomic uint32_t ct_kfd_cap;
_Atomic uint32_t ct_kfd_alg_ops;

/* Cold paths only (open, socket, accept, close of tracked fds). A spinlock rather than a mutex:
 * the fork child resets it (a mutex held by another thread at fork would never be released). */
static atomic_flag kfd_lock = ATOMIC_FLAG_INIT;
static struct ct_kfd_state *free_states;

static void lock(void)
{
	while (atomic_flag_test_and_set_explicit(&kfd_lock, memory_order_acquire))
#if defined(__x86_64__) || defined(__i386__)
		__builtin_ia32_pause();
#endif
	;
}

static void unlock(void)
{
	atomic_flag_clear_explicit(&kfd_lock, memory_order_release);
}

static void after_fork_child(void)
{
	atomic_flag_clear(&kfd_lock);
}

__attribute__((constructor)) static void kfd_init(void)
{
	pthread_atfork(NULL, NULL, after_fork_child);
}

/* Under the lock. */
static bool table_ready(void)
{
	if (atomic_load(&ct_kfd_cap))
		return true;
	struct rlimit rl;
	rlim_t want = 1024;
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0)
		want = rl.rlim_max > rl.rlim_cur ? rl.rlim_max : rl.rlim_cur;
	if (want == RLIM_INFINITY || want > KFD_MAX_CAP)
		want = KFD_MAX_CAP;
	if (want < 1024)
		want = 1024;
	void *p = mmap(NULL, (size_t)want * sizeof(*ct_kfd_table), PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (p == MAP_FAILED)
		return false;
	ct_kfd_table = p;
	atomic_store_explicit(&ct_kfd_cap, (uint32_t)want, memory_order_release);
	return true;
}

static struct ct_kfd_state *alloc_state(void)
{
	if (!free_states) {
		struct ct_kfd_state *slab = mmap(NULL, KFD_SLAB * sizeof(*slab), PROT_READ | PROT_WRITE,
						 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (slab == MAP_FAILED)
			return NULL;
		for (unsigned i = 0; i < KFD_SLAB; i++) {
			slab[i].next_free = free_states;
			free_states = &slab[i];
		}
	}
	struct ct_kfd_state *st = free_states;
	free_states = st->next_free;
	return st;
}

static void release_locked(int fd, struct ct_kfd_state **last)
{
	struct ct_kfd_state *old = atomic_exchange(&ct_kfd_table[fd], NULL);

	if (old && atomic_fetch_sub(&old->refs, 1) == 1) {
		if (old->kind == CT_KFD_ALG_OP)
			atomic_fetch_sub(&ct_kfd_alg_ops, 1);
		*last = old;
	}
}

struct ct_kfd_state *ct_kfd_new(int fd, enum ct_kfd_kind kind)
{
	struct ct_kfd_state *st = NULL, *old = NULL;

	if (fd < 0)
		return NULL;
	lock();
	if (table_ready() && (unsigned)fd < atomic_load(&ct_kfd_cap) && (st = alloc_state())) {
		memset(st, 0, sizeof(*st));
		st->kind = (uint8_t)kind;
		st->alg.last_path = CT_NO_PATH;
		atomic_store(&st->refs, 1);
		if (kind == CT_KFD_ALG_OP)
			atomic_fetch_add(&ct_kfd_alg_ops, 1);
		release_locked(fd, &old); /* a stale entry (fd closed behind our back) */
		atomic_store(&ct_kfd_table[fd], st);
	}
	if (old) {
		old->next_free = free_states;
		free_states = old;
	}
	unlock();
	return st;
}

void ct_kfd_share(int fd, struct ct_kfd_state *st)
{
	struct ct_kfd_state *old = NULL;

	if (fd < 0 || (unsigned)fd >= atomic_load(&ct_kfd_cap))
		return;
	lock();
	release_locked(fd, &old);
	if (st) {
		atomic_fetch_add(&st->refs, 1);
		atomic_store(&ct_kfd_table[fd], st);
	}
	if (old) {
		old->next_free = free_states;
		free_states = old;
	}
	unlock();
}

struct ct_kfd_state *ct_kfd_forget(int fd)
{
	struct ct_kfd_state *last = NULL;

	if (fd < 0 || (unsigned)fd >= atomic_load(&ct_kfd_cap))
		return NULL;
	lock();
	release_locked(fd, &last);
	unlock();
	return last;
}

void ct_kfd_hold(struct ct_kfd_state *st)
{
	if (st)
		atomic_fetch_add(&st->refs, 1);
}

void ct_kfd_put(struct ct_kfd_state *st)
{
	if (st && atomic_fetch_sub(&st->refs, 1) == 1)
		ct_kfd_free(st);
}

void ct_kfd_free(struct ct_kfd_state *st)
{
	if (!st)
		return;
	ct_emul_release(st); /* before the tfm reference goes: an op's emulation points into it */
	struct ct_kfd_state *tfm = st->tfm_ref;
	st->tfm_ref = NULL;
	if (tfm)
		ct_kfd_put(tfm);
	lock();
	st->next_free = free_states;
	free_states = st;
	unlock();
}

void ct_kfd_forget_range(unsigned first, unsigned last, void (*cb)(int fd, struct ct_kfd_state *st))
{
	uint32_t cap = atomic_load(&ct_kfd_cap);

	if (last >= cap)
		last = cap ? cap - 1 : 0;
	for (unsigned fd = first; cap && fd <= last; fd++) {
		if (!atomic_load_explicit(&ct_kfd_table[fd], memory_order_relaxed))
			continue;
		struct ct_kfd_state *st = ct_kfd_forget((int)fd);
		if (st)
			cb((int)fd, st);
	}
}
