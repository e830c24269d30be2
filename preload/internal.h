/* SPDX-License-Identifier: MIT */
/*
 * internal.h - what the preload's core files share with each other (and with the hook files that
 * want the inline fast path). Not a contract for other helpers: core.h is.
 *
 * Data layout: every thread owns one `struct ct_thread` (mmap'd, never freed, reused through a
 * free list after the thread exits). It carries the recursion guard, the sampling countdown and
 * the thread's shard of per-path counters. Counters are single-writer; the flusher sums shards.
 */
#ifndef CT_INTERNAL_H
#define CT_INTERNAL_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "core.h"
#include "cpu.h"
#include "trace_format.h"

/* Everything declared below lives in this library: hidden, so that the hooks reach globals and
 * helpers directly, not through the GOT and the PLT (the definitions are hidden already). */
#pragma GCC visibility push(hidden)

#define CT_PATH_CAPACITY 4096u
#define CT_PATHS_PER_CHUNK 64u
#define CT_CHUNKS (CT_PATH_CAPACITY / CT_PATHS_PER_CHUNK)
#define CT_OPS_RING 65536u /* per-call mode: ops kept per thread between flushes */
#define CT_GUARD_ALL ((1u << CT_FAM_COUNT) - 1)

/* Per path, per thread. size[] holds calls and bytes: the totals are their sums (fewer stores on
 * the hot path). */
struct ct_counters {
	struct ct_size_bucket size[CT_SIZE_BUCKETS];
	uint64_t errors;
	uint64_t cpu_samples, cpu_sample_wall_ns, cpu_sample_user_ns, cpu_sample_sys_ns;
	uint64_t syscalls, spliced_calls;
	uint64_t setup_calls, setup_ns, teardown_calls, teardown_ns;
	uint64_t lat[CT_LAT_BUCKETS];
};

/* No cached length: no int or unsigned int length key equals it (evp.c). */
#define CT_HOT_NO_LEN (1ull << 40)

struct ct_thread {
	/* first cache line: everything the EVP fast path touches */
	uint32_t guard;          /* bit per enum ct_family: inside that family's outermost call */
	uint32_t countdown;      /* calls left until the next sampled (timed) small call */
	uint32_t rng;            /* xorshift32 state for the sampling intervals */
	/* one-entry cache of the last context's counters (evp.c): a loop on one ctx skips the
	 * ctxmap; valid while hot_gen == ct_ctxmap_gen. hot_len is the last small request's length
	 * key (its exact length and data entry), hot_bytes and hot_sb its bytes and size bucket, so
	 * a loop of equal requests skips the bucket maths (hot_len is CT_HOT_NO_LEN, which no
	 * request's key can equal, when none is cached). */
	const void *hot_ctx;
	uint64_t hot_len, hot_bytes;
	struct ct_size_bucket *hot_sb;
	uint32_t hot_gen;
	uint8_t hot_entry;
	struct ct_counters *hot_c;
	uint32_t hot_path;
	uint64_t cpu_deadline;   /* clock value after which the next timed call is CPU-sampled */
	uint32_t syscalls;       /* syscalls counted by kernel hooks on this thread (monotonic) */
	_Atomic uint32_t tid;    /* atomic: the flusher reads it while a new owner sets it */
	struct ct_counters *chunks[CT_CHUNKS];
	/* per-call mode: single-producer (this thread) / single-consumer (flusher) ring */
	struct ct_op *ops;
	_Atomic uint64_t ops_head, ops_tail;
	_Atomic uint64_t ops_dropped;
	uint32_t tid_written;    /* tid of the last CT_REC_THREAD written for this shard */
	_Atomic bool in_use;     /* atomic: set and cleared at thread start/exit, read by the flusher */
	struct ct_thread *next;      /* global list of every shard ever made */
	struct ct_thread *next_free; /* free list */
	/* EVP classification cache (evp.c): hot re-inits skip the name functions */
	struct {
		const void *cipher, *engine;
		int key_len;
		uint8_t dir;
		uint32_t gen;
		uint32_t path;
	} cls[8];
	unsigned cls_next;
};

/* This thread's state; &ct_thread_none (never NULL) while it has none: before its first hook,
 * while it makes its state, after its exit. Read it through ct_thread_self() unless on the EVP
 * fast path, whose guard test also covers "no state yet" that way. */
extern __thread struct ct_thread *ct_tls_thread __attribute__((tls_model("initial-exec")));
extern struct ct_thread ct_thread_none; /* every guard bit set; never written */
static inline struct ct_thread *ct_thread_self(void)
{
	struct ct_thread *t = ct_tls_thread;
	return t != &ct_thread_none ? t : NULL;
}
struct ct_thread *ct_thread_slow(void);
struct ct_thread *ct_thread_list(void); /* head of the list of every shard (flusher) */
void ct_thread_after_fork_child(void);
void ct_thread_internal(void); /* the preload's own thread: no shard, hooks pass through */

/* ---- clocks: TSC when invariant, else CLOCK_MONOTONIC ns ---------------------------------- */

struct ct_clock {
	bool use_tsc;
	uint64_t tsc_hz;
	uint64_t mult;       /* ns = (ticks * mult) >> 32 */
	uint64_t tsc0, mono0;
	uint64_t ms_ticks;   /* one millisecond in clock units */
	uint64_t read_ticks; /* what one clock read adds to a measured interval (calibrated) */
};
extern struct ct_clock ct_clk;
void ct_clock_init(void);

static inline uint64_t ct_mono_ns_raw(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
static inline uint64_t ct_clock_now(void)
{
	return CT_LIKELY(ct_clk.use_tsc) ? ct_rdtsc() : ct_mono_ns_raw();
}
static inline uint64_t ct_clock_to_ns(uint64_t d)
{
	if (!ct_clk.use_tsc)
		return d;
	return (uint64_t)(((unsigned __int128)d * ct_clk.mult) >> 32);
}
/* A clock value -> CLOCK_MONOTONIC ns. */
static inline uint64_t ct_clock_to_mono(uint64_t c)
{
	if (!ct_clk.use_tsc)
		return c;
	return ct_clk.mono0 + ct_clock_to_ns(c - ct_clk.tsc0);
}

/* ---- global state ------------------------------------------------------------------------ */

struct ct_global {
	_Atomic int state;          /* 0 not yet, 1 initialising, 2 ready (tracing), 3 off */
	uint32_t pid, ppid;
	uint64_t start_realtime_ns, start_mono_ns;
	uint32_t aesni_cpb_milli;
	_Atomic uint64_t next_flush; /* clock value of the next periodic flush */
	uint64_t flush_ticks;
	_Atomic uint64_t hooked_calls_slow; /* calls counted outside the per-path counters */
	_Atomic uint64_t lost_paths;        /* registry or ctxmap full */
	_Atomic uint64_t dropped_events;
	_Atomic uint32_t threads_seen;
	_Atomic uint32_t classify_gen;      /* bumped when engine defaults change (evp.c cache) */
	char requested_engine[64];          /* last ENGINE_by_id/set_default id, for the report */
	char self_path[512];                /* this library, from dladdr (exec re-injection) */
	char comm[32];
};
extern struct ct_global ct_g;

bool ct_init(void); /* idempotent; true when tracing is on */
extern int ct_exit_status;
void ct_register_exit_handler(void); /* from the exit() hook, for the END record */
static inline bool ct_ready(void)
{
	return atomic_load_explicit(&ct_g.state, memory_order_relaxed) == 2;
}

/* ---- call sites (callsite.c) -------------------------------------------------------------- */
void ct_callsite_warm_up(void); /* first unwinder use, before any sandbox: once per process */
/* MODULE records of the modules call sites named since the last call (all of them: all). */
size_t ct_callsite_encode_modules(uint8_t *buf, size_t cap, bool all);
void ct_callsite_after_fork_child(void);
void ct_callsite_init(void);    /* the main program's base and real name (at start) */

/* ---- resolving (resolve.c) ---------------------------------------------------------------- */
void *ct_libcrypto_handle(void); /* dlopen(RTLD_NOLOAD) of a mapped libcrypto; dlclose it */
bool ct_libcrypto_mapped(void);

/* ---- config (config.c) --------------------------------------------------------------------- */
void ct_config_load(void);
/* Every CRYPTRACE_* and the LD_PRELOAD of process start, as "NAME=value" (exec re-injection). */
const char *const *ct_config_env(void);
const char *ct_config_ia32cap(void);
const char *ct_config_warning(void); /* "" when the configuration was fine */
uint32_t ct_config_aesni_cpb(void);

/* ---- registry (registry.c) ----------------------------------------------------------------- */
uint32_t ct_path_count(void);
uint8_t ct_path_entry(uint32_t id);
uint8_t ct_path_dir(uint32_t id);
uint8_t ct_path_api(uint32_t id);
uint8_t ct_path_route(uint32_t id); /* enum ct_route_target */
/* The path with the same key as id but another dir / entry (cached, lock only on a miss). */
uint32_t ct_path_variant(uint32_t id, uint8_t dir, uint8_t entry);
/* Fills def (strings point into the registry) for the flusher; false if id is not defined. */
bool ct_path_def_get(uint32_t id, struct ct_path_def *def);
bool ct_path_has_callsite(uint32_t id);
/* Usage patterns seen on a path's contexts (CT_USAGE_*): sets the bit, true the first time
 * (the caller then records a CT_EV_CTX_USAGE event). One atomic load once the bit is set. */
bool ct_path_mark_usage(uint32_t id, uint32_t bit);
void ct_registry_lock(void);
void ct_registry_unlock(void);
void ct_registry_after_fork_child(void);

/* ---- stats (stats.c) ---------------------------------------------------------------------- */
bool ct_stats_sum(uint32_t path_id, struct ct_path_stats *s);

/* ---- events (events.c) --------------------------------------------------------------------- */
void ct_events_lock(void);
void ct_events_unlock(void);
void ct_events_reset(void);
void ct_events_mark_all_dirty(void);
bool ct_events_pending(void); /* caller holds the events lock */
/* Encodes the events changed since the last call; returns bytes used (0 = nothing or no room). */
size_t ct_events_encode(uint8_t *buf, size_t cap, bool *more);

/* ---- writer (writer.c) --------------------------------------------------------------------- */
void ct_writer_open(void);      /* creates the file and writes preamble + header */
/* END after a final snapshot: exit (status), exec, or a fatal signal (status = the signal).
 * Safe in a signal handler (writer.c). */
void ct_writer_end(enum ct_end_reason reason, int status);
void ct_writer_after_fork_child(void);
void ct_writer_reopen_after_failed_exec(void);
void ct_writer_fsize_limit(uint64_t limit); /* setrlimit(RLIMIT_FSIZE) hook: flush, then obey */
void ct_flush_lock(void);
void ct_flush_unlock(void);
void ct_flush_due(uint64_t now); /* a timed call saw now >= next_flush */
void ct_flush_periodic(void);    /* the flusher thread: when due, and only if something changed */
void ct_flush_now(void);         /* a snapshot now, after another thread's flush if one is running */
/* A small file (/proc/self/...) into dst, NUL-terminated; empty when it cannot be read (a
 * sandbox may deny the open: harmless). len may be NULL. */
void ct_read_small_file(const char *path, char *dst, size_t cap, size_t *len);
uint64_t ct_write_errors(void);

/* ---- ctxmap (ctxmap.c) --------------------------------------------------------------------- */
uint64_t ct_ctxmap_full_count(void);
extern _Atomic uint32_t ct_ctxmap_gen; /* bumped by every set/del: invalidates hot caches */
void ct_ctxmap_global_init(void);

/* ---- process-level (proc.c) ---------------------------------------------------------------- */
void ct_proc_install_atfork(void);
/* envp with LD_PRELOAD and CRYPTRACE_* re-injected when missing (mmap'd copy, or envp itself). */
char *const *ct_proc_fix_env(char *const envp[]);
void ct_proc_free_env(char *const *env, char *const *orig); /* no-op when env == orig */
/* Before an exec: final flush + END(EXEC) unless this is a vfork child; records CT_EV_CHILD. */
void ct_proc_before_exec(const char *call, const char *file);
void ct_proc_exec_failed(void);
bool ct_proc_is_vfork_child(void);
void ct_proc_hooks_resolve(void); /* hooks/proc.c: the exec family's real functions, at start */

/* ---- hot path (inline, used by the hook files directly) ------------------------------------ */

struct ct_counters *ct_counters_alloc(struct ct_thread *t, uint32_t path_id);

static inline struct ct_counters *ct_counters_of(struct ct_thread *t, uint32_t path_id)
{
	if (CT_UNLIKELY(path_id >= CT_PATH_CAPACITY))
		return NULL;
	struct ct_counters *c = t->chunks[path_id / CT_PATHS_PER_CHUNK];
	if (CT_UNLIKELY(!c))
		return ct_counters_alloc(t, path_id);
	return c + path_id % CT_PATHS_PER_CHUNK;
}

static inline struct ct_thread *ct_thread_fast(void)
{
	struct ct_thread *t = ct_tls_thread;
	return CT_LIKELY(t != &ct_thread_none) ? t : ct_thread_slow();
}

static inline bool ct_enter_fast(struct ct_thread *t, enum ct_family fam)
{
	uint32_t bit = 1u << fam;
	if (t->guard & bit)
		return false;
	t->guard |= bit;
	return true;
}
static inline void ct_leave_fast(struct ct_thread *t, enum ct_family fam)
{
	t->guard &= ~(1u << fam);
}

/* Single-writer counter bump: a plain add, but atomic-typed so the flusher's loads are defined. */
#define CT_ADD(field, v) __atomic_store_n(&(field), __atomic_load_n(&(field), __ATOMIC_RELAXED) + (v), __ATOMIC_RELAXED)

/*
 * The EVP fast path's counter bump, relaxed 32-bit load and real-pointer load, one instruction
 * each on x86-64 (an `add` to memory, a `mov`, an indirect `call` through memory): GCC compiles
 * a relaxed atomic read-modify-write to load, add, store, and at 16-byte requests every
 * instruction of the hook shows. Same semantics as CT_ADD and a relaxed __atomic_load_n (an
 * aligned access is single-copy atomic on x86). A TSan build keeps the builtins, so that the
 * race detector still sees these accesses (it counts even a failed compare-exchange of an
 * already published pointer as a write).
 */
#if defined(__x86_64__) && !defined(__SANITIZE_THREAD__)
#define CT_HOT_LOAD_PTR(p) (p) /* a pointer published long before (see its writer) */
#define CT_HOT_ADD(field, v) __asm__("addq %1, %0" : "+m"(field) : "er"((uint64_t)(v)))
#define ct_hot_load32(p)                                                                          \
	({                                                                                        \
		uint32_t v_;                                                                      \
		__asm__("movl %1, %0" : "=r"(v_) : "m"(*(p)));                                    \
		v_;                                                                               \
	})
#else
#define CT_HOT_LOAD_PTR(p) __atomic_load_n(&(p), __ATOMIC_RELAXED)
#define CT_HOT_ADD(field, v) CT_ADD(field, v)
static inline uint32_t ct_hot_load32(const _Atomic uint32_t *p)
{
	return atomic_load_explicit(p, memory_order_relaxed);
}
#endif

extern unsigned ct_sample_period, ct_sample_all_bytes;
extern bool ct_per_call;

void ct_op_slow_begin(struct ct_thread *t, struct ct_op_timer *op);
void ct_op_slow_end(struct ct_thread *t, struct ct_op_timer *op, struct ct_counters *c, uint32_t path_id,
		    uint64_t bytes, uint64_t now);

/*
 * The mean sampling period of a call of `bytes`: ct_sample_period (N) up to 1 KiB, halved with
 * each doubling above that, 1 from N/2 KiB on. So a timed call (~30 ns) comes about once per
 * N KiB of large requests, whatever their size: timing costs about as much per byte at 8 KiB
 * as at 16 B, where timing every call >= 1 KiB cost 4 % of a 10 GB/s path at 8 KiB. A few
 * large calls still get timed (one per ~N KiB), which a plain 1-in-N would not.
 */
static inline uint32_t ct_sample_period_for(uint64_t bytes)
{
	const uint64_t kib = bytes >> 10;
	const unsigned shift = kib ? 64 - (unsigned)__builtin_clzll(kib) : 0;
	const uint32_t p = shift < 32 ? ct_sample_period >> shift : 0;
	return p ? p : 1;
}

/* The next sampling interval for calls of `bytes`: uniform in [1, 2 * period - 1], mean =
 * period. A fixed interval would alias with periodic call patterns (TLS: AAD, data, AAD,
 * data... on two paths) and never time some of them. xorshift32 per thread; only timed calls
 * pay for it. */
static inline uint32_t ct_sample_next(struct ct_thread *t, uint64_t bytes)
{
	const uint32_t p = ct_sample_period_for(bytes);
	if (p <= 1)
		return 1;
	uint32_t x = t->rng ? t->rng : 0x9e3779b9u;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	t->rng = x;
	return 1 + x % (2 * p - 1);
}

/* Whether to time a call of `bytes` (every call but the EVP fast path's, which only counts
 * down: its length is the one the interval was drawn for). Always from ct_sample_all_bytes;
 * else when the countdown runs out, after cutting an interval drawn for smaller calls down to
 * this size's, so that large calls after many small ones are timed as often as their size
 * asks. Leaves the countdown at 0 when due: ct_sample_rearm draws the next interval. */
static inline bool ct_sample_due(struct ct_thread *t, uint64_t bytes)
{
	if (CT_UNLIKELY(bytes >= ct_sample_all_bytes))
		return true;
	if (bytes >= 1024 && t->countdown >= 2 * ct_sample_period_for(bytes))
		t->countdown = ct_sample_next(t, bytes);
	if (t->countdown <= 1) {
		t->countdown = 0;
		return true;
	}
	t->countdown--;
	return false;
}

/* After a call was found due (ct_sample_due or the fast path): the next interval. */
static inline void ct_sample_rearm(struct ct_thread *t, uint64_t bytes)
{
	if (t->countdown == 0)
		t->countdown = ct_sample_next(t, bytes);
}

static inline void ct_op_begin_fast(struct ct_thread *t, struct ct_op_timer *op, uint64_t bytes)
{
	op->t0 = 0;
	op->cpu0_ns = 0;
	op->syscalls_before = t->syscalls;
	if (ct_sample_due(t, bytes)) {
		ct_sample_rearm(t, bytes);
		op->t0 = ct_clock_now();
		if (CT_UNLIKELY(op->t0 >= t->cpu_deadline))
			ct_op_slow_begin(t, op);
	}
}

/* ct_size_bucket (trace_format.c; the unit test checks they agree), inline for the hooks:
 * bytes ? bit length : 0, without a branch. */
static inline unsigned ct_size_bucket_fast(uint64_t bytes)
{
	unsigned b = (64 - (unsigned)__builtin_clzll(bytes | 1)) & -(unsigned)(bytes != 0);
	return CT_LIKELY(b < CT_SIZE_BUCKETS) ? b : CT_SIZE_BUCKETS - 1;
}

/* Counts one call of `bytes` on counters c (exact, every call) and says whether it is due to be
 * timed, leaving the countdown at 0 then for the timed path to re-arm (ct_sample_rearm), as the
 * EVP fast path does. */
static inline bool ct_count_hot(struct ct_thread *t, struct ct_counters *c, uint64_t bytes)
{
	struct ct_size_bucket *sb = &c->size[ct_size_bucket_fast(bytes)];
	CT_ADD(sb->calls, 1);
	CT_ADD(sb->bytes, bytes);
	return ct_sample_due(t, bytes);
}

/* ct_count_hot, re-arming the countdown itself: the caller then takes its timed path
 * (ct_op_begin_fast + ct_op_end_fast minus counts). */
static inline bool ct_count_fast(struct ct_thread *t, struct ct_counters *c, uint64_t bytes)
{
	if (CT_LIKELY(!ct_count_hot(t, c, bytes)))
		return false;
	ct_sample_rearm(t, bytes);
	return true;
}

/* The timed part of a call already counted by ct_count_fast. */
static inline void ct_timed_begin(struct ct_thread *t, struct ct_op_timer *op)
{
	op->cpu0_ns = 0;
	op->syscalls_before = t->syscalls;
	op->t0 = ct_clock_now();
	if (CT_UNLIKELY(op->t0 >= t->cpu_deadline))
		ct_op_slow_begin(t, op);
}
/* Same as ct_lat_bucket (trace_format.c; the unit test checks they agree), inline for the timed
 * path. */
static inline unsigned ct_lat_bucket_fast(uint64_t ns)
{
	if (ns < 4)
		return (unsigned)ns;
	unsigned e = 63 - (unsigned)__builtin_clzll(ns);
	unsigned b = 4 * (e - 1) + ((unsigned)(ns >> (e - 2)) & 3);
	return b < CT_LAT_BUCKETS ? b : CT_LAT_BUCKETS - 1;
}

/* An interval between two clock reads, in ns, without the cost of the read itself: on a 16-byte
 * call of ~25 ns an RDTSC's own ~10 ns would otherwise inflate every timed call by a third. */
static inline uint64_t ct_clock_delta_ns(uint64_t d)
{
	d = d > ct_clk.read_ticks ? d - ct_clk.read_ticks : 0;
	if (!ct_clk.use_tsc)
		return d;
	if (CT_LIKELY(d < (1ull << 32))) /* mult < 2^31: the product fits in 64 bits */
		return (d * ct_clk.mult) >> 32;
	return ct_clock_to_ns(d);
}

static inline void ct_timed_end(struct ct_thread *t, struct ct_op_timer *op, struct ct_counters *c,
				uint32_t path_id, uint64_t bytes)
{
	uint64_t now = ct_clock_now();
	if (CT_UNLIKELY(op->cpu0_ns || ct_per_call ||
			now >= atomic_load_explicit(&ct_g.next_flush, memory_order_relaxed))) {
		ct_op_slow_end(t, op, c, path_id, bytes, now);
		return;
	}
	/* the common timed call: wall time into its size bucket and the latency histogram */
	uint64_t ns = ct_clock_delta_ns(now - op->t0);
	unsigned b = bytes ? 64 - __builtin_clzll(bytes) : 0;
	if (CT_UNLIKELY(b >= CT_SIZE_BUCKETS))
		b = CT_SIZE_BUCKETS - 1;
	CT_ADD(c->size[b].timed_calls, 1);
	CT_ADD(c->size[b].timed_ns, ns);
	CT_ADD(c->lat[ct_lat_bucket_fast(ns)], 1);
}

static inline void ct_op_end_fast(struct ct_thread *t, struct ct_op_timer *op, uint32_t path_id,
				  uint64_t bytes, bool ok)
{
	struct ct_counters *c = ct_counters_of(t, path_id);
	if (CT_UNLIKELY(!c))
		return;
	unsigned b = bytes ? 64 - __builtin_clzll(bytes) : 0;
	if (CT_UNLIKELY(b >= CT_SIZE_BUCKETS))
		b = CT_SIZE_BUCKETS - 1;
	CT_ADD(c->size[b].calls, 1);
	CT_ADD(c->size[b].bytes, bytes);
	if (CT_UNLIKELY(!ok))
		CT_ADD(c->errors, 1);
	if (op->t0) {
		uint64_t now = ct_clock_now();
		ct_op_slow_end(t, op, c, path_id, bytes, now);
	}
}

#pragma GCC visibility pop

#endif
