/* SPDX-License-Identifier: MIT */
/*
 * stats.c - counting operations. The fast part (exact calls and bytes per size bucket, the
 * sampling decision) is inline in internal.h; this file holds what only timed calls pay for:
 * latency, the ~1/ms thread-CPU sample, the per-call ring and the periodic flush check.
 *
 * CPU sampling: clock_gettime(CLOCK_THREAD_CPUTIME_ID) before and after one call, at most about
 * once per millisecond per thread. The wall time of that same call is measured inside the two
 * reads (a preemption at the syscall's exit must not count as wall time of the call); the reads'
 * own cost, calibrated at start, is subtracted from the CPU delta, which is capped at the wall
 * time. The reporter scales the path's wall time by cpu/wall. The CPU time goes to
 * "sys" for kernel paths (cryptodev, AF_ALG) and for calls during which a nested kernel hook
 * counted a syscall (an engine talking to the kernel), to "user" otherwise.
 */
#include <string.h>
#include <time.h>

#include "internal.h"

struct ct_clock ct_clk;

static void calibrate_cpu_read(void);

void ct_clock_init(void)
{
	uint64_t hz = ct_tsc_hz();
	ct_clk.tsc_hz = hz;
	if (hz) {
		ct_clk.use_tsc = true;
		ct_clk.mult = (uint64_t)(((unsigned __int128)1000000000u << 32) / hz);
		ct_clk.tsc0 = ct_rdtsc();
		ct_clk.mono0 = ct_mono_ns_raw();
		ct_clk.ms_ticks = hz / 1000;
	} else {
		ct_clk.use_tsc = false;
		ct_clk.ms_ticks = 1000000;
	}
	calibrate_cpu_read();
	/* the smallest gap between two back-to-back reads is the read's own cost */
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 64; i++) {
		uint64_t a = ct_clock_now(), b = ct_clock_now();
		if (b >= a && b - a < best)
			best = b - a;
	}
	ct_clk.read_ticks = best == UINT64_MAX ? 0 : best;
}

uint64_t ct_now_ns(void)
{
	return ct_mono_ns_raw();
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* What two back-to-back thread-CPU reads measure with nothing between them (the syscall's own
 * entry/exit), subtracted from every sample. */
static uint64_t cpu_read_overhead_ns;

static void calibrate_cpu_read(void)
{
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 16; i++) {
		uint64_t a = thread_cpu_ns(), b = thread_cpu_ns();
		if (b >= a && b - a < best)
			best = b - a;
	}
	cpu_read_overhead_ns = best == UINT64_MAX ? 0 : best;
}

void ct_op_slow_begin(struct ct_thread *t, struct ct_op_timer *op)
{
	t->cpu_deadline = op->t0 + ct_clk.ms_ticks;
	uint64_t cpu = thread_cpu_ns();
	op->cpu0_ns = cpu ? cpu : 1;
	op->t0 = ct_clock_now(); /* the call's own wall time starts after the clock syscall */
}

void ct_op_slow_end(struct ct_thread *t, struct ct_op_timer *op, struct ct_counters *c, uint32_t path_id,
		    uint64_t bytes, uint64_t now)
{
	uint64_t ns = ct_clock_delta_ns(now - op->t0);
	unsigned b = ct_size_bucket(bytes);
	/* Every timed call counts towards wall time, CPU-sampled ones too: when each call is longer
	 * than the CPU-sampling period (a slow engine, any kernel call under emulation) every call
	 * is CPU-sampled, and leaving them out would leave the path with no wall time at all. */
	CT_ADD(c->size[b].timed_calls, 1);
	CT_ADD(c->size[b].timed_ns, ns);
	CT_ADD(c->lat[ct_lat_bucket(ns)], 1);
	if (op->cpu0_ns) {
		/* CPU and wall over the same call: the CPU delta minus the reads' own cost, never
		 * more than the wall time (a preemption inside the call makes it less, truly) */
		uint64_t cpu1 = thread_cpu_ns();
		uint64_t cpu = cpu1 > op->cpu0_ns + cpu_read_overhead_ns ? cpu1 - op->cpu0_ns - cpu_read_overhead_ns : 0;
		if (cpu > ns)
			cpu = ns;
		uint8_t api = ct_path_api(path_id);
		/* kernel-interface work runs in the kernel (sys time), unless the route serves it
		 * in-process (emulation: user time); syscalls made inside any op are sys time too */
		bool kernel_api = (api == CT_API_CRYPTODEV || api == CT_API_AFALG) &&
				  ct_path_route(path_id) != CT_ROUTE_AESNI;
		bool kernel = kernel_api || t->syscalls != op->syscalls_before;
		CT_ADD(c->cpu_samples, 1);
		CT_ADD(c->cpu_sample_wall_ns, ns);
		if (kernel)
			CT_ADD(c->cpu_sample_sys_ns, cpu);
		else
			CT_ADD(c->cpu_sample_user_ns, cpu);
	}

	if (ct_per_call && t->ops) {
		uint64_t head = atomic_load_explicit(&t->ops_head, memory_order_relaxed);
		uint64_t tail = atomic_load_explicit(&t->ops_tail, memory_order_acquire);
		if (head - tail >= CT_OPS_RING) {
			atomic_store_explicit(&t->ops_dropped,
					      atomic_load_explicit(&t->ops_dropped, memory_order_relaxed) + 1,
					      memory_order_relaxed);
		} else {
			struct ct_op *o = &t->ops[head % CT_OPS_RING];
			o->start_mono_ns = ct_clock_to_mono(op->t0);
			o->dur_ns = ns > UINT32_MAX ? UINT32_MAX : (uint32_t)ns;
			o->path_id = path_id;
			o->bytes = bytes > UINT32_MAX ? UINT32_MAX : (uint32_t)bytes;
			atomic_store_explicit(&t->ops_head, head + 1, memory_order_release);
			/* half full: write it out now rather than drop at the next second's flush */
			if (CT_UNLIKELY(head + 1 - tail == CT_OPS_RING / 2)) {
				ct_flush(false);
				return;
			}
		}
	}

	if (CT_UNLIKELY(now >= atomic_load_explicit(&ct_g.next_flush, memory_order_relaxed)))
		ct_flush_due(now);
}

/* The out-of-line entry is the kernel interfaces' (cryptodev ioctls, AF_ALG sendmsg/read/AIO):
 * every such operation is timed. Each costs at least one syscall (a microsecond or more), so two
 * clock reads add under a few percent, and these paths rarely see enough calls for 1-in-N
 * sampling to leave figures in every size bucket. */
void ct_op_begin(struct ct_thread *t, struct ct_op_timer *op, uint64_t bytes)
{
	(void)bytes;
	op->cpu0_ns = 0;
	op->syscalls_before = t->syscalls;
	op->t0 = ct_clock_now();
	if (CT_UNLIKELY(op->t0 >= t->cpu_deadline))
		ct_op_slow_begin(t, op);
}

void ct_op_end(struct ct_thread *t, struct ct_op_timer *op, uint32_t path_id, uint64_t bytes, bool ok)
{
	ct_op_end_fast(t, op, path_id, bytes, ok);
}

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

void ct_phase_teardown(struct ct_thread *t, uint32_t path_id, uint64_t ns)
{
	struct ct_counters *c = t ? ct_counters_of(t, path_id) : NULL;
	if (!c)
		return;
	CT_ADD(c->teardown_calls, 1);
	CT_ADD(c->teardown_ns, ns);
}

/* The flusher: one path's counters summed over every shard (relaxed loads of single-writer
 * counters: a snapshot may be a few calls behind, never torn per field). Returns false when no
 * thread ever touched the path. */
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
		const struct ct_counters *c = base + idx;
#define LD(f) __atomic_load_n(&c->f, __ATOMIC_RELAXED)
		for (unsigned b = 0; b < CT_SIZE_BUCKETS; b++) {
			uint64_t calls = LD(size[b].calls);
			if (!calls && !LD(size[b].timed_calls))
				continue;
			s->size[b].calls += calls;
			s->size[b].bytes += LD(size[b].bytes);
			s->size[b].timed_calls += LD(size[b].timed_calls);
			s->size[b].timed_ns += LD(size[b].timed_ns);
		}
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
