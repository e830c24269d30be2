/* SPDX-License-Identifier: MIT */
/*
 * cmd_compare.c - `cryptrace compare`: run one command once per route per round, interleaved
 * (R1 R2 R1 R2 ...) so that machine noise spreads evenly over the routes, each run traced into
 * its own directory DIR/<route>/<round>/, then put the routes side by side per path (cipher and
 * direction: the implementation is what a route changes). A route that changes the program's
 * exit status, or its stdout with --check-output, is an error: a route must be invisible except
 * for speed.
 *
 * This file reads the options and the routes and drives the rest (compare.h): the runs
 * (compare_run.c), the figures across rounds (compare_figures.c), the tables (compare_print.c).
 */
#include <getopt.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "commands.h"
#include "tracer.h"
#include "aesni.h"

/* ---- routes ------------------------------------------------------------------------------- */

static const struct {
	const char *name, *spec;
} known_routes[] = {
	{ "native", NULL },         { "cpu", "aes-*=cpu" },
	{ "aesni", "aes-*=aesni" }, /* x86 only: elsewhere the spec is refused, naming cpu */
	{ "afalg", "aes-*=afalg" }, { "cryptodev", "aes-*=cryptodev" },
};

static bool add_route(struct cmp_options *o, const char *arg)
{
	if (o->nroutes == CMP_MAX_ROUTES) {
		ct_usage_error("compare", "at most %s routes", "8");
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
		ct_usage_error("compare",
			       "unknown route '%s' (native, cpu, afalg, cryptodev, or a "
			       "spec with '=')",
			       arg);
		return false;
	}
	if (!known)
		spec = arg;
	if (spec && !ct_route_spec_ok("compare", spec))
		return false;
	snprintf(r->name, sizeof(r->name), "%s", arg);
	r->spec = spec ? strdup(spec) : NULL;
	if (known)
		snprintf(r->label, sizeof(r->label), "%s", arg);
	else
		snprintf(r->label, sizeof(r->label), "route%d", (o->nroutes + 1) % 100);
	for (int i = 0; i < o->nroutes; i++) {
		if (!strcmp(o->routes[i].label, r->label)) {
			ct_usage_error("compare", "route '%s' given twice", arg);
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
		add_route(o, CT_AESNI_TARGET); /* "aesni" on x86, as its tables always said */
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
				return ct_usage_error("compare", "--repeat wants 1..100, not '%s'", optarg);
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
				return ct_usage_error("compare", "empty output directory%s", "");
			o->outdir = optarg;
			break;
		case 'h':
			ct_usage_compare(stdout);
			return 0;
		default:
			return ct_option_error("compare", c, argv);
		}
	}
	if (optind >= argc)
		return ct_usage_error("compare", "missing command to run%s", "");
	o->cmd = argv + optind;
	if (o->nroutes == 0)
		default_routes(o);
	if (o->nroutes == 1 && !o->json)
		fprintf(stderr,
			"cryptrace compare: only one route (%s): nothing to compare it "
			"with\n",
			o->routes[0].name);
	return -1;
}

/* ---- the command -------------------------------------------------------------------------- */

int command_compare(int argc, char **argv)
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
	if (!cmp_prepare_dirs(&s, why, sizeof(why))) {
		fprintf(stderr, "cryptrace compare: %s\n", why);
		return CT_EXIT_USAGE;
	}

	int stopped = cmp_run_rounds(&s, lib);

	if (stopped >= 0)
		return stopped;
	cmp_collect_keys(&s);

	char *errors[CMP_MAX_ROUTES];
	int nerrors = cmp_check_routes(&s, errors);

	if (opts.json)
		cmp_print_json(&s, (const char **)errors, nerrors, stdout);
	else
		cmp_print_text(&s, stdout);
	fflush(stdout);

	for (int r = 1; r < opts.nroutes; r++) {
		bool inactive = false, routed = false;

		for (int i = 0; i < opts.rounds; i++) {
			const struct cmp_run *run = cmp_run_at(&s, i, r);

			inactive |= run->routes_inactive;
			for (size_t j = 0; j < run->nfigs; j++)
				routed |= run->figs[j].routed;
		}
		if (opts.routes[r].spec && !routed && s.nkeys)
			fprintf(stderr,
				"cryptrace compare: note: route %s moved no work\n  (no "
				"routed path in its traces%s)\n",
				opts.routes[r].label,
				inactive ? "; this preload does not implement routes" : "");
	}
	for (int i = 0; i < nerrors; i++) {
		fprintf(stderr, "cryptrace compare: %s\n", errors[i]);
		free(errors[i]);
	}

	int status0 = cmp_run_at(&s, 0, 0)->status;

	for (int i = 0; i < opts.rounds * opts.nroutes; i++)
		free(s.runs[i].figs);
	free(s.runs);
	free(s.keys);
	if (nerrors)
		return 1;
	if (status0)
		fprintf(stderr,
			"cryptrace compare: note: %s exited %d under every route (its "
			"stderr: %s/%s/1/stderr)\n",
			opts.cmd[0], status0, s.outdir, opts.routes[0].label);
	return 0;
}
