/* SPDX-License-Identifier: MIT */
/* svg.h - inline SVG charts for the HTML report (svg.c). */
#ifndef CT_REPORT_SVG_H
#define CT_REPORT_SVG_H

#include "views.h"

struct rp_bar {
	char label[160];
	double value;
	const char *color;
};

/* The colour of merged path i, the same in every chart and legend. */
const char *rp_svg_color(size_t i);
/* "412.3 MB/s", "2.10 GB/s", "-" when < 0 */
void rp_svg_rate(char *buf, size_t cap, double bps);
void rp_svg_throughput(const struct rp_model *m, FILE *f);
void rp_svg_latency(const struct rp_path *p, size_t index, FILE *f);
void rp_svg_bars(const struct rp_bar *bars, size_t n, FILE *f);
/* The same with the <svg> element's class attribute (rp_svg_bars: "chart bars") */
void rp_svg_bars_class(const struct rp_bar *bars, size_t n, const char *cls, FILE *f);
/* false when the process has no per-call operation in the selection */
bool rp_svg_timeline(const struct rp_model *m, const struct rp_view *v, const struct rp_proc *p, FILE *f);

#endif
