/* SPDX-License-Identifier: MIT */
/*
 * thread.c - per-thread state: one mmap'd struct ct_thread per thread, found through a single
 * initial-exec TLS pointer. Shards are never freed (the flusher may be summing them): a thread's
 * exit returns its shard to a free list and the next new thread reuses it, counts included.
 */
#include <pthread.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "internal.h"

struct ct_thread ct_thread_none = { .guard = CT_GUARD_ALL, .hot_len = CT_HOT_NO_LEN };
__thread struct ct_thread *ct_tls_thread __attribute__((tls_model("initial-exec"))) = &ct_thread_none;
/* Set while this thread is inside the preload's own set-up (dlsym, thread creation) and after
 * its shard was given back: hooks reached then pass straight through. */
static __thread int tls_busy __attribute__((tls_model("initial-exec")));

static pthread_mutex_t threads_lock = PTHREAD_MUTEX_INITIALIZER;
static struct ct_thread *_Atomic all_threads;
static struct ct_thread *free_threads;
static pthread_key_t exit_key;
static pthread_once_t exit_key_once = PTHREAD_ONCE_INIT;

static void *map_zeroed(size_t len)
{
	void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

static void thread_exit(void *arg)
{
	struct ct_thread *t = arg;
	ct_tls_thread = &ct_thread_none;
	tls_busy = 1; /* hooks in later TLS destructors must not make a new shard */
	pthread_mutex_lock(&threads_lock);
	t->in_use = false;
	t->next_free = free_threads;
	free_threads = t;
	pthread_mutex_unlock(&threads_lock);
}

static void make_exit_key(void)
{
	if (pthread_key_create(&exit_key, thread_exit) != 0)
		exit_key = (pthread_key_t)-1;
}

struct ct_thread *ct_thread_slow(void)
{
	if (tls_busy)
		return NULL;
	int st = atomic_load_explicit(&ct_g.state, memory_order_acquire);
	if (st == 3 || st == 1)
		return NULL;
	int saved = errno;
	tls_busy = 1;
	if (st != 2 && !ct_init()) {
		tls_busy = 0;
		errno = saved;
		return NULL;
	}
	pthread_once(&exit_key_once, make_exit_key);

	pthread_mutex_lock(&threads_lock);
	struct ct_thread *t = free_threads;
	if (t) {
		free_threads = t->next_free;
	}
	pthread_mutex_unlock(&threads_lock);
	if (!t) {
		t = map_zeroed(sizeof(*t));
		if (!t) {
			tls_busy = 0;
			errno = saved;
			return NULL;
		}
		if (ct_per_call)
			t->ops = map_zeroed(CT_OPS_RING * sizeof(struct ct_op));
		struct ct_thread *head = atomic_load(&all_threads);
		do
			t->next = head;
		while (!atomic_compare_exchange_weak(&all_threads, &head, t));
	}
	atomic_fetch_add(&ct_g.threads_seen, 1);
	t->in_use = true;
	t->guard = 0;
	t->countdown = ct_sample_period;
	t->cpu_deadline = 0;
	t->cls_next = 0;
	t->span.t0 = 0;
	t->sample_probe = false;
	t->hot_ctx = NULL; /* a reused shard must not inherit its last owner's context */
	t->hot_c = NULL;
	t->hot_len = CT_HOT_NO_LEN;
	memset(t->cls, 0, sizeof(t->cls));
	t->tid = (uint32_t)syscall(SYS_gettid);
	t->rng = t->tid * 2654435761u | 1;
	if (exit_key != (pthread_key_t)-1)
		pthread_setspecific(exit_key, t);
	ct_tls_thread = t;
	ct_register_exit_handler();
	ct_callsite_warm_up();
	tls_busy = 0;
	errno = saved;
	return t;
}

/* The flusher thread (flusher.c): it never gets a shard, so the hooks its flushes reach (the
 * open/close of /proc files) pass straight through and count nothing. */
void ct_thread_internal(void)
{
	tls_busy = 1;
}

struct ct_thread *ct_thread_get(void)
{
	return ct_thread_fast();
}

bool ct_enter(struct ct_thread *t, enum ct_family fam)
{
	return ct_enter_fast(t, fam);
}

void ct_leave(struct ct_thread *t, enum ct_family fam)
{
	ct_leave_fast(t, fam);
}

struct ct_thread *ct_thread_list(void)
{
	return atomic_load(&all_threads);
}

/* A path's counters are allocated 64 paths at a time, on the first call a thread makes on one. */
struct ct_counters *ct_counters_alloc(struct ct_thread *t, uint32_t path_id)
{
	if (path_id >= CT_PATH_CAPACITY)
		return NULL;
	struct ct_counters *c = map_zeroed(CT_PATHS_PER_CHUNK * sizeof(struct ct_counters));
	if (!c)
		return NULL;
	__atomic_store_n(&t->chunks[path_id / CT_PATHS_PER_CHUNK], c, __ATOMIC_RELEASE);
	return c + path_id % CT_PATHS_PER_CHUNK;
}

/* In a fork child only the forking thread exists: every other shard is free, and all counts
 * start from zero (the parent's trace holds them). */
/* The thread's counters and per-call ops from zero: a fork child's, a new attach's. */
static void zero_counters(struct ct_thread *t)
{
	for (unsigned i = 0; i < CT_CHUNKS; i++)
		if (t->chunks[i])
			memset(t->chunks[i], 0, CT_PATHS_PER_CHUNK * sizeof(struct ct_counters));
	atomic_store(&t->ops_head, 0);
	atomic_store(&t->ops_tail, 0);
	atomic_store(&t->ops_dropped, 0);
	atomic_store(&t->ops_sampled_out, 0);
	atomic_store(&t->lane_calls, 0);
	t->tid_written = 0;
	t->span.t0 = 0; /* counters start again from zero: a span across it means nothing */
}

void ct_thread_counters_reset(void)
{
	for (struct ct_thread *t = atomic_load(&all_threads); t; t = t->next)
		zero_counters(t);
}

void ct_thread_after_fork_child(void)
{
	pthread_mutex_init(&threads_lock, NULL);
	struct ct_thread *self = ct_thread_self();
	free_threads = NULL;
	for (struct ct_thread *t = atomic_load(&all_threads); t; t = t->next) {
		zero_counters(t);
		if (t != self) {
			t->in_use = false;
			t->next_free = free_threads;
			free_threads = t;
		}
	}
	ct_ops_cap_after_fork_child();
	if (self)
		self->tid = (uint32_t)syscall(SYS_gettid);
}
