/* SPDX-License-Identifier: MIT */
/*
 * cmd_run.c - `cryptrace run`: prepare the output directory, start CMD with the preload in its
 * environment (the launcher itself never loads it), forward termination signals, wait, pass
 * CMD's exit status through, then summarize the traces the run left behind.
 *
 * The launcher-to-preload contract is the CRYPTRACE_* environment (docs/environment.md):
 * the preload carries it across fork and exec on its own.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "commands.h"
#include "profile.h"
#include "report.h"
#include "trace_format.h"
#include "tracer.h"

struct run_options {
	const char *outdir; /* NULL: a fresh ./cryptrace-<timestamp> */
	const char *route;
	const char *mode;
	char max_ops_rate[16]; /* --max-ops-rate as a plain number for CRYPTRACE_MAX_OPS_RATE; "" unset */
	bool quiet;
	bool no_argv;    /* --no-argv (or CRYPTRACE_ARGV other than 1): record argv[0] only */
	bool no_profile; /* --no-profile: no sampling profile (tracer/profile.c) */
	char **cmd;      /* NULL-terminated */
};

/* --max-ops-rate: a count of operations per second, plain or with a k (x1000) or M (x10^6)
 * suffix, at most CT_MAX_OPS_RATE_LIMIT; 0 is "no cap". False when arg is none of these. */
static bool parse_ops_rate(const char *arg, uint32_t *out)
{
	if (!isdigit((unsigned char)*arg))
		return false;
	char *end;
	errno = 0;
	unsigned long long v = strtoull(arg, &end, 10);
	unsigned long long mult = 1;
	if (*end == 'k' || *end == 'K')
		mult = 1000;
	else if (*end == 'M')
		mult = 1000000;
	if (mult > 1)
		end++;
	if (errno || *end || v > CT_MAX_OPS_RATE_LIMIT / mult)
		return false;
	*out = (uint32_t)(v * mult);
	return true;
}

/* Returns -1 when parsing succeeded, else the exit status to return right away. */
static int parse_options(int argc, char **argv, struct run_options *o)
{
	static const struct option longopts[] = {
		{ "output", required_argument, NULL, 'o' }, { "route", required_argument, NULL, 'R' },
		{ "mode", required_argument, NULL, 'M' },   { "max-ops-rate", required_argument, NULL, 'O' },
		{ "follow", no_argument, NULL, 'f' },       { "quiet", no_argument, NULL, 'q' },
		{ "no-argv", no_argument, NULL, 'A' },      { "no-profile", no_argument, NULL, 'P' },
		{ "help", no_argument, NULL, 'h' },         { 0 },
	};
	int c;

	/* "+": stop at the first non-option so CMD's own options stay CMD's. */
	opterr = 0;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+:o:fqh", longopts, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (!*optarg)
				return ct_usage_error("run", "empty output directory%s", "");
			o->outdir = optarg;
			break;
		case 'R':
			/* refused here, before anything runs, rather than ignored by the preload */
			if (!ct_route_spec_ok("run", optarg))
				return CT_EXIT_USAGE;
			o->route = optarg;
			break;
		case 'M':
			if (strcmp(optarg, "stats") && strcmp(optarg, "calls"))
				return ct_usage_error("run",
						      "--mode must be stats or calls, not "
						      "'%s'",
						      optarg);
			o->mode = optarg;
			break;
		case 'O': {
			uint32_t rate;
			if (!parse_ops_rate(optarg, &rate))
				return ct_usage_error("run",
						      "--max-ops-rate must be operations per second (250000, "
						      "250k, 2M; at most 1000M; 0: no cap), not '%s'",
						      optarg);
			snprintf(o->max_ops_rate, sizeof(o->max_ops_rate), "%u", rate);
			break;
		}
		case 'f':
			break; /* children are always followed */
		case 'q':
			o->quiet = true;
			break;
		case 'A':
			o->no_argv = true;
			break;
		case 'P':
			o->no_profile = true;
			break;
		case 'h':
			ct_usage_run(stdout);
			return 0;
		default:
			return ct_option_error("run", c, argv);
		}
	}
	if (optind >= argc)
		return ct_usage_error("run", "missing command to run%s", "");
	o->cmd = argv + optind;
	return -1;
}

/* ---- signal forwarding -------------------------------------------------------------------- */

static volatile sig_atomic_t child_pid;

static const int forwarded_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGQUIT };

static void forward_signal(int sig, siginfo_t *si, void *uctx)
{
	(void)uctx;
	/* A signal from the terminal (SI_KERNEL) already reached the whole foreground process
	 * group, child included: sending it again would deliver it twice. */
	if (child_pid > 0 && si->si_code != SI_KERNEL)
		kill(child_pid, sig);
}

static void install_forwarding(void)
{
	struct sigaction sa = {
		.sa_sigaction = forward_signal,
		.sa_flags = SA_SIGINFO | SA_RESTART,
	};

	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(forwarded_signals) / sizeof(forwarded_signals[0]); i++)
		sigaction(forwarded_signals[i], &sa, NULL);
}

/* ---- the child ---------------------------------------------------------------------------- */

struct child_env {
	const char *lib;
	const char *outdir; /* absolute */
	const struct run_options *opts;
	struct ct_machine_rates rates;
	int go_fd; /* >= 0: wait for a byte on it before exec (the profile's events are attached) */
};

/* In the child: execs CMD with the preload in its environment (ct_fork_piped's body). */
static void run_child(void *arg, int err_pipe)
{
	const struct child_env *ce = arg;
	sigset_t none;

	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	for (size_t i = 0; i < sizeof(forwarded_signals) / sizeof(forwarded_signals[0]); i++)
		signal(forwarded_signals[i], SIG_DFL);

	if (ce->go_fd >= 0) {
		char go;
		while (read(ce->go_fd, &go, 1) < 0 && errno == EINTR)
			;
		close(ce->go_fd);
	}
	ct_preload_env(ce->lib, ce->outdir, &ce->rates);
	if (ce->opts->mode)
		setenv("CRYPTRACE_MODE", ce->opts->mode, 1);
	if (ce->opts->route)
		setenv("CRYPTRACE_ROUTE", ce->opts->route, 1);
	if (ce->opts->max_ops_rate[0])
		setenv("CRYPTRACE_MAX_OPS_RATE", ce->opts->max_ops_rate, 1);
	if (ce->opts->no_argv)
		setenv("CRYPTRACE_ARGV", "0", 1);
	ct_exec_or_report(ce->opts->cmd, err_pipe);
}

static int exec_error_status(const char *cmd, int err)
{
	if (err == ENOENT && !strchr(cmd, '/')) {
		fprintf(stderr, "cryptrace: %s: command not found\n", cmd);
		return CT_EXIT_NOT_FOUND;
	}
	fprintf(stderr, "cryptrace: cannot run %s: %s\n", cmd, strerror(err));
	return err == ENOENT ? CT_EXIT_NOT_FOUND : CT_EXIT_NOT_EXEC;
}

/* What the launcher knows of the child once it ended (for a static program's trace file). */
struct child_facts {
	uint32_t pid;
	uint64_t start_realtime_ns, start_mono_ns, end_mono_ns;
	bool signaled;
	int status; /* exit status, or signal number */
	struct rusage rusage;
};

/* Starts CMD and waits for it. Returns its exit status the way a shell reports it; *started
 * tells whether CMD was really executed (false: fork or exec failed, an error line was printed). */
static int spawn_and_wait(struct child_env *ce, bool *started, struct child_facts *cf,
			  struct ct_profiler **prof, char *prof_why, size_t why_cap)
{
	*started = false;
	memset(cf, 0, sizeof(*cf));
	install_forwarding();

	int rfd, go[2] = { -1, -1 };

	/* the profile's events must be on the child before its exec: it waits for them */
	ce->go_fd = -1;
	if (!ce->opts->no_profile && pipe2(go, O_CLOEXEC) == 0)
		ce->go_fd = go[0];
	cf->start_realtime_ns = ct_clock_ns(CLOCK_REALTIME);
	cf->start_mono_ns = ct_clock_ns(CLOCK_MONOTONIC);
	pid_t pid = ct_fork_piped("cryptrace", run_child, (void *)ce, &rfd);

	if (go[0] >= 0)
		close(go[0]);
	if (pid < 0) {
		if (go[1] >= 0)
			close(go[1]);
		return CT_EXIT_NOT_EXEC;
	}
	child_pid = pid;
	if (go[1] >= 0) {
		*prof = ct_profile_attach(pid, ct_profile_hz(), prof_why, why_cap);
		ssize_t unused = write(go[1], "g", 1);
		(void)unused;
		close(go[1]);
	}

	int exec_err = ct_exec_outcome(rfd);
	int status = 0;
	pid_t w = ct_wait_child(pid, &status, &cf->rusage);

	child_pid = 0;
	cf->end_mono_ns = ct_clock_ns(CLOCK_MONOTONIC);
	cf->pid = (uint32_t)pid;

	if (exec_err)
		return exec_error_status(ce->opts->cmd[0], exec_err);
	if (w < 0) {
		fprintf(stderr, "cryptrace: waitpid: %s\n", strerror(errno));
		return CT_EXIT_NOT_EXEC;
	}
	*started = true;
	cf->signaled = WIFSIGNALED(status);
	cf->status = cf->signaled ? WTERMSIG(status) : WEXITSTATUS(status);
	return ct_shell_status(status);
}

/* ---- after the run ------------------------------------------------------------------------ */

/* CMD's executable, resolved the way execvp found it. */
struct cmd_exe {
	bool found;
	char path[PATH_MAX];
	enum ct_elf_kind kind;
};

static void inspect_exe(const char *cmd, struct cmd_exe *e)
{
	e->found = ct_which(cmd, e->path, sizeof(e->path));
	e->kind = e->found ? ct_elf_classify(e->path) : CT_ELF_UNKNOWN;
}

/* Whether the preload ran in CMD itself although CMD has no PT_INTERP: the dynamic loader run as
 * a command (`ld-linux-x86-64.so.2 --library-path DIR PROG`, how a program runs on another
 * release's glibc) loads PROG and honours LD_PRELOAD. The sign is a new trace file named after
 * CMD's comm and the child's pid (a static program that exec'd a dynamic one kept the pid, not
 * the comm). */
static bool preload_ran_in_cmd(const char *outdir, char **before, int nbefore, const struct cmd_exe *e,
			       uint32_t pid)
{
	const char *base = strrchr(e->path, '/');
	char comm[16], name[64], path[PATH_MAX + 64];
	struct stat st;

	snprintf(comm, sizeof(comm), "%.15s", base ? base + 1 : e->path);
	snprintf(name, sizeof(name), "%s.%u.ctrace", comm, pid);
	snprintf(path, sizeof(path), "%s/%s", outdir, name);
	return !ct_outdir_name_in(before, nbefore, name) && lstat(path, &st) == 0 && S_ISREG(st.st_mode);
}

/* A statically linked CMD wrote no trace (the preload never ran in it): write its file here, so
 * that the report says why nothing was seen. False (and a line on stderr) if that failed. */
static bool write_static_trace(const char *outdir, const struct cmd_exe *e, char **cmd,
			       const struct child_facts *cf, const struct run_options *o)
{
	char real[PATH_MAX];
	const char *exe = realpath(e->path, real) ? real : e->path;
	struct ct_static_run r = {
		.outdir = outdir,
		.exe = exe,
		.argv = cmd,
		.pid = cf->pid,
		.start_realtime_ns = cf->start_realtime_ns,
		.start_mono_ns = cf->start_mono_ns,
		.end_mono_ns = cf->end_mono_ns,
		.route = o->route,
		.argv_exe_only = o->no_argv,
		.signaled = cf->signaled,
		.status = cf->status,
		.rusage = cf->rusage,
	};

	if (ct_static_trace_write(&r))
		return true;
	fprintf(stderr, "cryptrace: could not write the trace file for %s in %s: %s\n", exe, outdir,
		strerror(errno));
	return false;
}

/* Summarizes the trace files this run created (an existing directory may hold older ones). */
static void summarize(const char *outdir, char **before, int nbefore, char **cmd, const struct cmd_exe *exe)
{
	char **paths;
	int nnew = ct_outdir_new_traces(outdir, before, nbefore, &paths);

	struct stat st;
	bool setid = exe->found && stat(exe->path, &st) == 0 &&
		     (((st.st_mode & S_ISUID) && st.st_uid != getuid()) ||
		      ((st.st_mode & S_ISGID) && st.st_gid != getgid()));

	if (nnew == 0 && setid) {
		fprintf(stderr,
			"cryptrace: no trace: %s is setuid/setgid; the dynamic loader "
			"ignores LD_PRELOAD for it (run it as its owner to trace it)\n",
			cmd[0]);
	} else if (nnew == 0) {
		fprintf(stderr,
			"cryptrace: no trace: %s left no trace file in %s (setuid, a "
			"cleared LD_PRELOAD, or not a dynamically linked program?)\n",
			cmd[0], outdir);
	} else {
		/* A static program may still start dynamic ones: those were traced. */
		if (exe->kind == CT_ELF_STATIC && nnew > 1)
			fprintf(stderr,
				"cryptrace: %s is statically linked; cryptrace cannot see "
				"inside it, only into the dynamic programs it started\n",
				cmd[0]);
		else if (exe->kind == CT_ELF_STATIC)
			fprintf(stderr,
				"cryptrace: %s is statically linked: LD_PRELOAD cannot load "
				"cryptrace into it, so its calls are not seen (the launcher wrote "
				"its trace file)\n",
				cmd[0]);
		ct_report_summary((const char *const *)paths, nnew, stderr);
		fprintf(stderr, "cryptrace: %d trace file%s in %s (details: cryptrace report %s)\n", nnew,
			nnew == 1 ? "" : "s", outdir, outdir);
	}

	ct_names_free(paths, nnew);
}

/* The profile's samples into the trace files; a profile that could not be taken is said in the
 * command's own trace (a PROFILE record without samples, and the reason). */
static void finish_profile(struct ct_profiler *prof, const char *outdir, uint32_t pid, const char *attach_why,
			   const struct run_options *o)
{
	char why[256];
	if (o->no_profile)
		return;
	if (!prof) {
		ct_profile_note(outdir, pid, attach_why);
		if (!o->quiet)
			fprintf(stderr, "cryptrace: no CPU profile: %s\n", attach_why);
		return;
	}
	ct_profile_finish(prof, outdir, why, sizeof(why));
	if (why[0] && !o->quiet)
		fprintf(stderr, "cryptrace: profile: %s\n", why);
}

int command_run(int argc, char **argv)
{
	struct run_options opts = { 0 };
	int early = parse_options(argc, argv, &opts);

	if (early >= 0)
		return early;
	/* CRYPTRACE_ARGV in our own environment reaches the preload as it is; the launcher's own
	 * trace of a static program reads it the same way (docs/environment.md). */
	const char *argv_env = getenv("CRYPTRACE_ARGV");

	if (argv_env && *argv_env && strcmp(argv_env, "1"))
		opts.no_argv = true;

	char lib[PATH_MAX], why[PATH_MAX * 2 + 128];

	if (!ct_find_library(lib, sizeof(lib), why, sizeof(why))) {
		fprintf(stderr, "cryptrace: %s\n", why);
		return CT_EXIT_USAGE;
	}

	char defdir[64];
	const char *outdir = opts.outdir;

	if (!outdir) {
		ct_outdir_default("cryptrace", defdir, sizeof(defdir));
		outdir = defdir;
	}
	if (!ct_outdir_prepare(outdir, why, sizeof(why))) {
		fprintf(stderr, "cryptrace: %s\n", why);
		return CT_EXIT_USAGE;
	}

	/* The preload may run in a program that changes directory: give it an absolute path. */
	char absdir[PATH_MAX];

	if (!realpath(outdir, absdir)) {
		fprintf(stderr, "cryptrace: %s: %s\n", outdir, strerror(errno));
		return CT_EXIT_USAGE;
	}
	if (strlen(absdir) > PATH_MAX - 64) {
		fprintf(stderr, "cryptrace: output directory path too long: %s\n", absdir);
		return CT_EXIT_USAGE;
	}

	char **before;
	int nbefore = ct_outdir_list(absdir, &before);

	struct child_env ce = {
		.lib = lib,
		.outdir = absdir,
		.opts = &opts,
		.rates = ct_calibrate(),
		.go_fd = -1,
	};
	bool started;
	struct child_facts cf;
	struct ct_profiler *prof = NULL;
	char prof_why[256] = "";
	int status = spawn_and_wait(&ce, &started, &cf, &prof, prof_why, sizeof(prof_why));

	/* A child that exited without its exit handlers (a Go program) left its trace open: the
	 * launcher knows how it ended. */
	if (started && !cf.signaled)
		ct_end_trace_complete(absdir, cf.pid, cf.status, cf.end_mono_ns);

	/* Without an exec there is nothing to summarize: the error line said it all. */
	if (started) {
		struct cmd_exe exe;

		inspect_exe(opts.cmd[0], &exe);
		if (exe.kind == CT_ELF_STATIC &&
		    preload_ran_in_cmd(absdir, before, nbefore > 0 ? nbefore : 0, &exe, cf.pid))
			exe.kind = CT_ELF_DYNAMIC;
		/* -q too; and before listing, so that the summary counts it as this run's. */
		if (exe.kind == CT_ELF_STATIC)
			write_static_trace(absdir, &exe, opts.cmd, &cf, &opts);
		/* after the static trace, which then carries the profile too */
		finish_profile(prof, absdir, cf.pid, prof_why, &opts);
		prof = NULL;
		if (!opts.quiet)
			summarize(absdir, before, nbefore > 0 ? nbefore : 0, opts.cmd, &exe);
	}
	if (prof) /* CMD never ran */
		ct_profile_finish(prof, absdir, prof_why, sizeof(prof_why));
	if (nbefore > 0)
		ct_names_free(before, nbefore);
	return status;
}
