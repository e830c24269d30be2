/* SPDX-License-Identifier: MIT */
/*
 * writer.c - the trace file: "<CRYPTRACE_OUT>/<comm>.<pid>.ctrace" (".N" added on EEXIST), or in
 * the always-on mode the same name in the user's spool directory (spool.c, docs/fleet.md), made
 * 0600 with O_EXCL|O_NOFOLLOW, its fd moved above 1000 so programs that dup2 over low fds leave
 * it alone. Records are encoded into one mmap'd buffer and appended with write() only: sshd's
 * seccomp sandbox kills a process for lseek/pwrite/fsync, getrusage or readlink, so everything
 * but write(), clock_gettime, getpid and a failing open() happens once, at start.
 *
 * A flush appends: new PATH records (a path is written just before its first STATS), STATS of
 * paths that changed, changed EVENTs, THREAD names, OPS batches (per-call mode) and PROC.
 */
#include <dlfcn.h>
#include <fcntl.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "calib.h"
#include "errno_abi.h"
#include "mapped.h"
#include "redact.h"
#include "flusher.h"
#include "signals.h"
#include "spool.h"
#include "writer.h"
#include "route.h"

#define BUF_SIZE (4u << 20)
#define BUF_SPILL (BUF_SIZE - (1u << 20) - 65536) /* write out before the next record may not fit */
#define OPS_PER_BATCH 4096u

static pthread_mutex_t flush_lock = PTHREAD_MUTEX_INITIALIZER;
static _Atomic int trace_fd = -1;
static bool fd_lost; /* the program closed our fd: reopen at the next flush */
static bool ended;   /* END written (exit or exec) */
static uint32_t proc_flags;
static _Atomic uint64_t write_errors;
/* RLIMIT_FSIZE: a write past it raises SIGXFSZ, which kills (sshd's sandboxed child sets it to 0).
 * We track our file's size (append only) and never write past the limit. */
static uint64_t file_size;
static _Atomic uint64_t fsize_limit = UINT64_MAX;
/* Once a write was refused (limit) or failed, nothing more goes to this file: a later small record
 * (END) that still fits would otherwise make a trace that missed snapshots read as complete. The
 * file stays a clean prefix without END, which the reporter calls incomplete. A new file resets. */
static bool writes_refused;
static uint8_t *buf;
static size_t buf_used;
static uint8_t path_written[CT_PATH_CAPACITY];
static bool modules_all; /* a new file: write every module record again */
static uint64_t path_sig[CT_PATH_CAPACITY];
static char libcrypto_version[128];
static bool libcrypto_seen;
/* The last write before a fatal signal's default action runs inside a signal handler, anywhere
 * (in dlopen, say): once libcrypto has been seen, that flush leaves out what reads the loader's
 * list (dl_iterate_phdr, dlsym) and what takes long (the AES-NI calibration), and repeats what
 * the previous flush found. */
static bool in_signal_end;
static char crypto_libs[2048];
static uint32_t aesni_cpb_found;
static uint64_t lost_reported, errors_reported;
/* The program is lowering RLIMIT_FSIZE to this (ct_writer_fsize_limit): said in PROC. */
static _Atomic uint64_t fsize_coming = UINT64_MAX;
#define FSIZE_NEAR (1u << 20) /* a limit within this of the file's size: later snapshots may not fit */
/* The always-on mode's per-file cap (max_file_bytes, docs/fleet.md): a hard limit like
 * RLIMIT_FSIZE's, and per-call operations stop at 3/4 of it, so that the last quarter keeps the
 * counters' snapshots and END: the trace stays exact in calls and bytes, its timeline ends. */
static uint64_t file_cap = UINT64_MAX;
/* The always-on mode creates the file at the first flush after the first cipher path: on a host
 * where every process is preloaded, a process that does no crypto (sh, ls, cron's jobs) leaves no
 * file and costs no file system call (docs/fleet.md). With CRYPTRACE_OUT every process leaves
 * one, as the launcher's reports expect. One attempt: a refused spool is not retried. */
static bool open_deferred;
static uint64_t ops_over_cap; /* ops not written for the cap: counted as dropped in PROC */
static bool ops_cap_said;

/* Header facts, gathered once (later, a sandbox may forbid the syscalls they need). */
static struct {
	char exe[512], cmdline[4096], argv[6144], cpu_model[128], kernel[256], hostname[128];
	char timing[320];
	size_t argv_len;
	unsigned argv_redacted;
	bool done;
} facts;

void ct_flush_lock(void)
{
	ct_lock(&flush_lock);
}

void ct_flush_unlock(void)
{
	ct_unlock(&flush_lock);
}

uint64_t ct_write_errors(void)
{
	return atomic_load(&write_errors);
}

bool ct_writer_owns_fd(int fd)
{
	return fd >= 0 && fd == atomic_load(&trace_fd);
}

void ct_writer_fd_closed(void)
{
	/* a vfork child (posix_spawn, python's subprocess) closing fds before exec shares our
	 * memory: the parent's fd is still open, so nothing changes */
	if (ct_proc_is_vfork_child())
		return;
	atomic_store(&trace_fd, -1);
	fd_lost = true;
}

void ct_read_small_file(const char *path, char *dst, size_t cap, size_t *len)
{
	size_t n = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		ssize_t r;
		while (n < cap - 1 && (r = read(fd, dst + n, cap - 1 - n)) > 0)
			n += (size_t)r;
		close(fd);
	}
	dst[n] = 0;
	if (len)
		*len = n;
}

static void gather_facts(void)
{
	if (facts.done)
		return;
	facts.done = true;
	/* the program, also when the dynamic loader was started as a command to run it (loader.c) */
	const char *prog = ct_loader_program();
	ssize_t n = prog ? snprintf(facts.exe, sizeof(facts.exe), "%s", prog)
			 : readlink("/proc/self/exe", facts.exe, sizeof(facts.exe) - 1);
	facts.exe[n > 0 && (size_t)n < sizeof(facts.exe) ? n : 0] = 0;
	/* argv as recorded: secrets redacted, or the executable alone (redact.h). A command line
	 * longer than the buffer loses its cut last argument: part of a secret is still one. */
	size_t n_cmd;
	ct_read_small_file("/proc/self/cmdline", facts.cmdline, sizeof(facts.cmdline), &n_cmd);
	if (n_cmd == sizeof(facts.cmdline) - 1)
		while (n_cmd && facts.cmdline[n_cmd - 1])
			n_cmd--;
	size_t from = ct_loader_argv_start(facts.cmdline, n_cmd);
	facts.argv_len = ct_argv_redact(facts.cmdline + from, n_cmd - from, ct_config()->argv_exe_only,
					facts.argv, sizeof(facts.argv), &facts.argv_redacted);
	explicit_bzero(facts.cmdline, sizeof(facts.cmdline));
	ct_cpu_model(facts.cpu_model, sizeof(facts.cpu_model));
	struct utsname u;
	if (uname(&u) == 0)
		snprintf(facts.kernel, sizeof(facts.kernel), "%s %s %s", u.sysname, u.release, u.machine);
	gethostname(facts.hostname, sizeof(facts.hostname) - 1);
	const struct ct_config *c = ct_config();
	char clock[96];
	if (!ct_clk.use_tsc)
		snprintf(clock, sizeof(clock), "CLOCK_MONOTONIC (ns)");
	else
		snprintf(clock, sizeof(clock), "%s at %.3f MHz%s%s", ct_clk.tick_name,
			 (double)ct_clk.tsc_hz / 1e6,
			 ct_clk.tsc_cycles ? "" : " (a timer, not the CPU clock)",
			 ct_tsc_hz_given() ? " (the launcher's measure)" : "");
	if (c->per_call && c->max_ops_rate)
		snprintf(facts.timing, sizeof(facts.timing),
			 "%s; every call timed alone and as a span to the next call (per-call mode); "
			 "thread CPU sampled ~1/ms; timeline capped at %u ops/s: per %u ms, the first "
			 "%u ops kept, then 1 in K (weight K), counts exact",
			 clock, c->max_ops_rate, CT_OPS_WINDOW_MS, (unsigned)ct_ops_cap_burst());
	else if (c->per_call)
		snprintf(facts.timing, sizeof(facts.timing),
			 "%s; every call timed alone and as a span to the next call (per-call mode); "
			 "thread CPU sampled ~1/ms",
			 clock);
	else
		snprintf(
			facts.timing, sizeof(facts.timing),
			"%s; samples at random intervals, probes and spans in turn: on average 1 in %u calls "
			"under 1024 B, twice as often per doubling of size above, every call >= %u B; "
			"thread CPU sampled ~1/ms",
			clock, c->sample_period, c->sample_all_bytes);
}

/* The version string of a mapped libcrypto, without loading one. */
static const char *query_libcrypto_version(void)
{
	if (libcrypto_seen)
		return libcrypto_version;
	if (!ct_libcrypto_mapped())
		return "";
	const char *(*ver)(int) = (const char *(*)(int))ct_resolve("OpenSSL_version");
	if (!ver)
		ver = (const char *(*)(int))ct_resolve("SSLeay_version");
	const char *v = ver ? ver(0 /* OPENSSL_VERSION */) : NULL;
	snprintf(libcrypto_version, sizeof(libcrypto_version), "%s", v ? v : "libcrypto (unknown version)");
	libcrypto_seen = true;
	proc_flags |= CT_PROC_HAS_LIBCRYPTO;
	return libcrypto_version;
}

static void buf_write_out(void)
{
	int fd = atomic_load(&trace_fd);
	size_t off = 0;
	uint64_t limit = atomic_load(&fsize_limit);
	if (file_cap < limit)
		limit = file_cap;
	if (fd >= 0 && buf_used && (writes_refused || file_size + buf_used > limit)) {
		atomic_fetch_add(&write_errors, 1);
		proc_flags |= CT_PROC_INCOMPLETE;
		writes_refused = true;
		buf_used = 0;
		return;
	}
	while (fd >= 0 && off < buf_used) {
		ssize_t w = write(fd, buf + off, buf_used - off);
		if (w > 0) {
			off += (size_t)w;
			file_size += (uint64_t)w;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && errno == EBADF) {
			ct_writer_fd_closed(); /* closed behind our back: the next flush reopens */
			break;
		}
		atomic_fetch_add(&write_errors, 1);
		proc_flags |= CT_PROC_INCOMPLETE;
		writes_refused = true;
		break;
	}
	buf_used = 0;
}

/* Appends one encoded record: call encodes into the free part of buf (FREE_BUF) and returns its
 * size, or 0 when it does not fit. It is evaluated a second time after the buffer is written
 * out, so it must be a plain ct_encode_* of FREE_BUF with no side effect of its own. */
#define EMIT(call)                                                                                           \
	do {                                                                                                 \
		if (buf_used > BUF_SPILL)                                                                    \
			buf_write_out();                                                                     \
		size_t n_ = (call);                                                                          \
		if (!n_) {                                                                                   \
			buf_write_out();                                                                     \
			n_ = (call);                                                                         \
		}                                                                                            \
		buf_used += n_;                                                                              \
	} while (0)
#define FREE_BUF (buf + buf_used), (BUF_SIZE - buf_used)

/* The trace file, relative to dirfd: CRYPTRACE_OUT (AT_FDCWD and the directory in the name), or
 * this user's checked directory of the always-on spool (spool.c). */
static int create_file(void)
{
	const struct ct_config *c = ct_config();
	int dirfd = AT_FDCWD;
	const char *dir = c->out_dir;
	if (c->spool_root) {
		dirfd = ct_spool_open_dir(c->spool_root);
		if (dirfd < 0)
			return -1;
		/* room for a whole file: with a per-file cap no trace grows past what was reserved */
		if (!ct_spool_make_room(dirfd, c->spool_root, c->max_spool_bytes, c->max_file_bytes)) {
			close(dirfd);
			return -1;
		}
		dir = NULL;
	}
	char path[1024];
	int fd = -1;
	for (unsigned i = 0; i < 1000 && fd < 0; i++) {
		int n = snprintf(path, sizeof(path), "%s%s%s.%u.ctrace", dir ? dir : "", dir ? "/" : "",
				 ct_g.comm, ct_g.pid);
		if (i && n > 0 && (size_t)n < sizeof(path))
			n += snprintf(path + n, sizeof(path) - (size_t)n, ".%u", i);
		if (n < 0 || (size_t)n >= sizeof(path))
			break;
		fd = openat(dirfd, path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 && errno == EEXIST)
			continue;
		if (fd < 0) {
			ct_log(1, "cannot create %s: %s", path, strerror(errno));
			break;
		}
		if (c->spool_root && !ct_spool_file_ok(fd, c->spool_root, path)) {
			unlinkat(dirfd, path, 0); /* our name only: another link keeps its file */
			close(fd);
			fd = -1;
			break;
		}
		int hi = fcntl(fd, F_DUPFD_CLOEXEC, 1000);
		if (hi >= 0) {
			close(fd);
			fd = hi;
		}
		ct_log(2, "tracing to %s", path);
	}
	if (dirfd != AT_FDCWD)
		close(dirfd);
	return fd;
}

static void write_header(void)
{
	const struct ct_config *c = ct_config();
	uint32_t flags = 0;
	if (c->per_call)
		flags |= CT_HDR_PER_CALL;
	if (c->argv_exe_only)
		flags |= CT_HDR_ARGV_OMITTED;
	if (ct_clk.use_tsc && !ct_clk.tsc_cycles)
		flags |= CT_HDR_TICKS_NOT_CYCLES;
	if (ct_route_active())
		flags |= CT_HDR_ROUTES; /* a spec that parsed: its routes apply (a bad one is a warning) */
	if (ct_attach_late())
		flags |= CT_HDR_ATTACHED;
	struct ct_header h = {
		.pid = ct_g.pid,
		.ppid = ct_g.ppid,
		.start_realtime_ns = ct_g.start_realtime_ns,
		.start_mono_ns = ct_g.start_mono_ns,
		.tsc_hz = ct_clk.tsc_hz,
		.cpu_flags = ct_cpu_features(),
		.flags = flags,
		.sample_period = c->per_call ? 1 : c->sample_period,
		.sample_all_bytes = c->per_call ? 0 : c->sample_all_bytes,
		.flush_interval_ms = c->flush_ms,
		.aesni_cpb_milli = ct_config_aesni_cpb(),
		.exe = ct_str_from(facts.exe),
		.argv = { .p = facts.argv, .len = (uint32_t)facts.argv_len },
		.cpu_model = ct_str_from(facts.cpu_model),
		.kernel = ct_str_from(facts.kernel),
		.hostname = ct_str_from(facts.hostname),
		.libcrypto = ct_str_from(query_libcrypto_version()),
		.ia32cap = ct_str_from(ct_config_ia32cap()),
		.route_spec = ct_str_from(c->route_spec),
		.timing = ct_str_from(facts.timing),
		.argv_redacted = facts.argv_redacted,
		.errno_abi = ct_str_from(ct_errno_abi_label(ct_errno_abi_own())),
		.max_ops_rate = ct_max_ops_rate,
		.ops_window_ms = ct_max_ops_rate ? CT_OPS_WINDOW_MS : 0,
	};
	EMIT(ct_encode_preamble(FREE_BUF));
	EMIT(ct_encode_header(FREE_BUF, &h));
}

/* Caller holds flush_lock. A new file repeats everything: it must read on its own. */
static bool open_locked(void)
{
	if (!buf) {
		void *p = mmap(NULL, BUF_SIZE, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
		if (p == MAP_FAILED)
			return false;
		buf = p;
	}
	gather_facts();
	int fd = create_file();
	if (fd < 0) {
		atomic_fetch_add(&write_errors, 1);
		proc_flags |= CT_PROC_INCOMPLETE;
		return false;
	}
	atomic_store(&trace_fd, fd);
	fd_lost = false;
	ended = false;
	buf_used = 0;
	file_size = 0;
	writes_refused = false;
	memset(path_written, 0, sizeof(path_written));
	memset(path_sig, 0, sizeof(path_sig));
	ct_events_lock();
	ct_events_mark_all_dirty();
	ct_events_unlock();
	modules_all = true; /* the new file names every module again */
	for (struct ct_thread *t = ct_thread_list(); t; t = t->next)
		t->tid_written = 0;
	write_header();
	buf_write_out();
	return true;
}

/* Caller holds flush_lock. Start, and a fork child: the file now, or (always-on mode, no cipher
 * path yet, no crypto library mapped) at the first flush that has a path, with the header's facts
 * (gathered by open_locked: a process that never does crypto reads none of them). A program that
 * maps a crypto library from the start gets its file and facts now, as before: it may sandbox
 * itself before its first cipher (sshd's privilege-separated child cannot open a file then). */
static void open_or_defer(void)
{
	if (ct_config()->spool_root && ct_path_count() == 0 && !ct_crypto_lib_mapped()) {
		open_deferred = true;
		return;
	}
	open_locked();
}

/* The program is about to limit file sizes (RLIMIT_FSIZE): write what we have while we still can,
 * then keep every later write under the limit. */
void ct_writer_fsize_limit(uint64_t limit)
{
	if (limit == (uint64_t)RLIM_INFINITY)
		limit = UINT64_MAX;
	if (limit < atomic_load(&fsize_limit) && limit != UINT64_MAX) {
		atomic_store(&fsize_coming, limit);
		ct_flush_now(); /* not skipped because another thread is flushing: this is the last chance */
	}
	atomic_store(&fsize_limit, limit);
	atomic_store(&fsize_coming, UINT64_MAX);
}

/* Our own open/write/close calls reach the kernel-interface hooks of this library: mark every
 * family entered on this thread meanwhile, so that they pass straight through. */
static uint32_t guard_all(void)
{
	return ct_guard_all(ct_thread_self());
}

static void guard_restore(uint32_t g)
{
	ct_guard_restore(ct_thread_self(), g);
}

void ct_writer_open(void)
{
	uint32_t g = guard_all();
	struct rlimit rl;
	if (getrlimit(RLIMIT_FSIZE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY)
		atomic_store(&fsize_limit, (uint64_t)rl.rlim_cur);
	if (ct_config()->max_file_bytes)
		file_cap = ct_config()->max_file_bytes;
	ct_lock(&flush_lock);
	open_or_defer();
	bool have_lib = query_libcrypto_version()[0] != 0;
	ct_unlock(&flush_lock);
	guard_restore(g);
	if (have_lib)
		ct_event(CT_EV_LIB_LOADED, "libcrypto", 0, 0, CT_NO_PATH, false, "%s", libcrypto_version);
}

/* ---- snapshot pieces ----------------------------------------------------------------------- */

/* Changes whenever a path's counters do: a path is written again only then. */
static uint64_t stats_sig(const struct ct_path_stats *s)
{
	uint64_t sig = s->calls + s->errors + s->timed_calls + s->setup_calls + s->teardown_calls +
		       s->syscalls + s->cpu_samples + s->spliced_calls + s->tls_records;
	for (unsigned p = 0; p < CT_PHASES; p++)
		sig += s->phase[p].calls;
	for (unsigned b = 0; b < CT_SIZE_BUCKETS; b++)
		sig += s->size[b].span_calls + s->size[b].span_rejected;
	return sig;
}

static void flush_paths(void)
{
	uint32_t n = ct_path_count();
	struct ct_path_stats s;
	for (uint32_t id = 0; id < n; id++) {
		/* every definition once, used or not: events name paths whose contexts had no data
		 * call yet (a context's set-up is counted on the path of its init, before the first
		 * data call picks the entry variant) */
		if (!path_written[id]) {
			struct ct_path_def def;
			if (!ct_path_def_get(id, &def))
				continue;
			EMIT(ct_encode_path(FREE_BUF, &def));
			path_written[id] = 1;
		}
		if (!ct_stats_sum(id, &s))
			continue;
		uint64_t sig = stats_sig(&s);
		if (!sig || sig == path_sig[id])
			continue;
		EMIT(ct_encode_stats(FREE_BUF, &s));
		path_sig[id] = sig;
	}
}

static void flush_events(void)
{
	bool more = true;
	ct_events_lock();
	while (more) {
		size_t n = ct_events_encode(FREE_BUF, &more);
		buf_used += n;
		if (more)
			buf_write_out();
		if (more && !n)
			break; /* one event larger than the whole buffer: impossible, but never loop */
	}
	ct_events_unlock();
}

/* The modules call sites named since the last flush (callsite.c), for the reporter's symbols,
 * and the shared objects mapped since (mapped.c), for what a process carries. */
static void flush_modules(void)
{
	bool all = modules_all;
	for (;;) {
		size_t n = ct_mapped_encode(FREE_BUF, all);
		all = false;
		if (!n)
			break;
		buf_used += n;
		buf_write_out();
	}
	for (;;) {
		size_t n = ct_callsite_encode_modules(FREE_BUF, modules_all);
		modules_all = false;
		if (!n)
			return;
		buf_used += n;
		buf_write_out();
	}
}

static void flush_threads_and_ops(void)
{
	for (struct ct_thread *t = ct_thread_list(); t; t = t->next) {
		uint32_t tid = t->tid;
		if (t->in_use && tid && t->tid_written != tid) {
			char path[64], name[32];
			snprintf(path, sizeof(path), "/proc/self/task/%u/comm", tid);
			size_t len = 0;
			ct_read_small_file(path, name, sizeof(name), &len);
			while (len && name[len - 1] == '\n')
				name[--len] = 0;
			struct ct_thread_info ti = { .tid = tid, .name = ct_str_from(name) };
			EMIT(ct_encode_thread(FREE_BUF, &ti));
			t->tid_written = tid;
		}
		if (!t->ops)
			continue;
		uint64_t head = atomic_load_explicit(&t->ops_head, memory_order_acquire);
		uint64_t tail = atomic_load_explicit(&t->ops_tail, memory_order_relaxed);
		while (tail < head) {
			uint64_t n = head - tail;
			uint64_t at = tail % CT_OPS_RING;
			if (n > CT_OPS_RING - at)
				n = CT_OPS_RING - at; /* one contiguous piece of the ring per batch */
			if (n > OPS_PER_BATCH)
				n = OPS_PER_BATCH;
			if (file_size + buf_used >= file_cap - file_cap / 4) {
				ops_over_cap += n; /* the cap: counters go on, the timeline stops here */
				tail += n;
				atomic_store_explicit(&t->ops_tail, tail, memory_order_release);
				if (!ops_cap_said) {
					ops_cap_said = true;
					ct_event(
						CT_EV_TRACE_WARNING, "max_file_bytes", EFBIG,
						(int64_t)file_cap, CT_NO_PATH, false,
						"the trace file reached 3/4 of its cap: per-call operations are "
						"no longer written, calls and bytes still counted");
				}
				continue;
			}
			struct ct_ops_batch b = {
				.tid = tid,
				.count = (uint32_t)n,
				.dropped = atomic_load_explicit(&t->ops_dropped, memory_order_relaxed),
			};
			EMIT(ct_encode_ops(FREE_BUF, &b, &t->ops[at], (uint32_t)n));
			tail += n;
			atomic_store_explicit(&t->ops_tail, tail, memory_order_release);
		}
	}
}

struct libs_acc {
	char *dst;
	size_t cap, used;
};

static int crypto_libs_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	static const char *const names[] = { "libcrypto.so",  "libgnutls.so", "libnss3.so",
					     "libsodium.so",  "libgcrypt.so", "libmbedcrypto.so",
					     "libwolfssl.so", "libkcapi.so",  "libnettle.so" };
	struct libs_acc *a = arg;
	const char *name = info->dlpi_name;
	if (!name || !*name)
		return 0;
	const char *base = strrchr(name, '/');
	base = base ? base + 1 : name;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strncmp(base, names[i], strlen(names[i])))
			continue;
		int w = snprintf(a->dst + a->used, a->cap - a->used, "%s%s", a->used ? "\n" : "", name);
		if (w > 0 && (size_t)w < a->cap - a->used)
			a->used += (size_t)w;
		break;
	}
	return 0;
}

/* Whether one of the crypto libraries crypto_libs_cb knows is mapped (always-on mode, at start). */
bool ct_crypto_lib_mapped(void)
{
	char names[2048]; /* its own buffer: crypto_libs is the flush's, under flush_lock */
	struct libs_acc acc = { .dst = names, .cap = sizeof(names) };
	dl_iterate_phdr(crypto_libs_cb, &acc);
	return acc.used > 0;
}

/* utime/stime/maxrss from /proc/self/stat and status: open() fails harmlessly in a sandbox,
 * where getrusage would kill the process. */
static void proc_times(struct ct_proc *p)
{
	char stat[1024];
	size_t len = 0;
	unsigned long long ut = 0, st = 0;
	ct_read_small_file("/proc/self/stat", stat, sizeof(stat), &len);
	const char *s = strrchr(stat, ')');
	/* after "pid (comm)": state ppid pgrp session tty tpgid flags minflt cminflt majflt cmajflt
	 * utime stime. Both 0 is not an answer: qemu-user's emulated /proc/self/stat says 0. */
	if (s && sscanf(s + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &ut, &st) == 2 &&
	    ut + st) {
		long hz = sysconf(_SC_CLK_TCK);
		if (hz <= 0)
			hz = 100;
		p->utime_ns = ut * (1000000000ull / (unsigned long long)hz);
		p->stime_ns = st * (1000000000ull / (unsigned long long)hz);
	} else {
		struct timespec ts; /* sandboxed, or no split: at least the total, as user time */
		if (!clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts))
			p->utime_ns = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	}
	char status[4096];
	ct_read_small_file("/proc/self/status", status, sizeof(status), &len);
	const char *hw = strstr(status, "VmHWM:");
	if (hw)
		sscanf(hw + 6, " %lu", (unsigned long *)&p->maxrss_kb);
}

/* PROC flags about the snapshots to come: whether the flusher thread writes them while the
 * process is idle, and whether a file size limit may refuse them (docs/trace-format.md). */
static uint32_t proc_outlook_flags(void)
{
	uint32_t f = ct_flusher_running() ? CT_PROC_PERIODIC : ct_config()->flusher ? 0 : CT_PROC_NO_FLUSHER;
	uint64_t limit = atomic_load(&fsize_limit), coming = atomic_load(&fsize_coming);
	if (coming < limit)
		limit = coming;
	if (limit != UINT64_MAX && limit < file_size + buf_used + FSIZE_NEAR)
		f |= CT_PROC_FSIZE_NEAR;
	return f;
}

static void flush_proc(bool final)
{
	bool had = libcrypto_seen;
	if (!in_signal_end || !had) {
		struct libs_acc acc = { .dst = crypto_libs, .cap = sizeof(crypto_libs) };
		crypto_libs[0] = 0;
		dl_iterate_phdr(crypto_libs_cb, &acc);
	}
	const char *ver = in_signal_end && had ? libcrypto_version : query_libcrypto_version();
	if (!had && ver[0]) {
		/* libcrypto appeared after start (dlopen): say so once; events are flushed above, so
		 * this one goes out with the next snapshot */
		ct_event(CT_EV_LIB_LOADED, "libcrypto", 0, 0, CT_NO_PATH, false, "%s", ver);
	}
	uint64_t lost = atomic_load(&ct_g.lost_paths) + ct_ctxmap_full_count();
	if (lost != lost_reported) {
		lost_reported = lost;
		ct_event(CT_EV_TRACE_WARNING, "cryptrace", ENOSPC, (int64_t)lost, CT_NO_PATH, false,
			 "path registry or context map full: some calls were not attributed to a path");
	}
	uint64_t werr = atomic_load(&write_errors);
	if (werr != errors_reported) {
		errors_reported = werr;
		ct_event(CT_EV_TRACE_WARNING, "write", 0, (int64_t)werr, CT_NO_PATH, false,
			 "trace writes failed: this trace misses some records");
	}
	uint64_t hooked = atomic_load(&ct_g.hooked_calls_slow);
	struct ct_path_stats s;
	for (uint32_t id = 0, n = ct_path_count(); id < n; id++)
		if (ct_stats_sum(id, &s))
			hooked += s.calls;
	uint64_t dropped_ops = 0, sampled_out = 0, lane_calls = 0;
	for (struct ct_thread *t = ct_thread_list(); t; t = t->next) {
		dropped_ops += atomic_load_explicit(&t->ops_dropped, memory_order_relaxed);
		sampled_out += atomic_load_explicit(&t->ops_sampled_out, memory_order_relaxed);
		lane_calls += atomic_load_explicit(&t->lane_calls, memory_order_relaxed);
	}
	struct ct_proc p = {
		.mono_ns = ct_now_ns(),
		.flags = proc_flags | (final ? CT_PROC_FINAL : 0) | (ver[0] ? CT_PROC_HAS_LIBCRYPTO : 0) |
			 proc_outlook_flags(),
		.threads_seen = atomic_load(&ct_g.threads_seen),
		.dropped_ops = dropped_ops + ops_over_cap,
		.ops_sampled_out = sampled_out,
		.ops_max_weight = ct_max_ops_rate ? ct_ops_cap_max_weight() : 0,
		.dropped_events = atomic_load(&ct_g.dropped_events),
		.write_errors = atomic_load(&write_errors),
		.hooked_calls = hooked,
		.crypto_libs = ct_str_from(crypto_libs),
		.libcrypto = ct_str_from(ver),
		.route_direct_calls = lane_calls,
	};
	ct_attach_figures_get(&p.attach_pause_ns, &p.attach_threads, &p.attach_slots);
	proc_times(&p);
	if (!in_signal_end) /* only without the launcher's bound (calib.c) */
		aesni_cpb_found = ct_calib_at_flush();
	p.aesni_cpb_milli = aesni_cpb_found;
	if (atomic_load(&ct_g.lost_paths))
		p.flags |= CT_PROC_INCOMPLETE;
	EMIT(ct_encode_proc(FREE_BUF, &p));
}

/* Whether a snapshot now would say anything the last one did not (the flusher thread's
 * periodic flush writes nothing when it would not). Caller holds flush_lock. */
static bool anything_new(void)
{
	struct ct_path_stats s;
	for (uint32_t id = 0, n = ct_path_count(); id < n; id++) {
		if (!path_written[id])
			return true;
		if (ct_stats_sum(id, &s) && stats_sig(&s) != path_sig[id])
			return true;
	}
	for (struct ct_thread *t = ct_thread_list(); t; t = t->next)
		if ((t->in_use && t->tid && t->tid_written != t->tid) ||
		    atomic_load_explicit(&t->ops_head, memory_order_acquire) !=
			    atomic_load_explicit(&t->ops_tail, memory_order_relaxed))
			return true;
	if (atomic_load(&ct_g.lost_paths) + ct_ctxmap_full_count() != lost_reported ||
	    atomic_load(&write_errors) != errors_reported)
		return true;
	ct_events_lock();
	bool ev = ct_events_pending();
	ct_events_unlock();
	return ev;
}

/* Caller holds flush_lock. */
static void flush_locked(bool final, bool only_if_new)
{
	if (ended && !final)
		return;
	if (only_if_new && !anything_new())
		return;
	if (atomic_load(&trace_fd) < 0) {
		bool deferred_due = open_deferred && ct_path_count() > 0;
		if (deferred_due)
			open_deferred = false;
		if ((!fd_lost && !deferred_due) || !open_locked())
			return;
	}
	flush_paths();
	flush_events();
	flush_modules();
	flush_threads_and_ops();
	flush_proc(final);
	flush_events(); /* a libcrypto-loaded event found by flush_proc */
	buf_write_out();
	uint64_t now = ct_clock_now();
	atomic_store_explicit(&ct_g.next_flush, now + ct_g.flush_ticks, memory_order_relaxed);
}

/* Runs the flush with every hook family blocked on this thread (we call libc and libcrypto). */
static void flush_guarded(bool final, bool wait, bool only_if_new)
{
	if (!ct_ready())
		return;
	if (getpid() != (pid_t)ct_g.pid)
		return; /* a child made without fork() (vfork, raw clone): never write the parent's file */
	struct ct_thread *t = ct_thread_self();
	struct ct_quiet q = ct_quiet_begin(t);
	if (wait)
		ct_lock(&flush_lock);
	else if (!ct_trylock(&flush_lock))
		goto out;
	flush_locked(final, only_if_new);
	ct_unlock(&flush_lock);
out:
	ct_quiet_end(t, q);
}

void ct_flush(bool final)
{
	flush_guarded(final, final, false);
}

void ct_flush_now(void)
{
	flush_guarded(false, true, false);
}

/* Takes the periodic flush that fell due at now: only one thread does, the others see the new
 * deadline (or a busy lock). */
static bool claim_due(uint64_t now)
{
	uint64_t due = atomic_load_explicit(&ct_g.next_flush, memory_order_relaxed);
	return now >= due && atomic_compare_exchange_strong(&ct_g.next_flush, &due, now + ct_g.flush_ticks);
}

void ct_flush_due(uint64_t now)
{
	if (claim_due(now))
		flush_guarded(false, false, false);
}

void ct_flush_periodic(void)
{
	if (claim_due(ct_clock_now()))
		flush_guarded(false, false, true);
}

/* The last snapshot and END. Also called from signal handlers: the preload's fatal-signal
 * handler (CT_END_SIGNAL, status = the signal) and a program's handler calling _exit. A thread
 * interrupted while it held the preload's locks cannot write (it would wait for itself): the
 * fatal-signal handler never calls this then (signals.c defers it), _exit gives up. Another
 * thread's flush is waited for, a bounded time. */
void ct_writer_end(enum ct_end_reason reason, int status)
{
	if (!ct_ready() || getpid() != (pid_t)ct_g.pid)
		return;
	if (reason != CT_END_EXEC && ended)
		return; /* the exit handler wrote it; this is the destructor */
	if (ct_sig_crit)
		return;
	struct ct_thread *t = ct_thread_self();
	struct ct_quiet q = ct_quiet_begin(t);
	if (!ct_lock_bounded(&flush_lock))
		goto out;
	in_signal_end = reason == CT_END_SIGNAL;
	flush_locked(true, false);
	if (atomic_load(&trace_fd) >= 0 && !ended) {
		struct ct_end e = { .mono_ns = ct_now_ns(), .reason = reason, .status = status };
		EMIT(ct_encode_end(FREE_BUF, &e));
		buf_write_out();
		ended = true;
	}
	in_signal_end = false;
	ct_unlock(&flush_lock);
out:
	ct_quiet_end(t, q);
}

/* Caller holds flush_lock: the file closed, and not reopened by the next flush. */
static void close_locked(void)
{
	int fd = atomic_exchange(&trace_fd, -1);
	if (fd >= 0)
		close(fd);
	fd_lost = false;
}

/* `cryptrace attach` ended (attach.c), after END: the file is closed and stays so; the fd is the
 * program's to reuse. */
void ct_writer_close(void)
{
	uint32_t g = guard_all();
	ct_lock(&flush_lock);
	close_locked();
	ct_unlock(&flush_lock);
	guard_restore(g);
}

/* A new attach to the same process: a new file, everything in it written again. */
void ct_writer_restart(void)
{
	uint32_t g = guard_all();
	ct_lock(&flush_lock);
	close_locked();
	atomic_store(&write_errors, 0);
	errors_reported = 0;
	lost_reported = 0;
	ops_over_cap = 0;
	ops_cap_said = false;
	proc_flags = libcrypto_seen ? CT_PROC_HAS_LIBCRYPTO : 0;
	facts.done = false; /* the command line may have changed (setproctitle) */
	open_locked();
	ct_unlock(&flush_lock);
	guard_restore(g);
}

/* exec failed after we wrote END: the process goes on, and so does its trace. */
void ct_writer_reopen_after_failed_exec(void)
{
	ct_lock(&flush_lock);
	ended = false;
	ct_unlock(&flush_lock);
}

/* Fork child (atfork handler, flush lock held by the prepare handler): new pid, new file. */
void ct_writer_after_fork_child(void)
{
	uint32_t g = guard_all();
	int fd = atomic_load(&trace_fd);
	if (fd >= 0)
		close(fd);
	atomic_store(&trace_fd, -1);
	write_errors = 0;
	errors_reported = 0;
	ops_over_cap = 0;
	ops_cap_said = false;
	proc_flags = libcrypto_seen ? CT_PROC_HAS_LIBCRYPTO : 0;
	pthread_mutex_init(&flush_lock, NULL);
	ct_lock(&flush_lock);
	open_or_defer();
	ct_unlock(&flush_lock);
	atomic_store(&ct_g.next_flush, ct_clock_now() + ct_g.flush_ticks);
	guard_restore(g);
}
