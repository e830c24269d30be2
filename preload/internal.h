/* SPDX-License-Identifier: MIT */
/*
 * internal.h - what the preload's core files share with each other and with the hook files that
 * need the inline fast path (preload/hooks/); core.h says which file includes which.
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
#include "ticks.h"
#include "trace_format.h"

/* Everything declared below lives in this library: hidden, so that the hooks reach globals and
 * helpers directly, not through the GOT and the PLT (the definitions are hidden already). */
#pragma GCC visibility push(hidden)

#define CT_PATH_CAPACITY 4096u
#define CT_PATHS_PER_CHUNK 64u
#define CT_CHUNKS (CT_PATH_CAPACITY / CT_PATHS_PER_CHUNK)
#define CT_OPS_RING 65536u /* per-call mode: ops kept per thread between flushes */
#define CT_GUARD_ALL ((1u << CT_FAM_COUNT) - 1)

/* Cells of a path's counters: the data calls' size buckets (CT_SIZE_BUCKETS), then the phases of
 * the operation (enum ct_phase). */
#define CT_CELL_PHASE(p) (CT_SIZE_BUCKETS + (unsigned)(p))
_Static_assert(CT_CELLS <= 64, "cell_mask has one bit per cell");

/* Per path, per thread. Each cell holds its calls and bytes: the path's totals are their sums
 * (fewer stores on the hot path). */
struct ct_counters {
	struct ct_size_bucket cell[CT_CELLS];
	uint64_t cell_mask;   /* bit i: cell[i] was counted (set off the fast path: timing.c's spans) */
	uint64_t tls_records; /* ct_path_stats.tls_records */
	uint64_t errors;
	uint64_t cpu_samples, cpu_sample_wall_ns, cpu_sample_user_ns, cpu_sample_sys_ns;
	uint64_t syscalls, spliced_calls;
	uint64_t setup_calls, setup_ns, teardown_calls, teardown_ns;
	uint64_t lat[CT_LAT_BUCKETS];
};

/* The span a thread is timing (timing.c): a run of consecutive calls on one path, from the entry
 * of the first to the entry of the call after the last. t0 == 0: none. */
struct ct_span {
	uint64_t t0;
	struct ct_counters *c;
	uint64_t mask;            /* c->cell_mask when the span began */
	uint64_t snap[CT_CELLS];  /* each cell's calls when the span began, the first call's not */
	uint64_t cpu0_ns;         /* thread CPU time read right before t0 when this span is CPU-sampled */
	uint32_t syscalls_before; /* the thread's syscall count then */
	uint32_t path;            /* c's path */
	bool priced;              /* its time prices its calls (not a span lengthened for a CPU sample) */
};

/* No cached length: no int or unsigned int length key equals it (evp.c). */
#define CT_HOT_NO_LEN (1ull << 40)

struct ct_thread {
	/* first cache line: everything the EVP fast path touches */
	uint32_t guard;     /* bit per enum ct_family: inside that family's outermost call */
	uint32_t countdown; /* calls left until the next sampled (timed) small call */
	uint32_t rng;       /* xorshift32 state for the sampling intervals */
	/* one-entry cache of the last context's counters (evp.c): a loop on one ctx skips the
	 * ctxmap; valid while hot_gen == ct_ctxmap_gen. hot_len is the last small request's length
	 * key (its exact length and data entry), hot_bytes and hot_sb its bytes and size bucket, so
	 * a loop of equal requests skips the bucket maths (hot_len is CT_HOT_NO_LEN, which no
	 * request's key can equal, when none is cached). */
	const void *hot_ctx;
	uint64_t hot_len, hot_bytes;
	struct ct_size_bucket *hot_sb; /* hot_c->cell[hot_ci] */
	uint32_t hot_gen;
	uint8_t hot_entry, hot_ci;
	struct ct_counters *hot_c;
	uint32_t hot_path;
	void *hot_lane;              /* hot_ctx's direct lane (route/lane.h), or NULL: none */
	_Atomic uint64_t lane_calls; /* calls the direct lane served (PROC's route_direct_calls) */
	uint64_t cpu_deadline;       /* clock value after which the next probe is CPU-sampled */
	bool sample_probe;           /* the next sample is a probe (they alternate with spans) */
	struct ct_span span;         /* timing.c */
	uint32_t syscalls;           /* syscalls counted by kernel hooks on this thread (monotonic) */
	_Atomic uint32_t tid;        /* atomic: the flusher reads it while a new owner sets it */
	struct ct_counters *chunks[CT_CHUNKS];
	/* per-call mode: single-producer (this thread) / single-consumer (flusher) ring */
	struct ct_op *ops;
	_Atomic uint64_t ops_head, ops_tail;
	_Atomic uint64_t ops_dropped;
	_Atomic uint64_t ops_sampled_out; /* ops the rate cap did not keep (ops_cap.c) */
	uint32_t tid_written;             /* tid of the last CT_REC_THREAD written for this shard */
	_Atomic bool in_use;         /* atomic: set and cleared at thread start/exit, read by the flusher */
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
	/* The direct lane (hooks/evp_lane.c): routed contexts this thread initialised, with their
	 * provider contexts, each valid while gen == ct_lane_gen; a context's slot is a hash of its
	 * address */
	struct {
		const void *ctx;
		void *rctx;
		uint32_t gen;
	} lane[16];
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
void ct_thread_counters_reset(void); /* every thread's counters and ops to zero (a new attach) */
void ct_thread_internal(void);       /* the preload's own thread: no shard, hooks pass through */

/* ---- clocks: the tick counter when there is one (ticks.h), else CLOCK_MONOTONIC ns ----------- */

struct ct_clock {
	bool use_tsc;    /* the tick counter (ticks.h: the TSC on x86, CNTVCT_EL0 on aarch64) */
	bool tsc_cycles; /* its ticks are CPU cycles (the TSC), not a fixed-rate timer's */
	const char *tick_name;
	uint64_t tsc_hz; /* its ticks per second */
	uint64_t mult;   /* ns = (ticks * mult) >> 32 */
	uint64_t tsc0, mono0;
	uint64_t ms_ticks;   /* one millisecond in clock units */
	uint64_t read_ticks; /* what one clock read adds to a measured interval (calibrated) */
	bool has_rdtscp;
};
extern struct ct_clock ct_clk;
/* measure_tsc false: CLOCK_MONOTONIC, without waiting 0.5 ms or more to measure the TSC's rate */
void ct_clock_init(bool measure_tsc);

static inline uint64_t ct_mono_ns_raw(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}
static inline uint64_t ct_clock_now(void)
{
	return CT_LIKELY(ct_clk.use_tsc) ? ct_ticks() : ct_mono_ns_raw();
}
/* A read that waits for every earlier instruction to complete (ticks.h): where the work of a
 * call just returned really ends. clock_gettime is ordered already. */
static inline uint64_t ct_clock_now_ordered(void)
{
	if (!ct_clk.use_tsc)
		return ct_mono_ns_raw();
	return ct_ticks_ordered(ct_clk.has_rdtscp);
}
static inline uint64_t ct_clock_to_ns(uint64_t d)
{
	if (!ct_clk.use_tsc)
		return d;
	return ct_mul_shr32(d, ct_clk.mult);
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
	_Atomic int state; /* 0 not yet, 1 initialising, 2 ready (tracing), 3 off */
	uint32_t pid, ppid;
	uint64_t start_realtime_ns, start_mono_ns;
	uint32_t aesni_cpb_milli;
	_Atomic uint64_t next_flush; /* clock value of the next periodic flush */
	uint64_t flush_ticks;
	_Atomic uint64_t hooked_calls_slow; /* calls counted outside the per-path counters */
	_Atomic uint64_t lost_paths;        /* registry or ctxmap full */
	_Atomic uint64_t dropped_events;
	_Atomic uint32_t threads_seen;
	_Atomic uint32_t classify_gen; /* bumped when engine defaults change (evp.c cache) */
	char requested_engine[64];     /* last ENGINE_by_id/set_default id, for the report */
	char self_path[512];           /* this library, from dladdr (exec re-injection) */
	char comm[32];
	/* always-on mode, no crypto library at start: the process facts, the call sites' program
	 * name and the signal handlers wait for the first cipher path (ct_start_complete) */
	_Atomic bool start_pending;
};
extern struct ct_global ct_g;

bool ct_init(void); /* idempotent; true when tracing is on */
/* What a start in always-on mode left for the first cipher path (ct_g.start_pending): the
 * process name, the call sites' program name, the fatal-signal handlers. Idempotent. */
void ct_start_complete(void);
/* `cryptrace attach` (attach.c): the start with the tracer's settings, and a later attach's new
 * start in a library that is mapped already; false on settings it refuses. */
bool ct_init_attach(const char *config);
bool ct_restart_attach(const char *config);
bool ct_attach_detect_late(void); /* the constructor: loaded by dlopen, not in the search order */
void ct_attach_figures_get(uint64_t *pause_ns, uint32_t *threads, uint32_t *slots);
void ct_attach_after_fork_child(void);
extern int ct_exit_status;
void ct_register_exit_handler(void); /* from the exit() hook, for the END record */
static inline bool ct_ready(void)
{
	return atomic_load_explicit(&ct_g.state, memory_order_relaxed) == 2;
}
/* Tracing is off in this process for good (not configured, excluded, setuid): a hook's way out
 * of its fast path goes straight to the real function, so that an excluded program pays one
 * test more than bare, not the slow path on every call. */
static inline bool ct_process_off(void)
{
	return atomic_load_explicit(&ct_g.state, memory_order_relaxed) == 3;
}

/* ---- call sites (callsite.c) -------------------------------------------------------------- */
void ct_callsite_warm_up(void); /* first unwinder use, before any sandbox: once per process */
/* MODULE records of the modules call sites named since the last call (all of them: all). */
size_t ct_callsite_encode_modules(uint8_t *buf, size_t cap, bool all);
void ct_callsite_after_fork_child(void);
void ct_callsite_init(void); /* the main program's base and real name (at start) */

/* ---- resolving (resolve.c) ---------------------------------------------------------------- */
void *ct_libcrypto_handle(void); /* dlopen(RTLD_NOLOAD) of a mapped libcrypto; dlclose it */
bool ct_libcrypto_mapped(void);
/* Whether a crypto library (libcrypto, GnuTLS, libgcrypt, NSS...) is mapped now (writer.c). */
bool ct_crypto_lib_mapped(void);

/* ---- config (config.c) --------------------------------------------------------------------- */
void ct_config_load(void);
bool ct_config_load_attach(const char *spec); /* attach.c: settings from `cryptrace attach` */
/* Every CRYPTRACE_* and the LD_PRELOAD of process start, as "NAME=value" (exec re-injection). */
const char *const *ct_config_env(void);
const char *ct_config_ia32cap(void);
const char *ct_config_warning(void); /* "" when the configuration was fine */
uint32_t ct_config_aesni_cpb(void);

/* ---- per-call mode's rate cap on the timeline (ops_cap.c) ---------------------------------- */
#define CT_OPS_WINDOW_MS 100u             /* the cap counts per window of this length, per process */
extern uint32_t ct_max_ops_rate;          /* ops/s kept at most; 0: every op (no cap) */
void ct_ops_cap_configure(uint32_t rate); /* config.c, once at start */
/* Whether the op that started at clock value `start` joins the timeline, and with what weight
 * (the ops it stands for); one not kept is counted in t->ops_sampled_out. */
bool ct_ops_cap_keep(struct ct_thread *t, uint64_t start, uint32_t *weight);
uint32_t ct_ops_cap_max_weight(void); /* the largest weight given so far (1: none sampled) */
uint64_t ct_ops_cap_burst(void);      /* B/2: the ops of a window always kept */
void ct_ops_cap_after_fork_child(void);

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
/* Whether the bit is set already (one load: the hooks' check before the marking's work). */
bool ct_path_usage_seen(uint32_t id, uint32_t bit);
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
void ct_writer_open(void);    /* creates the file and writes preamble + header */
void ct_writer_close(void);   /* a detach: the file closed after its END, nothing reopens it */
void ct_writer_restart(void); /* a new attach: a new file, as at start */
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

/* ---- the dynamic loader run as a command (loader.c) ---------------------------------------- */
/* The program's real path when the loader was started as a command (`ld.so --library-path DIR
 * PROG`), else NULL (first called at init, single-threaded). */
const char *ct_loader_program(void);
/* Where PROG's own argv starts in /proc/self/cmdline (cmdline, len bytes): 0 in other processes. */
size_t ct_loader_argv_start(const char *cmdline, size_t len);

/* ---- ctxmap (ctxmap.c) --------------------------------------------------------------------- */
uint64_t ct_ctxmap_full_count(void);
extern _Atomic uint32_t ct_ctxmap_gen; /* bumped by every set/del: invalidates hot caches */
/* Bumped when the route's provider frees a context (ct_route_ctx_freed, which bumps
 * ct_ctxmap_gen too): invalidates the direct lane's entries, which a path change leaves valid
 * (the EVP context keeps its provider context). */
extern _Atomic uint32_t ct_lane_gen;
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

/* Raises every family's guard, so that the libcrypto and libc functions the preload calls for its
 * own bookkeeping cannot re-enter its hooks; ct_guard_restore puts the previous word back. A
 * thread without a state (t == NULL: early start, or out of memory) has nothing to raise. */
static inline uint32_t ct_guard_all(struct ct_thread *t)
{
	if (!t)
		return 0;
	uint32_t g = t->guard;
	t->guard = CT_GUARD_ALL;
	return g;
}
static inline void ct_guard_restore(struct ct_thread *t, uint32_t g)
{
	if (t)
		t->guard = g;
}

/* The same, keeping errno as the real call left it: the preload's bookkeeping after a hooked
 * call (an event, a classification) between ct_quiet_begin and ct_quiet_end. */
struct ct_quiet {
	uint32_t guard;
	int err;
};
static inline struct ct_quiet ct_quiet_begin(struct ct_thread *t)
{
	struct ct_quiet q = { .err = errno };
	q.guard = ct_guard_all(t);
	return q;
}
static inline void ct_quiet_end(struct ct_thread *t, struct ct_quiet q)
{
	ct_guard_restore(t, q.guard);
	errno = q.err;
}

#if UINTPTR_MAX == 0xffffffffu && !defined(__SANITIZE_THREAD__)
/*
 * 32-bit targets: a 64-bit counter is two 32-bit words. i386 has no plain 64-bit load or store
 * (GCC makes its atomic ones x87 fildll/fistpll through the stack, which cost the 16-byte hook
 * half its speed), mipsel none at all (libatomic's locks). So the single writer adds to the low
 * word alone, one 32-bit load and store, and only a carry into the high word (once per 2^32)
 * takes the slow branch, bracketed by ct_carry_begun / ct_carry_ended, which the flusher's sum
 * (ct_stats_sum) checks around its reads: a shard read while a carry was in flight is read again.
 */
#define CT_SPLIT_COUNTERS 1
#define CT_WORD_LO (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__ ? 0 : 1)
#define CT_WORD_HI (1 - CT_WORD_LO)
extern _Atomic uint32_t ct_carry_begun, ct_carry_ended;
static inline __attribute__((always_inline)) void ct_add64(uint64_t *field, uint64_t v)
{
	uint32_t *w = (uint32_t *)field;
	uint32_t lo = __atomic_load_n(&w[CT_WORD_LO], __ATOMIC_RELAXED), nlo = lo + (uint32_t)v;
	/* what the high word gains, mod 2^32: 0 for a small negative v that borrows nothing */
	uint32_t carry = (uint32_t)(v >> 32) + (nlo < lo);
	if (CT_LIKELY(!carry)) {
		__atomic_store_n(&w[CT_WORD_LO], nlo, __ATOMIC_RELAXED);
		return;
	}
	atomic_fetch_add_explicit(&ct_carry_begun, 1, memory_order_seq_cst);
	__atomic_store_n(&w[CT_WORD_LO], nlo, __ATOMIC_RELAXED);
	__atomic_store_n(&w[CT_WORD_HI], w[CT_WORD_HI] + carry, __ATOMIC_RELAXED);
	atomic_fetch_add_explicit(&ct_carry_ended, 1, memory_order_release);
}
/* A counter of another thread's shard (the flusher), between ct_carry_read_begin and
 * ct_carry_read_again. */
static inline uint64_t ct_counter_load(const uint64_t *field)
{
	const uint32_t *w = (const uint32_t *)field;
	uint32_t lo = __atomic_load_n(&w[CT_WORD_LO], __ATOMIC_ACQUIRE);
	return (uint64_t)__atomic_load_n(&w[CT_WORD_HI], __ATOMIC_ACQUIRE) << 32 | lo;
}
/* Before reading counters that other threads write: false while some carry is in flight (then
 * wait and begin again); *begun is for ct_carry_read_again. */
static inline bool ct_carry_read_begin(uint32_t *begun)
{
	uint32_t ended = atomic_load_explicit(&ct_carry_ended, memory_order_acquire);
	*begun = atomic_load_explicit(&ct_carry_begun, memory_order_acquire);
	return *begun == ended;
}
/* After reading them: true when a carry began meanwhile (what was read may be torn: read again). */
static inline bool ct_carry_read_again(uint32_t begun)
{
	return atomic_load_explicit(&ct_carry_begun, memory_order_acquire) != begun;
}
#define CT_ADD(field, v) ct_add64(&(field), (v))
#else
/* Single-writer counter bump: a plain add, but atomic-typed so the flusher's loads are defined. */
#define CT_ADD(field, v)                                                                                     \
	__atomic_store_n(&(field), __atomic_load_n(&(field), __ATOMIC_RELAXED) + (v), __ATOMIC_RELAXED)
static inline uint64_t ct_counter_load(const uint64_t *field)
{
	return __atomic_load_n(field, __ATOMIC_RELAXED);
}
#endif

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
#define ct_hot_load32(p)                                                                                     \
	({                                                                                                   \
		uint32_t v_;                                                                                 \
		__asm__("movl %1, %0" : "=r"(v_) : "m"(*(p)));                                               \
		v_;                                                                                          \
	})
#else
#define CT_HOT_LOAD_PTR(p) __atomic_load_n(&(p), __ATOMIC_RELAXED)
#define CT_HOT_ADD(field, v) CT_ADD(field, v)
static inline uint32_t ct_hot_load32(const _Atomic uint32_t *p)
{
	return atomic_load_explicit(p, memory_order_relaxed);
}
#endif

/* ---- the one-entry context cache's fast path (EVP's data calls, libgcrypt's) ---------------- */

/* A request's cache key equals the cached one. On a 32-bit target, word by word: a key's high
 * word is a constant of its family and entry there (evp_data.c, gcrypt.c), so the test is one
 * compare with a register and one with an immediate, not a 64-bit xor-and-or. */
static inline __attribute__((always_inline)) bool ct_hot_key_is(uint64_t key, uint64_t cached)
{
#if UINTPTR_MAX > UINT32_MAX
	return key == cached;
#else
	return (uint32_t)key == (uint32_t)cached && (uint32_t)(key >> 32) == (uint32_t)(cached >> 32);
#endif
}

enum ct_hot { CT_HOT_RUN, CT_HOT_SAMPLED, CT_HOT_NO };

/*
 * This thread's state exists (no state yet is ct_thread_none, whose guard bits are all set), no
 * call of family fam is in progress, ctx is the one this thread used last and the request has
 * the key of the last one (a family's keys never equal another's: evp_data.c, gcrypt.c): the
 * call is counted in the cached cell (before it runs) and CT_HOT_RUN says it runs with nothing
 * else to do, CT_HOT_SAMPLED that its countdown ran out (a timed call); both leave fam's guard
 * raised. CT_HOT_NO: the family's slow path.
 */
static inline __attribute__((always_inline)) enum ct_hot ct_hot_enter(struct ct_thread *t, enum ct_family fam,
								      const void *ctx, uint64_t key)
{
	if (CT_UNLIKELY(t->guard & (1u << fam)))
		return CT_HOT_NO;
	t->guard |= 1u << fam;
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	if (CT_UNLIKELY(ctx != t->hot_ctx || t->hot_gen != ct_hot_load32(&ct_ctxmap_gen) ||
			!ct_hot_key_is(key, t->hot_len))) {
		t->guard &= ~(1u << fam);
		__atomic_signal_fence(__ATOMIC_SEQ_CST);
		return CT_HOT_NO;
	}
	struct ct_size_bucket *sb = t->hot_sb;
	CT_HOT_ADD(sb->calls, 1);
	/* a cached request's bytes are below ct_sample_all_bytes (at most 2^30): on a 32-bit target
	 * the add is then one word's, its carry the only way to the high word */
	CT_HOT_ADD(sb->bytes, (uintptr_t)t->hot_bytes);
	return CT_UNLIKELY(--t->countdown == 0) ? CT_HOT_SAMPLED : CT_HOT_RUN;
}

/* Caches ctx (its counters c and path, for entry) as this thread's last context, valid while the
 * ctxmap's generation is gen; no request length cached yet. */
static inline void ct_hot_cache_ctx(struct ct_thread *t, const void *ctx, uint8_t entry,
				    struct ct_counters *c, uint32_t path, uint32_t gen)
{
	t->hot_ctx = ctx;
	t->hot_c = c;
	t->hot_path = path;
	t->hot_entry = entry;
	t->hot_gen = gen;
	t->hot_len = CT_HOT_NO_LEN;
	t->hot_lane = NULL;
}

/* One more in a per-thread count only its thread writes (the flusher reads and sums them): a
 * plain add, not a locked one. */
static inline void ct_owned_inc(_Atomic uint64_t *count)
{
	atomic_store_explicit(count, atomic_load_explicit(count, memory_order_relaxed) + 1,
			      memory_order_relaxed);
}

/* Caches the request just counted on the cached context: key, its bytes and its cell ci. */
static inline void ct_hot_cache_len(struct ct_thread *t, uint64_t key, uint64_t bytes, unsigned ci)
{
	t->hot_len = key;
	t->hot_bytes = bytes;
	t->hot_ci = (uint8_t)ci;
	t->hot_sb = &t->hot_c->cell[ci];
}

#include "timing.h"

#pragma GCC visibility pop

#endif
