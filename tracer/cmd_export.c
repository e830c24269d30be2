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

/* The exposition, made before anything is written: the state first, then the file. */
struct prom_text {
	char *buf;
	size_t len;
};

static void fill_prom(FILE *f, void *ctx)
{
	const struct prom_text *t = ctx;
	fwrite(t->buf, 1, t->len, f);
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
	int lock = ct_export_state_lock(state_path, EXPORT_LOCK_WAIT_S, "export");
	if (lock < 0)
		return 2;
	struct ct_export_state *st = ct_export_state_load(state_path, msg, sizeof(msg));
	if (!st) {
		fprintf(stderr, "cryptrace export: %s\n", msg);
		close(lock);
		return 2;
	}
	struct prom_text text = { 0 };
	FILE *mem = open_memstream(&text.buf, &text.len);
	if (!mem) {
		fprintf(stderr, "cryptrace export: out of memory\n");
		ct_export_state_free(st);
		close(lock);
		return 2;
	}
	ct_export_collect(st, inputs, n, false, stderr, mem);
	if (fclose(mem) != 0) {
		fprintf(stderr, "cryptrace export: out of memory\n");
		free(text.buf);
		ct_export_state_free(st);
		close(lock);
		return 2;
	}

	int rc = 0;
	if (!ct_export_state_save(st, state_path, msg, sizeof(msg))) {
		fprintf(stderr, "cryptrace export: state: %s\n", msg);
		rc = 2; /* nor the file: its counters would rest on a state the next run has not got */
	} else {
		size_t n_out = strlen(dir) + sizeof(EXPORT_FILE) + 2;
		char *out = malloc(n_out);
		if (out)
			snprintf(out, n_out, "%s/%s", dir, EXPORT_FILE);
		if (!out || !ct_write_atomic(out, 0644, fill_prom, &text, msg, sizeof(msg))) {
			fprintf(stderr, "cryptrace export: %s\n", out ? msg : "out of memory");
			rc = 2;
		}
		free(out);
	}
	free(text.buf);
	ct_export_state_free(st);
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
