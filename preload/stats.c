/* SPDX-License-Identifier: MIT */
/*
 * stats.c - a path's counters beyond the hot path (timing.h counts and times calls): the kernel
 * interfaces' syscall, splice and session counts, and the flusher's sum of every thread's shard.
 */
#include <sched.h>
#include <string.h>

#include "internal.h"

void ct_count_syscall(struct ct_thread *t, uint32_t path_id)
{
	if (!t)
		return;
	t->syscalls++;
	struct ct_counters *c = ct_counters_of(t, path_id);
	if (c)
		CT_ADD(c->syscalls, 1);
}

void ct_mark_spliced(struct ct_thread *t, uint32_t path_id)
{
	struct ct_counters *c = t ? ct_counters_of(t, path_id) : NULL;
	if (c)
		CT_ADD(c->spliced_calls, 1);
}

void ct_phase_setup(struct ct_thread *t, uint32_t path_id, uint64_t ns)
{
	struct ct_counters *c = t ? ct_counters_of(t, path_id) : NULL;
	if (!c)
		return;
	CT_ADD(c->setup_calls, 1);
	CT_ADD(c->setup_ns, ns);
}

void ct_phase_teardown_more(struct ct_thread *t, uint32_t path_id, uint64_t ns)
{
	struct ct_counters *c = t ? ct_counters_of(t, path_id) : NULL;
	if (c)
		CT_ADD(c->teardown_ns, ns);
}

void ct_phase_teardown(struct ct_thread *t, uint32_t path_id, uint64_t ns)
{
	struct ct_counters *c = t ? ct_counters_of(t, path_id) : NULL;
	if (!c)
		return;
	CT_ADD(c->teardown_calls, 1);
	CT_ADD(c->teardown_ns, ns);
}

#ifdef CT_SPLIT_COUNTERS
_Atomic uint32_t ct_carry_begun, ct_carry_ended;

/* A shard is read when no carry is in flight, and again when one began meanwhile: a writer
 * between the two words is on another thread and done within instructions (or preempted: yield
 * to it). Past CARRY_TRIES the shard is read anyway: the writer is stopped mid-carry below us (a
 * fatal signal's flush on its thread), and one counter of it may be 2^32 short in that snapshot. */
#define CARRY_TRIES 64
#endif

/* One thread's shard of a path's counters, added into s (relaxed loads of single-writer counters:
 * a snapshot may be a few calls behind, never torn per field). */
static void sum_shard(const struct ct_counters *c, struct ct_path_stats *s)
{
#define LD(f) ct_counter_load(&c->f)
	for (unsigned i = 0; i < CT_CELLS; i++) {
		uint64_t calls = LD(cell[i].calls);
		if (!calls && !LD(cell[i].timed_calls) && !LD(cell[i].span_rejected))
			continue;
		struct ct_size_bucket *to = i < CT_SIZE_BUCKETS ? &s->size[i]
								: &s->phase[i - CT_SIZE_BUCKETS];
		to->calls += calls;
		to->bytes += LD(cell[i].bytes);
		to->timed_calls += LD(cell[i].timed_calls);
		to->timed_ns += LD(cell[i].timed_ns);
		to->span_calls += LD(cell[i].span_calls);
		to->span_ns += LD(cell[i].span_ns);
		to->span_rejected += LD(cell[i].span_rejected);
		to->span_rejected_ns += LD(cell[i].span_rejected_ns);
	}
	s->tls_records += LD(tls_records);
	s->errors += LD(errors);
	s->cpu_samples += LD(cpu_samples);
	s->cpu_sample_wall_ns += LD(cpu_sample_wall_ns);
	s->cpu_sample_user_ns += LD(cpu_sample_user_ns);
	s->cpu_sample_sys_ns += LD(cpu_sample_sys_ns);
	s->syscalls += LD(syscalls);
	s->spliced_calls += LD(spliced_calls);
	s->setup_calls += LD(setup_calls);
	s->setup_ns += LD(setup_ns);
	s->teardown_calls += LD(teardown_calls);
	s->teardown_ns += LD(teardown_ns);
	for (unsigned b = 0; b < CT_LAT_BUCKETS; b++)
		s->lat[b] += LD(lat[b]);
#undef LD
}

/* The flusher: one path's counters summed over every shard. Returns false when no thread ever
 * touched the path. */
bool ct_stats_sum(uint32_t path_id, struct ct_path_stats *s)
{
	memset(s, 0, sizeof(*s));
	s->path_id = path_id;
	bool any = false;
	uint32_t chunk = path_id / CT_PATHS_PER_CHUNK, idx = path_id % CT_PATHS_PER_CHUNK;
	for (struct ct_thread *t = ct_thread_list(); t; t = t->next) {
		struct ct_counters *base = __atomic_load_n(&t->chunks[chunk], __ATOMIC_ACQUIRE);
		if (!base)
			continue;
#ifdef CT_SPLIT_COUNTERS
		const struct ct_path_stats before = *s;
		for (unsigned tries = 0;; tries++) {
			uint32_t begun;
			bool quiet = ct_carry_read_begin(&begun);
			if (quiet || tries >= CARRY_TRIES) {
				sum_shard(base + idx, s);
				if (!ct_carry_read_again(begun) || tries >= CARRY_TRIES)
					break;
				*s = before; /* a carry began while we read: again */
			}
			if (tries % 8 == 7)
				sched_yield();
		}
#else
		sum_shard(base + idx, s);
#endif
		any = true;
	}
	for (unsigned b = 0; b < CT_SIZE_BUCKETS; b++) {
		s->calls += s->size[b].calls;
		s->bytes += s->size[b].bytes;
		s->timed_calls += s->size[b].timed_calls;
		s->timed_ns += s->size[b].timed_ns;
	}
	return any;
}
