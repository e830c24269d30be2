/* SPDX-License-Identifier: MIT */
/*
 * cli.c - `cryptrace report` option parsing and the end-of-run summary: load, merge, evaluate
 * findings, print. Returns codes, never exits.
 */
#include "report.h"

#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

static const char usage[] =
	"usage: cryptrace report [options] FILE|DIR...\n"
	"Reads cryptrace trace files (a DIR means every *.ctrace file in it), merges the processes\n"
	"and prints per-path figures, throughput by request size, events and findings.\n"
	"  --text            human-readable report (default)\n"
	"  --json            one JSON object for scripts (see docs/report.md)\n"
	"  --folded          folded stacks (call site -> path) for flamegraph.pl\n"
	"  --folded-weight bytes|time  what a --folded line weighs (default bytes)\n"
	"  -o FILE           write the report to FILE instead of stdout\n"
	"  --pid N           only the process with this pid\n"
	"  --cipher GLOB     only paths whose cipher matches, e.g. 'aes-*-cbc'\n"
	"  --api NAME        only paths of this API: evp, aes, cryptodev, afalg\n"
	"  --min-size N      only requests of at least N bytes (by size bucket)\n"
	"  --max-size N      only requests of at most N bytes (by size bucket)\n"
	"  -h, --help        this help\n"
	"Exit status: 0 ok, 1 some input was damaged (what was read before is reported),\n"
	"2 usage error or unreadable input.\n";

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

static int load_all(struct rp_model *m, const char *const *paths, int n, FILE *err)
{
	int worst = 0;
	for (int i = 0; i < n; i++) {
		int rc = rp_load_path(m, paths[i], err);
		if (rc > worst)
			worst = rc;
	}
	rp_model_merge(m);
	rp_findings_evaluate(m);
	return worst;
}

int ct_report_main(int argc, char **argv)
{
	enum { OPT_JSON = 256, OPT_TEXT, OPT_PID, OPT_CIPHER, OPT_API, OPT_MIN, OPT_MAX, OPT_FOLDED,
	       OPT_FOLDED_WEIGHT };
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
		{ "output", required_argument, NULL, 'o' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	struct rp_model m;
	rp_model_init(&m);
	bool json = false, folded = false;
	enum rp_folded_weight fold_weight = RP_FOLD_BYTES;
	const char *outpath = NULL;
	uint64_t v;
	int c;
	optind = 0; /* getopt state is global: reset it for each call (the launcher, the tests) */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
		switch (c) {
		case OPT_JSON: json = true; break;
		case OPT_TEXT: json = false; folded = false; break;
		case OPT_FOLDED: folded = true; break;
		case OPT_FOLDED_WEIGHT:
			if (strcmp(optarg, "bytes") && strcmp(optarg, "time")) {
				fprintf(stderr, "cryptrace report: --folded-weight must be bytes or time, "
						"not '%s'\n", optarg);
				return 2;
			}
			fold_weight = strcmp(optarg, "time") ? RP_FOLD_BYTES : RP_FOLD_TIME;
			folded = true;
			break;
		case 'o': outpath = optarg; break;
		case OPT_PID:
			if (!parse_u64(optarg, &v)) {
				fprintf(stderr, "cryptrace report: --pid needs a number, not '%s'\n", optarg);
				return 2;
			}
			m.filter.pid = (long long)v;
			break;
		case OPT_CIPHER: m.filter.cipher_glob = optarg; break;
		case OPT_API:
			if (strcmp(optarg, "evp") && strcmp(optarg, "aes") && strcmp(optarg, "cryptodev") &&
			    strcmp(optarg, "afalg")) {
				fprintf(stderr, "cryptrace report: --api must be evp, aes, cryptodev or afalg, not "
						"'%s'\n", optarg);
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
			fputs(usage, stdout);
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
	int rc = load_all(&m, (const char *const *)argv + optind, argc - optind, stderr);
	if (m.nprocs == 0) { /* nothing readable: the error lines already said why */
		rp_model_free(&m);
		return rc ? rc : 2;
	}
	FILE *out = stdout;
	if (outpath) {
		out = fopen(outpath, "w");
		if (!out) {
			fprintf(stderr, "cryptrace report: %s: %s\n", outpath, strerror(errno));
			rp_model_free(&m);
			return 2;
		}
	}
	if (folded)
		rp_print_folded(&m, fold_weight, out);
	else if (json)
		rp_print_json(&m, out);
	else
		rp_print_text(&m, out);
	if (fflush(out) != 0 || ferror(out)) {
		fprintf(stderr, "cryptrace report: %s: write error: %s\n", outpath ? outpath : "stdout",
			strerror(errno));
		rc = 2;
	}
	if (outpath)
		fclose(out);
	rp_model_free(&m);
	return rc;
}

int ct_report_summary(const char *const *paths, int npaths, FILE *out)
{
	struct rp_model m;
	rp_model_init(&m);
	int rc = load_all(&m, paths, npaths, out);
	if (m.nprocs)
		rp_print_summary(&m, out);
	rp_model_free(&m);
	return rc;
}
