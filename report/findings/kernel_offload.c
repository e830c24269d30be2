/* SPDX-License-Identifier: MIT */
/*
 * kernel_offload.c - is sending the work through the kernel worth it? `kernel-software-driver`: a
 * /dev/crypto or AF_ALG path served by a generic software or CPU-instruction kernel driver, which
 * does what in-process code does and adds system calls and copies; `small-requests-offload`:
 * requests below the crossover size (measured from the trace) cost more in the kernel
 * interface's fixed cost per call than in AES. Both compare with the in-process cost per byte.
 */
#include "findings.h"

#include <math.h>

/* small-requests-offload: in-process cost when the trace has nothing better (about 2 GB/s). */
#define INPROC_DEFAULT_NS_PER_BYTE 0.5
#define SMALL_OFFLOAD_MIN_CALLS 10

static const struct rp_proc *first_header(const struct rp_model *m)
{
	for (size_t i = 0; i < m->nprocs; i++)
		if (m->procs[i].has_hdr && rp_proc_shown(m, &m->procs[i]))
			return &m->procs[i];
	return NULL;
}

/* In-process cost per byte for a cipher: from an in-process path in the model, else from the
 * calibrated bound; *how says which. */
static double inproc_ns_per_byte(const struct rp_model *m, struct ct_str cipher, const char **how)
{
	for (size_t i = 0; i < m->npaths; i++) {
		const struct rp_path *p = &m->paths[i];
		if (rp_path_own_software(p) && rp_str_eq(p->def.cipher, cipher) && p->d.wall_known &&
		    p->st.bytes) {
			*how = "the in-process path in this trace";
			return p->d.wall_ns / (double)p->st.bytes;
		}
	}
	const struct rp_proc *h = first_header(m);
	const char *from;
	double bound = h ? rp_aesni_bound(h, &from) : 0;
	if (bound > 0 && h->hdr.tsc_hz) {
		*how = h->hdr.aesni_cpb_milli ? "the in-process AES bound calibrated at trace time"
					      : "the in-process AES bound measured in the traced process";
		return bound / ((double)h->hdr.tsc_hz / 1e9);
	}
	*how = "a nominal in-process AES cost of 0.5 ns/byte (no better figure in the trace)";
	return INPROC_DEFAULT_NS_PER_BYTE;
}

/* ---- kernel-software-driver */

void rp_eval_kernel_software_driver(struct rp_model *m)
{
	for (size_t i = 0; i < m->npaths; i++) {
		const struct rp_path *p = &m->paths[i];
		if (!rp_path_reached_kernel(p) || !p->st.calls ||
		    !(p->def.flags & (CT_PATH_SW_DRIVER | CT_PATH_CPU_DRIVER)))
			continue;
		bool sw = p->def.flags & CT_PATH_SW_DRIVER;
		struct rp_finding *f = rp_finding_add(m, "kernel-software-driver", RP_WARNING, 0);
		if (!f)
			return;
		const char *how;
		double in_nspb = inproc_ns_per_byte(m, p->def.cipher, &how);
		CAT(message,
		    "%.*s through %s is served by the kernel driver %.*s, which %s. The offload "
		    "buys nothing: every request also pays system calls and copies.",
		    S(p->def.cipher), ct_api_name(p->def.api), S(p->def.impl),
		    sw ? "is generic software code" : "runs on the same CPU instructions as in-process code");
		if (p->d.wall_known && p->st.bytes) {
			double k_nspb = p->d.wall_ns / (double)p->st.bytes;
			CAT(message,
			    " It cost %.2f ns per byte against %.2f ns per byte in-process (%.1fx), "
			    "by %s.",
			    k_nspb, in_nspb, k_nspb / in_nspb, how);
		}
		CAT(evidence,
		    "path %zu: impl=%.*s flags=%s calls=%llu bytes=%llu syscalls=%llu (%.1f per "
		    "call)",
		    i + 1, S(p->def.impl), sw ? "sw-driver" : "cpu-driver", (unsigned long long)p->st.calls,
		    (unsigned long long)p->st.bytes, (unsigned long long)p->st.syscalls,
		    (double)p->st.syscalls / (double)p->st.calls);
		const bool arm = rp_model_on_arm(m);
		CAT(fix,
		    "Do the work in-process through EVP (the default provider uses %s), or load "
		    "a hardware driver for this algorithm if the machine has one%s.",
		    arm ? "the ARMv8 Crypto Extensions" : "AES-NI",
		    !sw   ? ""
		    : arm ? " (for the ARMv8 Crypto Extensions in the kernel: modprobe aes_ce_blk)"
			  : " (for AES-NI in the kernel: modprobe aesni_intel)");
	}
}

/* ---- small-requests-offload */

void rp_eval_small_requests_offload(struct rp_model *m)
{
	for (size_t i = 0; i < m->npaths; i++) {
		const struct rp_path *p = &m->paths[i];
		if (!rp_path_reached_kernel(p) || !p->st.calls || !p->d.wall_known)
			continue;
		/* Per-call kernel cost vs size over the buckets: fit cost = overhead + slope x size. */
		double sx = 0, sy = 0, sxx = 0, sxy = 0;
		unsigned nb = 0, first = CT_SIZE_BUCKETS;
		for (unsigned b = 0; b < CT_SIZE_BUCKETS; b++) {
			const struct ct_size_bucket *sb = &p->st.size[b];
			if (!sb->calls)
				continue;
			double x = (double)sb->bytes / (double)sb->calls;
			double y = p->d.bucket_wall_ns[b] / (double)sb->calls;
			sx += x;
			sy += y;
			sxx += x * x;
			sxy += x * y;
			nb++;
			if (first == CT_SIZE_BUCKETS)
				first = b;
		}
		if (!nb)
			continue;
		const char *how;
		double in_nspb = inproc_ns_per_byte(m, p->def.cipher, &how);
		double overhead = -1;
		double den = nb * sxx - sx * sx;
		if (nb >= 2 && den > 0) {
			double slope = (nb * sxy - sx * sy) / den;
			overhead = (sy - slope * sx) / nb;
		}
		if (overhead <= 0) { /* one bucket, or a fit that says nothing: smallest bucket's cost */
			const struct ct_size_bucket *sb = &p->st.size[first];
			double size = (double)sb->bytes / (double)sb->calls;
			overhead = p->d.bucket_wall_ns[first] / (double)sb->calls - size * in_nspb;
		}
		if (overhead <= 0)
			continue;
		double crossover = overhead / in_nspb;
		uint64_t below = 0, below_bytes = 0;
		for (unsigned b = 0; b < CT_SIZE_BUCKETS; b++) {
			const struct ct_size_bucket *sb = &p->st.size[b];
			if (sb->calls && (double)sb->bytes / (double)sb->calls < crossover) {
				below += sb->calls;
				below_bytes += sb->bytes;
			}
		}
		if (below < SMALL_OFFLOAD_MIN_CALLS)
			continue;
		struct rp_finding *f = rp_finding_add(m, "small-requests-offload", RP_WARNING, 0);
		if (!f)
			return;
		char ov[32], cb[32];
		CAT(message,
		    "%llu of %llu %.*s requests through %s were smaller than %s, the size below "
		    "which the kernel interface's fixed cost per call (about %s) exceeds the work "
		    "itself done in-process.",
		    (unsigned long long)below, (unsigned long long)p->st.calls, S(p->def.cipher),
		    ct_api_name(p->def.api), rp_fmt_bytes(cb, sizeof(cb), crossover),
		    rp_fmt_ns(ov, sizeof(ov), overhead));
		CAT(evidence, "per-call cost by size:");
		for (unsigned b = 0; b < CT_SIZE_BUCKETS; b++) {
			const struct ct_size_bucket *sb = &p->st.size[b];
			if (!sb->calls)
				continue;
			char c[32];
			CAT(evidence, " %llu B: %s;", (unsigned long long)ct_size_bucket_low(b),
			    rp_fmt_ns(c, sizeof(c), p->d.bucket_wall_ns[b] / (double)sb->calls));
		}
		CAT(evidence,
		    " in-process %.2f ns/byte by %s; crossover %.0f bytes; %llu bytes in the "
		    "requests below it",
		    in_nspb, how, crossover, (unsigned long long)below_bytes);
		CAT(fix,
		    "Send requests below %s through the in-process path (e.g. CRYPTRACE_ROUTE "
		    "'%.*s:afalg>=%llu,%s'), or batch small requests into larger ones.",
		    cb, S(p->def.cipher), (unsigned long long)fmin(ceil(crossover), 1e18),
		    rp_cpu_route_target(m));
	}
}
