/* SPDX-License-Identifier: MIT */
/*
 * once.h - a result a hook computes once per process, the first caller computing it and the
 * others waiting for it a bounded while: a hook must never block for good (the caller then goes
 * on without the result, as if it had failed). pthread_once would wait without end, and gives no
 * result. The state is an _Atomic int, 0 (CT_ONCE_INIT) before the first call.
 */
#ifndef CT_PRELOAD_ONCE_H
#define CT_PRELOAD_ONCE_H

#include <sched.h>
#include <stdatomic.h>
#include <stdbool.h>

#define CT_ONCE_INIT 0
enum { CT_ONCE_RUNNING = 1, CT_ONCE_DONE = 2, CT_ONCE_FAILED = 3 };

/* run(arg)'s result, run by the first caller only; false while another thread is still running
 * it after ~100,000 yields (a few microseconds is what it takes). */
static inline bool ct_once(_Atomic int *state, bool (*run)(void *), void *arg)
{
	int s = atomic_load_explicit(state, memory_order_acquire);
	if (s == CT_ONCE_INIT) {
		if (atomic_compare_exchange_strong(state, &s, CT_ONCE_RUNNING)) {
			s = run(arg) ? CT_ONCE_DONE : CT_ONCE_FAILED;
			atomic_store_explicit(state, s, memory_order_release);
		} /* else s holds what another thread made of it */
	}
	for (unsigned i = 0; i < 100000 && s == CT_ONCE_RUNNING; i++) {
		sched_yield();
		s = atomic_load_explicit(state, memory_order_acquire);
	}
	return s == CT_ONCE_DONE;
}

#endif
