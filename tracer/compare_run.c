/* SPDX-License-Identifier: MIT */
/*
 * compare_run.c - the runs of `cryptrace compare`: the directory of each (DIR/<route>/<round>),
 * CMD started once per route per round with that route's environment (the same contract as
 * `cryptrace run`, docs/environment.md), each run's traces read into figures per (cipher,
 * direction) through the reporter's model (report/model.h), and the check that a route left
 * CMD's exit status (and with --check-output its stdout) as the first route had it.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "compare.h"
#include "model.h"
#include "tracer.h"

/* ---- the directories ---------------------------------------------------------------------- */

bool cmp_prepare_dirs(struct cmp_state *s, char *why, size_t why_cap)
{
	const struct cmp_options *o = s->o;
	char def[64];
	const char *dir = o->outdir;

	if (!dir) {
		ct_outdir_default("cryptrace-compare", def, sizeof(def));
		dir = def;
	}
	if (!ct_outdir_prepare(dir, why, why_cap))
		return false;
	if (!realpath(dir, s->outdir)) {
		snprintf(why, why_cap, "%s: %s", dir, strerror(errno));
		return false;
	}
	if (strlen(s->outdir) > PATH_MAX - 64) {
		snprintf(why, why_cap, "output directory path too long: %s", s->outdir);
		return false;
	}
	for (int i = 0; i < o->rounds; i++) {
		for (int r = 0; r < o->nroutes; r++) {
			struct cmp_run *run = cmp_run_at(s, i, r);
			char **names;
			int n;

			snprintf(run->dir, sizeof(run->dir), "%s/%s/%d", s->outdir, o->routes[r].label,
				 i + 1);
			if (!ct_outdir_prepare(run->dir, why, why_cap))
				return false;
			/* Old traces would be counted as this run's. */
			n = ct_outdir_list(run->dir, &names);
			if (n > 0) {
				ct_names_free(names, n);
				snprintf(why, why_cap, "%s already holds traces: give a new -o DIR",
					 run->dir);
				return false;
			}
		}
	}
	return true;
}

/* ---- running ------------------------------------------------------------------------------ */

static volatile sig_atomic_t interrupted;

static void on_interrupt(int sig)
{
	(void)sig;
	interrupted = 1;
}

static void redirect(int fd, const char *path, int flags)
{
	int f = open(path, flags | O_CLOEXEC, 0600);

	if (f >= 0) {
		dup2(f, fd);
		close(f);
	}
}

struct run_child {
	const char *lib, *dir;
	const struct cmp_route *route;
	const struct ct_machine_rates *rates;
	char **cmd;
};

/* In the child: stdin from /dev/null (every round must see the same input), stdout and stderr
 * into files of the run's directory, the route's environment, then CMD (ct_fork_piped's body). */
static void run_child(void *arg, int err_pipe)
{
	const struct run_child *rc = arg;
	char out[PATH_MAX + 16], err[PATH_MAX + 16];

	snprintf(out, sizeof(out), "%s/stdout", rc->dir);
	snprintf(err, sizeof(err), "%s/stderr", rc->dir);
	signal(SIGINT, SIG_DFL);
	redirect(0, "/dev/null", O_RDONLY);
	redirect(1, out, O_WRONLY | O_CREAT | O_TRUNC);
	redirect(2, err, O_WRONLY | O_CREAT | O_TRUNC);
	ct_preload_env(rc->lib, rc->dir, rc->rates);
	/* A route from the caller's environment would leak into the native runs. */
	if (rc->route->spec)
		setenv("CRYPTRACE_ROUTE", rc->route->spec, 1);
	else
		unsetenv("CRYPTRACE_ROUTE");
	ct_exec_or_report(rc->cmd, err_pipe);
}

/* Runs CMD once under route, traced into dir. Returns the status the way a shell reports it. */
static int run_once(const char *lib, const char *dir, const struct cmp_route *route,
		    const struct ct_machine_rates *rates, char **cmd, bool *started)
{
	struct run_child rc = {
		.lib = lib,
		.dir = dir,
		.route = route,
		.rates = rates,
		.cmd = cmd,
	};
	int rfd;

	*started = false;

	pid_t pid = ct_fork_piped("cryptrace compare", run_child, &rc, &rfd);

	if (pid < 0)
		return CT_EXIT_NOT_EXEC;

	int exec_err = ct_exec_outcome(rfd);
	int status = 0;
	pid_t w = ct_wait_child(pid, &status, NULL);

	if (exec_err) {
		fprintf(stderr, "cryptrace compare: cannot run %s: %s\n", cmd[0], strerror(exec_err));
		return exec_err == ENOENT ? CT_EXIT_NOT_FOUND : CT_EXIT_NOT_EXEC;
	}
	if (w < 0)
		return CT_EXIT_NOT_EXEC;
	*started = true;
	return ct_shell_status(status);
}

/* ---- reading one run's traces ------------------------------------------------------------- */

static void copy_str(char *dst, size_t cap, struct ct_str s)
{
	size_t n = s.len < cap - 1 ? s.len : cap - 1;

	memcpy(dst, s.p, n);
	dst[n] = '\0';
}

static struct cmp_fig *fig_for(struct cmp_run *run, const char *cipher, unsigned dir)
{
	struct cmp_fig *f = cmp_find_fig(run, cipher, dir);

	if (f)
		return f;

	struct cmp_fig *grown = realloc(run->figs, (run->nfigs + 1) * sizeof(*grown));

	if (!grown)
		return NULL;
	run->figs = grown;
	f = &run->figs[run->nfigs++];
	memset(f, 0, sizeof(*f));
	snprintf(f->cipher, sizeof(f->cipher), "%s", cipher);
	f->dir = dir;
	return f;
}

static void read_run(struct cmp_run *run)
{
	struct rp_model m;
	FILE *devnull = fopen("/dev/null", "w");
	uint64_t *busiest = NULL;

	rp_model_init(&m);
	rp_load_path(&m, run->dir, devnull ? devnull : stderr);
	if (devnull)
		fclose(devnull);
	rp_model_merge(&m);
	for (size_t i = 0; i < m.nprocs; i++)
		if (rp_proc_shown(&m, &m.procs[i]))
			run->ntraces++;
	for (size_t i = 0; i < m.nevents; i++) {
		const struct ct_event *e = &m.events[i].ev;

		if (e->kind == CT_EV_TRACE_WARNING && e->detail.len &&
		    memmem(e->detail.p, e->detail.len, "routes are not active", 21))
			run->routes_inactive = true;
	}
	busiest = calloc(m.npaths + 1, sizeof(*busiest));
	for (size_t i = 0; i < m.npaths; i++) {
		const struct rp_path *p = &m.paths[i];
		char cipher[48];

		/* An engine's kernel work inside an EVP call is the EVP call's work: count it once. */
		if (!p->has_def || (p->def.flags & CT_PATH_NESTED) || !p->st.bytes)
			continue;
		copy_str(cipher, sizeof(cipher), p->def.cipher);

		struct cmp_fig *f = fig_for(run, cipher, p->def.dir);

		if (!f)
			continue;
		size_t fi = (size_t)(f - run->figs);

		if (busiest && fi <= m.npaths && p->st.bytes > busiest[fi]) {
			busiest[fi] = p->st.bytes;
			copy_str(f->impl, sizeof(f->impl), p->def.impl);
		}
		f->routed |= p->def.route > CT_ROUTE_NATIVE || (p->def.flags & CT_PATH_ROUTED);
		f->calls += p->st.calls;
		f->bytes += p->st.bytes;
		if (p->d.wall_known) {
			f->wall_known = true;
			f->wall_ns += p->d.wall_ns;
		}
		if (p->d.cpu_known) {
			f->cpu_known = true;
			f->cpu_ns += p->d.user_ns + p->d.sys_ns;
		}
		for (unsigned b = 0; b < CT_SIZE_BUCKETS; b++) {
			f->bcalls[b] += p->st.size[b].calls;
			f->bbytes[b] += p->st.size[b].bytes;
			f->bwall_ns[b] += p->d.bucket_wall_ns[b];
		}
	}
	free(busiest);
	rp_model_free(&m);
}

/* ---- the rounds --------------------------------------------------------------------------- */

int cmp_run_rounds(struct cmp_state *s, const char *lib)
{
	const struct cmp_options *o = s->o;
	bool progress = isatty(2);
	const struct ct_machine_rates rates = ct_calibrate();
	struct sigaction sa = { .sa_handler = on_interrupt }, old_int;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);

	int total = o->rounds * o->nroutes, done = 0;

	for (int i = 0; i < o->rounds && !interrupted; i++) {
		for (int r = 0; r < o->nroutes && !interrupted; r++) {
			struct cmp_run *run = cmp_run_at(s, i, r);

			if (progress)
				fprintf(stderr,
					"\rcryptrace compare: round %d/%d, route %-10s "
					"(%d/%d runs)   ",
					i + 1, o->rounds, o->routes[r].label, done, total);
			uint64_t t0 = ct_clock_ns(CLOCK_MONOTONIC);

			run->status = run_once(lib, run->dir, &o->routes[r], &rates, o->cmd, &run->started);
			run->elapsed_s = (double)(ct_clock_ns(CLOCK_MONOTONIC) - t0) / 1e9;
			done++;
			if (!run->started) {
				if (progress)
					fputc('\n', stderr);
				return run->status;
			}
			read_run(run);
		}
	}
	if (progress)
		fprintf(stderr, "\r%-78s\r", "");
	sigaction(SIGINT, &old_int, NULL);
	if (interrupted) {
		fprintf(stderr,
			"cryptrace compare: interrupted after %d of %d runs (traces in "
			"%s)\n",
			done, total, s->outdir);
		return 130;
	}
	return -1;
}

/* ---- checks ------------------------------------------------------------------------------- */

static bool same_file_bytes(const char *a, const char *b)
{
	FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
	bool same = fa && fb;

	while (same) {
		char ba[8192], bb[8192];
		size_t na = fread(ba, 1, sizeof(ba), fa), nb = fread(bb, 1, sizeof(bb), fb);

		if (na != nb || memcmp(ba, bb, na))
			same = false;
		if (na == 0)
			break;
	}
	if (fa)
		fclose(fa);
	if (fb)
		fclose(fb);
	return same;
}

/* One line per route that changed the exit status or stdout; returns how many. */
int cmp_check_routes(const struct cmp_state *s, char **errors)
{
	const struct cmp_options *o = s->o;
	int n = 0;

	for (int r = 1; r < o->nroutes; r++) {
		char msg[3 * PATH_MAX] = "";

		for (int i = 0; i < o->rounds && !msg[0]; i++) {
			const struct cmp_run *a = cmp_run_at(s, i, 0), *b = cmp_run_at(s, i, r);

			if (a->status != b->status) {
				snprintf(msg, sizeof(msg),
					 "route %s changed the exit status: %d, "
					 "%s: %d (round %d)",
					 o->routes[r].label, b->status, o->routes[0].label, a->status, i + 1);
			} else if (o->check_output) {
				char fa[PATH_MAX + 16], fb[PATH_MAX + 16];

				snprintf(fa, sizeof(fa), "%s/stdout", a->dir);
				snprintf(fb, sizeof(fb), "%s/stdout", b->dir);
				if (!same_file_bytes(fa, fb))
					snprintf(msg, sizeof(msg),
						 "route %s changed the output: %s "
						 "differs from %s (round %d)",
						 o->routes[r].label, fb, fa, i + 1);
			}
		}
		if (msg[0])
			errors[n++] = strdup(msg);
	}
	return n;
}
