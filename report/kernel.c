/* SPDX-License-Identifier: MIT */
/*
 * kernel.c - the figures of a kernel-interface path (/dev/crypto, AF_ALG) that the text and HTML
 * reports show in their kernel section, in the shape of the 2011 cryptodev-vs-AF_ALG comparison
 * on the Linux crypto list (story 3, docs/stories.md): what a session set-up ("init") and
 * a teardown ("deinit") cost, what one operation costs by request size, how many syscalls each
 * operation made, and how many requests were spliced rather than copied. Everything comes from the path's merged counters; nothing is re-measured.
 */
#include "model.h"

bool rp_path_is_kernel(const struct rp_path *p)
{
	return p->def.api == CT_API_CRYPTODEV || p->def.api == CT_API_AFALG;
}

bool rp_model_has_kernel(const struct rp_model *m)
{
	for (size_t i = 0; i < m->npaths; i++)
		if (rp_path_is_kernel(&m->paths[i]))
			return true;
	return false;
}

/* Operations of all request sizes: syscalls, set-up and teardown are counted per path, not per
 * size bucket, so a --min-size/--max-size cut must not shrink what they are divided by. */
static uint64_t all_ops(const struct rp_path *p)
{
	return p->size_cut ? p->calls_all_sizes : p->st.calls;
}

void rp_kernel_figures(const struct rp_path *p, struct rp_kernel_fig *k)
{
	const struct ct_path_stats *s = &p->st;
	uint64_t ops = all_ops(p);
	*k = (struct rp_kernel_fig){
		.setup_calls = s->setup_calls,
		.teardown_calls = s->teardown_calls,
		.setup_ns = s->setup_calls ? (double)s->setup_ns / (double)s->setup_calls : -1,
		.teardown_ns = s->teardown_calls ? (double)s->teardown_ns / (double)s->teardown_calls : -1,
		.ops = ops,
		.spliced = s->spliced_calls,
		.copied = ops > s->spliced_calls ? ops - s->spliced_calls : 0,
		.syscalls_per_op = ops ? (double)s->syscalls / (double)ops : -1,
		.session_ns_per_op = ops ? (double)(s->setup_ns + s->teardown_ns) / (double)ops : -1,
	};
}

double rp_kernel_op_ns(const struct rp_path *p, unsigned b)
{
	const struct ct_size_bucket *sb = &p->st.size[b];
	if (!p->d.wall_known || !sb->calls || p->d.bucket_wall_ns[b] <= 0)
		return -1;
	return p->d.bucket_wall_ns[b] / (double)sb->calls;
}

double rp_kernel_op_bps(const struct rp_path *p, unsigned b)
{
	double op = rp_kernel_op_ns(p, b);
	if (op <= 0 || !p->st.size[b].bytes)
		return -1;
	return (double)p->st.size[b].bytes * 1e9 / (op * (double)p->st.size[b].calls);
}

double rp_kernel_full_bps(const struct rp_path *p, unsigned b)
{
	struct rp_kernel_fig k;
	rp_kernel_figures(p, &k);
	double op = rp_kernel_op_ns(p, b);
	if (op <= 0 || k.session_ns_per_op < 0 || !p->st.size[b].bytes)
		return -1;
	return (double)p->st.size[b].bytes * 1e9 / ((op + k.session_ns_per_op) * (double)p->st.size[b].calls);
}
