/* SPDX-License-Identifier: MIT */
/*
 * cmd_export.c - `cryptrace export --textfile-dir DIR [--state FILE] TRACEDIR...`: reads a host's
 * traces and writes DIR/cryptrace.prom for node_exporter's textfile collector (Prometheus text
 * format 0.0.4, report/openmetrics.c), atomically, with counters cumulative across process
 * lifetimes (export_state.c). contrib/systemd/ runs it every minute. docs/metrics.md.
 *
 * Exit status: 0 the file was written (damaged or foreign traces are counted in it and named on
 * stderr), 2 usage error, unreadable state, or the file or the state could not be written.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include "commands.h"
#include "export.h"
#include "model.h"
#include "report.h"
#include "tracer.h"
#include "views.h"

/* Where the state lives unless --state says: not in the textfile directory (node_exporter's,
 * often writable by its group), and kept across reboots, as the counters must be. */
#define EXPORT_STATE_DEFAULT "/var/lib/cryptrace/export.state"
#define EXPORT_FILE "cryptrace.prom"

/* A spool directory with no trace in it yet is normal (no process did crypto since the last
 * rotation): it is skipped rather than reported as an error every minute. */
static bool has_traces(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return true; /* let the loader say why */
	bool any = false;
	struct dirent *de;
	while (!any && (de = readdir(d)))
		any = strstr(de->d_name, ".ctrace") != NULL;
	closedir(d);
	return any;
}

struct prom_ctx {
	const struct rp_model *m;
	const struct rp_om_counters *c;
};

static void fill_prom(FILE *f, void *ctx)
{
	const struct prom_ctx *p = ctx;
	rp_print_openmetrics(p->m, p->c, false, NULL, f);
}

/* Two exports at once (the timer and a hand-run one) would each retire the same traces: the
 * second waits for the first. */
static int lock_state(const char *state)
{
	size_t n = strlen(state) + 8;
	char *path = malloc(n);
	if (!path)
		return -1;
	snprintf(path, n, "%s.lock", state);
	int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0600);
	if (fd < 0)
		fprintf(stderr, "cryptrace export: %s: %s\n", path, strerror(errno));
	free(path);
	if (fd >= 0 && flock(fd, LOCK_EX) != 0) {
		fprintf(stderr, "cryptrace export: cannot lock the state: %s\n", strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

static int export_run(const char *dir, const char *state_path, char **inputs, int n)
{
	char msg[600];
	struct stat sb;
	errno = 0;
	if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode)) {
		fprintf(stderr, "cryptrace export: --textfile-dir %s: %s\n", dir,
			errno ? strerror(errno) : "not a directory");
		return 2;
	}
	int lock = lock_state(state_path);
	if (lock < 0)
		return 2;
	struct ct_export_state *st = ct_export_state_load(state_path, msg, sizeof(msg));
	if (!st) {
		fprintf(stderr, "cryptrace export: %s\n", msg);
		close(lock);
		return 2;
	}
	struct rp_model m;
	rp_model_init(&m);
	struct rp_view view = { 0 };
	const char **paths = calloc((size_t)n, sizeof(*paths));
	int np = 0;
	for (int i = 0; paths && i < n; i++)
		if (has_traces(inputs[i]))
			paths[np++] = inputs[i];
	/* no symbols: labels name no call site, and reading every module's symbols each minute
	 * would cost more than the export */
	rp_load_inputs(&m, paths, np, &view, false, stderr);
	free(paths);
	ct_export_state_update(st, &m);

	int rc = 0;
	if (!ct_export_state_save(st, state_path, msg, sizeof(msg))) {
		fprintf(stderr, "cryptrace export: state: %s\n", msg);
		rc = 2; /* not exported: the next run would count the retired traces again */
	} else {
		struct rp_om_counters totals = { 0 };
		ct_export_state_totals(st, &totals);
		size_t n_out = strlen(dir) + sizeof(EXPORT_FILE) + 2;
		char *out = malloc(n_out);
		struct prom_ctx ctx = { &m, &totals };
		if (out)
			snprintf(out, n_out, "%s/%s", dir, EXPORT_FILE);
		if (!out || !ct_write_atomic(out, 0644, fill_prom, &ctx, msg, sizeof(msg))) {
			fprintf(stderr, "cryptrace export: %s\n", out ? msg : "out of memory");
			rc = 2;
		}
		free(out);
		rp_om_counters_free(&totals);
	}
	ct_export_state_free(st);
	rp_model_free(&m);
	close(lock);
	return rc;
}

int command_export(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "textfile-dir", required_argument, NULL, 'd' },
		{ "state", required_argument, NULL, 's' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *dir = NULL, *state = EXPORT_STATE_DEFAULT;
	int c;

	optind = 0;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'd':
			dir = optarg;
			break;
		case 's':
			state = optarg;
			break;
		case 'h':
			ct_usage_export(stdout);
			return 0;
		default:
			fprintf(stderr, "cryptrace export: unknown option '%s' (try --help)\n",
				argv[optind - 1] ? argv[optind - 1] : "?");
			return 2;
		}
	}
	if (!dir) {
		fprintf(stderr,
			"cryptrace export: --textfile-dir DIR is required (node_exporter's "
			"--collector.textfile.directory)\n");
		return 2;
	}
	if (optind >= argc) {
		fprintf(stderr, "cryptrace export: no trace directory given (try --help)\n");
		return 2;
	}
	return export_run(dir, state, argv + optind, argc - optind);
}
