/* SPDX-License-Identifier: MIT */
/*
 * init.c - start and end of the process. Initialisation runs once, from the constructor or from
 * the first hook that gets there first (other libraries' constructors may call hooks before
 * ours ran). It reads the configuration, measures the clock and creates the trace file, so that
 * a process with no crypto at all still leaves a trace saying so. The destructor (the preload
 * is initialised first, so it is finalised last) writes the last snapshot and END.
 */
#include <dlfcn.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "ct_config.h"
#include "flusher.h"
#include "internal.h"
#include "route.h"
#include "signals.h"

CT_EXPORT const char *cryptrace_version = CT_VERSION;

struct ct_global ct_g;
int ct_exit_status;

static void read_comm(void)
{
	char name[32] = "";
	size_t n; /* no stdio: it would allocate, in a process that may never do crypto */
	ct_read_small_file("/proc/self/comm", name, sizeof(name), &n);
	n = strcspn(name, "\n");
	name[n] = 0;
	if (!n)
		snprintf(name, sizeof(name), "%s", program_invocation_short_name);
	/* a file name component: keep it boring */
	for (char *p = name; *p; p++)
		if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
		      *p == '.' || *p == '-' || *p == '_') ||
		    (p == name && *p == '.'))
			*p = '_';
	snprintf(ct_g.comm, sizeof(ct_g.comm), "%s", name[0] ? name : "process");
}

static void find_self(void)
{
	Dl_info info;
	if (dladdr((void *)find_self, &info) && info.dli_fname)
		snprintf(ct_g.self_path, sizeof(ct_g.self_path), "%s", info.dli_fname);
}

/* Who and when the trace starts: at process start, or at an attach. The name waits with the
 * rest of a pending start (ct_start_complete). */
static void start_facts(bool pending)
{
	struct timespec rt;
	clock_gettime(CLOCK_REALTIME, &rt);
	ct_g.start_mono_ns = ct_now_ns();
	ct_g.start_realtime_ns = (uint64_t)rt.tv_sec * 1000000000u + (uint64_t)rt.tv_nsec;
	ct_g.pid = (uint32_t)getpid();
	ct_g.ppid = (uint32_t)getppid();
	if (!pending)
		read_comm();
	find_self();
}

/* Always-on mode (docs/fleet.md): sh, ls and every other process that maps no crypto library at
 * start pay for loading the library and reading the configuration, nothing more. What a trace
 * needs of the process is read at its first cipher path, which runs in the same conditions as
 * the trace file's creation (deferred as well: writer.c), so nothing is read later that could
 * have been read then. */
void ct_start_complete(void)
{
	if (!atomic_exchange(&ct_g.start_pending, false))
		return;
	int saved = errno;
	read_comm();
	ct_callsite_init();
	ct_signals_init();
	errno = saved;
}

/* Process start (attach_config NULL: the environment's settings), or `cryptrace attach`'s. */
static bool init_with(const char *attach_config)
{
	int expect = 0;
	if (!atomic_compare_exchange_strong(&ct_g.state, &expect, 1))
		return expect == 2;
	int saved = errno;
	ct_proc_hooks_resolve();
	if (attach_config && !ct_config_load_attach(attach_config)) {
		atomic_store(&ct_g.state, 0); /* nothing started: a later attach may try again */
		errno = saved;
		return false;
	}
	if (!attach_config)
		ct_config_load();
	if (!ct_config()->enabled) {
		atomic_store(&ct_g.state, 3);
		errno = saved;
		return false;
	}
	/* Always-on mode (docs/fleet.md): a process with no crypto library at start (sh, ls) is not
	 * kept 0.5 ms measuring the TSC (should it load one later, its header says CLOCK_MONOTONIC),
	 * and the rest of what only a trace needs waits for its first cipher path. */
	bool pending = ct_config()->spool_root && !attach_config && !ct_crypto_lib_mapped();
	atomic_store(&ct_g.start_pending, pending);
	start_facts(pending);
	if (!pending)
		ct_callsite_init();
	ct_clock_init(!pending);
	/* per-call mode keeps every operation: none may go untimed while a first thread calibrates */
	if (ct_per_call)
		ct_timing_calibrate_now();
	ct_g.flush_ticks = (uint64_t)ct_config()->flush_ms * ct_clk.ms_ticks;
	ct_ctxmap_global_init();
	ct_proc_install_atfork();
	atomic_store(&ct_g.next_flush, ct_clock_now() + ct_g.flush_ticks);
	atomic_store(&ct_g.state, 2);
	ct_writer_open();
	/* after the file: the handler writes into it. Not in a process we were loaded into late:
	 * its signal handlers are its own, and a detach could not give them back untouched */
	if (!attach_config && !pending)
		ct_signals_init();
	if (ct_config_warning()[0])
		ct_event(CT_EV_TRACE_WARNING, "config", EINVAL, 0, CT_NO_PATH, false, "%s",
			 ct_config_warning());
	/* parse CRYPTRACE_ROUTE now, so that a bad spec is reported once, at start; an attach's
	 * route (docs/attach.md) applies to what is initialised from now on */
	if (attach_config)
		ct_route_reload();
	else if (ct_config()->route_spec)
		ct_route_init();
	/* the unwinder's first use loads libgcc_s: do that now, while no seccomp sandbox (sshd's)
	 * can kill us for it, in every process that may do crypto */
	if (ct_libcrypto_mapped())
		ct_callsite_warm_up();
	errno = saved;
	return true;
}

bool ct_init(void)
{
	return init_with(NULL);
}

bool ct_init_attach(const char *config)
{
	return init_with(config);
}

/* A new attach to a library an earlier one left inert (state 3): the same process (or a fork
 * child of it, which has its own pid) starts a new trace with its counters from zero. Every
 * other thread is stopped by the tracer, and no hook is reachable yet. */
bool ct_restart_attach(const char *config)
{
	int saved = errno;
	if (atomic_load(&ct_g.state) != 3 || !ct_config_load_attach(config)) {
		errno = saved;
		return false;
	}
	start_facts(false);
	ct_g.flush_ticks = (uint64_t)ct_config()->flush_ms * ct_clk.ms_ticks;
	atomic_store(&ct_g.hooked_calls_slow, 0);
	atomic_store(&ct_g.dropped_events, 0);
	ct_thread_counters_reset();
	ct_events_reset();
	ct_route_reload();
	atomic_store(&ct_g.next_flush, ct_clock_now() + ct_g.flush_ticks);
	atomic_store(&ct_g.state, 2);
	ct_writer_restart();
	errno = saved;
	return true;
}

/* exit status for END: an on_exit handler sees it. Registered once the program is running (at
 * main's start: hooks/proc.c, __libc_start_main; else the first thread state a hook makes after
 * our constructor), so that it runs before the loader's destructors, whose handler libc registers
 * after the constructors ran: registered from the constructor, ours would run after them, and
 * our destructor would write END without the status (a program whose libcrypto is mapped at
 * start makes its first thread state there). */
#ifdef CT_HAVE_ON_EXIT
static void exit_handler(int status, void *arg)
{
	(void)arg;
	ct_exit_status = status;
	ct_writer_end(CT_END_EXIT, status);
}
#else
/* Without on_exit (musl) the status comes from the exit hook (the program called exit) or from
 * main's wrapper (main returned); an atexit handler runs at the same point of exit as on_exit's
 * would. */
static void exit_handler(void)
{
	ct_writer_end(CT_END_EXIT, ct_exit_status);
}
#endif

static bool constructing; /* ct_constructor runs: too early to register */

void ct_register_exit_handler(void)
{
	static _Atomic int done;
	if (constructing || atomic_exchange(&done, 1))
		return;
#ifdef CT_HAVE_ON_EXIT
	on_exit(exit_handler, NULL);
#else
	atexit(exit_handler);
#endif
}

__attribute__((constructor)) static void ct_constructor(void)
{
	if (ct_attach_detect_late())
		return; /* `cryptrace attach` loaded us: nothing until it calls cryptrace_attach_begin */
	constructing = true;
	ct_init();
	constructing = false;
}

__attribute__((destructor)) static void ct_destructor(void)
{
	ct_writer_end(CT_END_EXIT, ct_exit_status);
}

#if defined(__SANITIZE_ADDRESS__)
/* ASan builds only (docs/reliability.md): the sanitizer options this preload needs inside
 * foreign programs travel with the library, not with ASAN_OPTIONS, which programs that scrub
 * their environment (env -i, sshd) drop while the re-injected LD_PRELOAD keeps us loaded:
 * libasan may come after us in LD_PRELOAD (the launcher puts us first), foreign programs'
 * leaks are not ours, and the runtime's own setrlimit(RLIMIT_CORE) at start must not enter our
 * setrlimit hook before the runtime is initialised. ASAN_OPTIONS still override these. */
CT_EXPORT const char *__asan_default_options(void);
CT_EXPORT const char *__asan_default_options(void)
{
	return "verify_asan_link_order=0:detect_leaks=0:disable_coredump=0";
}
#endif
