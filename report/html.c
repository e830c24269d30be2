/* SPDX-License-Identifier: MIT */
/*
 * html.c - `cryptrace report --html FILE`: one self-contained page (inline CSS and SVG, no script,
 * no network, no web fonts) built from the merged model the text report prints: findings first
 * with their evidence, throughput against request size, the kernel interfaces (html_kernel.c),
 * latency, time shares, failures with call sites, processes and the per-call timeline. Readable
 * at 1280x800 and printable (@media print).
 */
#include "svg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char css[] =
	":root{--fg:#1d2330;--mute:#5b6475;--line:#d9dde5;--bg:#f6f7f9;--card:#fff;"
	"--err:#c0392b;--warn:#d68910;--info:#2e86c1}\n"
	"*{box-sizing:border-box}\n"
	"body{margin:0;background:var(--bg);color:var(--fg);font:14px/1.45 system-ui,-apple-system,"
	"'Segoe UI',Roboto,'Helvetica Neue',Arial,sans-serif}\n"
	"main{max-width:1200px;margin:0 auto;padding:8px 24px 40px}\n"
	"header{background:#1d2330;color:#fff;padding:10px 24px}\n"
	"header .in{max-width:1200px;margin:0 auto;display:flex;flex-wrap:wrap;align-items:baseline;gap:4px 18px}\n"
	"header h1{margin:0;font-size:22px;font-weight:600}\n"
	"header p{margin:0;color:#c8cfdc}\n"
	"nav{margin-left:auto}nav a{color:#9cc3ff;margin-right:14px;text-decoration:none;font-size:13px}\n"
	"section{background:var(--card);border:1px solid var(--line);border-radius:8px;"
	"padding:12px 18px;margin:12px 0}\n"
	"h2{font-size:17px;margin:0 0 10px}h3{font-size:14px;margin:12px 0 6px}\n"
	".finding{border-left:5px solid var(--info);background:#fbfcfe;padding:8px 12px;margin:8px 0;"
	"border-radius:4px}\n"
	".finding.error{border-color:var(--err)}.finding.warning{border-color:var(--warn)}\n"
	".finding .kind{font-weight:600}.sev{font-size:11px;text-transform:uppercase;padding:1px 6px;"
	"border-radius:3px;color:#fff;background:var(--info);margin-right:6px}\n"
	".sev.error{background:var(--err)}.sev.warning{background:var(--warn)}\n"
	".evidence,.fix{color:var(--mute);margin-top:4px}\n"
	".evidence b,.fix b{color:var(--fg)}\n"
	"table{border-collapse:collapse;width:100%;font-size:12.5px;margin-top:8px}\n"
	"th,td{border-bottom:1px solid var(--line);padding:3px 6px;text-align:left;vertical-align:top}\n"
	"th{background:#eef1f5;font-weight:600}td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}\n"
	"pre{margin:0;font:11.5px/1.35 ui-monospace,'DejaVu Sans Mono',Menlo,Consolas,monospace;"
	"white-space:pre-wrap;word-break:break-all}\n"
	".sw{display:inline-block;width:11px;height:11px;border-radius:2px;margin-right:5px;"
	"vertical-align:-1px}\n"
	".legend{display:flex;flex-wrap:wrap;gap:4px 16px;font-size:12.5px;margin:4px 0 6px}\n"
	".legend .key{color:var(--mute)}\n"
	"svg.chart{width:100%;height:auto;display:block}\n"
	"svg text{font:11px system-ui,Arial,sans-serif;fill:#3b4252}\n"
	"svg .ylab{text-anchor:end}svg .xlab{text-anchor:middle}svg .barlab{text-anchor:end;font-size:12px}\n"
	"svg .barval{font-size:12px}svg .axis-title{text-anchor:middle;font-size:12px;fill:#5b6475}\n"
	"svg .major{stroke:#d3d8e0;stroke-width:1}svg .minor{stroke:#eef0f4;stroke-width:1}\n"
	"svg .tick{stroke:#8a93a3}svg .frame{fill:none;stroke:#b8bfcb}\n"
	"svg polyline{fill:none;stroke-width:2}svg polyline.cpu{stroke-dasharray:6 4;stroke-width:1.6}\n"
	"svg .cpu-mark{fill:none;stroke-width:2}svg .lane{fill:#f3f5f8}\n"
	"svg .pmark{stroke:#1d2330;stroke-dasharray:3 3}svg .pmark-lab{font-size:10px}\n"
	".grid2{display:grid;grid-template-columns:1fr 1fr;gap:8px 18px}\n"
	".grid2 figure{margin:0}.grid2 figcaption{font-size:12.5px;margin-bottom:2px}\n"
	".none,.note{color:var(--mute)}\n"
	"footer{color:var(--mute);font-size:12px;max-width:1200px;margin:0 auto;padding:0 24px 30px}\n"
	"@media (max-width:900px){.grid2{grid-template-columns:1fr}}\n"
	"@media print{body{background:#fff;font-size:11px}header{background:#fff;color:#000;"
	"border-bottom:2px solid #000;padding:0 0 6px}header p{color:#333}nav{display:none}"
	"main{padding:0;max-width:none}section{border:none;padding:0;margin:12px 0;"
	"break-inside:auto}svg.chart,figure,.finding,h2,h3{break-inside:avoid;break-after:auto}"
	"h2,h3{break-after:avoid}table{font-size:10px}.grid2{grid-template-columns:1fr 1fr}"
	"tr{break-inside:avoid}*{-webkit-print-color-adjust:exact;print-color-adjust:exact}"
	"@page{margin:14mm}}\n";

void rp_html_cell_num(FILE *f, double v, int decimals, bool known)
{
	if (known)
		fprintf(f, "<td class=\"n\">%.*f</td>", decimals, v);
	else
		fputs("<td class=\"n\">-</td>", f);
}

static void put_ns(FILE *f, double ns, bool known)
{
	char b[32];
	fputs(known ? rp_fmt_ns(b, sizeof(b), ns) : "-", f);
}

static void put_argv(FILE *f, const struct rp_proc *p)
{
	unsigned n = rp_str_nparts(p->hdr.argv, '\0');
	for (unsigned i = 0; i < n && i < 24; i++) {
		struct ct_str a = rp_str_part(p->hdr.argv, '\0', i);
		if (i)
			fputc(' ', f);
		rp_html_str(f, a.p, a.len);
	}
	if (n > 24)
		fputs(" ...", f);
	if (!n)
		rp_html_str(f, p->hdr.exe.p, p->hdr.exe.len);
}

static void path_cell(FILE *f, const struct rp_model *m, size_t i)
{
	char label[512];
	rp_path_label(&m->paths[i], label, sizeof(label));
	fprintf(f, "<span class=\"sw\" style=\"background:%s\"></span>", rp_svg_color(i));
	rp_html_cstr(f, label);
	if (m->paths[i].def.key_bits)
		fprintf(f, " <span class=\"note\">(%u-bit key, %s)</span>", m->paths[i].def.key_bits,
			ct_entry_name(m->paths[i].def.entry));
}

static void section_findings(const struct rp_model *m, FILE *f)
{
	fputs("<section id=\"findings\"><h2>Findings</h2>\n", f);
	if (!m->nfindings)
		fputs("<p class=\"none\">No findings: nothing looked wrong in the selected paths.</p>\n", f);
	/* errors first, then warnings, then information */
	for (int sev = RP_ERROR; sev >= RP_INFO; sev--) {
		for (size_t i = 0; i < m->nfindings; i++) {
			const struct rp_finding *x = &m->findings[i];
			if ((int)x->severity != sev)
				continue;
			const char *sn = rp_severity_name(x->severity);
			fprintf(f, "<div class=\"finding %s\" data-kind=\"", sn);
			rp_html_cstr(f, x->kind);
			fprintf(f, "\"><span class=\"sev %s\">%s</span><span class=\"kind\">", sn, sn);
			rp_html_cstr(f, x->kind);
			fputs("</span>", f);
			if (x->pid)
				fprintf(f, " <span class=\"note\">pid %u</span>", x->pid);
			fputs("<div>", f);
			rp_html_cstr(f, x->message);
			fputs("</div>", f);
			if (x->evidence[0]) {
				fputs("<div class=\"evidence\"><b>Evidence:</b> ", f);
				rp_html_cstr(f, x->evidence);
				fputs("</div>", f);
			}
			if (x->fix[0]) {
				fputs("<div class=\"fix\"><b>Fix:</b> ", f);
				rp_html_cstr(f, x->fix);
				fputs("</div>", f);
			}
			fputs("</div>\n", f);
		}
	}
	fputs("</section>\n", f);
}

static void section_throughput(const struct rp_model *m, FILE *f)
{
	fputs("<section id=\"throughput\"><h2>Throughput by request size</h2>\n<div class=\"legend\">", f);
	for (size_t i = 0; i < m->npaths; i++) {
		fputs("<span>", f);
		fprintf(f, "#%zu ", i + 1);
		path_cell(f, m, i);
		fputs("</span>", f);
	}
	fputs("<span class=\"key\">&#9679; solid line: wall-clock throughput &nbsp; &#9633; dashed "
	      "line: CPU throughput (user + sys)</span></div>\n",
	      f);
	rp_svg_throughput(m, f);
	fputs("<h3>Cost per path</h3><table><tr><th>#</th><th>path</th><th class=\"n\">calls</th>"
	      "<th class=\"n\">bytes</th><th class=\"n\">errors</th><th class=\"n\">wall</th>"
	      "<th class=\"n\">user</th><th class=\"n\">sys</th><th class=\"n\">wall MB/s</th>"
	      "<th class=\"n\">CPU MB/s</th><th class=\"n\">cycles/B</th><th class=\"n\">p50</th>"
	      "<th class=\"n\">p99</th><th class=\"n\">timed</th><th class=\"n\">procs</th></tr>\n",
	      f);
	for (size_t i = 0; i < m->npaths; i++) {
		const struct rp_path *p = &m->paths[i];
		const struct rp_derived *d = &p->d;
		char b[32];
		double w = rp_path_wall_bps(p), c = rp_path_cpu_bps(p);
		fprintf(f, "<tr data-path=\"%zu\"><td>%zu</td><td>", i + 1, i + 1);
		path_cell(f, m, i);
		fprintf(f, "</td><td class=\"n\">%llu</td><td class=\"n\">%s</td><td class=\"n\">%llu</td>",
			(unsigned long long)p->st.calls, rp_fmt_bytes(b, sizeof(b), (double)p->st.bytes),
			(unsigned long long)p->st.errors);
		fputs("<td class=\"n\">", f);
		put_ns(f, d->wall_ns, d->wall_known);
		fputs("</td><td class=\"n\">", f);
		put_ns(f, d->user_ns, d->cpu_known);
		fputs("</td><td class=\"n\">", f);
		put_ns(f, d->sys_ns, d->cpu_known);
		fputs("</td>", f);
		rp_html_cell_num(f, w / 1e6, 1, w > 0);
		rp_html_cell_num(f, c / 1e6, 1, c > 0);
		rp_html_cell_num(f, d->cycles_per_byte, 2, d->cycles_per_byte >= 0);
		fputs("<td class=\"n\">", f);
		put_ns(f, (double)d->p50_ns, d->lat_known);
		fputs("</td><td class=\"n\">", f);
		put_ns(f, (double)d->p99_ns, d->lat_known);
		fprintf(f, "</td><td class=\"n\">%s</td><td class=\"n\">%zu</td></tr>\n",
			rp_fmt_count(b, sizeof(b), (double)p->st.timed_calls), p->pids.n);
	}
	fputs("</table>\n", f);
	/* the chart's numbers as a table too: print, copy, screen readers */
	fputs("<h3>By request size (MB/s, wall / CPU)</h3><table><tr><th>#</th><th class=\"n\">size "
	      "bucket</th><th class=\"n\">calls</th><th class=\"n\">bytes</th><th class=\"n\">wall MB/s"
	      "</th><th class=\"n\">CPU MB/s</th></tr>\n",
	      f);
	for (size_t i = 0; i < m->npaths; i++) {
		const struct rp_path *p = &m->paths[i];
		for (unsigned b = 0; b < CT_SIZE_BUCKETS; b++) {
			const struct ct_size_bucket *sb = &p->st.size[b];
			if (!sb->calls)
				continue;
			double w = rp_bucket_wall_bps(p, b), c = rp_bucket_cpu_bps(p, b);
			char bb[32];
			fprintf(f,
				"<tr><td><span class=\"sw\" style=\"background:%s\"></span>%zu</td>"
				"<td class=\"n\">%llu+</td><td class=\"n\">%llu</td><td class=\"n\">%s</td>",
				rp_svg_color(i), i + 1, (unsigned long long)ct_size_bucket_low(b),
				(unsigned long long)sb->calls,
				rp_fmt_bytes(bb, sizeof(bb), (double)sb->bytes));
			rp_html_cell_num(f, w / 1e6, 1, w > 0);
			rp_html_cell_num(f, c / 1e6, 1, c > 0);
			fputs("</tr>\n", f);
		}
	}
	fputs("</table></section>\n", f);
}

static void section_latency(const struct rp_model *m, FILE *f)
{
	fputs("<section id=\"latency\"><h2>Latency per call</h2>\n", f);
	size_t shown = 0;
	for (size_t i = 0; i < m->npaths; i++)
		shown += m->paths[i].d.lat_known;
	if (!shown) {
		fputs("<p class=\"none\">No call was timed.</p></section>\n", f);
		return;
	}
	fputs("<div class=\"grid2\">\n", f);
	for (size_t i = 0; i < m->npaths; i++) {
		const struct rp_path *p = &m->paths[i];
		if (!p->d.lat_known)
			continue;
		char b1[32], b2[32];
		fprintf(f, "<figure data-path=\"%zu\"><figcaption>#%zu ", i + 1, i + 1);
		path_cell(f, m, i);
		fprintf(f, " &mdash; p50 %s, p99 %s</figcaption>\n",
			rp_fmt_ns(b1, sizeof(b1), (double)p->d.p50_ns),
			rp_fmt_ns(b2, sizeof(b2), (double)p->d.p99_ns));
		rp_svg_latency(p, i, f);
		fputs("</figure>\n", f);
	}
	fputs("</div></section>\n", f);
}

static void section_shares(const struct rp_model *m, FILE *f)
{
	fputs("<section id=\"shares\"><h2>Share of wall time in cipher calls</h2>\n", f);
	for (size_t i = 0; i < m->npaths; i++)
		if (rp_path_io_wait(&m->paths[i])) {
			fputs("<p>TLS record paths wait for their peer: they count their CPU time here, not "
			      "their wall time.</p>\n",
			      f);
			break;
		}
	fputs("<h3>By path</h3>\n", f);
	size_t n = m->npaths;
	struct rp_bar *bars = calloc(n + m->nprocs + 1, sizeof(*bars));
	if (!bars) {
		fputs("</section>\n", f);
		return;
	}
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		const struct rp_path *p = &m->paths[i];
		bool known; /* a TLS record path's waiting is not time spent on crypto */
		double cost = rp_path_cost_ns(p, &known);
		if (!known)
			continue;
		char label[512];
		rp_path_label(p, label, sizeof(label));
		snprintf(bars[k].label, sizeof(bars[k].label), "#%zu %.120s", i + 1, label);
		bars[k].value = cost;
		bars[k++].color = rp_svg_color(i);
	}
	rp_svg_bars(bars, k, f);
	fputs("<h3>By process</h3>\n", f);
	k = 0;
	for (size_t i = 0; i < m->nprocs; i++) {
		const struct rp_proc *p = &m->procs[i];
		if (!rp_proc_selected(m, p))
			continue;
		double wall = 0;
		for (size_t j = 0; j < p->npaths; j++) {
			bool known;
			double cost = rp_path_cost_ns(&p->paths[j], &known);
			if (rp_path_selected(m, &p->paths[j]) && known)
				wall += cost;
		}
		if (wall <= 0)
			continue;
		struct ct_str exe = rp_str_part(p->hdr.argv, '\0', 0);
		if (!exe.len)
			exe = p->hdr.exe;
		snprintf(bars[k].label, sizeof(bars[k].label), "pid %u %.*s", p->hdr.pid,
			 (int)(exe.len > 60 ? 60 : exe.len), exe.p);
		bars[k].value = wall;
		bars[k++].color = "#4e79a7";
	}
	rp_svg_bars(bars, k, f);
	free(bars);
	fputs("<p class=\"note\">Shares of the estimated wall time spent inside the traced cipher calls "
	      "(all selected processes added up), not of the programs' run time. Only cipher calls "
	      "are measured: digests, MACs and key exchange are not in them.</p></section>\n",
	      f);
}

static void section_failures(const struct rp_model *m, FILE *f)
{
	fputs("<section id=\"failures\" class=\"long\"><h2>Failures and fallbacks</h2>\n", f);
	size_t n = 0;
	for (size_t i = 0; i < m->nevents; i++)
		n += rp_event_is_failure(&m->events[i].ev);
	if (!n) {
		fputs("<p class=\"none\">No failed call, failed request or fallback was seen.</p></section>\n",
		      f);
		return;
	}
	fputs("<table><tr><th class=\"n\">count</th><th>kind</th><th>call</th><th>result</th>"
	      "<th>detail</th><th>call site</th><th>pids</th></tr>\n",
	      f);
	for (size_t i = 0; i < m->nevents; i++) {
		const struct rp_event *e = &m->events[i];
		if (!rp_event_is_failure(&e->ev))
			continue;
		char eb[32];
		fprintf(f, "<tr class=\"failure\"><td class=\"n\">%llu</td><td>%s</td><td>",
			(unsigned long long)e->ev.count, ct_event_kind_name(e->ev.kind));
		rp_html_str(f, e->ev.call.p, e->ev.call.len);
		fputs("</td><td>", f);
		if (e->ev.err)
			rp_html_cstr(f, rp_errno_name(e->ev.err, eb, sizeof(eb)));
		else
			fprintf(f, "ret=%lld", (long long)e->ev.ret);
		fputs("</td><td><pre>", f);
		rp_html_str(f, e->ev.detail.p, e->ev.detail.len);
		fputs("</pre></td><td><pre>", f);
		if (e->ev.callsite.len)
			rp_html_str(f, e->ev.callsite.p, e->ev.callsite.len);
		else
			fputs("-", f);
		fputs("</pre></td><td>", f);
		for (size_t k = 0; k < e->pids.n && k < 8; k++)
			fprintf(f, "%s%u", k ? " " : "", e->pids.v[k]);
		if (e->pids.n > 8)
			fputs(" ...", f);
		fputs("</td></tr>\n", f);
	}
	fputs("</table></section>\n", f);
}

static void section_processes(const struct rp_model *m, FILE *f)
{
	fputs("<section id=\"processes\" class=\"long\"><h2>Processes</h2><table><tr><th>pid</th>"
	      "<th>ppid</th><th>trace</th><th>libcrypto</th><th class=\"n\">cipher calls</th>"
	      "<th class=\"n\">bytes</th><th class=\"n\">user CPU</th><th class=\"n\">sys CPU</th>"
	      "<th>mode</th><th>command</th></tr>\n",
	      f);
	for (size_t i = 0; i < m->nprocs; i++) {
		const struct rp_proc *p = &m->procs[i];
		if (!rp_proc_selected(m, p))
			continue;
		uint64_t calls = 0, bytes = 0;
		for (size_t j = 0; j < p->npaths; j++)
			if (rp_path_selected(m, &p->paths[j])) {
				calls += p->paths[j].st.calls;
				bytes += p->paths[j].st.bytes;
			}
		enum rp_status st = rp_proc_status(p);
		char b[32];
		fprintf(f, "<tr class=\"proc\" data-pid=\"%u\"><td>%u</td><td>%u</td><td>%s", p->hdr.pid,
			p->hdr.pid, p->hdr.ppid, rp_status_name(st));
		if (p->has_end && p->end.reason == CT_END_EXIT)
			fprintf(f, " (exit %d)", p->end.status);
		else if (p->has_end && p->end.reason == CT_END_SIGNAL)
			fprintf(f, " (signal %d)", p->end.status);
		else if (p->has_end && p->end.reason == CT_END_EXEC)
			fputs(" (exec)", f);
		else if (p->has_end && p->end.reason == CT_END_DETACH)
			fputs(" (detach)", f);
		fputs("</td><td>", f);
		struct ct_str lc = p->proc.libcrypto.len ? p->proc.libcrypto : p->hdr.libcrypto;
		if (lc.len)
			rp_html_str(f, lc.p, lc.len);
		else
			fputs("-", f);
		fprintf(f, "</td><td class=\"n\">%llu</td><td class=\"n\">%s</td>", (unsigned long long)calls,
			rp_fmt_bytes(b, sizeof(b), (double)bytes));
		fputs("<td class=\"n\">", f);
		put_ns(f, (double)p->proc.utime_ns, p->has_proc);
		fputs("</td><td class=\"n\">", f);
		put_ns(f, (double)p->proc.stime_ns, p->has_proc);
		fprintf(f, "</td><td>%s</td><td>", p->hdr.flags & CT_HDR_PER_CALL ? "per-call" : "stats");
		put_argv(f, p);
		fputs("</td></tr>\n", f);
	}
	fputs("</table></section>\n", f);
}

static void section_timeline(const struct rp_model *m, const struct rp_view *v, FILE *f)
{
	fputs("<section id=\"timeline\" class=\"long\"><h2>Timeline of cipher calls</h2>\n", f);
	size_t per_call = 0, drawn = 0;
	for (size_t i = 0; i < m->nprocs; i++) {
		const struct rp_proc *p = &m->procs[i];
		if (!rp_proc_selected(m, p) || !(p->hdr.flags & CT_HDR_PER_CALL))
			continue;
		per_call++;
		fprintf(f, "<h3>pid %u: ", p->hdr.pid);
		put_argv(f, p);
		fputs("</h3>\n", f);
		if (rp_svg_timeline(m, v, p, f))
			drawn++;
		else
			fputs("<p class=\"none\">No per-call operation in the selection.</p>\n", f);
		if (p->ops_dropped)
			fprintf(f,
				"<p class=\"note\">%llu operation(s) were dropped by the tracer (buffer "
				"full): the timeline misses them.</p>\n",
				(unsigned long long)p->ops_dropped);
		if (p->proc.ops_sampled_out)
			fprintf(f,
				"<p class=\"note\">The timeline holds %llu of %llu operations: above %llu "
				"operations/s per-call mode keeps a random 1 in up to %u, each drawn for the "
				"ones it stands for (<code>--max-ops-rate</code>; the tables' counts and times "
				"are whole).</p>\n",
				(unsigned long long)p->ops,
				(unsigned long long)(p->ops + p->proc.ops_sampled_out),
				(unsigned long long)p->hdr.max_ops_rate, p->proc.ops_max_weight);
	}
	if (!per_call)
		fputs("<p class=\"none\">Per-call mode was off, so there are no individual operations to "
		      "draw. Run with <code>cryptrace run --mode calls</code> (CRYPTRACE_MODE=calls) for a "
		      "timeline.</p>\n",
		      f);
	else if (drawn)
		fputs("<p class=\"note\">One lane per thread (the first 64); each column shows how much of "
		      "its time the thread spent in cipher calls, coloured by path.</p>\n",
		      f);
	fputs("</section>\n", f);
}

void rp_print_html(const struct rp_model *m, const struct rp_view *v, FILE *f)
{
	uint64_t calls = 0, bytes = 0;
	size_t nprocs = 0;
	for (size_t i = 0; i < m->npaths; i++) {
		calls += m->paths[i].st.calls;
		bytes += m->paths[i].st.bytes;
	}
	for (size_t i = 0; i < m->nprocs; i++)
		nprocs += rp_proc_selected(m, &m->procs[i]);
	char b[32], when[64] = "";
	uint64_t t0 = rp_model_t0(m);
	if (t0) {
		time_t t = (time_t)(t0 / 1000000000u);
		struct tm tm;
		if (gmtime_r(&t, &tm))
			strftime(when, sizeof(when), ", first start %Y-%m-%d %H:%M:%S UTC", &tm);
	}
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
	      "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
	      "<title>cryptrace report</title>\n<style>\n",
	      f);
	fputs(css, f);
	fputs("</style></head>\n<body>\n<header><div class=\"in\"><h1>cryptrace report</h1><p>", f);
	fprintf(f, "%zu process(es), %zu path(s), %llu cipher calls, %s%s", nprocs, m->npaths,
		(unsigned long long)calls, rp_fmt_bytes(b, sizeof(b), (double)bytes), when);
	bool kernel = rp_model_has_kernel(m);
	fputs("</p><nav><a href=\"#findings\">Findings</a><a href=\"#throughput\">Throughput</a>", f);
	if (kernel)
		fputs("<a href=\"#kernel\">Kernel</a>", f);
	fputs("<a href=\"#latency\">Latency</a><a href=\"#shares\">Time shares</a>", f);
	if (rp_model_has_profile(m))
		fputs("<a href=\"#profile\">CPU profile</a>", f);
	fputs("<a href=\"#failures\">Failures</a><a href=\"#processes\">Processes</a>"
	      "<a href=\"#timeline\">Timeline</a></nav></div></header>\n<main>\n",
	      f);
	if (m->window.active) {
		char note[1200];
		rp_window_note(m, note, sizeof(note));
		fputs("<section id=\"window\"><h2>Time window</h2><p>", f);
		rp_html_cstr(f, note);
		fputs("</p></section>\n", f);
	}
	if (!m->npaths)
		fputs("<section><h2>No cipher calls</h2><p>No cipher call was seen in the selected "
		      "processes; the findings say why.</p></section>\n",
		      f);
	section_findings(m, f);
	section_throughput(m, f);
	rp_html_kernel(m, f);
	section_latency(m, f);
	section_shares(m, f);
	rp_html_profile(m, f);
	section_failures(m, f);
	section_processes(m, f);
	section_timeline(m, v, f);
	if (m->nwarnings) {
		fputs("<section id=\"warnings\"><h2>Damaged input</h2><ul>\n", f);
		for (size_t i = 0; i < m->nwarnings; i++) {
			fputs("<li>", f);
			rp_html_cstr(f, m->warnings[i]);
			fputs("</li>\n", f);
		}
		fputs("</ul></section>\n", f);
	}
	fputs("</main>\n<footer>Method: calls and bytes are exact counts; wall time is estimated per "
	      "size bucket from the timed calls, user and sys CPU from the calls whose thread CPU time "
	      "was sampled (never CPU alone: it can hide where time goes); throughput = bytes / time; "
	      "latency percentiles are bucket lower bounds (true value within 25% above). See "
	      "docs/report.md. Generated by cryptrace report --html.</footer>\n</body></html>\n",
	      f);
}
