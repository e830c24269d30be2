/* SPDX-License-Identifier: MIT */
/*
 * cmd_report.c - `cryptrace report`: reads the options, loads the traces through the reporter
 * (report/report.h: load, name call sites, demangle, select) and hands the model to the printer
 * asked for (report/views.h): text, JSON, folded stacks, CSV, OpenMetrics, HTML, Perfetto, or a
 * diff of two sets. The reporter itself is a library (report/); this is its command line.
 *
 * Exit status: 0 ok, 1 some input was damaged (what was read before is reported), 2 usage
 * error, unreadable input or a write error.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "commands.h"
#include "model.h"
#include "report.h"
#include "tracer.h"
#include "views.h"

static bool parse_u64(const char *s, uint64_t *v)
{
	char *end;

	errno = 0;
	if (!s || !*s || *s == '-')
		return false;

	unsigned long long x = strtoull(s, &end, 0);

	if (errno || *end)
		return false;
	*v = x;
	return true;
}

static bool parse_seconds(const char *s, double *v)
{
	char *end;

	errno = 0;
	if (!s || !*s)
		return false;

	double x = strtod(s, &end);

	if (errno || *end || !(x >= 0))
		return false;
	*v = x;
	return true;
}

/* One side of --diff: a path, or a comma-separated set of paths (unless the name exists as is). */
static int load_side(struct rp_model *m, const char *spec, const struct rp_view *v, bool symbols, FILE *err)
{
	struct stat sb;

	if (!strchr(spec, ',') || stat(spec, &sb) == 0)
		return rp_load_inputs(m, &spec, 1, v, symbols, err);

	char *copy = strdup(spec);
	const char *parts[256];
	int n = 0;
	char *save = NULL;

	for (char *tok = copy ? strtok_r(copy, ",", &save) : NULL; tok && n < 256;
	     tok = strtok_r(NULL, ",", &save))
		parts[n++] = tok;

	int rc = n ? rp_load_inputs(m, parts, n, v, symbols, err) : 2;

	free(copy);
	return rc;
}

static FILE *open_out(const char *path)
{
	if (!path)
		return stdout;

	FILE *f = fopen(path, "w");

	if (!f)
		fprintf(stderr, "cryptrace report: %s: %s\n", path, strerror(errno));
	return f;
}

/* 0, or 2 after a write error */
static int close_out(FILE *f, const char *path)
{
	int rc = 0;

	if (fflush(f) != 0 || ferror(f)) {
		fprintf(stderr, "cryptrace report: %s: write error: %s\n", path ? path : "stdout",
			strerror(errno));
		rc = 2;
	}
	if (path && fclose(f) != 0 && !rc) {
		fprintf(stderr, "cryptrace report: %s: %s\n", path, strerror(errno));
		rc = 2;
	}
	return rc;
}

static int run_diff(struct rp_model *a, const struct rp_view *v, bool symbols, char **args, int n, bool json,
		    const char *outpath)
{
	if (n != 2) {
		fprintf(stderr,
			"cryptrace report: --diff needs two inputs, A and B (each a trace, a "
			"directory or a comma-separated set), not %d\n",
			n);
		return 2;
	}

	struct rp_model b;

	rp_model_init(&b);
	b.filter = a->filter;

	struct rp_view side_view = *v;

	side_view.allow_empty = true; /* a path may exist on one side only: it is then new/vanished */
	v = &side_view;

	int ra = load_side(a, args[0], v, symbols, stderr);
	int rb = load_side(&b, args[1], v, symbols, stderr);
	int rc = ra > rb ? ra : rb;

	if (!a->nprocs || !b.nprocs || rc == 2 || ra < 0 || rb < 0) {
		rp_model_free(&b);
		return 2;
	}

	FILE *out = open_out(outpath);

	if (!out) {
		rp_model_free(&b);
		return 2;
	}
	rp_print_diff(a, &b, args[0], args[1], json, out);

	int wrc = close_out(out, outpath);

	rp_model_free(&b);
	return wrc ? wrc : rc;
}

int command_report(int argc, char **argv)
{
	enum {
		OPT_JSON = 256,
		OPT_TEXT,
		OPT_PID,
		OPT_CIPHER,
		OPT_API,
		OPT_MIN,
		OPT_MAX,
		OPT_FOLDED,
		OPT_FOLDED_WEIGHT,
		OPT_HTML,
		OPT_PERFETTO,
		OPT_CSV,
		OPT_DIFF,
		OPT_PATH,
		OPT_SINCE,
		OPT_UNTIL,
		OPT_RESOLUTION,
		OPT_NO_SYMBOLS,
		OPT_OPENMETRICS,
		OPT_PROMETHEUS
	};
	static const struct option opts[] = {
		{ "json", no_argument, NULL, OPT_JSON },
		{ "text", no_argument, NULL, OPT_TEXT },
		{ "folded", no_argument, NULL, OPT_FOLDED },
		{ "folded-weight", required_argument, NULL, OPT_FOLDED_WEIGHT },
		{ "pid", required_argument, NULL, OPT_PID },
		{ "cipher", required_argument, NULL, OPT_CIPHER },
		{ "api", required_argument, NULL, OPT_API },
		{ "min-size", required_argument, NULL, OPT_MIN },
		{ "max-size", required_argument, NULL, OPT_MAX },
		{ "html", required_argument, NULL, OPT_HTML },
		{ "perfetto", required_argument, NULL, OPT_PERFETTO },
		{ "csv", optional_argument, NULL, OPT_CSV },
		{ "diff", no_argument, NULL, OPT_DIFF },
		{ "path", required_argument, NULL, OPT_PATH },
		{ "since", required_argument, NULL, OPT_SINCE },
		{ "until", required_argument, NULL, OPT_UNTIL },
		{ "resolution", required_argument, NULL, OPT_RESOLUTION },
		{ "no-symbols", no_argument, NULL, OPT_NO_SYMBOLS },
		{ "openmetrics", no_argument, NULL, OPT_OPENMETRICS },
		{ "prometheus", no_argument, NULL, OPT_PROMETHEUS },
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct rp_model m;
	bool json = false, folded = false, symbols = true;
	enum rp_folded_weight fold_weight = RP_FOLD_BYTES;
	const char *outpath = NULL;
	/* views.h outputs: files of their own; the text/JSON report goes to stdout only when asked
	 * for or when no other output was */
	const char *html = NULL, *perfetto = NULL, *csv = NULL;
	bool csv_main = false, diff = false, main_asked = false, openmetrics = false, om_dialect = true;
	struct rp_view view = { 0 };
	uint64_t v;
	int c;

	rp_model_init(&m);
	optind = 0; /* getopt state is global: reset it for each call (the launcher, the tests) */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
		switch (c) {
		case OPT_JSON:
			json = true;
			openmetrics = false;
			main_asked = true;
			break;
		case OPT_TEXT:
			json = false;
			openmetrics = false;
			folded = false;
			main_asked = true;
			break;
		case OPT_HTML:
			html = optarg;
			break;
		case OPT_PERFETTO:
			perfetto = optarg;
			break;
		case OPT_CSV:
			csv = optarg;
			csv_main = !optarg;
			break;
		case OPT_OPENMETRICS:
		case OPT_PROMETHEUS:
			openmetrics = true;
			om_dialect = c == OPT_OPENMETRICS;
			json = false;
			main_asked = true;
			break;
		case OPT_DIFF:
			diff = true;
			break;
		case OPT_NO_SYMBOLS:
			symbols = false;
			break;
		case OPT_PATH:
			view.path_sel = optarg;
			break;
		case OPT_SINCE:
		case OPT_UNTIL:
			if (!parse_seconds(optarg, c == OPT_SINCE ? &view.since_s : &view.until_s)) {
				fprintf(stderr,
					"cryptrace report: --%s needs seconds (from the first "
					"process start), not '%s'\n",
					c == OPT_SINCE ? "since" : "until", optarg);
				return 2;
			}
			if (c == OPT_SINCE)
				view.has_since = true;
			else
				view.has_until = true;
			break;
		case OPT_RESOLUTION: {
			bool is_auto;

			if (!rp_parse_resolution(optarg, &is_auto, &view.resolution_ns)) {
				fprintf(stderr,
					"cryptrace report: --resolution needs a duration with ns, us, ms "
					"or s (like 10us), or auto, not '%s'\n",
					optarg);
				return 2;
			}
			view.has_resolution = !is_auto;
			break;
		}
		case OPT_FOLDED:
			folded = true;
			break;
		case OPT_FOLDED_WEIGHT:
			if (strcmp(optarg, "bytes") && strcmp(optarg, "time") && strcmp(optarg, "samples")) {
				fprintf(stderr,
					"cryptrace report: --folded-weight must be bytes, time or samples, "
					"not '%s'\n",
					optarg);
				return 2;
			}
			fold_weight = !strcmp(optarg, "time")      ? RP_FOLD_TIME
				      : !strcmp(optarg, "samples") ? RP_FOLD_SAMPLES
								   : RP_FOLD_BYTES;
			folded = true;
			break;
		case 'o':
			outpath = optarg;
			break;
		case OPT_PID:
			if (!parse_u64(optarg, &v)) {
				fprintf(stderr, "cryptrace report: --pid needs a number, not '%s'\n", optarg);
				return 2;
			}
			m.filter.pid = (long long)v;
			break;
		case OPT_CIPHER:
			m.filter.cipher_glob = optarg;
			break;
		case OPT_API:
			if (strcmp(optarg, "evp") && strcmp(optarg, "aes") && strcmp(optarg, "gcrypt") &&
			    strcmp(optarg, "gnutls") && strcmp(optarg, "tls") &&
			    strcmp(optarg, "cryptodev") && strcmp(optarg, "afalg") &&
			    strcmp(optarg, "ktls")) {
				fprintf(stderr,
					"cryptrace report: --api must be evp, aes, gcrypt, gnutls, tls, "
					"cryptodev, afalg or ktls, not '%s'\n",
					optarg);
				return 2;
			}
			m.filter.api = optarg;
			break;
		case OPT_MIN:
		case OPT_MAX:
			if (!parse_u64(optarg, &v)) {
				fprintf(stderr, "cryptrace report: --%s needs a byte count, not '%s'\n",
					c == OPT_MIN ? "min-size" : "max-size", optarg);
				return 2;
			}
			if (c == OPT_MIN)
				m.filter.min_size = v;
			else
				m.filter.max_size = v;
			break;
		case 'h':
			ct_usage_report(stdout);
			return 0;
		default:
			fprintf(stderr, "cryptrace report: unknown option '%s' (try --help)\n",
				argv[optind - 1] ? argv[optind - 1] : "?");
			return 2;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "cryptrace report: no trace file or directory given (try --help)\n");
		return 2;
	}
	if (m.filter.max_size && m.filter.min_size > m.filter.max_size) {
		fprintf(stderr, "cryptrace report: --min-size is larger than --max-size\n");
		return 2;
	}
	if (view.has_since && view.has_until && view.since_s > view.until_s) {
		fprintf(stderr, "cryptrace report: --since is later than --until\n");
		return 2;
	}
	if (diff && m.filter.pid >= 0) {
		/* The two sides are different runs, so one pid cannot name a process on both; a
		 * trace file is one process: naming it as A or B is the per-side selection. */
		fprintf(stderr,
			"cryptrace report: --pid does not apply to --diff (the two sides are "
			"different runs with different pids): give the process's own trace file, "
			"DIR/NAME.<pid>.ctrace, as A or B\n");
		rp_model_free(&m);
		return 2;
	}
	if (diff && openmetrics) {
		fprintf(stderr, "cryptrace report: --openmetrics and --prometheus do not apply to --diff\n");
		rp_model_free(&m);
		return 2;
	}
	if (diff) {
		int drc = run_diff(&m, &view, symbols, argv + optind, argc - optind, json, outpath);

		rp_model_free(&m);
		return drc;
	}

	int rc =
		rp_load_inputs(&m, (const char *const *)argv + optind, argc - optind, &view, symbols, stderr);

	if (rc < 0) { /* --path named nothing: no report rather than a misleading one */
		rp_model_free(&m);
		return 2;
	}
	if (m.nprocs == 0) { /* nothing readable: the error lines already said why */
		rp_model_free(&m);
		return rc ? rc : 2;
	}

	const char *const side_path[3] = { html, perfetto, csv };

	for (int k = 0; k < 3; k++) {
		if (!side_path[k])
			continue;

		FILE *f = open_out(side_path[k]);

		if (!f) {
			rc = 2;
			continue;
		}
		if (k == 0)
			rp_print_html(&m, &view, f);
		else if (k == 1)
			rp_print_perfetto(&m, &view, f);
		else
			rp_print_csv(&m, f);

		int wrc = close_out(f, side_path[k]);

		if (wrc > rc)
			rc = wrc;
	}
	if (!main_asked && !folded && !csv_main && (html || perfetto || csv)) {
		rp_model_free(&m);
		return rc;
	}

	FILE *out = open_out(outpath);

	if (!out) {
		rp_model_free(&m);
		return 2;
	}
	if (openmetrics && !folded)
		rp_print_openmetrics(&m, NULL, om_dialect, NULL, out);
	else if (csv_main && !main_asked && !folded)
		rp_print_csv(&m, out);
	else if (folded)
		rp_print_folded(&m, fold_weight, out);
	else if (json)
		rp_print_json(&m, out);
	else
		rp_print_text(&m, out);

	int wrc = close_out(out, outpath);

	if (wrc > rc)
		rc = wrc;
	rp_model_free(&m);
	return rc;
}
