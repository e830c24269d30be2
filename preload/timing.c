/* SPDX-License-Identifier: MIT */
/*
 * timing.c - the clock, and what only sampled calls pay for (timing.h says the method): probes,
 * spans, the ~1/ms thread-CPU sample, the per-call ring, the periodic flush check, and the
 * calibration of what our own clock reads add, measured once per process on an empty call through
 * this very code (the first sample pays ~50 us; a process without cipher calls never does).
 *
 * CPU sampling: clock_gettime(CLOCK_THREAD_CPUTIME_ID) before and after a run of calls, at most
 * about once per millisecond per thread. The read is a real syscall (0.5-1 us in a VM, varying by
 * ~100 ns from one read to the next), so it is taken around a span (microseconds of calls), not
 * around one 60 ns call, whose CPU time it would drown; a probe is sampled only where the path's
 * calls run alone (their spans mostly rejected) or before its first span, and kernel operations
 * (microseconds each) always. The reads' own cost, calibrated at start as the mean of back-to-back
 * pairs (not their minimum: the sum of samples must not lean one way), is subtracted, and a sample
 * is summed signed: a single sample may read below 0 or above its wall time, their sum over
 * hundreds does not (the reporter clamps the ratio). The reporter scales the path's wall time by
 * cpu/wall. The CPU time goes to "sys" for kernel paths (cryptodev, AF_ALG) and for calls during
 * which a nested kernel hook counted a syscall (an engine talking to the kernel), to "user"
 * otherwise.
 */
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "internal.h"
#include "timing_model.h"

struct ct_clock ct_clk;

/* A CPU-sampled span's least length (span_open). */
#define CT_CPU_SPAN_NS 20000.0
/* A span's length (span_open), and the most calls it covers. A span's own cost inside the
 * program runs above what calibration measures in a hot loop (its code runs once per hundreds of
 * calls: cold branches and lines; ~50-100 ns more on a 2 GHz VM), and every span adds it to its
 * calls: spans of ~5 us read tight loops 1-2 % high, and 5-10 % where rejected spans shrank them
 * to a few calls (a noisy host). At 20 us it is under 0.5 %, and a span still fits between a
 * VM's timer ticks (about one per ms). */
#define CT_SPAN_TARGET_NS 20000.0
#define CT_SPAN_MAX_CALLS 4096u
/* The longest pause inside a rejected span that is kept as a pause (an interrupt, a hypervisor
 * exit, the program's own work); beyond it, the thread was descheduled. */
#define CT_PAUSE_MAX_NS 500000.0

static void calibrate_cpu_read(void);

/* The smallest gap between two back-to-back reads is the read's own cost. */
static uint64_t min_read_gap(void)
{
	uint64_t best = UINT64_MAX;
	for (int i = 0; i < 64; i++) {
		uint64_t a = ct_clock_now(), b = ct_clock_now();
		if (b >= a && b - a < best)
			best = b - a;
	}
	return best == UINT64_MAX ? 0 : best;
}

void ct_clock_init(bool measure_tsc)
{
	struct ct_ticks_info ti = { .name = "none" };
	bool have = measure_tsc && ct_ticks_probe(&ti);
	ct_clk.tick_name = ti.name;
	if (have) {
		ct_clk.use_tsc = true;
		ct_clk.tsc_cycles = ti.cycles;
		ct_clk.tsc_hz = ti.hz;
		ct_clk.has_rdtscp = ct_cpu_has_rdtscp() != 0;
		/* 1e9 << 32 < 2^62: no 128-bit division needed */
		ct_clk.mult = (1000000000ull << 32) / ti.hz;
		ct_clk.tsc0 = ct_ticks();
		ct_clk.mono0 = ct_mono_ns_raw();
		ct_clk.ms_ticks = ti.hz / 1000 ? ti.hz / 1000 : 1;
	} else {
		ct_clk.use_tsc = false;
		ct_clk.ms_ticks = 1000000;
	}
	ct_clk.read_ticks = min_read_gap();
}

uint64_t ct_now_ns(void)
{
	return ct_mono_ns_raw();
}

static double ns_per_tick(void)
{
	return ct_clk.use_tsc && ct_clk.tsc_hz ? 1e9 / (double)ct_clk.tsc_hz : 1.0;
}

/* An interval between two plain reads, in ns, without the cost of the read itself. */
static uint64_t delta_ns(uint64_t d)
{
	d = d > ct_clk.read_ticks ? d - ct_clk.read_ticks : 0;
	return ct_clock_to_ns(d);
}

static uint64_t thread_cpu_ns(void)
{
	struct timespec ts;
	if (clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* What two back-to-back thread-CPU reads measure with nothing between them (the syscall's own
 * entry/exit), subtracted from every sample: the mean without outliers of 64 pairs, after 8 that
 * warm the path up (a process's first syscalls are slower). */
static int64_t cpu_read_overhead_ns;
static int64_t robust_mean(int64_t *v, unsigned n);

static void calibrate_cpu_read(void)
{
	int64_t pairs[64];
	unsigned n = 0;
	for (int i = 0; i < 72; i++) {
		uint64_t a = thread_cpu_ns(), b = thread_cpu_ns();
		if (i >= 8 && b >= a)
			pairs[n++] = (int64_t)(b - a);
	}
	cpu_read_overhead_ns = robust_mean(pairs, n);
}

/* One CPU sample: cpu1 - cpu0 without the reads' cost, over wall_ns of the same interval, into
 * c's sample sums (signed, two's complement: see the header comment). */
static void cpu_sample_add(struct ct_counters *c, uint32_t path_id, bool syscalls_made, uint64_t wall_ns,
			   uint64_t cpu0_ns, uint64_t cpu1_ns)
{
	int64_t cpu = (int64_t)(cpu1_ns - cpu0_ns) - cpu_read_overhead_ns;
	uint8_t api = ct_path_api(path_id);
	/* kernel-interface work runs in the kernel (sys time), unless the route serves it
	 * in-process (emulation: user time); syscalls made inside any op are sys time too */
	bool kernel_api = (api == CT_API_CRYPTODEV || api == CT_API_AFALG || api == CT_API_KTLS) &&
			  ct_path_route(path_id) != CT_ROUTE_AESNI;
	CT_ADD(c->cpu_samples, 1);
	CT_ADD(c->cpu_sample_wall_ns, wall_ns);
	if (kernel_api || syscalls_made)
		CT_ADD(c->cpu_sample_sys_ns, (uint64_t)cpu);
	else
		CT_ADD(c->cpu_sample_user_ns, (uint64_t)cpu);
}

/* ---- calibration: what the method's own reads and bookkeeping add ---------------------------- */

/*
 * Measured on an empty call through ct_tick / ct_timed_begin / ct_timed_end themselves, so that
 * what is subtracted is what this code adds, on this CPU:
 *  - probe_ticks: a probe's entry-to-exit reads around nothing;
 *  - spill_ticks: the ordered read right after the plain one, with no work in flight;
 *  - span_ticks: a one-call span around nothing, minus the empty call's own cost in a loop;
 * and the tolerance of a span (timing_model.h): per call, the hook's and a loop's instructions
 * around an empty call plus one clock read; once, two ticks of the clock (the TSC of some CPUs
 * moves in steps of ~10 ns).
 */
static struct {
	_Atomic int state; /* 0 not yet, 1 measuring, 2 ready */
	int64_t probe_ticks, spill_ticks, span_ticks;
	double ns_per_tick;
	double span_target_ns; /* a span's length: CT_SPAN_TARGET_NS, or 100 x span_ticks */
	struct ct_span_tolerance tol;
} cal;

/* While calibrating (this thread only), probes and spans hand their raw ticks here instead of
 * counting them. */
struct calib_sink {
	int64_t raw[2][256];
	unsigned n[2];
};
static __thread struct calib_sink *calib_sink __attribute__((tls_model("initial-exec")));

/* Per-call mode, but not for the calibration's empty calls. */
static inline bool per_call(void)
{
	return ct_per_call && !calib_sink;
}

/* Insertion sort: qsort would do, but glibc's asks sysinfo(2) how much memory there is, and
 * the first sample may come inside a seccomp sandbox (sshd's pre-auth child) that kills for it.
 * Calibration makes no syscall at all. */
static void sort_i64(int64_t *v, unsigned n)
{
	for (unsigned i = 1; i < n; i++) {
		int64_t x = v[i];
		unsigned j = i;
		for (; j > 0 && v[j - 1] > x; j--)
			v[j] = v[j - 1];
		v[j] = x;
	}
}

/* The mean of samples without their outliers (an interrupt or a preemption inside one): those
 * above three times the median plus 100 ticks. A mean, not the median: a TSC that moves in
 * steps reads a 6-tick interval as 0 or 26, and only the mean of many reads is unbiased. */
static int64_t robust_mean(int64_t *v, unsigned n)
{
	if (!n)
		return 0;
	sort_i64(v, n);
	int64_t cut = 3 * (v[n / 2] > 0 ? v[n / 2] : 0) + 100, sum = 0;
	unsigned used = 0;
	for (unsigned i = 0; i < n; i++) {
		if (v[i] > cut)
			break;
		sum += v[i];
		used++;
	}
	return used ? sum / (int64_t)used : v[0];
}

static __attribute__((noinline)) void empty_call(void)
{
	__asm__ __volatile__("" ::: "memory");
}

static struct ct_thread calib_thread;
static struct ct_counters calib_counters;

/* One call of the calibration loop, as a hook makes it. */
static __attribute__((noinline)) void calib_hook(void)
{
	struct ct_thread *t = &calib_thread;
	if (ct_tick(t, &calib_counters, 5, 16)) {
		struct ct_timed tm;
		ct_timed_begin(t, &tm, &calib_counters, 0, 5, 16);
		empty_call();
		ct_timed_end(t, &tm);
		return;
	}
	empty_call();
}

static void timing_calibrate(void)
{
	static struct calib_sink sink;
	struct ct_thread *t = &calib_thread;
	struct ct_size_bucket *cell = &calib_counters.cell[5];
	memset(t, 0, sizeof(*t));
	memset(&calib_counters, 0, sizeof(calib_counters));
	memset(&sink, 0, sizeof(sink));
	cal.ns_per_tick = ns_per_tick();
	calibrate_cpu_read(); /* ~50 us of syscalls: here, not at start, for processes that sample */
	t->cpu_deadline = UINT64_MAX;
	t->rng = 1;
	calib_sink = &sink;

	/* the empty call in a loop, untimed: the best of a few runs */
	int64_t loop_ticks = INT64_MAX;
	for (int run = 0; run < 5; run++) {
		t->countdown = UINT32_MAX;
		uint64_t t0 = ct_clock_now();
		for (int i = 0; i < 512; i++)
			calib_hook();
		int64_t per = (int64_t)(ct_clock_now() - t0) / 512;
		if (per < loop_ticks)
			loop_ticks = per;
	}
	/* probes: the first sample of a cell is one */
	for (int i = 0; i < 256; i++) {
		cell->timed_calls = 0;
		t->countdown = 1;
		calib_hook();
	}
	cal.probe_ticks = robust_mean(sink.raw[0], sink.n[0]);
	cal.spill_ticks = robust_mean(sink.raw[1], sink.n[1]);
	/* one-call spans: a cell with probes long enough that its spans cover one call */
	sink.n[0] = 0;
	for (int i = 0; i < 256; i++) {
		cell->timed_calls = 1;
		cell->timed_ns = 1000000000;
		t->sample_probe = false;
		t->countdown = 1;
		calib_hook(); /* opens the span */
		calib_hook(); /* ends it at its entry */
	}
	for (unsigned i = 0; i < sink.n[0]; i++)
		sink.raw[0][i] -= loop_ticks;
	cal.span_ticks = robust_mean(sink.raw[0], sink.n[0]);
	calib_sink = NULL;

	/* the clock's resolution as a span's ends see it: the mean gap between two reads (a TSC
	 * that moves in ~10 ns steps reads back-to-back as 0 or one step, ~half a step on average) */
	int64_t gaps[256];
	for (int i = 0; i < 256; i++) {
		uint64_t a = ct_clock_now(), b = ct_clock_now();
		gaps[i] = (int64_t)(b - a);
	}
	int64_t step = robust_mean(gaps, 256);
	/* a call in a loop costs its probe plus the hook's and the loop's instructions around it;
	 * and a probe of a call of a few ns reads low by up to what is subtracted from it (the
	 * probe's own instructions overlap the call's) */
	cal.tol.per_call_ns =
		(double)((loop_ticks > 0 ? loop_ticks : 0) + (cal.probe_ticks > 0 ? cal.probe_ticks : 0)) *
		cal.ns_per_tick;
	cal.tol.fixed_ns = 4.0 * (double)(step > 1 ? step : 1) * cal.ns_per_tick;
	cal.tol.pause_max_ns = CT_PAUSE_MAX_NS;
	double span_ns = (double)(cal.span_ticks > 0 ? cal.span_ticks : 0) * cal.ns_per_tick;
	cal.span_target_ns = span_ns * 100 > CT_SPAN_TARGET_NS ? span_ns * 100 : CT_SPAN_TARGET_NS;
	ct_log(2,
	       "timing: probe %.1f ns + ordered read %.1f ns, span %.1f ns, loop %.1f ns, clock step "
	       "%.1f ns subtracted or allowed",
	       (double)cal.probe_ticks * cal.ns_per_tick, (double)cal.spill_ticks * cal.ns_per_tick, span_ns,
	       (double)loop_ticks * cal.ns_per_tick, (double)step * cal.ns_per_tick);
}

/* Calibrates on the first sample of the process; false while another thread is at it (that
 * thread's call then goes untimed, counted all the same). */
static bool timing_ready(void)
{
	int st = atomic_load_explicit(&cal.state, memory_order_acquire);
	if (CT_LIKELY(st == 2))
		return true;
	int expected = 0;
	if (st != 0 || !atomic_compare_exchange_strong(&cal.state, &expected, 1))
		return false;
	timing_calibrate();
	atomic_store_explicit(&cal.state, 2, memory_order_release);
	return true;
}

void ct_timing_calibrate_now(void)
{
	(void)timing_ready();
}

/* ---- probes ------------------------------------------------------------------------------- */

static double probe_mean_ns(const struct ct_size_bucket *cell)
{
	uint64_t n = cell->timed_calls;
	int64_t sum = (int64_t)cell->timed_ns;
	return n && sum > 0 ? (double)sum / (double)n : 0;
}

/* Per-call mode: one operation into this thread's ring (single producer; the flusher consumes),
 * when the rate cap keeps it (ops_cap.c). */
static void ring_push(struct ct_thread *t, uint64_t start, uint64_t ns, uint32_t path_id, uint64_t bytes)
{
	if (!t->ops)
		return;
	uint32_t weight = 1;
	if (ct_max_ops_rate && !ct_ops_cap_keep(t, start, &weight))
		return;
	uint64_t head = atomic_load_explicit(&t->ops_head, memory_order_relaxed);
	uint64_t tail = atomic_load_explicit(&t->ops_tail, memory_order_acquire);
	if (head - tail >= CT_OPS_RING) {
		ct_owned_inc(&t->ops_dropped);
		return;
	}
	struct ct_op *o = &t->ops[head % CT_OPS_RING];
	o->start_mono_ns = ct_clock_to_mono(start);
	o->dur_ns = ns > UINT32_MAX ? UINT32_MAX : (uint32_t)ns;
	o->path_id = path_id;
	o->bytes = bytes > UINT32_MAX ? UINT32_MAX : (uint32_t)bytes;
	o->weight = weight;
	atomic_store_explicit(&t->ops_head, head + 1, memory_order_release);
	/* half full: write it out now rather than drop at the next second's flush */
	if (CT_UNLIKELY(head + 1 - tail == CT_OPS_RING / 2))
		ct_flush(false);
}

/* A measured call's thread-CPU sample (when one was taken) and its latency. */
static void account_call(struct ct_thread *t, struct ct_counters *c, uint32_t path_id, bool data, uint64_t ns,
			 uint64_t raw_ticks, uint64_t cpu0_ns, uint32_t syscalls_before)
{
	if (data) /* the path's latency distribution is its data calls' */
		CT_ADD(c->lat[ct_lat_bucket(ns)], 1);
	/* the CPU reads enclose the clock reads: their interval is the raw one, reads included */
	if (cpu0_ns)
		cpu_sample_add(c, path_id, t->syscalls != syscalls_before, ct_clock_to_ns(raw_ticks), cpu0_ns,
			       thread_cpu_ns());
}

static void probe_record(struct ct_thread *t, struct ct_timed *tm, uint64_t b, uint64_t ordered)
{
	int64_t spill = ordered == b ? 0 : (int64_t)(ordered - b) - cal.spill_ticks;
	int64_t ticks = (int64_t)(b - tm->a) - cal.probe_ticks + (spill > 0 ? spill : 0);
	if (CT_UNLIKELY(calib_sink)) {
		if (calib_sink->n[0] < 256) {
			calib_sink->raw[0][calib_sink->n[0]++] = (int64_t)(b - tm->a);
			calib_sink->raw[1][calib_sink->n[1]++] = (int64_t)(ordered - b);
		}
		return;
	}
	double ns_d = (double)ticks * cal.ns_per_tick;
	int64_t ns = (int64_t)(ns_d + (ns_d < 0 ? -0.5 : 0.5));
	uint64_t pos = ns > 0 ? (uint64_t)ns : 0;
	struct ct_size_bucket *cell = &tm->c->cell[tm->ci];
	/* The mean is what prices calls: one probe that an interrupt or a preemption stretched to
	 * milliseconds would move the mean of thousands of 20 ns probes by 100 ns. Past 16 probes,
	 * one counts at most 64 times the mean so far (the latency histogram keeps it whole). */
	double mean = probe_mean_ns(cell);
	uint64_t cpu0 = tm->cpu0_ns;
	if (cell->timed_calls >= 16 && mean > 0 && (double)ns > 64 * mean) {
		ns = (int64_t)(64 * mean);
		/* nor would its CPU sample say what the call costs: its wall time is mostly not the
		 * call's, and the path's user/sys split is the samples' summed CPU over their wall */
		cpu0 = 0;
	}
	CT_ADD(cell->timed_calls, 1);
	CT_ADD(cell->timed_ns, (uint64_t)ns); /* two's complement: see ct_size_bucket */
	account_call(t, tm->c, tm->path, tm->ci < CT_SIZE_BUCKETS, pos, b - tm->a, cpu0, tm->syscalls_before);
	/* the per-call timeline holds data calls (an op record has no phase) */
	if (ct_per_call && tm->ci < CT_SIZE_BUCKETS)
		ring_push(t, tm->a, pos, tm->path, tm->bytes);
}

/* ---- spans -------------------------------------------------------------------------------- */

static void span_open(struct ct_thread *t, const struct ct_timed *tm)
{
	struct ct_counters *c = tm->c;
	uint64_t m = c->cell_mask;
	t->span.c = c;
	t->span.mask = m;
	while (m) {
		unsigned i = (unsigned)__builtin_ctzll(m);
		m &= m - 1;
		t->span.snap[i] = c->cell[i].calls;
	}
	t->span.snap[tm->ci]--; /* the call just made, counted before it ran, is the span's first */
	/* long enough that the span's own cost is small beside it (CT_SPAN_TARGET_NS), but shorter
	 * while this cell's spans are often rejected (calls in short bursts with other work between:
	 * a span then has to fit inside a burst to be kept) */
	const struct ct_size_bucket *cell = &c->cell[tm->ci];
	double probe = probe_mean_ns(cell);
	double k = probe > 0 ? cal.span_target_ns / probe : 256;
	uint64_t judged = cell->span_calls + cell->span_rejected;
	if (judged >= 64)
		k *= (double)cell->span_calls / (double)judged;
	t->countdown = per_call() || k < 1 ? 1 : k > CT_SPAN_MAX_CALLS ? CT_SPAN_MAX_CALLS : (uint32_t)k;
	/* a CPU-sampled span runs for CT_CPU_SPAN_NS at least: the thread-CPU reads around it vary
	 * by ~100 ns, which must be small beside it; one made longer than the others is not priced
	 * (a longer span judges the program's pauses more leniently) */
	t->span.priced = true;
	if (tm->span_cpu0_ns && probe > 0 && !per_call() && CT_CPU_SPAN_NS / probe >= t->countdown + 1) {
		double kc = CT_CPU_SPAN_NS / probe;
		t->countdown = kc > 65536 ? 65536 : (uint32_t)kc;
		t->span.priced = false;
	}
	/* the EVP fast path counts its cached cell and only counts down: it must not run another
	 * path's calls into this span unseen */
	if (t->hot_c != c)
		t->hot_ctx = NULL;
	t->span.path = tm->path;
	t->span.cpu0_ns = tm->span_cpu0_ns;
	t->span.syscalls_before = tm->syscalls_before;
	t->span.t0 = tm->a;
}

/* Ends the open span at `now`, the entry of a call already counted in cell closing_ci of
 * closing_c (NULL: none), which is not part of it. */
static void span_close(struct ct_thread *t, uint64_t now, const struct ct_counters *closing_c,
		       unsigned closing_ci)
{
	uint64_t cpu1 = CT_UNLIKELY(t->span.cpu0_ns) ? thread_cpu_ns() : 0;
	struct ct_counters *c = t->span.c;
	struct ct_span_part parts[CT_CELLS];
	unsigned n = 0;
	uint64_t m = c->cell_mask;
	while (m) {
		unsigned i = (unsigned)__builtin_ctzll(m);
		m &= m - 1;
		uint64_t calls = c->cell[i].calls - ((t->span.mask >> i) & 1 ? t->span.snap[i] : 0);
		if (c == closing_c && i == closing_ci)
			calls--;
		if (!calls)
			continue;
		parts[n++] = (struct ct_span_part){
			.cell = i,
			.calls = calls,
			.probe_ns = probe_mean_ns(&c->cell[i]),
			.probed = c->cell[i].timed_calls > 0,
		};
	}
	const uint64_t t0 = t->span.t0;
	int64_t raw = (int64_t)(now - t0);
	t->span.t0 = 0;
	if (CT_UNLIKELY(calib_sink)) {
		if (calib_sink->n[0] < 256)
			calib_sink->raw[0][calib_sink->n[0]++] = raw;
		return;
	}
	double span_ns = (double)(raw - cal.span_ticks) * cal.ns_per_tick;
	switch (ct_span_judge(parts, n, span_ns, &cal.tol)) {
	case CT_SPAN_ACCEPTED:
		for (unsigned i = 0; i < n && t->span.priced; i++) {
			struct ct_size_bucket *cell = &c->cell[parts[i].cell];
			CT_ADD(cell->span_calls, parts[i].calls);
			CT_ADD(cell->span_ns, (uint64_t)(parts[i].share_ns + 0.5));
		}
		/* a rejected span's CPU would be the pause's as much as the calls' */
		if (cpu1)
			cpu_sample_add(c, t->span.path, t->syscalls != t->span.syscalls_before,
				       ct_clock_to_ns(now - t0), t->span.cpu0_ns, cpu1);
		break;
	case CT_SPAN_REJECTED:
		/* its time is kept, so that the reporter can say what the pause was: an interrupt, a
		 * hypervisor exit, the program's own work */
		for (unsigned i = 0; i < n && t->span.priced; i++) {
			struct ct_size_bucket *cell = &c->cell[parts[i].cell];
			CT_ADD(cell->span_rejected, parts[i].calls);
			CT_ADD(cell->span_rejected_ns, (uint64_t)(parts[i].share_ns + 0.5));
		}
		break;
	case CT_SPAN_UNJUDGED:
	case CT_SPAN_DESCHEDULED:
		break;
	}
}

void ct_span_interrupt(struct ct_thread *t)
{
	if (!t || !t->span.t0)
		return;
	span_close(t, ct_clock_now(), NULL, 0);
	t->countdown = ct_sample_next(t, 0);
}

/* ---- the timed path ----------------------------------------------------------------------- */

static inline void flush_if_due(uint64_t now)
{
	if (CT_UNLIKELY(now >= atomic_load_explicit(&ct_g.next_flush, memory_order_relaxed)) && !calib_sink)
		ct_flush_due(now);
}

void ct_timed_begin(struct ct_thread *t, struct ct_timed *tm, struct ct_counters *c, uint32_t path,
		    unsigned ci, uint64_t bytes)
{
	uint64_t now = ct_clock_now();
	tm->what = 0;
	if (t->span.t0) {
		span_close(t, now, c, ci);
		if (!per_call()) {
			t->countdown = ct_sample_next(t, bytes);
			flush_if_due(now);
			return;
		}
	}
	if (CT_UNLIKELY(!calib_sink && !timing_ready())) {
		t->countdown = ct_sample_next(t, bytes);
		return;
	}
	flush_if_due(now);
	tm->c = c;
	tm->path = path;
	tm->ci = (uint8_t)ci;
	tm->bytes = bytes;
	tm->cpu0_ns = 0;
	tm->span_cpu0_ns = 0;
	if (per_call())
		tm->what = CT_TIMED_PROBE | CT_TIMED_SPAN;
	else if (!c->cell[ci].timed_calls || t->sample_probe)
		tm->what = CT_TIMED_PROBE;
	else
		tm->what = CT_TIMED_SPAN;
	t->sample_probe = tm->what == CT_TIMED_SPAN; /* probes and spans take turns */
	tm->syscalls_before = t->syscalls;
	if (CT_UNLIKELY(now >= t->cpu_deadline)) {
		/* on a span when this one opens one; on a probe only where the cell's calls run alone
		 * (its spans mostly rejected) or have had no span yet */
		const struct ct_size_bucket *cell = &c->cell[ci];
		bool runs_alone = cell->span_rejected >= cell->span_calls;
		bool on_span = tm->what == CT_TIMED_SPAN && !runs_alone;
		if (on_span || (tm->what & CT_TIMED_PROBE && runs_alone)) {
			t->cpu_deadline = now + ct_clk.ms_ticks;
			uint64_t cpu = thread_cpu_ns();
			cpu = cpu ? cpu : 1;
			if (on_span)
				tm->span_cpu0_ns = cpu;
			else
				tm->cpu0_ns = cpu;
		}
	}
	tm->a = ct_clock_now();
}

void ct_timed_finish(struct ct_thread *t, struct ct_timed *tm)
{
	if (tm->what & CT_TIMED_PROBE) {
		uint64_t b = ct_clock_now();
		/* the work still in flight matters for a call of a few hundred ns; a larger one need
		 * not pay for the ordered read's wait (its tail is a few blocks of its kilobytes) */
		uint64_t ordered = tm->bytes < CT_PROBE_ORDERED_BELOW ? ct_clock_now_ordered() : b;
		probe_record(t, tm, b, ordered);
	}
	if (tm->what & CT_TIMED_SPAN)
		span_open(t, tm);
	else
		t->countdown = ct_sample_next(t, tm->bytes);
}

void ct_probe_once(struct ct_thread *t, uint32_t path_id, unsigned ci, uint64_t bytes, uint64_t t0,
		   uint64_t t1)
{
	struct ct_counters *c = ct_counters_of(t, path_id);
	if (!c)
		return;
	struct ct_size_bucket *cell = &c->cell[ci];
	CT_ADD(cell->calls, 1);
	CT_ADD(cell->bytes, bytes);
	c->cell_mask |= 1ull << ci;
	uint64_t ns = delta_ns(t1 - t0);
	CT_ADD(cell->timed_calls, 1);
	CT_ADD(cell->timed_ns, ns);
	if (ci < CT_SIZE_BUCKETS) { /* a data call (libssl's multi-block writes) */
		CT_ADD(c->lat[ct_lat_bucket(ns)], 1);
		if (ct_per_call)
			ring_push(t, t0, ns, path_id, bytes);
	}
}

/* ---- kernel interfaces: every operation timed -------------------------------------------------- */

/* cryptodev ioctls, AF_ALG sendmsg/read/AIO: each costs at least one syscall (a microsecond or
 * more), so two clock reads add under a few percent, and these paths rarely see enough calls for
 * sampling to leave figures in every size bucket. Each is its own probe (a syscall orders the
 * CPU: nothing of it is in flight when it returns). */
void ct_op_begin(struct ct_thread *t, struct ct_op_timer *op, uint64_t bytes)
{
	(void)bytes;
	/* a kernel operation of the program's own (not inside an EVP or AES_* call) ends a span */
	if (CT_UNLIKELY(t->span.t0) && !(t->guard & ~(1u << CT_FAM_KERNEL)))
		ct_span_interrupt(t);
	op->cpu0_ns = 0;
	op->syscalls_before = t->syscalls;
	op->t0 = ct_clock_now();
	if (CT_UNLIKELY(op->t0 >= t->cpu_deadline) && timing_ready()) {
		t->cpu_deadline = op->t0 + ct_clk.ms_ticks;
		uint64_t cpu = thread_cpu_ns();
		op->cpu0_ns = cpu ? cpu : 1;
		op->t0 = ct_clock_now(); /* the call's own wall time starts after the clock syscall */
	}
}

/* A whole timed operation (a kernel request, a TLS record call): counted in its size's cell with
 * its time. */
static void op_count(struct ct_counters *c, uint64_t bytes, uint64_t ns)
{
	unsigned ci = ct_cell_of_size(bytes);
	struct ct_size_bucket *cell = &c->cell[ci];
	CT_ADD(cell->calls, 1);
	CT_ADD(cell->bytes, bytes);
	c->cell_mask |= 1ull << ci;
	CT_ADD(cell->timed_calls, 1);
	CT_ADD(cell->timed_ns, ns);
}

/* ... and its entry in the per-call timeline, and a snapshot when one is due. */
static void op_done(struct ct_thread *t, uint32_t path_id, uint64_t t0, uint64_t now, uint64_t ns,
		    uint64_t bytes)
{
	if (ct_per_call)
		ring_push(t, t0, ns, path_id, bytes);
	if (CT_UNLIKELY(now >= atomic_load_explicit(&ct_g.next_flush, memory_order_relaxed)))
		ct_flush_due(now);
}

void ct_op_end(struct ct_thread *t, struct ct_op_timer *op, uint32_t path_id, uint64_t bytes, bool ok)
{
	uint64_t now = ct_clock_now();
	struct ct_counters *c = ct_counters_of(t, path_id);
	if (CT_UNLIKELY(!c))
		return;
	if (CT_UNLIKELY(!ok))
		CT_ADD(c->errors, 1);
	uint64_t ns = delta_ns(now - op->t0);
	op_count(c, bytes, ns);
	account_call(t, c, path_id, true, ns, now - op->t0, op->cpu0_ns, op->syscalls_before);
	op_done(t, path_id, op->t0, now, ns, bytes);
}

/* ---- calls that wait for a peer ----------------------------------------------------------------- */

static bool thread_rusage_us(uint64_t *user_us, uint64_t *sys_us)
{
#ifdef RUSAGE_THREAD
	struct rusage ru;
	if (getrusage(RUSAGE_THREAD, &ru))
		return false;
	*user_us = (uint64_t)ru.ru_utime.tv_sec * 1000000u + (uint64_t)ru.ru_utime.tv_usec;
	*sys_us = (uint64_t)ru.ru_stime.tv_sec * 1000000u + (uint64_t)ru.ru_stime.tv_usec;
	return true;
#else
	(void)user_us;
	(void)sys_us;
	return false;
#endif
}

void ct_io_call_begin(struct ct_thread *t, struct ct_io_call *io)
{
	/* a TLS call of the program's own (not inside a cipher call) ends a span */
	if (CT_UNLIKELY(t->span.t0))
		ct_span_interrupt(t);
	io->ru_ok = thread_rusage_us(&io->user0_us, &io->sys0_us);
	io->cpu0_ns = thread_cpu_ns();
	io->t0 = ct_clock_now();
}

void ct_io_call_end(struct ct_thread *t, const struct ct_io_call *io, uint32_t path_id, uint64_t bytes)
{
	uint64_t now = ct_clock_now();
	uint64_t cpu1 = io->cpu0_ns ? thread_cpu_ns() : 0, user1 = 0, sys1 = 0;
	bool ru_ok = io->ru_ok && thread_rusage_us(&user1, &sys1) && user1 >= io->user0_us &&
		     sys1 >= io->sys0_us;
	struct ct_counters *c = ct_counters_of(t, path_id);
	if (CT_UNLIKELY(!c || !bytes))
		return;
	uint64_t ns = delta_ns(now - io->t0);
	op_count(c, bytes, ns);
	CT_ADD(c->lat[ct_lat_bucket(ns)], 1);
	if (io->cpu0_ns && cpu1 >= io->cpu0_ns) {
		/* the split: this call's, else the path's so far, else all user (nothing known) */
		double cpu = (double)(cpu1 - io->cpu0_ns);
		double du = ru_ok ? (double)(user1 - io->user0_us) : 0;
		double ds = ru_ok ? (double)(sys1 - io->sys0_us) : 0;
		double u0 = (double)c->cpu_sample_user_ns, s0 = (double)c->cpu_sample_sys_ns;
		double user_share = du + ds > 0 ? du / (du + ds) : u0 + s0 > 0 ? u0 / (u0 + s0) : 1;
		uint64_t user = (uint64_t)(cpu * user_share);
		CT_ADD(c->cpu_samples, 1);
		/* the CPU reads enclose the clock reads: the sample's wall is the raw interval */
		CT_ADD(c->cpu_sample_wall_ns, ct_clock_to_ns(now - io->t0));
		CT_ADD(c->cpu_sample_user_ns, user);
		CT_ADD(c->cpu_sample_sys_ns, (uint64_t)cpu - user);
	}
	op_done(t, path_id, io->t0, now, ns, bytes);
}
