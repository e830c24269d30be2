/* SPDX-License-Identifier: MIT */
/*
 * text.c - the human report: processes, per-path figures and cost, an `openssl speed`-shaped
 * throughput-by-size table, events, findings, and how the figures were measured. 100 columns.
 */
#include "model.h"
#include "redact.h"
#include "views.h"

#include <stdlib.h>
#include <string.h>

#define WIDTH 100

static void print_wrapped(FILE *out, const char *indent, const char *first, const char *text)
{
	size_t ind = strlen(indent), col = strlen(first);
	bool line_empty = true; /* nothing but the lead-in on this line yet */
	fputs(first, out);
	for (const char *p = text; *p;) {
		if (*p == ' ') {
			p++;
			continue;
		}
		if (*p == '\n') {
			fprintf(out, "\n%s", indent);
			col = ind;
			line_empty = true;
			p++;
			continue;
		}
		size_t w = strcspn(p, " \n");
		if (!line_empty && col + 1 + w > WIDTH) {
			fprintf(out, "\n%s", indent);
			col = ind;
			line_empty = true;
		}
		if (!line_empty) {
			fputc(' ', out);
			col++;
		}
		fwrite(p, 1, w, out);
		col += w;
		p += w;
		line_empty = false;
	}
	fputc('\n', out);
}

/* WALL is the calls' own time; what the program's clock saw besides, inside runs of a path's
 * calls (an interrupt, a hypervisor exit, its own work between the calls), is said below the
 * table when it is 1 % of WALL or more: with it, WALL reads as `openssl speed -elapsed` would. */
static void print_pauses(const struct rp_model *m, FILE *out)
{
	char b1[32], b2[32];
	bool any = false;
	for (size_t i = 0; i < m->npaths; i++) {
		const struct rp_derived *d = &m->paths[i].d;
		if (!d->wall_known || d->wall_ns <= 0 || d->pause_ns < 0.01 * d->wall_ns)
			continue;
		if (!any)
			fprintf(out,
				"  left out of WALL: pauses inside runs of calls (an interrupt, the hypervisor, "
				"the program's own work)\n");
		any = true;
		fprintf(out, "  %-2zu %9s (%.1f %% of WALL; WALL with them %s)\n", i + 1,
			rp_fmt_ns(b1, sizeof(b1), d->pause_ns), 100 * d->pause_ns / d->wall_ns,
			rp_fmt_ns(b2, sizeof(b2), d->wall_ns + d->pause_ns));
	}
}

/* "openssl speed -evp aes-128-cbc", shortened to fit. */
static void argv_short(const struct ct_header *h, char *buf, size_t cap)
{
	size_t n = 0;
	buf[0] = 0;
	unsigned parts = rp_str_nparts(h->argv, '\0');
	for (unsigned i = 0; i < parts && n + 1 < cap; i++) {
		struct ct_str a = rp_str_part(h->argv, '\0', i);
		if (i == 0)
			a = rp_str_basename(a);
		n += (size_t)snprintf(buf + n, cap - n, "%s%.*s", i ? " " : "", (int)a.len, a.p);
		if (n >= cap)
			break;
	}
	if (!parts && h->exe.len)
		snprintf(buf, cap, "%.*s", (int)h->exe.len, h->exe.p);
	if (strlen(buf) + 1 >= cap && cap > 4)
		strcpy(buf + cap - 4, "...");
}

/* n with a comma between groups of three digits: "29,012,345". */
static const char *fmt_grouped(char *buf, size_t cap, uint64_t n)
{
	char digits[24];
	int len = snprintf(digits, sizeof(digits), "%llu", (unsigned long long)n);
	size_t o = 0;
	for (int i = 0; i < len && o + 2 < cap; i++) {
		if (i && (len - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = digits[i];
	}
	buf[o] = 0;
	return buf;
}

/* Per-call mode's rate cap left operations out of this process's timeline: say how many, by
 * what rule, and that the counts are whole (docs/reports.md, "Per-call timeline"). */
static void print_timeline_cut(const struct rp_proc *p, FILE *out)
{
	if (!p->proc.ops_sampled_out)
		return;
	uint64_t dropped = p->proc.dropped_ops > p->ops_dropped ? p->proc.dropped_ops : p->ops_dropped;
	char kept[32], all[32], rate[32], line[400];
	snprintf(line, sizeof(line),
		 "pid %u per-call timeline: %s of %s operations kept (above %s/s sampled 1 in up to %u; "
		 "counts and times are exact: `--max-ops-rate 0` keeps all)",
		 p->hdr.pid, fmt_grouped(kept, sizeof(kept), p->ops),
		 fmt_grouped(all, sizeof(all), p->ops + p->proc.ops_sampled_out + dropped),
		 fmt_grouped(rate, sizeof(rate), p->hdr.max_ops_rate), p->proc.ops_max_weight);
	print_wrapped(out, "    ", "  ", line);
}

/* The process was attached while it ran (`cryptrace attach`, docs/attach.md): its figures start
 * there, and the reader may want to know what the attach cost it. */
static void print_attach(const struct rp_proc *p, FILE *out)
{
	if (!(p->hdr.flags & CT_HDR_ATTACHED))
		return;
	char line[300];
	if (p->proc.attach_pause_ns)
		snprintf(line, sizeof(line),
			 "pid %u was attached while it ran: figures from the attach on; the attach stopped "
			 "%u thread(s) for %.2f ms",
			 p->hdr.pid, p->proc.attach_threads, (double)p->proc.attach_pause_ns / 1e6);
	else
		snprintf(line, sizeof(line), "pid %u was attached while it ran: figures from the attach on",
			 p->hdr.pid);
	print_wrapped(out, "    ", "  ", line);
}

/* The route served some of the process's calls on its direct lane (docs/routes.md): the
 * figures of those calls are our provider's with no EVP in front, which the reader comparing
 * with an unrouted run should know. */
static void print_route_direct(const struct rp_proc *p, FILE *out)
{
	if (!p->proc.route_direct_calls)
		return;
	char line[300], n[32];
	snprintf(line, sizeof(line),
		 "pid %u: %s routed EVP calls went straight to the route's provider (the direct lane: "
		 "no EVP layer in between; CRYPTRACE_ROUTE_DIRECT=0 turns it off)",
		 p->hdr.pid, fmt_grouped(n, sizeof(n), p->proc.route_direct_calls));
	print_wrapped(out, "    ", "  ", line);
}

static void print_processes(const struct rp_model *m, FILE *out)
{
	fprintf(out, "Processes\n");
	fprintf(out, "  %-7s %-7s %-22s %-16s %s\n", "PID", "PPID", "TRACE", "LIBCRYPTO", "COMMAND");
	unsigned redacted = 0, omitted = 0;
	for (size_t i = 0; i < m->nprocs; i++) {
		const struct rp_proc *p = &m->procs[i];
		if (!rp_proc_shown(m, p))
			continue;
		char status[48], cmd[43], lib[24]; /* cmd: what is left of 100 columns */
		enum rp_status st = rp_proc_status(p);
		if (st == RP_TRUNCATED) {
			const char *at = strstr(p->damage, "at byte ");
			unsigned long long off = 0;
			if (at)
				sscanf(at, "at byte %llu", &off);
			snprintf(status, sizeof(status), "%s at %llu",
				 p->read_status == CT_READ_CORRUPT ? "corrupt" : "truncated", off);
		} else if (st == RP_INCOMPLETE && p->has_end && p->end.reason == CT_END_EXIT) {
			/* ended, but its figures may miss work (an exit the launcher recorded) */
			snprintf(status, sizeof(status), "incomplete (exit %d)", p->end.status);
		} else if (st == RP_INCOMPLETE) {
			snprintf(status, sizeof(status), "incomplete");
		} else {
			static const char *const how[] = { "", "exit", "exec", "signal", "detach" };
			if (p->end.reason == CT_END_DETACH)
				snprintf(status, sizeof(status), "complete (detach)");
			else
				snprintf(status, sizeof(status), "complete (%s %d)",
					 p->end.reason <= 4 ? how[p->end.reason] : "?", p->end.status);
		}
		struct ct_str l = p->proc.libcrypto.len ? p->proc.libcrypto : p->hdr.libcrypto;
		/* "OpenSSL 3.0.19 1 Jan 2026" -> "OpenSSL 3.0.19": the name and version words only */
		unsigned words = 0;
		uint32_t cut = 0;
		while (cut < l.len && !(l.p[cut] == ' ' && ++words == 2))
			cut++;
		snprintf(lib, sizeof(lib), "%.*s", (int)cut, l.p);
		if (!l.len)
			snprintf(lib, sizeof(lib), "-");
		argv_short(&p->hdr, cmd, sizeof(cmd));
		fprintf(out, "  %-7u %-7u %-22s %-16.16s %s\n", p->hdr.pid, p->hdr.ppid, status, lib, cmd);
		redacted += p->hdr.argv_redacted;
		omitted += (p->hdr.flags & CT_HDR_ARGV_OMITTED) != 0;
	}
	if (redacted)
		fprintf(out, "  (%u value%s on these command lines carr%s a secret, recorded as %s)\n",
			redacted, redacted == 1 ? "" : "s", redacted == 1 ? "ies" : "y", CT_REDACTED);
	if (omitted)
		fprintf(out, "  (%u process%s recorded without %s arguments: --no-argv)\n", omitted,
			omitted == 1 ? "" : "es", omitted == 1 ? "its" : "their");
	for (size_t i = 0; i < m->nprocs; i++)
		if (rp_proc_shown(m, &m->procs[i])) {
			print_timeline_cut(&m->procs[i], out);
			print_attach(&m->procs[i], out);
			print_route_direct(&m->procs[i], out);
		}
	fputc('\n', out);
}

/* A path's cipher as the tables show it: with the protocol its bytes travel in, when there is one
 * ("aes-256-gcm TLS1.3"). */
static const char *cipher_label(char *buf, size_t cap, const struct rp_path *p)
{
	if (p->def.proto.len)
		snprintf(buf, cap, "%.*s %.*s", (int)p->def.cipher.len, p->def.cipher.p,
			 (int)p->def.proto.len, p->def.proto.p);
	else
		snprintf(buf, cap, "%.*s", (int)p->def.cipher.len, p->def.cipher.p);
	return buf;
}

static void print_paths(const struct rp_model *m, FILE *out)
{
	char b1[32], b2[32], b3[32], b4[32], b5[32], b6[32], b7[32];
	fprintf(out, "Paths (all processes added up)\n");
	/* The text columns take what the figures leave of the width: entry and cipher as long as
	 * they are, impl gets the rest (a longer impl is cut; JSON has it whole). */
	int entry_w = 5, cipher_w = 6, impl_w = 4;
	for (size_t i = 0; i < m->npaths; i++) {
		const struct rp_path *p = &m->paths[i];
		int e = (int)strlen(ct_entry_name(p->def.entry));
		entry_w = e > entry_w ? e : entry_w;
		char cb[96];
		int c = (int)strlen(cipher_label(cb, sizeof(cb), p));
		cipher_w = c > cipher_w ? c : cipher_w;
		impl_w = (int)p->def.impl.len > impl_w ? (int)p->def.impl.len : impl_w;
	}
	cipher_w = cipher_w > 27 ? 27 : cipher_w;
	/* fixed: "  " #(2) API(9) DIR(3) CALLS(10) BYTES(9) ERR(4) PROC(4) and 9 separators */
	int room = WIDTH - (2 + 2 + 9 + 3 + 10 + 9 + 4 + 4 + 9) - entry_w - cipher_w;
	impl_w = impl_w > room ? room : impl_w;
	fprintf(out, "  %-2s %-9s %-*s %-*s %-3s %-*s %10s %9s %4s %4s\n", "#", "API", impl_w, "IMPL",
		cipher_w, "CIPHER", "DIR", entry_w, "ENTRY", "CALLS", "BYTES", "ERR", "PROC");
	for (size_t i = 0; i < m->npaths; i++) {
		const struct rp_path *p = &m->paths[i];
		int il = (int)p->def.impl.len > impl_w ? impl_w : (int)p->def.impl.len;
		char cb[96];
		const char *cipher = cipher_label(cb, sizeof(cb), p);
		fprintf(out, "  %-2zu %-9s %-*.*s %-*.*s %-3.3s %-*s %10llu %9s %4llu %4zu\n", i + 1,
			ct_api_name(p->def.api), impl_w, il, p->def.impl.p, cipher_w, cipher_w, cipher,
			ct_dir_name(p->def.dir), entry_w, ct_entry_name(p->def.entry),
			(unsigned long long)p->st.calls, rp_fmt_bytes(b1, sizeof(b1), (double)p->st.bytes),
			(unsigned long long)p->st.errors, p->pids.n);
	}
	fputc('\n', out);
	bool any_wait = false;
	fprintf(out, "Cost per path\n");
	fprintf(out, "  %-2s %9s %9s %9s %10s %9s %7s %8s %8s  %s\n", "#", "WALL", "USER", "SYS", "MB/s WALL",
		"MB/s CPU", "CYC/B", "P50", "P99", "TIMED CALLS");
	for (size_t i = 0; i < m->npaths; i++) {
		const struct rp_path *p = &m->paths[i];
		const struct rp_derived *d = &p->d;
		char mbw[24] = "-", mbc[24] = "-", cpb[24] = "-", timed[40];
		if (d->wall_known && d->wall_ns > 0 && !rp_path_io_wait(p))
			snprintf(mbw, sizeof(mbw), "%.1f", (double)p->st.bytes * 1e3 / d->wall_ns);
		if (d->cpu_known && d->user_ns + d->sys_ns > 0)
			snprintf(mbc, sizeof(mbc), "%.1f",
				 (double)p->st.bytes * 1e3 / (d->user_ns + d->sys_ns));
		if (d->cycles_per_byte >= 0)
			snprintf(cpb, sizeof(cpb), "%.2f", d->cycles_per_byte);
		if (d->wall_exact)
			snprintf(timed, sizeof(timed), "all");
		else
			snprintf(timed, sizeof(timed), "%s of %s",
				 rp_fmt_count(b6, sizeof(b6), rp_measured_calls(&p->st)),
				 rp_fmt_count(b7, sizeof(b7), (double)p->st.calls));
		char wall[40] = "-";
		if (d->wall_known)
			snprintf(wall, sizeof(wall), "%s%s", rp_path_io_wait(p) ? "+" : "",
				 rp_fmt_ns(b1, sizeof(b1), d->wall_ns));
		any_wait |= rp_path_io_wait(p);
		fprintf(out, "  %-2zu %9s %9s %9s %10s %9s %7s %8s %8s  %s\n", i + 1, wall,
			d->cpu_known ? rp_fmt_ns(b2, sizeof(b2), d->user_ns) : "-",
			d->cpu_known ? rp_fmt_ns(b3, sizeof(b3), d->sys_ns) : "-", mbw, mbc, cpb,
			d->lat_known ? rp_fmt_ns(b4, sizeof(b4), (double)d->p50_ns) : "-",
			d->lat_known ? rp_fmt_ns(b5, sizeof(b5), (double)d->p99_ns) : "-", timed);
	}
	if (any_wait)
		fprintf(out,
			"  + these calls wait for a peer (TLS records): their WALL includes the network\n"
			"    and the other side, so their MB/s and CYC/B are from CPU time (USER+SYS)\n");
	print_pauses(m, out);
	fputc('\n', out);
}

/* The operation's calls besides its data (key and message set-ups, AAD, finals, tags): their
 * share of each path's WALL, the cost per AEAD message, and each phase's calls x time. */
static void print_phases(const struct rp_model *m, FILE *out)
{
	bool any = false;
	for (size_t i = 0; i < m->npaths && !any; i++)
		for (unsigned ph = 0; ph < CT_PHASES && !any; ph++)
			any = m->paths[i].st.phase[ph].calls > 0 && m->paths[i].d.phase_known[ph];
	if (!any)
		return;
	static const char *const what[CT_PHASES] = {
		[CT_PHASE_KEY] = "key set-ups", [CT_PHASE_MSG] = "message set-ups",
		[CT_PHASE_AAD] = "AAD",         [CT_PHASE_FINAL] = "finals",
		[CT_PHASE_TAG] = "tags",        [CT_PHASE_INIT] = "context set-ups",
	};
	fprintf(out, "Set-up and finish per path (the operation's calls besides its data, part of WALL)\n");
	for (size_t i = 0; i < m->npaths; i++) {
		const struct rp_path *p = &m->paths[i];
		const struct rp_derived *d = &p->d;
		if (!d->phases_wall_ns)
			continue;
		char line[512], b1[24], b2[24], b3[24], b4[24];
		int n = snprintf(line, sizeof(line), "update %s, set-up and finish %s (%.0f %%)",
				 rp_fmt_ns(b1, sizeof(b1), d->data_wall_ns),
				 rp_fmt_ns(b2, sizeof(b2), d->phases_wall_ns),
				 d->wall_ns > 0 ? 100 * d->phases_wall_ns / d->wall_ns : 0);
		if (d->per_message_ns > 0 && n > 0 && (size_t)n < sizeof(line))
			snprintf(line + n, sizeof(line) - (size_t)n, ": %s messages, %s each",
				 rp_fmt_count(b3, sizeof(b3), (double)d->messages),
				 rp_fmt_ns(b4, sizeof(b4), d->per_message_ns));
		char first[32];
		snprintf(first, sizeof(first), "  %-2zu ", i + 1);
		print_wrapped(out, "     ", first, line);
		n = 0;
		line[0] = 0;
		for (unsigned ph = 0; ph < CT_PHASES; ph++) {
			const struct ct_size_bucket *sb = &p->st.phase[ph];
			if (!sb->calls || (size_t)n >= sizeof(line))
				continue;
			char each[24] = "-";
			if (d->phase_known[ph])
				rp_fmt_ns(each, sizeof(each), d->phase_wall_ns[ph] / (double)sb->calls);
			n += snprintf(line + n, sizeof(line) - (size_t)n, "%s%s %s x %s", n ? "; " : "",
				      what[ph], rp_fmt_count(b1, sizeof(b1), (double)sb->calls), each);
			if (ph == CT_PHASE_AAD && sb->bytes && (size_t)n < sizeof(line))
				n += snprintf(line + n, sizeof(line) - (size_t)n, " (%s)",
					      rp_fmt_bytes(b2, sizeof(b2), (double)sb->bytes));
		}
		print_wrapped(out, "     ", "     ", line);
	}
	fputc('\n', out);
}

/* Like `openssl speed`: rows are paths, columns the request sizes seen, cells in 1000s of bytes
 * per second, wall / CPU. Columns are printed in groups that fit the width. Paths whose calls
 * wait for a peer have no rate by size (rp_bucket_cpu_bps says why): they are left out, and a
 * line says so. */
static void print_speed(const struct rp_model *m, FILE *out)
{
	unsigned cols[CT_SIZE_BUCKETS], ncols = 0;
	size_t io_wait = 0;
	for (size_t i = 0; i < m->npaths; i++)
		io_wait += rp_path_io_wait(&m->paths[i]);
	for (unsigned b = 0; b < CT_SIZE_BUCKETS; b++) {
		bool any = false;
		for (size_t i = 0; i < m->npaths && !any; i++)
			any = m->paths[i].st.size[b].calls > 0 && !rp_path_io_wait(&m->paths[i]);
		if (any)
			cols[ncols++] = b;
	}
	if (!ncols) {
		if (io_wait)
			fprintf(out,
				"Throughput by request size: none for TLS record and kTLS paths (a call's\n"
				"time there is mostly waiting for the peer; their rate is from CPU time, above)\n\n");
		return;
	}
	fprintf(out,
		"Throughput by request size (1000s of bytes per second: wall / cpu; columns are\n"
		"size buckets [N, 2N) named by N, like `openssl speed -bytes N`)\n");
	const int cellw = 25, per_line = (WIDTH - 6) / (cellw + 1);
	for (unsigned c0 = 0; c0 < ncols; c0 += (unsigned)per_line) {
		unsigned c1 = c0 + (unsigned)per_line < ncols ? c0 + (unsigned)per_line : ncols;
		fprintf(out, "  %-2s", "#");
		for (unsigned c = c0; c < c1; c++) {
			char h[32];
			snprintf(h, sizeof(h), "%llu bytes", (unsigned long long)ct_size_bucket_low(cols[c]));
			fprintf(out, " %*s", cellw, h);
		}
		fputc('\n', out);
		for (size_t i = 0; i < m->npaths; i++) {
			const struct rp_path *p = &m->paths[i];
			if (rp_path_io_wait(p))
				continue;
			char line[256];
			size_t len = (size_t)snprintf(line, sizeof(line), "  %-2zu", i + 1);
			for (unsigned c = c0; c < c1 && len < sizeof(line); c++) {
				const struct ct_size_bucket *sb = &p->st.size[cols[c]];
				double w = rp_bucket_wall_bps(p, cols[c]),
				       cpu = rp_bucket_cpu_bps(p, cols[c]);
				char cell[64], ws[24] = "-", cs[24] = "-";
				cell[0] = 0;
				if (sb->calls) {
					if (w > 0)
						snprintf(ws, sizeof(ws), "%.2fk", w / 1e3);
					if (cpu > 0)
						snprintf(cs, sizeof(cs), "%.2fk", cpu / 1e3);
					snprintf(cell, sizeof(cell), "%s / %s", ws, cs);
				}
				len += (size_t)snprintf(line + len, sizeof(line) - len, " %*s", cellw, cell);
			}
			if (len >= sizeof(line))
				len = sizeof(line) - 1;
			while (len > 0 && line[len - 1] == ' ') /* no trailing blanks after empty cells */
				line[--len] = 0;
			fprintf(out, "%s\n", line);
		}
	}
	for (size_t i = 0; i < m->npaths; i++)
		if (rp_path_io_wait(&m->paths[i])) {
			fprintf(out,
				"  (TLS record and kTLS paths: no rate by size; a call's time there is mostly\n"
				"  waiting for the peer, and its size is what the program read or wrote)\n");
			break;
		}
	fputc('\n', out);
}

/* MB/s (10^6 bytes per second) with four significant digits, "-" when unknown */
static char *fmt_mbs(char *buf, size_t cap, double bps)
{
	if (bps <= 0)
		snprintf(buf, cap, "-");
	else if (bps >= 1e9)
		snprintf(buf, cap, "%.0f", bps / 1e6);
	else
		snprintf(buf, cap, "%.4g", bps / 1e6);
	return buf;
}

/* Seed 003's comparison of /dev/crypto and AF_ALG, per kernel path: what a session set-up
 * ("init") and a teardown ("deinit") cost, one operation by request size alone and with the
 * session cost spread over the operations, syscalls per operation, spliced against copied
 * requests. Fits 80 columns. */
static void print_kernel(const struct rp_model *m, FILE *out)
{
	if (!rp_model_has_kernel(m))
		return;
	fprintf(out,
		"Kernel interfaces (per path: session set-up \"init\", each operation by request\n"
		"size, teardown \"deinit\"; sizes are buckets [N, 2N) named by N; OP MB/s is the\n"
		"operation alone, +INIT+DEINIT adds the path's set-up and teardown time spread\n"
		"over its operations)\n");
	for (size_t i = 0; i < m->npaths; i++) {
		const struct rp_path *p = &m->paths[i];
		if (!rp_path_is_kernel(p))
			continue;
		struct rp_kernel_fig k;
		rp_kernel_figures(p, &k);
		char b1[32], b2[32], b3[32], b4[32], line[160];
		snprintf(line, sizeof(line), "  #%zu %s %.*s %.*s %s", i + 1, ct_api_name(p->def.api),
			 (int)p->def.impl.len, p->def.impl.p, (int)p->def.cipher.len, p->def.cipher.p,
			 ct_dir_name(p->def.dir));
		fprintf(out, "%.80s\n", line);
		fprintf(out, "     init    %7s x %-9s    deinit  %7s x %s\n",
			rp_fmt_count(b1, sizeof(b1), (double)k.setup_calls),
			rp_fmt_ns(b2, sizeof(b2), k.setup_ns),
			rp_fmt_count(b3, sizeof(b3), (double)k.teardown_calls),
			rp_fmt_ns(b4, sizeof(b4), k.teardown_ns));
		char per[32] = "-";
		if (k.syscalls_per_op >= 0)
			snprintf(per, sizeof(per), "%.2f", k.syscalls_per_op);
		fprintf(out, "     ops     %7s, %s syscalls each, %s spliced, %s copied\n",
			rp_fmt_count(b1, sizeof(b1), (double)k.ops), per,
			rp_fmt_count(b2, sizeof(b2), (double)k.spliced),
			rp_fmt_count(b3, sizeof(b3), (double)k.copied));
		fprintf(out, "     %10s %10s %10s %12s %14s\n", "SIZE", "CALLS", "TIME/OP", "OP MB/s",
			"+INIT+DEINIT");
		for (unsigned b = 0; b < CT_SIZE_BUCKETS; b++) {
			const struct ct_size_bucket *sb = &p->st.size[b];
			if (!sb->calls)
				continue;
			fprintf(out, "     %10llu %10s %10s %12s %14s\n",
				(unsigned long long)ct_size_bucket_low(b),
				rp_fmt_count(b1, sizeof(b1), (double)sb->calls),
				rp_fmt_ns(b2, sizeof(b2), rp_kernel_op_ns(p, b)),
				fmt_mbs(b3, sizeof(b3), rp_kernel_op_bps(p, b)),
				fmt_mbs(b4, sizeof(b4), rp_kernel_full_bps(p, b)));
		}
	}
	fputc('\n', out);
}

/* "12.3%", or "-" when unknown */
static char *fmt_share(char *buf, size_t cap, double part, bool part_known, double whole, bool whole_known)
{
	if (part_known && whole_known && whole > 0)
		snprintf(buf, cap, "%.1f%%", 100.0 * part / whole);
	else
		snprintf(buf, cap, "-");
	return buf;
}

/* Per process: its role, lifetime and CPU, the share of both spent in each cipher path, and its
 * cipher throughput (bytes over the cipher calls' wall time). Only cipher calls are measured:
 * digests, MACs, signatures and key exchange are not, so the share says "cipher calls", never
 * "crypto" (borg's HMAC-SHA256 costs 5x its AES; ssh's key exchange most of a short session). */
/* "public key 86.2%, digest 0.2%": a profile's crypto samples by group, as shares of all its
 * samples (the groups with none left out); "" when it has no crypto samples. */
static const char *fmt_profile_groups(char *buf, size_t cap, const struct rp_profile *pr)
{
	uint64_t n[RP_PROFILE_GROUPS];
	rp_profile_group_samples(pr, n);
	size_t len = 0;
	buf[0] = 0;
	for (size_t g = 0; g < RP_PROFILE_GROUPS && pr->samples; g++)
		if (n[g] && len < cap)
			len += (size_t)snprintf(buf + len, cap - len, "%s%s %.1f%%", len ? ", " : "",
						rp_profile_group_names[g],
						100.0 * (double)n[g] / (double)pr->samples);
	return buf;
}

/* The hooks against the profile (profile_check.c), in a sentence, and what a disagreement means. */
static void print_hooks_check(const struct rp_hooks_check *c, FILE *out)
{
	if (!c->made)
		return;
	if (!c->verdict) {
		fprintf(out,
			"    hooks and profile agree: %.3fs in the hooked cipher calls; the profile saw\n"
			"      %.3fs +- %.3fs of cipher code, %.3fs +- %.3fs with the rest of %s and the hooks\n",
			c->hooks_s, c->profile_s, c->error_s, c->profile_max_s, c->error_max_s,
			c->hooked_module);
		return;
	}
	if (c->verdict > 0) {
		fprintf(out,
			"    hooks and profile disagree: the profile saw %.3fs +- %.3fs of cipher code, the\n"
			"      hooked cipher calls took %.3fs: cipher work ran outside them",
			c->profile_s, c->error_s, c->hooks_s);
		if (c->outside_s > 0 && !strncmp(c->outside_module, "libcrypto", 9))
			fprintf(out, " (%.3fs in a second libcrypto, %.*s: its calls are not traced)",
				c->outside_s, (int)c->outside_path.len, c->outside_path.p);
		else if (c->outside_s > 0)
			fprintf(out, " (%.3fs in %s, which the hooks do not see)", c->outside_s,
				c->outside_module);
		if (c->profile_s - c->outside_s > c->hooks_s + c->error_s)
			fprintf(out,
				"\n      (in %s itself, from calls that did not pass the hooks: through "
				"function pointers\n      from dlsym, or from another libcrypto's code bound "
				"to this one)",
				c->hooked_module);
		fputc('\n', out);
		return;
	}
	fprintf(out,
		"    hooks and profile disagree: the hooked cipher calls took %.3fs of CPU, more than all\n"
		"      the code they run took (%.3fs +- %.3fs in %s, its modules and the hooks):\n"
		"      time in the calls not spent in that code (a lock, a wait in another library)\n",
		c->hooks_s, c->profile_max_s, c->error_max_s, c->hooked_module);
}

/* The sampled CPU profile of each process: its crypto code by group, kind and implementation,
 * and the rest by module, as shares of its sampled user-space CPU. */
static void print_profile(const struct rp_model *m, FILE *out)
{
	bool any = false;
	for (size_t i = 0; i < m->nprocs && !any; i++)
		any = m->procs[i].prof.has && !m->procs[i].superseded;
	if (!any)
		return;
	fprintf(out,
		"CPU profile (user-space CPU sampled by the launcher; code named by its instructions)\n");
	for (size_t i = 0; i < m->nprocs; i++) {
		const struct rp_proc *p = &m->procs[i];
		const struct rp_profile *pr = &p->prof;
		if (!pr->has || p->superseded)
			continue;
		char cmd[64];
		snprintf(cmd, sizeof(cmd), "%.*s", (int)rp_str_basename(p->hdr.exe).len,
			 rp_str_basename(p->hdr.exe).p);
		fprintf(out, "  pid %-6u %s: %llu samples (%.3fs of CPU at %u us each)", p->hdr.pid, cmd,
			(unsigned long long)pr->samples, (double)pr->samples * rp_profile_sample_s(pr),
			pr->period_us);
		char groups[128];
		if (pr->samples)
			fprintf(out, "; crypto code %.1f%%",
				100.0 * (double)pr->crypto_samples / (double)pr->samples);
		if (pr->lost)
			fprintf(out, "; %llu lost", (unsigned long long)pr->lost);
		fputc('\n', out);
		/* key exchange and signatures apart from the bulk ciphers and digests */
		if (rp_profile_sample_s(pr) < pr->period_us / 1e6)
			fprintf(out,
				"    (the sampling clock counted %.3fs: %.0f%% more than the process's own "
				"user CPU, time the hypervisor took from the vCPU (steal) or interrupts "
				"took; a sample counts %.0f us here)\n",
				(double)pr->samples * pr->period_us / 1e6,
				100.0 * (pr->period_us / 1e6 / rp_profile_sample_s(pr) - 1),
				rp_profile_sample_s(pr) * 1e6);
		if (fmt_profile_groups(groups, sizeof(groups), pr)[0])
			fprintf(out, "    crypto by group: %s\n", groups);
		if (pr->stacks_note[0])
			fprintf(out, "    (no call stacks: %s)\n", pr->stacks_note);
		print_hooks_check(&pr->check, out);
		/* the crypto lines, then the rest by module (at most 4 lines of 1% or more) */
		for (size_t k = 0; k < pr->nitems; k++) {
			const struct rp_profile_item *it = &pr->items[k];
			char label[32];
			if (!it->category[0])
				continue;
			fprintf(out, "    %5.1f%%  %-11s %-26s %s %s\n",
				100.0 * (double)it->samples / (double)pr->samples,
				rp_profile_item_label(it, label, sizeof(label)), it->impl, it->module,
				it->function);
		}
		struct {
			const char *module;
			uint64_t n;
		} rest[16];
		size_t nrest = 0;
		for (size_t k = 0; k < pr->nitems; k++) {
			const struct rp_profile_item *it = &pr->items[k];
			if (it->category[0])
				continue;
			size_t j = 0;
			while (j < nrest && strcmp(rest[j].module, it->module))
				j++;
			if (j == nrest && nrest < 16)
				rest[nrest++].module = it->module, rest[j].n = 0;
			if (j < nrest)
				rest[j].n += it->samples;
		}
		for (unsigned shown = 0; shown < 4; shown++) {
			size_t best = nrest;
			for (size_t j = 0; j < nrest; j++)
				if (rest[j].n && (best == nrest || rest[j].n > rest[best].n))
					best = j;
			if (best == nrest || (double)rest[best].n < 0.01 * (double)pr->samples)
				break;
			fprintf(out, "    %5.1f%%  %-38s %s\n",
				100.0 * (double)rest[best].n / (double)pr->samples, "other code",
				rest[best].module);
			rest[best].n = 0;
		}
	}
	fputc('\n', out);
}

static void print_crypto_share(const struct rp_model *m, FILE *out)
{
	char b1[32], b2[32], b3[32], b4[32], b5[32], mbs[24];
	bool any = false;
	for (size_t i = 0; i < m->nprocs; i++) {
		const struct rp_proc *p = &m->procs[i];
		if (!rp_proc_shown(m, p) || !p->fig.crypto_calls)
			continue;
		const struct rp_proc_figures *f = &p->fig;
		if (!any)
			fprintf(out,
				"Cipher-call share per process (WALL: lifetime, CPU: user+sys of "
				"the process; shares are the cipher calls' part of them: digests, "
				"MACs and key exchange are not measured)\n");
		any = true;
		snprintf(mbs, sizeof(mbs), "-");
		if (f->crypto_wall_known && f->crypto_wall_ns > 0)
			snprintf(mbs, sizeof(mbs), "%.1f MB/s",
				 (double)f->crypto_bytes * 1e3 / f->crypto_wall_ns);
		fprintf(out, "  pid %u  %s\n", p->hdr.pid, p->role);
		fprintf(out,
			"    wall %s, cipher calls %s of it; CPU %s, cipher calls %s of it; %s "
			"through the ciphers at %s\n",
			f->wall_known ? rp_fmt_ns(b1, sizeof(b1), f->wall_ns) : "-",
			fmt_share(b2, sizeof(b2), f->crypto_wall_ns, f->crypto_wall_known, f->wall_ns,
				  f->wall_known),
			f->cpu_known ? rp_fmt_ns(b3, sizeof(b3), f->cpu_ns) : "-",
			fmt_share(b4, sizeof(b4), f->crypto_cpu_ns, f->crypto_cpu_known, f->cpu_ns,
				  f->cpu_known),
			rp_fmt_bytes(b5, sizeof(b5), (double)f->crypto_bytes), mbs);
		/* what the cipher calls leave out, the profile saw: all the crypto code */
		const struct rp_profile *pr = &p->prof;
		if (pr->has && pr->samples && !p->superseded) {
			char groups[128];
			fprintf(out, "    sampled user CPU: all crypto code %.1f%% of it",
				100.0 * (double)pr->crypto_samples / (double)pr->samples);
			if (fmt_profile_groups(groups, sizeof(groups), pr)[0])
				fprintf(out, " (%s)", groups);
			fputc('\n', out);
		}
		for (size_t k = 0; k < p->npaths; k++) {
			const struct rp_path *pp = &p->paths[k];
			if (!rp_path_selected(m, pp) || !pp->st.calls)
				continue;
			double cpu = pp->d.user_ns + pp->d.sys_ns;
			bool cost_known; /* set by rp_path_cost_ns: called before, not beside, its use */
			double cost = rp_path_cost_ns(pp, &cost_known);
			fprintf(out, "    %6s wall %6s CPU  %9s  %.*s %.*s %s\n",
				fmt_share(b1, sizeof(b1), cost, cost_known, f->wall_ns, f->wall_known),
				fmt_share(b2, sizeof(b2), cpu, pp->d.cpu_known, f->cpu_ns, f->cpu_known),
				rp_fmt_bytes(b3, sizeof(b3), (double)pp->st.bytes), (int)pp->def.impl.len,
				pp->def.impl.p, (int)pp->def.cipher.len, pp->def.cipher.p,
				ct_dir_name(pp->def.dir));
		}
	}
	if (any)
		fputc('\n', out);
}

static void print_creator_line(FILE *out, const char *first, const struct rp_path *p,
			       const struct rp_creator *c, const char *purpose, uint64_t setups)
{
	char line[512], count[48] = "";
	if (setups)
		snprintf(count, sizeof(count), "%llu ", (unsigned long long)setups);
	bool frame = strcmp(c->created_by, c->module) != 0;
	if (p->def.api == CT_API_TLS) /* a TLS library's records: no context, a session's bytes */
		snprintf(line, sizeof(line), "%.*s %.*s records %s by %s%s%s%s", (int)p->def.cipher.len,
			 p->def.cipher.p, (int)p->def.proto.len, p->def.proto.p,
			 p->def.dir == CT_DIR_DECRYPT ? "received" : "sent", c->module, frame ? " (" : "",
			 frame ? c->created_by : "", frame ? ")" : "");
	else
		snprintf(line, sizeof(line), "%s%.*s %s context%s created by %s%s%s%s%s%s", count,
			 (int)p->def.cipher.len, p->def.cipher.p, ct_dir_name(p->def.dir),
			 setups == 1 ? "" : "s", c->module, purpose[0] ? " for " : "", purpose,
			 frame ? " (" : "", frame ? c->created_by : "", frame ? ")" : "");
	print_wrapped(out, "      ", first, line);
	if (c->via[0])
		fprintf(out, "      through %s\n", c->via);
}

/* Who set up each path's contexts (the first call-site frame outside libcrypto), how many, and
 * what for: every call site with its count when the trace has them (CT_EV_CONTEXT), else the
 * path's first set-up. */
static void print_creators(const struct rp_model *m, FILE *out)
{
	bool any = false;
	for (size_t i = 0; i < m->npaths; i++) {
		const struct rp_path *p = &m->paths[i];
		struct rp_path_creators pc;
		struct rp_creator c;
		bool counted = rp_path_creators(m, p, &pc);
		if (!counted && !rp_callsite_creator(p->def.callsite, &c))
			continue;
		if (!any)
			fprintf(out,
				"Call sites (who created the contexts, and how many: first frame outside "
				"libcrypto)\n");
		any = true;
		char first[32];
		snprintf(first, sizeof(first), "  %-3zu", i + 1);
		if (!counted) {
			print_creator_line(out, first, p, &c, rp_creator_purpose(&c, 0), 0);
			continue;
		}
		for (size_t j = 0; j < pc.nsites; j++)
			print_creator_line(out, j ? "     " : first, p, &pc.sites[j].who,
					   rp_creator_purpose(&pc.sites[j].who, pc.usage),
					   pc.sites[j].setups);
		if (pc.other_setups)
			fprintf(out, "      %llu more at other call sites\n",
				(unsigned long long)pc.other_setups);
	}
	if (any)
		fputc('\n', out);
}

static void print_callsite(FILE *out, struct ct_str cs)
{
	unsigned n = rp_str_nparts(cs, '\n');
	if (!n)
		return;
	char line[WIDTH + 1];
	size_t len = (size_t)snprintf(line, sizeof(line), "            at ");
	for (unsigned i = 0; i < n && i < 3; i++) {
		struct ct_str f = rp_str_part(cs, '\n', i);
		size_t need = f.len + (i ? 3 : 0);
		if (len + need > WIDTH)
			break; /* whole frames only */
		len += (size_t)snprintf(line + len, sizeof(line) - len, "%s%.*s", i ? " < " : "", (int)f.len,
					f.p);
	}
	fprintf(out, "%s\n", line);
}

static void print_event_group(const struct rp_model *m, FILE *out, const char *title, const unsigned *kinds,
			      unsigned nkinds)
{
	bool any = false;
	for (size_t i = 0; i < m->nevents; i++) {
		const struct rp_event *e = &m->events[i];
		bool in = false;
		for (unsigned k = 0; k < nkinds; k++)
			in |= e->ev.kind == kinds[k];
		if (!in)
			continue;
		if (!any)
			fprintf(out, "  %s:\n", title);
		any = true;
		char eb[32], result[48], who[32];
		if (e->ev.err)
			snprintf(result, sizeof(result), "%s", rp_errno_name(e->ev.err, eb, sizeof(eb)));
		else if (e->ev.kind == CT_EV_ENGINE_REQUEST || e->ev.kind == CT_EV_PROVIDER_LOAD ||
			 e->ev.kind == CT_EV_CIPHER_FETCH)
			snprintf(result, sizeof(result), e->ev.ret > 0 ? "ok" : "failed (ret=%lld)",
				 (long long)e->ev.ret);
		else if (e->ev.kind == CT_EV_SESSION)
			snprintf(result, sizeof(result), e->ev.ret >= 0 ? "ok" : "failed (ret=%lld)",
				 (long long)e->ev.ret);
		else if (e->ev.kind == CT_EV_CALL_FAILED)
			snprintf(result, sizeof(result), "ret=%lld", (long long)e->ev.ret);
		else
			result[0] = 0;
		if (e->pids.n > 1)
			snprintf(who, sizeof(who), "%zu processes", e->pids.n);
		else
			snprintf(who, sizeof(who), "pid %u", e->pid);
		fprintf(out, "    %6llux %-32.*s %-18s %s\n", (unsigned long long)e->ev.count,
			(int)(e->ev.call.len > 32 ? 32 : e->ev.call.len), e->ev.call.p, result, who);
		if (e->ev.detail.len) {
			char detail[600];
			snprintf(detail, sizeof(detail), "%.*s", (int)e->ev.detail.len, e->ev.detail.p);
			print_wrapped(out, "            ", "            ", detail);
		}
		print_callsite(out, e->ev.callsite);
	}
}

static void print_events(const struct rp_model *m, FILE *out)
{
	if (!m->nevents)
		return;
	fprintf(out, "Events\n");
	static const unsigned failed[] = { CT_EV_CALL_FAILED };
	static const unsigned engine[] = { CT_EV_ENGINE_REQUEST, CT_EV_PROVIDER_LOAD, CT_EV_CIPHER_FETCH };
	static const unsigned session[] = { CT_EV_SESSION };
	static const unsigned fallback[] = { CT_EV_FALLBACK, CT_EV_ROUTE };
	static const unsigned other[] = { CT_EV_LIB_LOADED, CT_EV_CHILD, CT_EV_TRACE_WARNING };
	print_event_group(m, out, "failures", failed, 1);
	print_event_group(m, out, "engine/provider requests", engine, 3);
	print_event_group(m, out, "kernel sessions", session, 1);
	print_event_group(m, out, "routes and fallbacks", fallback, 2);
	print_event_group(m, out, "other", other, 3);
	fputc('\n', out);
}

static void print_findings(const struct rp_model *m, FILE *out)
{
	if (!m->nfindings)
		return;
	fprintf(out, "Findings\n");
	for (size_t i = 0; i < m->nfindings; i++) {
		const struct rp_finding *f = &m->findings[i];
		char first[96];
		if (f->pid)
			snprintf(first, sizeof(first), "  [%s] %s (pid %u): ", rp_severity_name(f->severity),
				 f->kind, f->pid);
		else
			snprintf(first, sizeof(first), "  [%s] %s: ", rp_severity_name(f->severity), f->kind);
		print_wrapped(out, "      ", first, f->message);
		if (f->evidence[0])
			print_wrapped(out, "        ", "      evidence: ", f->evidence);
		if (f->fix[0])
			print_wrapped(out, "        ", "      fix: ", f->fix);
	}
	fputc('\n', out);
}

static void print_method(const struct rp_model *m, FILE *out)
{
	const struct rp_proc *first = NULL;
	for (size_t i = 0; i < m->nprocs && !first; i++)
		if (m->procs[i].has_hdr)
			first = &m->procs[i];
	static const char how[] =
		"How these figures were measured: calls and bytes are exact counts. WALL is the data "
		"calls' time per request-size bucket plus the set-ups and finishes (key and message "
		"set-ups, AAD, finals, tags), each priced from samples: spans time runs of consecutive "
		"calls from the first one's entry to the next call's (what the calls cost a loop), "
		"probes time single calls to the completion of their work (what calls that run alone "
		"cost); a span with other work between its calls is set aside, its calls priced like "
		"the accepted spans' when those are most, else like the probes, and what it held besides "
		"(an interrupt, a hypervisor exit, the program's own work) is printed as pauses under "
		"the table. Checked against programs' own clocks (openssl speed -elapsed with the pauses, "
		"examples/selftimed) within 10 % from 16 B to 1 MiB, for calls back to back and "
		"interleaved with other work; time the thread was descheduled is left out. USER/SYS = WALL x the user/system "
		"share of the calls whose thread CPU time was sampled (\"-\" when none was). CYC/B = "
		"WALL x TSC Hz / bytes. P50/P99: the data calls' completion times, lower bounds of "
		"latency buckets (4 per power of two, within 25%). MB/s is 10^6 bytes per second; the "
		"size table uses 1000s of bytes per second like openssl.";
	print_wrapped(out, "", "", how);
	if (first && first->hdr.timing.len) {
		char t[300];
		snprintf(t, sizeof(t), "Timing in this trace: %.*s", (int)first->hdr.timing.len,
			 first->hdr.timing.p);
		print_wrapped(out, "", "", t);
	}
}

static uint64_t total_calls(const struct rp_model *m)
{
	uint64_t n = 0;
	for (size_t i = 0; i < m->npaths; i++)
		n += m->paths[i].st.calls;
	return n;
}

/*
 * Program-controlled strings (argv, call details, library names) reach the terminal: render into
 * memory first, then neutralize control characters (escape sequences, carriage returns) so that
 * a trace cannot rewrite the screen it is shown on.
 */
static void emit_clean(FILE *out, void (*render)(const struct rp_model *, FILE *), const struct rp_model *m)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&buf, &len);
	if (!mem) {
		render(m, out); /* out of memory: unfiltered beats nothing */
		return;
	}
	render(m, mem);
	if (fclose(mem) != 0 || !buf) {
		free(buf);
		render(m, out);
		return;
	}
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)buf[i];
		if ((c < 0x20 && c != '\n') || c == 0x7f)
			buf[i] = '?';
	}
	fwrite(buf, 1, len, out);
	free(buf);
}

static void render_text(const struct rp_model *m, FILE *out)
{
	size_t nproc = 0;
	for (size_t i = 0; i < m->nprocs; i++)
		nproc += rp_proc_shown(m, &m->procs[i]);
	fprintf(out, "cryptrace report: %zu process(es), %zu path(s)\n\n", nproc, m->npaths);
	if (m->window.active) {
		char note[1200];
		rp_window_note(m, note, sizeof(note));
		print_wrapped(out, "", "", note);
		fputc('\n', out);
	}
	print_processes(m, out);
	if (total_calls(m) == 0) {
		char why[400];
		rp_nothing_reason(m, why, sizeof(why));
		fprintf(out, "*** no crypto calls were seen in %zu process(es): %s ***\n\n", nproc, why);
	}
	if (m->npaths) {
		print_paths(m, out);
		print_phases(m, out);
		print_speed(m, out);
		print_kernel(m, out);
		print_crypto_share(m, out);
		print_creators(m, out);
	}
	print_profile(m, out);
	print_events(m, out);
	print_findings(m, out);
	for (size_t i = 0; i < m->nwarnings; i++)
		fprintf(out, "warning: %s\n", m->warnings[i]);
	if (m->nwarnings)
		fputc('\n', out);
	if (m->npaths)
		print_method(m, out);
}

void rp_print_text(const struct rp_model *m, FILE *out)
{
	emit_clean(out, render_text, m);
}

/* The `strace -c`-like table at the end of `cryptrace run`. */
static void render_summary(const struct rp_model *m, FILE *out)
{
	char b1[32], b2[32], b3[32], b4[32];
	size_t nproc = 0;
	for (size_t i = 0; i < m->nprocs; i++)
		nproc += !m->procs[i].superseded; /* a reopened file is the same process */
	if (total_calls(m) == 0) {
		char why[400];
		rp_nothing_reason(m, why, sizeof(why));
		fprintf(out, "cryptrace: no crypto calls were seen in %zu process(es): %s\n", nproc, why);
		return;
	}
	fprintf(out, "cryptrace: %zu process(es)\n", nproc);
	fprintf(out, "%12s %9s %9s %9s %9s %8s  %s\n", "calls", "bytes", "wall", "user", "sys", "MB/s",
		"path");
	for (size_t i = 0; i < m->npaths; i++) {
		const struct rp_path *p = &m->paths[i];
		const struct rp_derived *d = &p->d;
		char mbw[24] = "-";
		bool cost_known;
		double cost = rp_path_cost_ns(p, &cost_known); /* a TLS record's wait is not its cost */
		if (cost_known && cost > 0)
			snprintf(mbw, sizeof(mbw), "%.1f", (double)p->st.bytes * 1e3 / cost);
		fprintf(out, "%12llu %9s %9s %9s %9s %8s  %s %.*s %.*s %s\n", (unsigned long long)p->st.calls,
			rp_fmt_bytes(b1, sizeof(b1), (double)p->st.bytes),
			d->wall_known ? rp_fmt_ns(b2, sizeof(b2), d->wall_ns) : "-",
			d->cpu_known ? rp_fmt_ns(b3, sizeof(b3), d->user_ns) : "-",
			d->cpu_known ? rp_fmt_ns(b4, sizeof(b4), d->sys_ns) : "-", mbw,
			ct_api_name(p->def.api), (int)p->def.impl.len, p->def.impl.p, (int)p->def.cipher.len,
			p->def.cipher.p, ct_dir_name(p->def.dir));
	}
	/* One line per kind of finding of warning severity or above: the report has the detail. */
	for (size_t i = 0; i < m->nfindings; i++) {
		const struct rp_finding *f = &m->findings[i];
		bool seen = false;
		size_t count = 0;
		for (size_t k = 0; k < m->nfindings; k++) {
			seen |= k < i && !strcmp(m->findings[k].kind, f->kind);
			count += !strcmp(m->findings[k].kind, f->kind);
		}
		if (seen || f->severity < RP_WARNING)
			continue;
		fprintf(out, "cryptrace: [%s] %s", rp_severity_name(f->severity), f->kind);
		if (count > 1)
			fprintf(out, " (x%zu)", count);
		fprintf(out, ": see `cryptrace report`\n");
	}
}

void rp_print_summary(const struct rp_model *m, FILE *out)
{
	emit_clean(out, render_summary, m);
}
