/* SPDX-License-Identifier: MIT */
/*
 * compare.c - `cryptrace compare`: run one command once per route per round, interleaved
 * (R1 R2 R1 R2 ...) so that machine noise spreads evenly over the routes, each run traced into
 * its own directory DIR/<route>/<round>/, then put the routes side by side per path (cipher and
 * direction: the implementation is what a route changes). A route that changes the program's
 * exit status, or its stdout with --check-output, is an error: a route must be invisible except
 * for speed.
 *
 * The figures come from the traces through the reporter's model (report/model.h); the runs
 * themselves use the same environment contract as `cryptrace run` (docs/environment.md).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tracer.h"
#include "model.h"
#include "redact.h"
#include "route_spec.h"
#include "aesni.h"

#define CMP_MAX_ROUTES 8
#define CMP_MAX_ROUNDS 100
#define CMP_MAX_ROWS 12

struct cmp_route {
	char name[64];    /* as given: "native", "aesni" or a full spec */
	const char *spec; /* CRYPTRACE_ROUTE, NULL for native */
	char label[16];   /* table column / directory name */
};

/* One (cipher, direction) of one run: every non-nested path of that key summed. */
struct cmp_fig {
	char cipher[48];
	unsigned dir;
	char impl[64]; /* of the busiest path of the key */
	bool routed;   /* a path of the key carries a route */
	uint64_t calls, bytes;
	double wall_ns, cpu_ns;
	bool wall_known, cpu_known;
	uint64_t bcalls[CT_SIZE_BUCKETS], bbytes[CT_SIZE_BUCKETS];
	double bwall_ns[CT_SIZE_BUCKETS];
};

struct cmp_run {
	int status;
	bool started;
	double elapsed_s;
	char dir[PATH_MAX];
	struct cmp_fig *figs;
	size_t nfigs;
	int ntraces;
	bool routes_inactive; /* the preload said it does not implement routes */
};

struct cmp_options {
	struct cmp_route routes[CMP_MAX_ROUTES];
	int nroutes;
	int rounds;
	bool check_output, json, by_size;
	const char *outdir;
	char **cmd;
};

static int cmp_usage_error(const char *fmt, const char *arg)
{
	fputs("cryptrace compare: ", stderr);
	fprintf(stderr, fmt, arg);
	fputs(" (try: cryptrace help compare)\n", stderr);
	return CT_EXIT_USAGE;
}

/* ---- routes ------------------------------------------------------------------------------- */

static const struct {
	const char *name, *spec;
} known_routes[] = {
	{ "native", NULL },
	{ "aesni", "aes-*=aesni" },
	{ "afalg", "aes-*=afalg" },
	{ "cryptodev", "aes-*=cryptodev" },
};

static bool add_route(struct cmp_options *o, const char *arg)
{
	if (o->nroutes == CMP_MAX_ROUTES) {
		cmp_usage_error("at most %s routes", "8");
		return false;
	}
	struct cmp_route *r = &o->routes[o->nroutes];
	const char *spec = NULL;
	bool known = false;

	for (size_t i = 0; i < sizeof(known_routes) / sizeof(known_routes[0]); i++) {
		if (!strcmp(arg, known_routes[i].name)) {
			spec = known_routes[i].spec;
			known = true;
		}
	}
	if (!known && !strchr(arg, '=')) {
		cmp_usage_error("unknown route '%s' (native, aesni, afalg, cryptodev, or a spec "
				"with '=')", arg);
		return false;
	}
	if (!known)
		spec = arg;
	if (spec) {
		struct ct_route_table table;
		char err[200];

		if (ct_route_parse(spec, &table, err, sizeof(err)) != 0) {
			fprintf(stderr, "cryptrace compare: %s (see docs/routes.md)\n", err);
			return false;
		}
	}
	snprintf(r->name, sizeof(r->name), "%s", arg);
	r->spec = spec ? strdup(spec) : NULL;
	if (known)
		snprintf(r->label, sizeof(r->label), "%s", arg);
	else
		snprintf(r->label, sizeof(r->label), "route%d", (o->nroutes + 1) % 100);
	for (int i = 0; i < o->nroutes; i++) {
		if (!strcmp(o->routes[i].label, r->label)) {
			cmp_usage_error("route '%s' given twice", arg);
			return false;
		}
	}
	o->nroutes++;
	return true;
}

/* "native,aesni,aes-*-cbc=afalg": a spec with commas of its own goes in a --route. */
static bool add_route_list(struct cmp_options *o, const char *list)
{
	char *copy = strdup(list), *save = NULL;
	bool ok = copy != NULL;

	for (char *tok = copy ? strtok_r(copy, ",", &save) : NULL; ok && tok;
	     tok = strtok_r(NULL, ",", &save))
		ok = add_route(o, tok);
	free(copy);
	return ok;
}

static void default_routes(struct cmp_options *o)
{
	add_route(o, "native");
	if (ct_aesni_available())
		add_route(o, "aesni");
	if (ct_afalg_usable(NULL))
		add_route(o, "afalg");
	if (ct_cryptodev_usable(NULL))
		add_route(o, "cryptodev");
}

/* ---- options ------------------------------------------------------------------------------ */

static int parse_options(int argc, char **argv, struct cmp_options *o)
{
	static const struct option longopts[] = {
		{ "routes", required_argument, NULL, 'r' },
		{ "route", required_argument, NULL, 'R' },
		{ "repeat", required_argument, NULL, 'n' },
		{ "check-output", no_argument, NULL, 'c' },
		{ "by-size", no_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	int c;

	opterr = 0;
	optind = 1;
	o->rounds = 3;
	while ((c = getopt_long(argc, argv, "+:o:n:h", longopts, NULL)) != -1) {
		switch (c) {
		case 'r':
			if (!add_route_list(o, optarg))
				return CT_EXIT_USAGE;
			break;
		case 'R':
			if (!add_route(o, optarg))
				return CT_EXIT_USAGE;
			break;
		case 'n': {
			char *end;
			long n = strtol(optarg, &end, 10);

			if (*end || n < 1 || n > CMP_MAX_ROUNDS)
				return cmp_usage_error("--repeat wants 1..100, not '%s'", optarg);
			o->rounds = (int)n;
			break;
		}
		case 'c':
			o->check_output = true;
			break;
		case 's':
			o->by_size = true;
			break;
		case 'j':
			o->json = true;
			break;
		case 'o':
			if (!*optarg)
				return cmp_usage_error("empty output directory%s", "");
			o->outdir = optarg;
			break;
		case 'h':
			ct_usage_compare(stdout);
			return 0;
		case ':':
			return cmp_usage_error("option '%s' needs an argument", argv[optind - 1]);
		default:
			return cmp_usage_error("unknown option '%s'", argv[optind - 1]);
		}
	}
	if (optind >= argc)
		return cmp_usage_error("missing command to run%s", "");
	o->cmd = argv + optind;
	if (o->nroutes == 0)
		default_routes(o);
	if (o->nroutes == 1 && !o->json)
		fprintf(stderr, "cryptrace compare: only one route (%s): nothing to compare it "
				"with\n", o->routes[0].name);
	return -1;
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
	uint32_t cpb_milli;
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
	ct_preload_env(rc->lib, rc->dir, rc->cpb_milli);
	/* A route from the caller's environment would leak into the native runs. */
	if (rc->route->spec)
		setenv("CRYPTRACE_ROUTE", rc->route->spec, 1);
	else
		unsetenv("CRYPTRACE_ROUTE");
	ct_exec_or_report(rc->cmd, err_pipe);
}

/* Runs CMD once under route, traced into dir. Returns the status the way a shell reports it. */
static int run_once(const char *lib, const char *dir, const struct cmp_route *route,
		    uint32_t cpb_milli, char **cmd, bool *started)
{
	struct run_child rc = {
		.lib = lib, .dir = dir, .route = route, .cpb_milli = cpb_milli, .cmd = cmd,
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
		fprintf(stderr, "cryptrace compare: cannot run %s: %s\n", cmd[0],
			strerror(exec_err));
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
	for (size_t i = 0; i < run->nfigs; i++)
		if (run->figs[i].dir == dir && !strcmp(run->figs[i].cipher, cipher))
			return &run->figs[i];
	struct cmp_fig *grown = realloc(run->figs, (run->nfigs + 1) * sizeof(*grown));

	if (!grown)
		return NULL;
	run->figs = grown;
	struct cmp_fig *f = &run->figs[run->nfigs++];

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

/* ---- figures across rounds ---------------------------------------------------------------- */

struct stat3 {
	bool known;
	double med, min, max;
};

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static struct stat3 stat_of(double *v, int n)
{
	struct stat3 s = { 0 };

	if (n <= 0)
		return s;
	qsort(v, (size_t)n, sizeof(*v), cmp_double);
	s.known = true;
	s.min = v[0];
	s.max = v[n - 1];
	s.med = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
	return s;
}

struct cmp_key {
	char cipher[48];
	unsigned dir;
	uint64_t weight; /* most bytes any route moved in one round */
};

struct cmp_state {
	const struct cmp_options *o;
	struct cmp_run *runs; /* [round * nroutes + route] */
	char outdir[PATH_MAX];
	struct cmp_key *keys;
	size_t nkeys;
	int hidden;
};

static struct cmp_run *run_at(const struct cmp_state *s, int round, int route)
{
	return &s->runs[round * s->o->nroutes + route];
}

static const struct cmp_fig *find_fig(const struct cmp_run *r, const struct cmp_key *k)
{
	for (size_t i = 0; i < r->nfigs; i++)
		if (r->figs[i].dir == k->dir && !strcmp(r->figs[i].cipher, k->cipher))
			return &r->figs[i];
	return NULL;
}

static int cmp_key_weight(const void *a, const void *b)
{
	const struct cmp_key *x = a, *y = b;

	return x->weight < y->weight ? 1 : x->weight > y->weight ? -1 : strcmp(x->cipher, y->cipher);
}

static void collect_keys(struct cmp_state *s)
{
	int nruns = s->o->rounds * s->o->nroutes;

	for (int i = 0; i < nruns; i++) {
		const struct cmp_run *r = &s->runs[i];

		for (size_t j = 0; j < r->nfigs; j++) {
			const struct cmp_fig *f = &r->figs[j];
			struct cmp_key *k = NULL;

			for (size_t q = 0; q < s->nkeys && !k; q++)
				if (s->keys[q].dir == f->dir && !strcmp(s->keys[q].cipher, f->cipher))
					k = &s->keys[q];
			if (!k) {
				struct cmp_key *grown = realloc(s->keys,
								(s->nkeys + 1) * sizeof(*grown));

				if (!grown)
					continue;
				s->keys = grown;
				k = &s->keys[s->nkeys++];
				memset(k, 0, sizeof(*k));
				snprintf(k->cipher, sizeof(k->cipher), "%s", f->cipher);
				k->dir = f->dir;
			}
			if (f->bytes > k->weight)
				k->weight = f->bytes;
		}
	}
	if (s->nkeys > 1)
		qsort(s->keys, s->nkeys, sizeof(*s->keys), cmp_key_weight);
	/* Paths that moved under 0.1% of the busiest one's bytes (DRBG, key setup) are noise in a
	 * comparison; they stay in the traces and are counted as hidden. */
	size_t keep = 0;

	for (size_t i = 0; i < s->nkeys; i++)
		if (keep < CMP_MAX_ROWS && s->keys[i].weight * 1000 >= s->keys[0].weight)
			keep++;
	s->hidden = (int)(s->nkeys - keep);
	s->nkeys = keep;
}

/* Per route, for one key (bucket -1: the whole path, else one request-size bucket). */
struct cmp_cell {
	bool present;
	char impl[64];
	bool routed;
	struct stat3 wall_bps, cpu_bps, calls, ratio;
};

static void cell_of(const struct cmp_state *s, const struct cmp_key *k, int bucket, int route,
		    struct cmp_cell *c)
{
	double wall[CMP_MAX_ROUNDS], cpu[CMP_MAX_ROUNDS], calls[CMP_MAX_ROUNDS];
	double ratio[CMP_MAX_ROUNDS];
	int nw = 0, nc = 0, nn = 0, nr = 0;

	memset(c, 0, sizeof(*c));
	for (int i = 0; i < s->o->rounds; i++) {
		const struct cmp_fig *f = find_fig(run_at(s, i, route), k);
		const struct cmp_fig *f0 = find_fig(run_at(s, i, 0), k);

		if (!f)
			continue;
		c->present = true;
		if (!c->impl[0])
			snprintf(c->impl, sizeof(c->impl), "%s", f->impl);
		c->routed |= f->routed;

		double bytes = (double)(bucket < 0 ? f->bytes : f->bbytes[bucket]);
		double wns = bucket < 0 ? f->wall_ns : f->bwall_ns[bucket];

		calls[nn++] = (double)(bucket < 0 ? f->calls : f->bcalls[bucket]);
		if (f->wall_known && wns > 0 && bytes > 0) {
			wall[nw++] = bytes * 1e9 / wns;
			if (f0 && f0->wall_known) {
				double b0 = (double)(bucket < 0 ? f0->bytes : f0->bbytes[bucket]);
				double w0 = bucket < 0 ? f0->wall_ns : f0->bwall_ns[bucket];

				if (b0 > 0 && w0 > 0)
					ratio[nr++] = (bytes / wns) / (b0 / w0);
			}
		}
		if (bucket < 0 && f->cpu_known && f->cpu_ns > 0 && bytes > 0)
			cpu[nc++] = bytes * 1e9 / f->cpu_ns;
	}
	c->wall_bps = stat_of(wall, nw);
	c->cpu_bps = stat_of(cpu, nc);
	c->calls = stat_of(calls, nn);
	c->ratio = stat_of(ratio, nr);
}

/* ---- printing ----------------------------------------------------------------------------- */

static void fmt_mbs(char *buf, size_t cap, struct stat3 v)
{
	if (!v.known)
		snprintf(buf, cap, "-");
	else
		snprintf(buf, cap, "%.1f", v.med / 1e6);
}

static void fmt_calls(char *buf, size_t cap, struct stat3 v)
{
	if (!v.known)
		snprintf(buf, cap, "-");
	else if (v.med < 1e6)
		snprintf(buf, cap, "%.0f", v.med);
	else if (v.med < 1e9)
		snprintf(buf, cap, "%.2fM", v.med / 1e6);
	else
		snprintf(buf, cap, "%.2fG", v.med / 1e9);
}

static const char *bucket_label(int b, char *buf, size_t cap)
{
	uint64_t lo = ct_size_bucket_low((unsigned)b);

	if (lo >= 1024 * 1024)
		snprintf(buf, cap, "%lluM", (unsigned long long)(lo >> 20));
	else if (lo >= 1024)
		snprintf(buf, cap, "%lluk", (unsigned long long)(lo >> 10));
	else
		snprintf(buf, cap, "%llu", (unsigned long long)lo);
	return buf;
}

static bool busiest_buckets(const struct cmp_state *s, const struct cmp_key *k, bool *used)
{
	bool any = false;

	for (int i = 0; i < s->o->rounds; i++) {
		for (int r = 0; r < s->o->nroutes; r++) {
			const struct cmp_fig *f = find_fig(run_at(s, i, r), k);

			for (unsigned b = 0; f && b < CT_SIZE_BUCKETS; b++) {
				if (f->bcalls[b]) {
					used[b] = true;
					any = true;
				}
			}
		}
	}
	return any;
}

static double median_elapsed(const struct cmp_state *s, int route)
{
	double v[CMP_MAX_ROUNDS];

	for (int i = 0; i < s->o->rounds; i++)
		v[i] = run_at(s, i, route)->elapsed_s;
	return stat_of(v, s->o->rounds).med;
}

/*
 * The text tables: rows are paths (cipher and direction), or the request-size buckets of the
 * busiest path with --by-size; columns are routes. One table per figure (wall MB/s, CPU MB/s,
 * calls, the ratio to the first route with its min-max over rounds on the line below), so that a
 * row of 4 routes fits 80 columns: 2 + 22 + 4 x (1 + 13) = 80. More routes continue in further
 * tables of 4, each repeating the row labels.
 */
#define TXT_WIDTH 80
#define TXT_LABEL_W 22
#define TXT_CELL_W 13
#define TXT_ROUTES_PER_TABLE 4

enum txt_figure { FIG_WALL, FIG_CPU, FIG_CALLS, FIG_RATIO };

struct txt_row {
	const struct cmp_key *k;
	int bucket; /* -1: the whole path */
	char label[64];
};

static void txt_cell(const struct cmp_state *s, const struct txt_row *row, int route,
		     enum txt_figure fig, char *main, char *range, size_t cap)
{
	struct cmp_cell c;

	cell_of(s, row->k, row->bucket, route, &c);
	range[0] = '\0';
	if (!c.present) {
		snprintf(main, cap, "absent");
		return;
	}
	switch (fig) {
	case FIG_WALL:
		fmt_mbs(main, cap, c.wall_bps);
		break;
	case FIG_CPU:
		fmt_mbs(main, cap, c.cpu_bps);
		break;
	case FIG_CALLS:
		fmt_calls(main, cap, c.calls);
		break;
	case FIG_RATIO:
		if (!c.ratio.known) {
			snprintf(main, cap, "-");
		} else {
			snprintf(main, cap, "%.2f", c.ratio.med);
			if (route && s->o->rounds > 1)
				snprintf(range, cap, "%.2f-%.2f", c.ratio.min, c.ratio.max);
		}
		break;
	}
}

static void print_table(const struct cmp_state *s, const struct txt_row *rows, size_t nrows,
			enum txt_figure fig, const char *title, FILE *out)
{
	const struct cmp_options *o = s->o;

	for (int g = 0; g < o->nroutes; g += TXT_ROUTES_PER_TABLE) {
		int end = g + TXT_ROUTES_PER_TABLE < o->nroutes ? g + TXT_ROUTES_PER_TABLE : o->nroutes;

		if (o->nroutes > TXT_ROUTES_PER_TABLE && end - g > 1)
			fprintf(out, "\n%s, routes %d-%d of %d\n", title, g + 1, end, o->nroutes);
		else if (o->nroutes > TXT_ROUTES_PER_TABLE)
			fprintf(out, "\n%s, route %d of %d\n", title, end, o->nroutes);
		else
			fprintf(out, "\n%s\n", title);
		fprintf(out, "  %-*s", TXT_LABEL_W, rows[0].bucket < 0 ? "path" : "requests of");
		for (int r = g; r < end; r++)
			fprintf(out, " %*.*s", TXT_CELL_W, TXT_CELL_W, o->routes[r].label);
		fputc('\n', out);
		for (size_t i = 0; i < nrows; i++) {
			char main[TXT_ROUTES_PER_TABLE][32], range[TXT_ROUTES_PER_TABLE][32];
			bool any_range = false;

			for (int r = g; r < end; r++) {
				txt_cell(s, &rows[i], r, fig, main[r - g], range[r - g], sizeof(main[0]));
				any_range |= range[r - g][0] != '\0';
			}
			fprintf(out, "  %-*.*s", TXT_LABEL_W, TXT_LABEL_W, rows[i].label);
			for (int r = g; r < end; r++)
				fprintf(out, " %*.*s", TXT_CELL_W, TXT_CELL_W, main[r - g]);
			fputc('\n', out);
			if (!any_range)
				continue;
			fprintf(out, "  %-*s", TXT_LABEL_W, "");
			for (int r = g; r < end; r++)
				fprintf(out, " %*.*s", TXT_CELL_W, TXT_CELL_W, range[r - g]);
			fputc('\n', out);
		}
	}
}

/* Prints text at column col of a line that already holds col characters, wrapped at commas or
 * spaces so that no line passes TXT_WIDTH; continuation lines start at col too. */
static void print_in_column(const char *text, int col, FILE *out)
{
	int room = TXT_WIDTH - col;
	const char *p = text;

	if (room < 16)
		room = 16;
	while (strlen(p) > (size_t)room) {
		int cut = room;

		while (cut > room / 2 && p[cut - 1] != ',' && p[cut - 1] != ' ')
			cut--;
		if (cut <= room / 2)
			cut = room;
		int keep = cut;

		while (keep > 0 && p[keep - 1] == ' ')
			keep--;
		fprintf(out, "%.*s\n%*s", keep, p, col, "");
		p += cut;
		while (*p == ' ')
			p++;
	}
	fprintf(out, "%s\n", p);
}

/* A path longer than the line: its tail, which names the run, after "...". */
static void print_path_line(const char *lead, const char *path, FILE *out)
{
	size_t room = TXT_WIDTH - strlen(lead);

	if (strlen(path) <= room)
		fprintf(out, "%s%s\n", lead, path);
	else
		fprintf(out, "%s...%s\n", lead, path + strlen(path) - (room - 3));
}

static void print_text(const struct cmp_state *s, FILE *out)
{
	const struct cmp_options *o = s->o;
	char head[128];

	snprintf(head, sizeof(head), "cryptrace compare: %d round%s x %d route%s, traces in ",
		 o->rounds, o->rounds == 1 ? "" : "s", o->nroutes, o->nroutes == 1 ? "" : "s");
	if (strlen(head) + strlen(s->outdir) <= TXT_WIDTH) {
		fprintf(out, "%s%s\n", head, s->outdir);
	} else {
		head[strlen(head) - 1] = '\0';
		fprintf(out, "%s\n", head);
		print_path_line("  ", s->outdir, out);
	}
	fprintf(out, "\n  %-10s %-14s %-6s %s\n", "route", "run time (med)", "exit", "spec");
	for (int r = 0; r < o->nroutes; r++) {
		char t[32];

		snprintf(t, sizeof(t), "%.2fs", median_elapsed(s, r));
		fprintf(out, "  %-10.10s %-14s %-6d ", o->routes[r].label, t, run_at(s, 0, r)->status);
		print_in_column(o->routes[r].spec ? o->routes[r].spec : "(none)", 35, out);
	}
	if (s->nkeys == 0) {
		fprintf(out, "\nno cipher work was traced in any run\n");
		return;
	}

	struct txt_row rows[CMP_MAX_ROWS];
	size_t nrows = 0;

	for (size_t i = 0; i < s->nkeys && nrows < CMP_MAX_ROWS; i++, nrows++) {
		rows[nrows] = (struct txt_row){ .k = &s->keys[i], .bucket = -1 };
		snprintf(rows[nrows].label, sizeof(rows[nrows].label), "%s %s", s->keys[i].cipher,
			 ct_dir_name(s->keys[i].dir));
	}
	char ratio_title[96];

	if (o->rounds > 1)
		snprintf(ratio_title, sizeof(ratio_title), "wall MB/s vs %s (median ratio; min-max "
			 "over rounds below)", o->routes[0].label);
	else
		snprintf(ratio_title, sizeof(ratio_title), "wall MB/s vs %s (ratio)", o->routes[0].label);
	print_table(s, rows, nrows, FIG_WALL, "wall MB/s (median over rounds)", out);
	print_table(s, rows, nrows, FIG_CPU, "CPU MB/s (user+sys, median over rounds)", out);
	print_table(s, rows, nrows, FIG_CALLS, "calls (median over rounds)", out);
	if (o->nroutes > 1)
		print_table(s, rows, nrows, FIG_RATIO, ratio_title, out);

	fprintf(out, "\nimplementation per route\n");
	for (size_t i = 0; i < nrows; i++) {
		char line[1024];
		size_t len = 0;

		len += (size_t)snprintf(line, sizeof(line), "%s:", rows[i].label);
		for (int r = 0; r < o->nroutes && len < sizeof(line); r++) {
			struct cmp_cell c;

			cell_of(s, rows[i].k, -1, r, &c);
			len += (size_t)snprintf(line + len, sizeof(line) - len, " %s=%s%s", o->routes[r].label,
						c.present ? c.impl : "absent",
						r + 1 < o->nroutes ? "," : "");
		}
		fputs("  ", out);
		print_in_column(line, 2, out);
	}
	if (s->hidden)
		fprintf(out, "\n(%d path%s under 0.1%% of the busiest one's bytes not shown;\n"
			     " see cryptrace report DIR/<route>/<round>)\n",
			s->hidden, s->hidden == 1 ? "" : "s");
	if (o->by_size) {
		bool used[CT_SIZE_BUCKETS] = { false };
		struct txt_row brows[CT_SIZE_BUCKETS];
		size_t nb = 0;

		busiest_buckets(s, &s->keys[0], used);
		for (int b = 0; b < CT_SIZE_BUCKETS; b++) {
			char lab[16];

			if (!used[b])
				continue;
			brows[nb] = (struct txt_row){ .k = &s->keys[0], .bucket = b };
			snprintf(brows[nb].label, sizeof(brows[nb].label), "%s+ bytes",
				 bucket_label(b, lab, sizeof(lab)));
			nb++;
		}
		if (nb) {
			char t[128];

			fprintf(out, "\n%s %s by request size (buckets [N, 2N) named by N)\n",
				s->keys[0].cipher, ct_dir_name(s->keys[0].dir));
			print_table(s, brows, nb, FIG_WALL, "wall MB/s", out);
			print_table(s, brows, nb, FIG_CALLS, "calls", out);
			snprintf(t, sizeof(t), "wall MB/s vs %s", o->routes[0].label);
			if (o->nroutes > 1)
				print_table(s, brows, nb, FIG_RATIO, t, out);
		}
	}
	fprintf(out, "\nMB/s: median over rounds of the bytes per wall / user+sys CPU second in the\n"
		     "calls; vs %s: median per-round ratio of wall MB/s%s\n", o->routes[0].label,
		o->rounds > 1 ? " (min-max below it)" : "");
}

static void json_stat(FILE *out, const char *name, struct stat3 v, bool range)
{
	fprintf(out, "\"%s\":", name);
	if (!v.known) {
		fputs("null", out);
		return;
	}
	if (!range) {
		ct_json_num(out, v.med, true);
		return;
	}
	fputs("{\"median\":", out);
	ct_json_num(out, v.med, true);
	fputs(",\"min\":", out);
	ct_json_num(out, v.min, true);
	fputs(",\"max\":", out);
	ct_json_num(out, v.max, true);
	fputc('}', out);
}

static void json_cells(const struct cmp_state *s, const struct cmp_key *k, int bucket, FILE *out)
{
	fputs("[", out);
	for (int r = 0; r < s->o->nroutes; r++) {
		struct cmp_cell c;

		cell_of(s, k, bucket, r, &c);
		fprintf(out, "%s{\"route\":", r ? "," : "");
		ct_json_str(out, s->o->routes[r].label);
		fprintf(out, ",\"present\":%s,\"impl\":", c.present ? "true" : "false");
		ct_json_str(out, c.impl);
		fprintf(out, ",\"routed\":%s,", c.routed ? "true" : "false");
		json_stat(out, "wall_bps", c.wall_bps, true);
		fputc(',', out);
		json_stat(out, "cpu_bps", c.cpu_bps, true);
		fputc(',', out);
		json_stat(out, "calls", c.calls, false);
		fputc(',', out);
		json_stat(out, "ratio", c.ratio, true);
		fputc('}', out);
	}
	fputs("]", out);
}

/* CMD as the traces record it: a password or key typed on it reads <redacted> (redact.h). */
static void print_command(char **cmd, FILE *out)
{
	size_t len = 0, at = 0;

	for (int i = 0; cmd[i]; i++)
		len += strlen(cmd[i]) + 1;

	char *in = malloc(len + 1), *shown = malloc(len * 11 + 16);
	size_t n = 0;

	if (in && shown) {
		for (int i = 0; cmd[i]; i++) {
			memcpy(in + at, cmd[i], strlen(cmd[i]) + 1);
			at += strlen(cmd[i]) + 1;
		}
		n = ct_argv_redact(in, len, false, shown, len * 11 + 16, NULL);
	}
	for (size_t i = 0, k = 0; i < n; k++) {
		const char *e = memchr(shown + i, 0, n - i);
		size_t w = e ? (size_t)(e - (shown + i)) : n - i;
		char *arg = strndup(shown + i, w);

		if (k)
			fputc(',', out);
		ct_json_str(out, arg ? arg : "");
		free(arg);
		i += w + 1;
	}
	free(in);
	free(shown);
}

static void print_json(const struct cmp_state *s, const char **errors, int nerrors, FILE *out)
{
	const struct cmp_options *o = s->o;

	fputs("{\"command\":[", out);
	print_command(o->cmd, out);
	fprintf(out, "],\"rounds\":%d,\"outdir\":", o->rounds);
	ct_json_str(out, s->outdir);
	fputs(",\"routes\":[", out);
	for (int r = 0; r < o->nroutes; r++) {
		fprintf(out, "%s{\"name\":", r ? "," : "");
		ct_json_str(out, o->routes[r].label);
		fputs(",\"spec\":", out);
		if (o->routes[r].spec)
			ct_json_str(out, o->routes[r].spec);
		else
			fputs("null", out);
		fputs(",\"median_run_s\":", out);
		ct_json_num(out, median_elapsed(s, r), true);
		fputs(",\"runs\":[", out);
		for (int i = 0; i < o->rounds; i++) {
			const struct cmp_run *run = run_at(s, i, r);

			fprintf(out, "%s{\"round\":%d,\"exit\":%d,\"run_s\":", i ? "," : "", i + 1,
				run->status);
			ct_json_num(out, run->elapsed_s, true);
			fprintf(out, ",\"traces\":%d,\"routes_inactive\":%s,\"dir\":", run->ntraces,
				run->routes_inactive ? "true" : "false");
			ct_json_str(out, run->dir);
			fputc('}', out);
		}
		fputs("]}", out);
	}
	fputs("],\"paths\":[", out);
	for (size_t i = 0; i < s->nkeys; i++) {
		fprintf(out, "%s{\"cipher\":", i ? "," : "");
		ct_json_str(out, s->keys[i].cipher);
		fprintf(out, ",\"dir\":\"%s\",\"routes\":", ct_dir_name(s->keys[i].dir));
		json_cells(s, &s->keys[i], -1, out);
		fputc('}', out);
	}
	fprintf(out, "],\"hidden_paths\":%d,\"by_size\":", s->hidden);
	if (o->by_size && s->nkeys) {
		bool used[CT_SIZE_BUCKETS] = { false };
		bool first = true;

		busiest_buckets(s, &s->keys[0], used);
		fputs("{\"cipher\":", out);
		ct_json_str(out, s->keys[0].cipher);
		fprintf(out, ",\"dir\":\"%s\",\"buckets\":[", ct_dir_name(s->keys[0].dir));
		for (int b = 0; b < CT_SIZE_BUCKETS; b++) {
			if (!used[b])
				continue;
			fprintf(out, "%s{\"min_size\":%llu,\"routes\":", first ? "" : ",",
				(unsigned long long)ct_size_bucket_low((unsigned)b));
			json_cells(s, &s->keys[0], b, out);
			fputc('}', out);
			first = false;
		}
		fputs("]}", out);
	} else {
		fputs("null", out);
	}
	fputs(",\"errors\":[", out);
	for (int i = 0; i < nerrors; i++) {
		if (i)
			fputc(',', out);
		ct_json_str(out, errors[i]);
	}
	fputs("]}\n", out);
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
static int check_routes(const struct cmp_state *s, char **errors)
{
	const struct cmp_options *o = s->o;
	int n = 0;

	for (int r = 1; r < o->nroutes; r++) {
		char msg[3 * PATH_MAX] = "";

		for (int i = 0; i < o->rounds && !msg[0]; i++) {
			const struct cmp_run *a = run_at(s, i, 0), *b = run_at(s, i, r);

			if (a->status != b->status) {
				snprintf(msg, sizeof(msg), "route %s changed the exit status: %d, "
					 "%s: %d (round %d)", o->routes[r].label, b->status,
					 o->routes[0].label, a->status, i + 1);
			} else if (o->check_output) {
				char fa[PATH_MAX + 16], fb[PATH_MAX + 16];

				snprintf(fa, sizeof(fa), "%s/stdout", a->dir);
				snprintf(fb, sizeof(fb), "%s/stdout", b->dir);
				if (!same_file_bytes(fa, fb))
					snprintf(msg, sizeof(msg), "route %s changed the output: %s "
						 "differs from %s (round %d)", o->routes[r].label,
						 fb, fa, i + 1);
			}
		}
		if (msg[0])
			errors[n++] = strdup(msg);
	}
	return n;
}

/* ---- main --------------------------------------------------------------------------------- */

static bool prepare_dirs(struct cmp_state *s, char *why, size_t why_cap)
{
	const struct cmp_options *o = s->o;
	char def[64];
	const char *dir = o->outdir;

	if (!dir) {
		time_t now = time(NULL);
		struct tm tm;
		struct stat st;

		localtime_r(&now, &tm);
		strftime(def, sizeof(def), "cryptrace-compare-%Y%m%d-%H%M%S", &tm);
		for (int i = 2; stat(def, &st) == 0 && i < 1000; i++) {
			size_t len = strlen(def);

			snprintf(def + len, sizeof(def) - len, "-%d", i);
		}
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
			struct cmp_run *run = run_at(s, i, r);
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

int ct_compare_main(int argc, char **argv)
{
	struct cmp_options opts = { 0 };
	int early = parse_options(argc, argv, &opts);

	if (early >= 0)
		return early;

	char lib[PATH_MAX], why[PATH_MAX * 2 + 128];

	if (!ct_find_library(lib, sizeof(lib), why, sizeof(why))) {
		fprintf(stderr, "cryptrace compare: %s\n", why);
		return CT_EXIT_USAGE;
	}

	struct cmp_state s = { .o = &opts };

	s.runs = calloc((size_t)(opts.rounds * opts.nroutes), sizeof(*s.runs));
	if (!s.runs)
		return CT_EXIT_USAGE;
	if (!prepare_dirs(&s, why, sizeof(why))) {
		fprintf(stderr, "cryptrace compare: %s\n", why);
		return CT_EXIT_USAGE;
	}

	bool progress = isatty(2);
	uint32_t cpb = ct_calibrate_aesni_cpb();
	struct sigaction sa = { .sa_handler = on_interrupt }, old_int;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);

	int total = opts.rounds * opts.nroutes, done = 0;

	for (int i = 0; i < opts.rounds && !interrupted; i++) {
		for (int r = 0; r < opts.nroutes && !interrupted; r++) {
			struct cmp_run *run = run_at(&s, i, r);

			if (progress)
				fprintf(stderr, "\rcryptrace compare: round %d/%d, route %-10s "
						"(%d/%d runs)   ", i + 1, opts.rounds,
					opts.routes[r].label, done, total);
			uint64_t t0 = ct_clock_ns(CLOCK_MONOTONIC);

			run->status = run_once(lib, run->dir, &opts.routes[r], cpb, opts.cmd,
					       &run->started);
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
		fprintf(stderr, "cryptrace compare: interrupted after %d of %d runs (traces in "
				"%s)\n", done, total, s.outdir);
		return 130;
	}

	collect_keys(&s);

	char *errors[CMP_MAX_ROUTES];
	int nerrors = check_routes(&s, errors);

	if (opts.json)
		print_json(&s, (const char **)errors, nerrors, stdout);
	else
		print_text(&s, stdout);
	fflush(stdout);

	for (int r = 1; r < opts.nroutes; r++) {
		bool inactive = false, routed = false;

		for (int i = 0; i < opts.rounds; i++) {
			const struct cmp_run *run = run_at(&s, i, r);

			inactive |= run->routes_inactive;
			for (size_t j = 0; j < run->nfigs; j++)
				routed |= run->figs[j].routed;
		}
		if (opts.routes[r].spec && !routed && s.nkeys)
			fprintf(stderr, "cryptrace compare: note: route %s moved no work\n  (no "
					"routed path in its traces%s)\n", opts.routes[r].label,
				inactive ? "; this preload does not implement routes" : "");
	}
	for (int i = 0; i < nerrors; i++) {
		fprintf(stderr, "cryptrace compare: %s\n", errors[i]);
		free(errors[i]);
	}

	int status0 = run_at(&s, 0, 0)->status;

	for (int i = 0; i < total; i++)
		free(s.runs[i].figs);
	free(s.runs);
	free(s.keys);
	if (nerrors)
		return 1;
	if (status0)
		fprintf(stderr, "cryptrace compare: note: %s exited %d under every route (its "
				"stderr: %s/%s/1/stderr)\n", opts.cmd[0], status0, s.outdir,
			opts.routes[0].label);
	return 0;
}
