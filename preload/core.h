/* SPDX-License-Identifier: MIT */
/*
 * core.h - the preload's API for its hooks, with struct ct_thread kept opaque. A hook is three
 * layers (STYLE.md): the exported shim -> the project's logic (this API) -> the real function.
 *
 * Which header a file includes: the kernel-interface hooks (preload/kernel/) and the route
 * backends see only this one: their calls cost a syscall, so an out-of-line ct_thread_get or
 * ct_enter is nothing to them. The EVP and AES_* hooks (preload/hooks/) and the core files
 * (thread, timing, stats, writer) include internal.h as well, for the thread layout and the
 * inline fast path (ct_thread_fast, ct_enter_fast, the counter cells) that a 30 ns call needs.
 *
 * Rules for hooks:
 *  - Return the real result untouched and keep errno as the real call left it (ct_errno_save).
 *  - Record only the outermost call of a family (ct_enter / ct_leave); nested calls pass through.
 *  - Nothing here may abort, print on the host's stdio, or block: on trouble, count and pass through.
 *  - The hot path (ct_op_begin/ct_op_end) takes no lock, allocates nothing, makes no syscall
 *    unless a flush is due.
 */
#ifndef CT_CORE_H
#define CT_CORE_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "trace_format.h"

#define CT_EXPORT __attribute__((visibility("default")))
#define CT_LIKELY(x) __builtin_expect(!!(x), 1)
#define CT_UNLIKELY(x) __builtin_expect(!!(x), 0)

/* Hook families, for the per-thread recursion guard: a family's hook called from inside the same
 * family passes through; a kernel hook called from inside an EVP hook (afalg engine) records. */
enum ct_family {
	CT_FAM_EVP = 0,
	CT_FAM_AES = 1,
	CT_FAM_ENGINE = 2,
	CT_FAM_KERNEL = 3, /* cryptodev + AF_ALG + fd bookkeeping */
	CT_FAM_PROC = 4,   /* fork/exec/dlopen */
	CT_FAM_GCRYPT = 5, /* libgcrypt's gcry_cipher_* (hooks/gcrypt.c) */
	CT_FAM_GNUTLS = 6, /* GnuTLS's cipher, AEAD and record calls */
	CT_FAM_COUNT
};

/* ---- resolving real functions -------------------------------------------------------------- */

/* Returns the next definition of `name` after the preload (dlsym RTLD_NEXT), falling back to a
 * libcrypto loaded RTLD_LOCAL (found with dl_iterate_phdr). Never fails loudly: NULL if absent.
 * Safe before the constructor ran. Caches nothing: callers cache in a static (CT_REAL does). */
void *ct_resolve(const char *name);

/* The route's provider freed one of its contexts: the hooks' caches that may hold it (the direct
 * lane's, route/lane.h) are void from now on. */
void ct_route_ctx_freed(void);

/* CT_REAL(fn) evaluates to a pointer of fn's own type, resolved once and cached.
 * Usage: `int r = CT_REAL(EVP_EncryptUpdate)(ctx, out, outl, in, inl);` - the hook must guard
 * against NULL (e.g. `if (!CT_REAL(x)) { errno = ENOSYS; return 0; }`). */
#define CT_REAL(fn)                                                                                          \
	({                                                                                                   \
		static __typeof__(&fn) ct_real_##fn;                                                         \
		__typeof__(&fn) ct_p_ = __atomic_load_n(&ct_real_##fn, __ATOMIC_RELAXED);                    \
		if (CT_UNLIKELY(!ct_p_)) {                                                                   \
			ct_p_ = (__typeof__(&fn))ct_resolve(#fn);                                            \
			__atomic_store_n(&ct_real_##fn, ct_p_, __ATOMIC_RELAXED);                            \
		}                                                                                            \
		ct_p_;                                                                                       \
	})

/* ---- callers bound to another libcrypto (foreign.c) ----------------------------------------- */

/* The address ranges of objects lately found bound to the libcrypto we trace, per thread. */
#define CT_CALLER_RANGES 4
struct ct_caller_range {
	uintptr_t start, len;
};
extern __thread struct ct_caller_range ct_caller_ok[CT_CALLER_RANGES]
	__attribute__((tls_model("initial-exec")));

static inline bool ct_caller_known_ok(const void *ra)
{
	uintptr_t a = (uintptr_t)ra;
	for (unsigned i = 0; i < CT_CALLER_RANGES; i++)
		if (a - ct_caller_ok[i].start < ct_caller_ok[i].len)
			return true;
	return false;
}

/* The other libcrypto a call on this thread is being passed to (NULL: none). The library's own
 * calls into its exported functions come back through our hooks, and a tail call in it leaves the
 * return address in our forwarding frame: while this is set they go to the same library. */
extern __thread void *ct_foreign_active __attribute__((tls_model("initial-exec")));

/* The definition of `name` that the object holding ra binds to on its own (or, during a passed
 * call, that ct_foreign_active has), when that is not the one we forward to (its own libcrypto:
 * a plugin's, a wheel's renamed copy); *lib is that library. NULL otherwise. */
void *ct_foreign_real(const char *name, const void *ra, void **lib);

/* First thing in an exported libcrypto hook: a call from an object bound to another libcrypto
 * goes there, untouched and untraced (foreign.c). args: the hook's parameters, in order. PASS is
 * what runs the passed call and returns: f_ is the other library's function, prev_ what
 * ct_foreign_active was. */
#define CT_FOREIGN_GUARD(fn, PASS)                                                                           \
	do {                                                                                                 \
		const void *ra_ = __builtin_return_address(0);                                               \
		if (CT_UNLIKELY(ct_foreign_active || !ct_caller_known_ok(ra_))) {                            \
			void *lib_, *prev_ = ct_foreign_active;                                              \
			__typeof__(&fn) f_ = (__typeof__(&fn))ct_foreign_real(#fn, ra_, &lib_);              \
			if (f_) {                                                                            \
				ct_foreign_active = lib_;                                                    \
				PASS;                                                                        \
			}                                                                                    \
		}                                                                                            \
	} while (0)
#define CT_PASS_FOREIGN(fn, ...)                                                                             \
	CT_FOREIGN_GUARD(fn, __typeof__(f_(__VA_ARGS__)) r_ = f_(__VA_ARGS__); ct_foreign_active = prev_;    \
			 return r_)
/* The same for a hook returning void. */
#define CT_PASS_FOREIGN_VOID(fn, ...)                                                                        \
	CT_FOREIGN_GUARD(fn, f_(__VA_ARGS__); ct_foreign_active = prev_; return )

/* ---- per-thread state and the recursion guard ---------------------------------------------- */

struct ct_thread; /* opaque: per-thread shard of counters, guard depth, sampling countdown */

/* The calling thread's state, created on first use; NULL when tracing is off in this process
 * (setuid, disabled, out of memory) or while the preload itself is initialising. Hooks treat
 * NULL as "pass straight through". The out-of-line form of internal.h's ct_thread_fast. */
struct ct_thread *ct_thread_get(void);

/* True if this call is the outermost of its family on this thread (and marks it entered). */
bool ct_enter(struct ct_thread *t, enum ct_family fam);
void ct_leave(struct ct_thread *t, enum ct_family fam);

static inline int ct_errno_save(void)
{
	return errno;
}
static inline void ct_errno_restore(int e)
{
	errno = e;
}

/* ---- paths --------------------------------------------------------------------------------- */

struct ct_path_key {
	uint8_t api, dir, entry, route; /* enum ct_api, ct_dir, ct_entry, ct_route_target */
	uint16_t key_bits;
	uint32_t flags;   /* CT_PATH_* */
	const char *impl; /* copied by the registry */
	const char *cipher;
	const char *requested; /* may be NULL */
	const char *proto;     /* may be NULL: "TLS1.3" for TLS and kTLS paths */
};

/* Finds or creates the path for key; returns its id (< ct_path_capacity()), or CT_NO_PATH when
 * the registry is full (the hook then passes through; the loss is counted). Takes a lock: call
 * at context init / session setup, never per operation. A new path is written to the trace at
 * the next flush. The first caller's call site may be attached with ct_path_set_callsite. */
uint32_t ct_path_intern(const struct ct_path_key *key);
void ct_path_set_callsite(uint32_t path_id, const char *callsite);
/* ct_path_intern, and the first time the path has no call site, this call's stack as its call
 * site (the preload's own frames skipped). Guards raised by the caller. */
uint32_t ct_path_intern_here(const struct ct_path_key *key);

/* Context -> path map (lock-free, open addressing, keyed by pointer): EVP_CIPHER_CTX*, cryptodev
 * session ids (as pointers: (void *)(uintptr_t)((fd << 32) | ses)), AF_ALG op fds, AES_KEY*. */
void ct_ctxmap_set(const void *key, uint32_t path_id);
uint32_t ct_ctxmap_get(const void *key); /* CT_NO_PATH if unknown */
void ct_ctxmap_del(const void *key);

/* ---- operations (the hot path) ------------------------------------------------------------- */

struct ct_op_timer {
	uint64_t t0;      /* TSC (or ns) at begin; 0 when this call is not timed */
	uint64_t cpu0_ns; /* thread CPU time at begin when this call is CPU-sampled, else 0 */
	uint32_t syscalls_before;
};

/* Decide whether to time this call (sampling: every call of >= sample_all_bytes, else 1 in
 * sample_period; CPU time sampled at most about once per millisecond per thread) and start
 * the clocks. */
void ct_op_begin(struct ct_thread *t, struct ct_op_timer *op, uint64_t bytes);
/* Count the call on path_id (calls, bytes, size histogram; errors when !ok) and its time when
 * timed; in per-call mode, append it to the thread's op buffer. May flush if a flush is due. */
void ct_op_end(struct ct_thread *t, struct ct_op_timer *op, uint32_t path_id, uint64_t bytes, bool ok);

/* Kernel hooks: count a syscall made on behalf of the op in progress on this thread (if any) and
 * on path_id. spliced marks AF_ALG splice/vmsplice feeding. */
void ct_count_syscall(struct ct_thread *t, uint32_t path_id);
void ct_mark_spliced(struct ct_thread *t, uint32_t path_id);
/* Session life cycle timing: setup (CIOCGSESSION, AF_ALG socket+bind+setkey+accept) and
 * teardown (CIOCFSESSION, close of op fd). ns measured by the caller with ct_now_ns(). */
void ct_phase_setup(struct ct_thread *t, uint32_t path_id, uint64_t ns);
void ct_phase_teardown(struct ct_thread *t, uint32_t path_id, uint64_t ns);
/* More teardown time for sessions already counted (AF_ALG: the tfm socket closed after its op
 * sockets). */
void ct_phase_teardown_more(struct ct_thread *t, uint32_t path_id, uint64_t ns);

uint64_t ct_now_ns(void); /* CLOCK_MONOTONIC, ns */

/* ---- events -------------------------------------------------------------------------------- */

/* Records an event; identical events (same kind, call, errno, detail and call site) are merged
 * into one record with a count. When want_callsite, the caller's stack is captured (glibc backtrace(),
 * symbolized as module!symbol+0xoff), skipping the preload's own frames: use it on failures and
 * session setup only, never per operation. detail is printf-style; it must never contain key
 * bytes, IVs or data. */
void ct_event(enum ct_event_kind kind, const char *call, int err, int64_t ret, uint32_t path_id,
	      bool want_callsite, const char *detail_fmt, ...) __attribute__((format(printf, 7, 8)));

/* Counts one more event of (kind, call, path_id, detail) from the code at site_key (a return
 * address): the first time that site is seen with that detail, the call site is captured and an
 * event made as ct_event does; after that only its count grows (no unwinding), so this may run
 * once per context or session set-up. */
void ct_event_at_site(enum ct_event_kind kind, const char *call, uint32_t path_id, uintptr_t site_key,
		      const char *detail_fmt, ...) __attribute__((format(printf, 5, 6)));

/* Fills buf with the current call site (same format as events); returns buf. */
char *ct_callsite(char *buf, size_t cap, unsigned skip_frames);

/* ---- process-level ------------------------------------------------------------------------- */

/* True in a child that shares the parent's memory before it execs (vfork; posix_spawn's
 * clone(CLONE_VM)): hooks must not change the preload's shared state there - the fds such a child
 * closes are its own copies, the parent's stay open. One getpid() per call: not for hot paths. */
bool ct_in_vfork_child(void);

/* True when `cryptrace attach` loaded the library into a running process (docs/attach.md):
 * what a hook sets up must not outlive the detach that gives the process its own calls back. */
bool ct_attach_late(void);

/* Forces a snapshot of every path, event and process fact to the trace file now (exit, exec,
 * before a risky operation). Safe to call from any hook; a flush already running on another
 * thread makes this a no-op. final marks the last snapshot (exit or exec). */
void ct_flush(bool final);

/* Configuration, read once with secure_getenv (see docs/environment.md). */
struct ct_config {
	bool enabled;
	bool per_call;          /* CRYPTRACE_MODE=calls */
	unsigned sample_period; /* CRYPTRACE_SAMPLE (default 256) */
	unsigned sample_all_bytes;
	unsigned flush_ms;     /* CRYPTRACE_FLUSH_MS (default 1000) */
	unsigned max_ops_rate; /* CRYPTRACE_MAX_OPS_RATE: per-call timeline's ops/s (default 250000; 0 all) */
	unsigned log_level; /* CRYPTRACE_LOG: 0 silent (default), 1 warnings, 2 debug -> CRYPTRACE_LOG_FILE or stderr */
	const char *out_dir;    /* CRYPTRACE_OUT */
	const char *route_spec; /* CRYPTRACE_ROUTE */
	bool argv_exe_only;     /* CRYPTRACE_ARGV=0: record argv[0] only */
	bool route_direct;      /* CRYPTRACE_ROUTE_DIRECT (default 1): the direct lane (route/lane.h) */
	bool flusher;           /* CRYPTRACE_FLUSHER (default 1): the flusher thread (flusher.c) */
	/* Always-on mode (CRYPTRACE_OUT unset, a spool in /etc/cryptrace.conf: docs/fleet.md) */
	const char *spool_root;   /* traces go to <spool_root>/<euid>/ (spool.c); NULL: out_dir */
	uint64_t max_file_bytes;  /* per trace file; 0 no cap */
	uint64_t max_spool_bytes; /* the whole spool (pruned by `cryptrace spool prune`); 0 no cap */
	uint64_t max_age_s;       /* traces older than this are pruned; 0 no cap */
};
const struct ct_config *ct_config(void);

/* Internal log: only when CRYPTRACE_LOG is set; never on the host's stdio otherwise. */
void ct_log(unsigned level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* One warning to the host's syslog socket (syslog.c), for what an always-on host's operator
 * must see without CRYPTRACE_LOG. */
void ct_syslog(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
