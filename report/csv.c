/* SPDX-License-Identifier: MIT */
/*
 * csv.c - `cryptrace report --csv`: one row per merged path and non-empty request-size bucket, for
 * spreadsheets. RFC 4180: CRLF line ends, a header row, fields with commas, quotes or line breaks
 * quoted with quotes doubled. Unknown figures are empty fields, never 0.
 */
#include "views.h"

#include <string.h>

static void num(FILE *f, double v, bool known, const char *fmt)
{
	fputc(',', f);
	if (known)
		fprintf(f, fmt, v);
}

void rp_print_csv(const struct rp_model *m, FILE *f)
{
	fputs("pids,api,impl,cipher,dir,key_bits,bucket_low,calls,bytes,wall_ns,user_ns,sys_ns,"
	      "wall_MBps,cpu_MBps\r\n",
	      f);
	for (size_t i = 0; i < m->npaths; i++) {
		const struct rp_path *p = &m->paths[i];
		const struct rp_derived *d = &p->d;
		char pids[256] = "";
		size_t used = 0;
		for (size_t k = 0; k < p->pids.n && used + 12 < sizeof(pids); k++)
			used += (size_t)snprintf(pids + used, sizeof(pids) - used, "%s%u", k ? " " : "",
						 p->pids.v[k]);
		double share_user = d->cpu_known && d->wall_ns > 0 ? d->user_ns / d->wall_ns : 0;
		double share_sys = d->cpu_known && d->wall_ns > 0 ? d->sys_ns / d->wall_ns : 0;
		for (unsigned b = 0; b < CT_SIZE_BUCKETS; b++) {
			const struct ct_size_bucket *sb = &p->st.size[b];
			if (!sb->calls)
				continue;
			double wall = d->bucket_wall_ns[b];
			double w = rp_bucket_wall_bps(p, b), c = rp_bucket_cpu_bps(p, b);
			rp_csv_field(f, pids, strlen(pids));
			fputc(',', f);
			const char *api = ct_api_name(p->def.api);
			rp_csv_field(f, api, strlen(api));
			fputc(',', f);
			rp_csv_field(f, p->def.impl.p, p->def.impl.len);
			fputc(',', f);
			rp_csv_field(f, p->def.cipher.p, p->def.cipher.len);
			fprintf(f, ",%s,%u,%llu,%llu,%llu", ct_dir_name(p->def.dir), p->def.key_bits,
				(unsigned long long)ct_size_bucket_low(b), (unsigned long long)sb->calls,
				(unsigned long long)sb->bytes);
			num(f, wall, d->wall_known, "%.0f");
			num(f, wall * share_user, d->wall_known && d->cpu_known, "%.0f");
			num(f, wall * share_sys, d->wall_known && d->cpu_known, "%.0f");
			num(f, w / 1e6, w > 0, "%.3f");
			num(f, c / 1e6, c > 0, "%.3f");
			fputs("\r\n", f);
		}
	}
}
