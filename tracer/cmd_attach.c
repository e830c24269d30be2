/* SPDX-License-Identifier: MIT */
/*
 * cmd_attach.c - `cryptrace attach [-o DIR] [--duration S] [--mode stats|calls] PID...`: trace
 * processes that are already running (docs/attach.md). Each one is checked first (a refusal is
 * one line and exit 2, before anything in any of them changes: attach_checks.c), then stopped,
 * made to dlopen libcryptrace.so and to call its cryptrace_attach_begin, and let go
 * (attach_ptrace.c); the library redirects the imports it hooks. At the end of the duration,
 * or at Ctrl-C (SIGINT, SIGTERM), each is stopped again, briefly (its main thread alone), to
 * call cryptrace_attach_end, which puts everything back and closes the trace.
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "attach.h"
#include "attach_abi.h"
#include "commands.h"
#include "cpu.h"
#include "report.h"
#include "route_spec.h"
#include "tracer.h"

#define DLOPEN_MODE 0x00002 /* RTLD_NOW, and RTLD_LOCAL (0): our names must not enter the global scope */
#define DLERROR_MAX 300
#define POLL_NS (200ull * 1000000) /* how often a waiting attach looks whether its targets live */

struct target {
	pid_t pid;
	char comm[64];
	bool attached;
	uint64_t pause_ns;
	unsigned threads;
	long slots;
};

static void read_comm(pid_t pid, char *dst, size_t cap)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/comm", (int)pid);
	char *s = ct_read_file(path, NULL);
	snprintf(dst, cap, "%s", s ? s : "?");
	dst[strcspn(dst, "\n")] = 0;
	free(s);
}

/* dlerror() in the process, after its dlopen failed: the loader's own words. */
static void remote_dlerror(struct ct_stopped *s, char *dst, size_t cap)
{
	char why[256];
	uint64_t fn = ct_remote_symbol(s->pid, "libc.so", "dlerror", NULL, 0), msg = 0;
	dst[0] = 0;
	if (!fn || !ct_remote_call(s, fn, NULL, NULL, 0, &msg, why, sizeof(why)) || !msg)
		return;
	char buf[DLERROR_MAX];
	for (size_t n = sizeof(buf); n >= 16; n /= 2) /* the string may end near a page's end */
		if (ct_remote_read(s->pid, msg, buf, n)) {
			buf[n - 1] = 0;
			snprintf(dst, cap, "%s", buf);
			return;
		}
}

/* A thread stopped inside the dynamic loader holds its lock, mid-load (attach_loader.c says what
 * that would break). So the process is let go and stopped again, at random intervals of 0.5-4 ms
 * (a program that loads in a loop must not be met at the same phase each time), until the
 * thread that makes the calls is elsewhere. Past LOADER_WAIT_NS an attach gives up with nothing
 * changed (refuse: false, one line in why). A detach tries for DETACH_WAIT_NS, then goes on as
 * it is: run inside the loader, its end waits for the flusher thread, which may itself wait for
 * the loader's lock that the stopped thread holds (preload/gotpatch.c: seen under load, where
 * the program is off the CPU long enough for the flusher to take its pause for quiet). *pause_ns
 * gets the stops' time. */
#define LOADER_WAIT_NS (3000ull * 1000000)
#define DETACH_WAIT_NS (30000ull * 1000000)
static bool stop_outside_loader(pid_t pid, bool all_threads, bool refuse, struct ct_stopped *s,
				uint64_t *pause_ns, char *why, size_t cap)
{
	*pause_ns = 0;
	uint64_t t0 = ct_clock_ns(CLOCK_MONOTONIC);
	uint32_t seed = (uint32_t)pid * 2654435761u ^ (uint32_t)t0;
	for (unsigned round = 1;; round++) {
		if (!ct_stop_process(pid, all_threads, s, why, cap))
			return false;
		if (!ct_remote_in_loader(pid, s->saved))
			return true;
		bool late = ct_clock_ns(CLOCK_MONOTONIC) - t0 >= (refuse ? LOADER_WAIT_NS : DETACH_WAIT_NS);
		if (late && !refuse)
			return true;
		*pause_ns += ct_resume_process(s);
		if (late) {
			snprintf(why, cap,
				 "process %d was inside its dynamic loader (loading or unloading a module) "
				 "at each of %u stops over %.0f s; nothing in it was changed: attach again "
				 "once it has loaded its modules",
				 (int)pid, round, LOADER_WAIT_NS / 1e9);
			return false;
		}
		seed = seed * 1103515245u + 12345u;
		long us = 500 + (long)((seed >> 8) % 3500u);
		nanosleep(&(struct timespec){ 0, us * 1000L }, NULL); /* the load goes on */
	}
}

/* Loads the library into t and begins the trace. False with one line in why, and *untouched
 * when nothing in the process changed (it could not be stopped: a refusal). */
static bool attach_one(struct target *t, const char *lib, const char *config, char *why, size_t cap,
		       bool *untouched)
{
	*untouched = true;
	uint64_t dlopen_fn = ct_remote_symbol(t->pid, "libc.so", "dlopen", NULL, 0);
	if (!dlopen_fn)
		dlopen_fn = ct_remote_symbol(t->pid, "libdl.so", "dlopen", NULL, 0);
	if (!dlopen_fn) {
		snprintf(why, cap,
			 "process %d: no dlopen in its libc (a C library of a layout attach does not know)",
			 (int)t->pid);
		return false;
	}
	struct ct_stopped s;
	uint64_t pauses = 0;
	if (!stop_outside_loader(t->pid, true, true, &s, &pauses, why, cap))
		return false;
	*untouched = false;
	t->threads = s.stopped;
	uint64_t handle = 0, figures = 0;
	uint64_t args[2] = { 0, DLOPEN_MODE };
	const char *strs[2] = { lib, NULL };
	bool ok = ct_remote_call(&s, dlopen_fn, args, strs, 2, &handle, why, cap);
	if (ok && !handle) {
		char err[DLERROR_MAX];
		remote_dlerror(&s, err, sizeof(err));
		snprintf(why, cap, "process %d could not load %s: %s", (int)t->pid, lib,
			 err[0] ? err : "dlopen failed");
		ok = false;
	}
	uint64_t begin = ok ? ct_remote_symbol(t->pid, "libcryptrace.so", CT_ATTACH_BEGIN_SYM, NULL, 0) : 0;
	if (ok && !begin) {
		snprintf(why, cap, "process %d: %s has no %s", (int)t->pid, lib, CT_ATTACH_BEGIN_SYM);
		ok = false;
	}
	const char *cfg[1] = { config };
	ok = ok && ct_remote_call(&s, begin, NULL, cfg, 1, &figures, why, cap);
	t->pause_ns = pauses + ct_resume_process(&s);
	if (!ok)
		return false;
	if ((int64_t)figures < 0) {
		int e = (int)-(int64_t)figures;
		snprintf(why, cap, "process %d: the library refused to begin: %s", (int)t->pid,
			 e == ENOTSUP ? "no import patching on this architecture" : strerror(e));
		return false;
	}
	/* the pause is known only now that it is over: the trace gets it in its next PROC */
	struct ct_attach_figures f = { .pause_ns = t->pause_ns, .threads = t->threads };
	uint32_t slots = 0;
	if (ct_remote_read(t->pid, figures + offsetof(struct ct_attach_figures, slots), &slots,
			   sizeof(slots)))
		t->slots = slots;
	ct_remote_write(t->pid, figures, &f, offsetof(struct ct_attach_figures, slots));
	t->attached = true;
	return true;
}

static bool alive(pid_t pid)
{
	return kill(pid, 0) == 0 || errno == EPERM;
}

/* Ends the trace in t: its main thread alone is stopped (the library's flusher thread must run
 * to end). False with one line in why. */
static bool detach_one(struct target *t, char *why, size_t cap)
{
	uint64_t end = ct_remote_symbol(t->pid, "libcryptrace.so", CT_ATTACH_END_SYM, NULL, 0);
	if (!end) {
		snprintf(why, cap, "process %d: libcryptrace.so is gone from it", (int)t->pid);
		return false;
	}
	struct ct_stopped s;
	uint64_t pauses = 0;
	if (!stop_outside_loader(t->pid, false, false, &s, &pauses, why, cap))
		return false;
	uint64_t r = 0;
	bool ok = ct_remote_call(&s, end, NULL, NULL, 0, &r, why, cap);
	t->pause_ns = pauses + ct_resume_process(&s);
	if (ok && (int64_t)r < 0) {
		snprintf(why, cap, "process %d was not attached any more", (int)t->pid);
		ok = false;
	}
	t->slots = ok ? (long)r : t->slots;
	return ok;
}

/* Waits for the duration (0: none), SIGINT, SIGTERM or SIGHUP (blocked since before the first
 * stop), or until no target lives. */
static void wait_attached(const struct target *ts, unsigned n, double duration_s)
{
	sigset_t set;
	sigemptyset(&set);
	sigaddset(&set, SIGINT);
	sigaddset(&set, SIGTERM);
	sigaddset(&set, SIGHUP);
	uint64_t t0 = ct_clock_ns(CLOCK_MONOTONIC);
	uint64_t limit = duration_s > 0 ? (uint64_t)(duration_s * 1e9) : UINT64_MAX;
	for (;;) {
		bool any = false;
		for (unsigned i = 0; i < n; i++)
			any |= ts[i].attached && alive(ts[i].pid);
		uint64_t now = ct_clock_ns(CLOCK_MONOTONIC);
		if (!any || now - t0 >= limit)
			return;
		uint64_t left = limit - (now - t0);
		uint64_t step = left < POLL_NS ? left : POLL_NS;
		struct timespec ts_wait = { .tv_sec = (time_t)(step / 1000000000u),
					    .tv_nsec = (long)(step % 1000000000u) };
		if (sigtimedwait(&set, NULL, &ts_wait) > 0)
			return;
	}
}

/* Detaches t and says so on stderr, or why not; false: not detached. */
static bool detach_and_say(struct target *t)
{
	char why[512];
	if (!detach_one(t, why, sizeof(why))) {
		fprintf(stderr, "cryptrace attach: %s\n", why);
		return false;
	}
	fprintf(stderr,
		"cryptrace attach: detached from %d (%s): main thread stopped for %.3f ms, %ld import slots put back\n",
		(int)t->pid, t->comm, (double)t->pause_ns / 1e6, t->slots);
	return true;
}

/* `--detach PID...`: ends attaches whose `cryptrace attach` is gone (killed with SIGKILL, its
 * terminal closed): each process must be attached (else a refusal, nothing done to any). */
static int detach_only(struct target *ts, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		if (ct_remote_attach_state(ts[i].pid) != CT_ATTACH_STATE_ATTACHED) {
			fprintf(stderr, "cryptrace attach: process %d is not attached: nothing to detach\n",
				(int)ts[i].pid);
			return CT_ATTACH_REFUSED;
		}
	sigset_t ends;
	sigemptyset(&ends);
	sigaddset(&ends, SIGINT);
	sigaddset(&ends, SIGTERM);
	sigaddset(&ends, SIGHUP);
	sigprocmask(SIG_BLOCK, &ends, NULL);
	int status = 0;
	for (unsigned i = 0; i < n; i++) {
		if (!detach_and_say(&ts[i]))
			status = 1;
	}
	return status;
}

struct attach_opts {
	const char *outdir;
	double duration_s;
	const char *mode;
	bool allow_seccomp;
	bool detach;       /* --detach: end an attach whose tracer is gone */
	const char *route; /* --route SPEC: what is initialised while attached runs there */
};

static int parse(int argc, char **argv, struct attach_opts *o)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' },  { "duration", required_argument, NULL, 'd' },
		{ "mode", required_argument, NULL, 'M' },    { "route", required_argument, NULL, 'R' },
		{ "allow-seccomp", no_argument, NULL, 'S' }, { "detach", no_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },          { 0 },
	};
	int c;
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, ":o:d:h", longopts, NULL)) != -1) {
		char *end;
		switch (c) {
		case 'o':
			if (!*optarg)
				return ct_usage_error("attach", "empty output directory%s", "");
			o->outdir = optarg;
			break;
		case 'd':
			o->duration_s = strtod(optarg, &end);
			if (end == optarg || *end || !(o->duration_s > 0) || !isfinite(o->duration_s))
				return ct_usage_error("attach",
						      "--duration '%s' is not a positive number of seconds",
						      optarg);
			break;
		case 'M':
			if (strcmp(optarg, "stats") && strcmp(optarg, "calls"))
				return ct_usage_error("attach", "--mode '%s' is neither stats nor calls",
						      optarg);
			o->mode = optarg;
			break;
		case 'S':
			o->allow_seccomp = true;
			break;
		case 'D':
			o->detach = true;
			break;
		case 'R':
			if (!ct_route_spec_ok("attach", optarg))
				return CT_EXIT_USAGE;
			o->route = optarg;
			break;
		case 'h':
			ct_usage_attach(stdout);
			return 0;
		default:
			return ct_option_error("attach", c, argv);
		}
	}
	if (optind >= argc)
		return ct_usage_error("attach", "missing PID%s", "");
	return -1;
}

/* The output directory, made for the targets: they create their trace files in it themselves,
 * so root attaching to another user's processes gives it to that user (all of one user), or
 * lets every user create files in it, but not list or remove others' (several users: nginx's
 * master runs as root, its workers as www-data; mode 1733, as a mail spool). */
static bool prepare_outdir(const char *dir, const struct target *ts, unsigned n, char *abs, char *why,
			   size_t cap)
{
	if (!ct_outdir_prepare(dir, why, cap))
		return false;
	if (!realpath(dir, abs) || strlen(abs) > PATH_MAX - 64) {
		snprintf(why, cap, "%s: %s", dir, errno ? strerror(errno) : "path too long");
		return false;
	}
	struct stat st;
	uid_t uid = (uid_t)-1;
	for (unsigned i = 0; i < n; i++) {
		char proc[64];
		snprintf(proc, sizeof(proc), "/proc/%d", (int)ts[i].pid);
		if (stat(proc, &st) != 0)
			continue;
		if (uid != (uid_t)-1 && uid != st.st_uid) {
			if (geteuid() == 0 && chmod(abs, 01733) != 0) {
				snprintf(why, cap, "%s: chmod 1733: %s", abs, strerror(errno));
				return false;
			}
			return true;
		}
		uid = st.st_uid;
	}
	if (geteuid() == 0 && uid != (uid_t)-1 && uid != 0 && chown(abs, uid, (gid_t)-1) != 0) {
		snprintf(why, cap, "%s: chown to uid %u: %s", abs, (unsigned)uid, strerror(errno));
		return false;
	}
	return true;
}

int command_attach(int argc, char **argv)
{
	struct attach_opts o = { 0 };
	int early = parse(argc, argv, &o);
	if (early >= 0)
		return early;
	unsigned n = (unsigned)(argc - optind);
	struct target *ts = calloc(n, sizeof(*ts));
	if (!ts)
		return CT_ATTACH_REFUSED;
	for (unsigned i = 0; i < n; i++) {
		char *end;
		long pid = strtol(argv[optind + i], &end, 10);
		if (*end || pid <= 0 || pid > INT_MAX) {
			free(ts);
			return ct_usage_error("attach", "'%s' is not a process id", argv[optind + i]);
		}
		ts[i].pid = (pid_t)pid;
		read_comm(ts[i].pid, ts[i].comm, sizeof(ts[i].comm));
	}
	char lib[PATH_MAX], why[PATH_MAX * 2 + 256];
	if (o.detach) {
		int status = detach_only(ts, n);
		free(ts);
		return status;
	}
	if (!ct_find_library(lib, sizeof(lib), why, sizeof(why))) {
		fprintf(stderr, "cryptrace attach: %s\n", why);
		free(ts);
		return CT_ATTACH_REFUSED;
	}
	/* every target checked before any is touched */
	for (unsigned i = 0; i < n; i++)
		if (!ct_attach_check(ts[i].pid, lib, o.allow_seccomp, why, sizeof(why))) {
			fprintf(stderr, "cryptrace attach: %s\n", why);
			free(ts);
			return CT_ATTACH_REFUSED;
		}
	char defdir[64], absdir[PATH_MAX];
	const char *outdir = o.outdir;
	if (!outdir) {
		ct_outdir_default("cryptrace-attach", defdir, sizeof(defdir));
		outdir = defdir;
	}
	if (!prepare_outdir(outdir, ts, n, absdir, why, sizeof(why))) {
		fprintf(stderr, "cryptrace attach: %s\n", why);
		free(ts);
		return CT_ATTACH_REFUSED;
	}
	char **before = NULL; /* the directory's traces already there: the summary is of this attach's */
	int nbefore = ct_outdir_list(absdir, &before);
	char config[PATH_MAX + CT_ROUTE_SPEC_MAX + 96];
	/* this machine's TSC rate, measured here before any process stops (the library would
	 * measure it in the stopped process: 3 ms more of pause) */
	snprintf(config, sizeof(config), "out=%s\nmode=%s\ntsc_hz=%llu\n%s%s%s", absdir,
		 o.mode ? o.mode : "stats", (unsigned long long)ct_tsc_hz(), o.route ? "route=" : "",
		 o.route ? o.route : "", o.route ? "\n" : "");
	/* From the first stop on, a Ctrl-C must not end us halfway through a call in a target
	 * (its thread would resume in the middle of our set-up): SIGINT, SIGTERM and SIGHUP only
	 * end the wait (wait_attached), SIGPIPE (a closed stderr) is ignored. */
	sigset_t ends;
	sigemptyset(&ends);
	sigaddset(&ends, SIGINT);
	sigaddset(&ends, SIGTERM);
	sigaddset(&ends, SIGHUP);
	sigprocmask(SIG_BLOCK, &ends, NULL);
	signal(SIGPIPE, SIG_IGN);
	int status = 0;
	unsigned attached = 0;
	for (unsigned i = 0; i < n; i++) {
		bool untouched;
		if (!attach_one(&ts[i], lib, config, why, sizeof(why), &untouched)) {
			fprintf(stderr, "cryptrace attach: %s\n", why);
			status = untouched ? CT_ATTACH_REFUSED : status ? status : 1;
			continue;
		}
		attached++;
		fprintf(stderr,
			"cryptrace attach: attached to %d (%s): %u threads stopped for %.3f ms, %ld import "
			"slots redirected\n",
			(int)ts[i].pid, ts[i].comm, ts[i].threads, (double)ts[i].pause_ns / 1e6, ts[i].slots);
	}
	if (attached) {
		fprintf(stderr, "cryptrace attach: tracing into %s %s\n", absdir,
			o.duration_s > 0 ? "for the duration (Ctrl-C ends it sooner)" : "until Ctrl-C");
		wait_attached(ts, n, o.duration_s);
	}
	for (unsigned i = 0; i < n; i++) {
		if (!ts[i].attached)
			continue;
		if (!alive(ts[i].pid)) {
			fprintf(stderr,
				"cryptrace attach: process %d ended while attached (its trace ended with it)\n",
				(int)ts[i].pid);
			continue;
		}
		if (!detach_and_say(&ts[i]))
			status = 1;
	}
	if (attached) {
		char **paths;
		int n = ct_outdir_new_traces(absdir, before, nbefore > 0 ? nbefore : 0, &paths);
		if (n > 0)
			ct_report_summary((const char *const *)paths, n, stderr);
		ct_names_free(paths, n);
		fprintf(stderr, "cryptrace attach: read it with: cryptrace report %s\n", absdir);
	}
	if (nbefore > 0)
		ct_names_free(before, nbefore);
	free(ts);
	return status;
}
