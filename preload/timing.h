/* SPDX-License-Identifier: MIT */
/*
 * timing.h - how a hooked call is counted and timed (included by internal.h; the out-of-line part
 * is timing.c, the pure arithmetic timing_model.c, the method in prose docs/report.md "How time is
 * measured").
 *
 * Every call is counted, exactly, in a cell of its path's counters (a size bucket of data calls, or
 * a phase: key set-up, message set-up, AAD, final, tag). Time is sampled two ways, in turn:
 *  - a probe times one call alone, from its entry to the completion of its work (a plain clock read
 *    at entry, a plain and an ordered one at exit: the AES chain of a short call is still running
 *    when the call returns, which an unordered read would cut off);
 *  - a span times a run of consecutive calls on one path, from the entry of the first to the entry
 *    of the call after the last, with no clock read in between: a 20 ns call in a loop costs what
 *    the loop measures (its work overlaps the next call's start), which no clock pair around one
 *    call can see without adding its own cost. A span in which other work ran between the calls
 *    is rejected (its calls are priced at the probes' mean), judged from the probes.
 * A hook counts its call with ct_tick() (inline; the EVP fast path has its own copy) and, when that
 * says so, brackets the real call with ct_timed_begin() / ct_timed_end().
 */
#ifndef CT_TIMING_H
#define CT_TIMING_H

extern unsigned ct_sample_period, ct_sample_all_bytes;
extern bool ct_per_call;

/*
 * The mean sampling period of a call of `bytes`: ct_sample_period (N) up to 1 KiB, halved with
 * each doubling above that, 1 from N/2 KiB on. So a sample (~30 ns) comes about once per N KiB of
 * large requests, whatever their size: sampling costs about as much per byte at 8 KiB as at 16 B.
 */
static inline uint32_t ct_sample_period_for(uint64_t bytes)
{
	const uint64_t kib = bytes >> 10;
	const unsigned shift = kib ? 64 - (unsigned)__builtin_clzll(kib) : 0;
	const uint32_t p = shift < 32 ? ct_sample_period >> shift : 0;
	return p ? p : 1;
}

/* The thread's next pseudo-random word (xorshift32): the sampling intervals, and which ops per-call
 * mode's rate cap keeps (ops_cap.c). */
static inline uint32_t ct_rng_next(struct ct_thread *t)
{
	uint32_t x = t->rng ? t->rng : 0x9e3779b9u;
	x ^= x << 13;
	x ^= x >> 17;
	x ^= x << 5;
	t->rng = x;
	return x;
}

/* The next sampling interval for calls of `bytes`: uniform in [1, 2 * period - 1], mean =
 * period. A fixed interval would alias with periodic call patterns (TLS: AAD, data, AAD,
 * data... on two paths) and never time some of them. xorshift32 per thread; only samples pay. */
static inline uint32_t ct_sample_next(struct ct_thread *t, uint64_t bytes)
{
	const uint32_t p = ct_sample_period_for(bytes);
	if (p <= 1)
		return 1;
	return 1 + ct_rng_next(t) % (2 * p - 1);
}

/* Whether a call of `bytes` is due to be sampled, no span being open. Always from
 * ct_sample_all_bytes; else when the countdown runs out, after cutting an interval drawn for
 * smaller calls down to this size's, so that large calls after many small ones are sampled as
 * often as their size asks. Leaves the countdown at 0 when due (ct_timed_begin draws the next). */
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

/*
 * Counts one call of `bytes` in cell `ci` of counters c (calls and bytes, exact, before the real
 * call runs) and says whether the call takes the timed path: a sample is due, or a span is open
 * and this call ends it (a call on another path, or the span's last call was counted). The EVP
 * fast path does the same with its cached cell: counts, then `--countdown == 0`.
 */
static inline bool ct_tick(struct ct_thread *t, struct ct_counters *c, unsigned ci, uint64_t bytes)
{
	struct ct_size_bucket *cell = &c->cell[ci];
	CT_ADD(cell->calls, 1);
	CT_ADD(cell->bytes, bytes);
	if (CT_UNLIKELY(!(c->cell_mask & (1ull << ci))))
		c->cell_mask |= 1ull << ci;
	if (CT_UNLIKELY(t->span.t0))
		return t->span.c != c || --t->countdown == 0;
	return ct_sample_due(t, bytes);
}

/* ct_tick's common case alone, for a fast path that has its counters at hand: a call on a cell
 * counted before that neither ends a span (one is open on these counters, and this is not its
 * last call) nor, with none open, is a sample due (ct_sample_due's countdown neither runs out nor
 * is re-drawn), is counted and the countdown moves; true. Anything else: false, nothing done,
 * and the caller takes ct_tick. */
static inline bool ct_tick_quiet(struct ct_thread *t, struct ct_counters *c, unsigned ci, uint64_t bytes)
{
	if (t->countdown <= 1 || !(c->cell_mask & (1ull << ci)))
		return false;
	if (t->span.t0 ? t->span.c != c : bytes >= 1024 || bytes >= ct_sample_all_bytes)
		return false;
	struct ct_size_bucket *cell = &c->cell[ci];
	CT_ADD(cell->calls, 1);
	CT_ADD(cell->bytes, bytes);
	t->countdown--;
	return true;
}

/* The cell of a data call of `bytes`. */
static inline unsigned ct_cell_of_size(uint64_t bytes)
{
	return ct_size_bucket(bytes);
}

/* Probes of calls of at least this many bytes skip the ordered read at exit (timing.c). */
#define CT_PROBE_ORDERED_BELOW 1024u

#define CT_TIMED_PROBE 1u
#define CT_TIMED_SPAN 2u

/* One call on its timed path, on the hook's stack. */
struct ct_timed {
	uint64_t a;            /* clock at the measured entry */
	uint64_t cpu0_ns;      /* thread CPU time before the call when this probe is CPU-sampled, else 0 */
	uint64_t span_cpu0_ns; /* the same when the span this call opens is CPU-sampled */
	uint64_t bytes;
	struct ct_counters *c;
	uint32_t path;
	uint32_t syscalls_before;
	uint8_t ci;   /* the call's cell */
	uint8_t what; /* CT_TIMED_*: 0 when the call only ended a span */
};

/* Called when ct_tick (or the fast path) said so, right before the real call: ends an open span
 * at this call's entry (this call, already counted, is not part of it), writes a snapshot that
 * fell due, and when this call is a sample, starts it (its clock read is the last thing here). */
void ct_timed_begin(struct ct_thread *t, struct ct_timed *tm, struct ct_counters *c, uint32_t path,
		    unsigned ci, uint64_t bytes);
/* Measures what the method's own reads add (otherwise done at the first sample, ~50 us): at
 * start in per-call mode, where no call may go untimed meanwhile. */
void ct_timing_calibrate_now(void);
/* Right after the real call: a probe's closing reads and accounting, or a span's start
 * (ct_timed_finish); nothing, inline, for a call that was not timed. */
void ct_timed_finish(struct ct_thread *t, struct ct_timed *tm);
static inline void ct_timed_end(struct ct_thread *t, struct ct_timed *tm)
{
	if (CT_UNLIKELY(tm->what))
		ct_timed_finish(t, tm);
}
/* Ends an open span at this moment without a counted call: at a call whose own bookkeeping must
 * not be timed (a context set-up, a free), or at thread exit, fork and exec. */
void ct_span_interrupt(struct ct_thread *t);
/* A call that is always timed alone (a context set-up, a multi-block write: microseconds; the
 * caller ended any span before it): counted in cell ci of path_id with its corrected time. t0/t1
 * are clock values around the real call. */
void ct_probe_once(struct ct_thread *t, uint32_t path_id, unsigned ci, uint64_t bytes, uint64_t t0,
		   uint64_t t1);

/*
 * A call that waits for a peer (a TLS record sent or received: CT_PATH_IO_WAIT paths): every one
 * timed, wall and CPU. Its CPU is the thread's CPU clock across it (exact, the running slice
 * included), split between user and system as getrusage(RUSAGE_THREAD) split it across the call
 * (the kernel's tick-sampled split; getrusage's own total lags the running slice, so it gives the
 * ratio only; a call across which it did not move takes the path's split so far): such a call
 * makes syscalls of its own, so its CPU is not "all system" as for a cipher call that happened
 * to make one (cpu_sample_add). Its wall time includes the wait; its CPU time is what the report
 * prices it by.
 */
struct ct_io_call {
	uint64_t t0;                /* clock at entry */
	uint64_t cpu0_ns;           /* thread CPU clock at entry, 0 when it could not be read */
	uint64_t user0_us, sys0_us; /* getrusage's split at entry */
	bool ru_ok;
};
void ct_io_call_begin(struct ct_thread *t, struct ct_io_call *io);
/* Counts the call (bytes > 0; a call that moved nothing is not counted) on path_id. */
void ct_io_call_end(struct ct_thread *t, const struct ct_io_call *io, uint32_t path_id, uint64_t bytes);

#endif
