/* SPDX-License-Identifier: MIT */
/*
 * compare.h - what the pieces of `cryptrace compare` hand each other. cmd_compare.c reads the
 * options and drives the rest: compare_run.c runs CMD once per route per round and reads each
 * run's traces into figures per (cipher, direction); compare_figures.c puts the rounds together
 * (median, min-max, the ratio to the first route); compare_print.c prints them as tables or
 * JSON.
 */
#ifndef CT_COMPARE_H
#define CT_COMPARE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "trace_format.h"

#define CMP_MAX_ROUTES 8
#define CMP_MAX_ROUNDS 100
#define CMP_MAX_ROWS 12

struct cmp_route {
	char name[64];    /* as given: "native", "aesni" or a full spec */
	const char *spec; /* CRYPTRACE_ROUTE, NULL for native */
	char label[16];   /* table column / directory name */
};

struct cmp_options {
	struct cmp_route routes[CMP_MAX_ROUTES];
	int nroutes;
	int rounds;
	bool check_output, json, by_size;
	const char *outdir;
	char **cmd;
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

/* A row of the comparison: one (cipher, direction) seen in some run. */
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

/* A figure over the rounds. */
struct stat3 {
	bool known;
	double med, min, max;
};

/* Per route, for one key (bucket -1: the whole path, else one request-size bucket). */
struct cmp_cell {
	bool present;
	char impl[64];
	bool routed;
	struct stat3 wall_bps, cpu_bps, calls, ratio;
};

/* compare_run.c */
/* Creates DIR (default ./cryptrace-compare-<time>) and DIR/<route>/<round> for every run, each
 * new or free of traces; false with a one-line reason. */
bool cmp_prepare_dirs(struct cmp_state *s, char *why, size_t why_cap);
/* Runs every round of every route, interleaved, and reads each run's figures. Returns -1 when
 * all ran, else the status to exit with (CMD could not be started, or 130: interrupted). */
int cmp_run_rounds(struct cmp_state *s, const char *lib);
/* One message (malloc'ed) per route that changed CMD's exit status or, with --check-output,
 * its stdout, against the first route; returns how many. */
int cmp_check_routes(const struct cmp_state *s, char **errors);

/* compare_figures.c */
struct cmp_run *cmp_run_at(const struct cmp_state *s, int round, int route);
/* The figure of (cipher, dir) in a run, or NULL. */
struct cmp_fig *cmp_find_fig(const struct cmp_run *r, const char *cipher, unsigned dir);
/* The rows: every key of every run, busiest first, at most CMP_MAX_ROWS; the others (noise)
 * counted in s->hidden. */
void cmp_collect_keys(struct cmp_state *s);
void cmp_cell_of(const struct cmp_state *s, const struct cmp_key *k, int bucket, int route,
		 struct cmp_cell *c);
/* Marks the request-size buckets in which k made calls in any run; false when none. */
bool cmp_busiest_buckets(const struct cmp_state *s, const struct cmp_key *k, bool *used);
double cmp_median_elapsed(const struct cmp_state *s, int route);

/* compare_print.c */
void cmp_print_text(const struct cmp_state *s, FILE *out);
void cmp_print_json(const struct cmp_state *s, const char **errors, int nerrors, FILE *out);

#endif
