/* SPDX-License-Identifier: MIT */
/*
 * html_kernel.c - the HTML report's kernel-interface section (only when the trace has cryptodev
 * or AF_ALG paths), the text report's "Kernel interfaces" in the same shape (kernel.c): per path
 * the session set-up ("init") and teardown ("deinit") cost, syscalls per operation, spliced
 * against copied requests, and per request size one operation's time and throughput, alone and
 * with the session cost spread over the operations. The figures are kernel.c's; each carries them in
 * data-* attributes (full precision, empty when unknown) so tests can read them from the DOM.
 */
#include "svg.h"

static void attr_num(FILE *f, const char *name, double v)
{
	fprintf(f, " %s=\"", name);
	if (v >= 0)
		fprintf(f, "%.17g", v);
	fputc('"', f);
}

static void cell_ns(FILE *f, double ns)
{
	char b[32];
	fprintf(f, "<td class=\"n\">%s</td>", rp_fmt_ns(b, sizeof(b), ns));
}

static void kernel_path(const struct rp_model *m, size_t i, FILE *f)
{
	const struct rp_path *p = &m->paths[i];
	struct rp_kernel_fig k;
	char label[512], b1[32], b2[32];
	rp_kernel_figures(p, &k);
	rp_path_label(p, label, sizeof(label));
	fprintf(f, "<div class=\"kpath\" data-path=\"%zu\" data-label=\"", i + 1);
	rp_html_cstr(f, label);
	fprintf(f,
		"\" data-setup-calls=\"%llu\" data-teardown-calls=\"%llu\" data-ops=\"%llu\" "
		"data-spliced=\"%llu\" data-copied=\"%llu\"",
		(unsigned long long)k.setup_calls, (unsigned long long)k.teardown_calls,
		(unsigned long long)k.ops, (unsigned long long)k.spliced, (unsigned long long)k.copied);
	attr_num(f, "data-setup-ns", k.setup_ns);
	attr_num(f, "data-teardown-ns", k.teardown_ns);
	attr_num(f, "data-syscalls-per-op", k.syscalls_per_op);
	attr_num(f, "data-session-ns-per-op", k.session_ns_per_op);
	fprintf(f, "><h3><span class=\"sw\" style=\"background:%s\"></span>#%zu ", rp_svg_color(i), i + 1);
	rp_html_cstr(f, label);
	fputs("</h3>\n<table class=\"ksum\"><tr><th>init (session set-up)</th><th>deinit (teardown)"
	      "</th><th class=\"n\">operations</th><th class=\"n\">syscalls per operation</th>"
	      "<th class=\"n\">spliced</th><th class=\"n\">copied</th></tr>\n<tr>",
	      f);
	fprintf(f, "<td>%s x %s</td>", rp_fmt_count(b1, sizeof(b1), (double)k.setup_calls),
		rp_fmt_ns(b2, sizeof(b2), k.setup_ns));
	fprintf(f, "<td>%s x %s</td>", rp_fmt_count(b1, sizeof(b1), (double)k.teardown_calls),
		rp_fmt_ns(b2, sizeof(b2), k.teardown_ns));
	fprintf(f, "<td class=\"n\">%llu</td>", (unsigned long long)k.ops);
	rp_html_cell_num(f, k.syscalls_per_op, 2, k.syscalls_per_op >= 0);
	fprintf(f, "<td class=\"n\">%llu</td><td class=\"n\">%llu</td></tr></table>\n",
		(unsigned long long)k.spliced, (unsigned long long)k.copied);
	fputs("<table class=\"kops\"><tr><th class=\"n\">request size bucket</th><th class=\"n\">calls"
	      "</th><th class=\"n\">time per operation</th><th class=\"n\">MB/s, operation alone</th>"
	      "<th class=\"n\">MB/s with init + deinit</th></tr>\n",
	      f);
	for (unsigned b = 0; b < CT_SIZE_BUCKETS; b++) {
		const struct ct_size_bucket *sb = &p->st.size[b];
		if (!sb->calls)
			continue;
		double op = rp_kernel_op_ns(p, b), bps = rp_kernel_op_bps(p, b);
		double full = rp_kernel_full_bps(p, b);
		fprintf(f, "<tr class=\"kop\" data-size=\"%llu\" data-calls=\"%llu\"",
			(unsigned long long)ct_size_bucket_low(b), (unsigned long long)sb->calls);
		attr_num(f, "data-op-ns", op);
		attr_num(f, "data-op-bps", bps);
		attr_num(f, "data-full-bps", full);
		fprintf(f, "><td class=\"n\">%llu+</td><td class=\"n\">%llu</td>",
			(unsigned long long)ct_size_bucket_low(b), (unsigned long long)sb->calls);
		cell_ns(f, op);
		rp_html_cell_num(f, bps / 1e6, 1, bps > 0);
		rp_html_cell_num(f, full / 1e6, 1, full > 0);
		fputs("</tr>\n", f);
	}
	fputs("</table></div>\n", f);
}

void rp_html_kernel(const struct rp_model *m, FILE *f)
{
	if (!rp_model_has_kernel(m))
		return;
	fputs("<section id=\"kernel\"><h2>Kernel interfaces</h2>\n<p class=\"note\">Per /dev/crypto "
	      "or AF_ALG path, the way the cryptodev/AF_ALG comparison measured them: what a session "
	      "set-up (init: CIOCGSESSION, or socket + bind + setsockopt + accept) and a teardown "
	      "(deinit: CIOCFSESSION, or closing the op socket) cost, how many syscalls each "
	      "operation made, how many requests were spliced rather than copied, and per request "
	      "size the time of one operation and its throughput, alone and with the path's set-up "
	      "and teardown time spread over its operations.</p>\n",
	      f);
	for (size_t i = 0; i < m->npaths; i++)
		if (rp_path_is_kernel(&m->paths[i]))
			kernel_path(m, i, f);
	fputs("</section>\n", f);
}
