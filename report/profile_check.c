/* SPDX-License-Identifier: MIT */
/*
 * profile_check.c - the hooks and the CPU profile checked against each other, per process. The
 * hooks time the cipher calls exactly (their user CPU); the profile samples the code that ran.
 * The calls run cipher code (AES, GHASH...) and the code around it: EVP's dispatch, the
 * provider, the preload's own hook. So the calls' CPU must lie between the cipher code the
 * profile saw (least: what if every cipher instruction ran inside a hooked call) and every
 * sample in the modules a hooked call runs in plus the cipher code elsewhere (most), each give
 * or take its sampling error. Below the least, cipher work ran outside the hooked calls (a
 * second libcrypto, a static OpenSSL, another library, calls through dlsym'd pointers); above
 * the most, the calls took time that was not spent in their code (a lock, a wait).
 *
 * The error of n samples is Poisson's: sigma = sqrt(n), of the larger of the count and the
 * count the hooks' time predicts (the variance is the true mean: the larger is the cautious
 * one), and the bound is 3 sigma plus 5 % of the hooks' time (what the sampling itself is off
 * by: tests/profile checks samples x period against the process's CPU within 10 %, and
 * measured 1.5-4 % low). tests/profile/profile.py applies the same rule to a loop of EVP calls.
 */
#include "model.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#define CHECK_SIGMAS 3.0
#define CHECK_SLACK 0.05
/* The sampling clock ahead of the process's CPU by more than this is not the sampler's own error
 * (1.5-4 % low, tests/profile): it counted time the process did not get. */
#define CLOCK_AHEAD 1.05
#define CLOCK_MIN_SAMPLES 100

/* The categories of cipher code: what a hooked cipher call runs. Digests, MACs and public-key
 * code are crypto the hooks do not time (a TLS handshake's SHA-256 in libcrypto is no call). */
static bool cipher_category(const char *c)
{
	static const char *const names[] = { "AES", "GHASH", "ChaCha20", "Poly1305" };
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(c, names[i]))
			return true;
	return false;
}

/* The libcrypto the hooks forward to: the first one the process listed (multiple_libcrypto.c
 * says why), as a path; empty when the process did not list one (then by name). */
static struct ct_str hooked_libcrypto(const struct rp_proc *p)
{
	for (unsigned k = 0, np = rp_str_nparts(p->proc.crypto_libs, '\n'); k < np; k++) {
		struct ct_str l = rp_str_part(p->proc.crypto_libs, '\n', k);
		if (rp_str_starts(rp_str_basename(l), "libcrypto"))
			return l;
	}
	return (struct ct_str){ 0 };
}

/* The same file by two names: equal, equal but for a leading /usr (a merged /usr: the kernel maps
 * /usr/lib/x86_64-linux-gnu/libcrypto.so.3 where the loader's list says /lib/...), or the same
 * inode when both names exist here. */
static bool same_file(struct ct_str a, struct ct_str b)
{
	if (rp_str_eq(a, b))
		return true;
	struct ct_str ua = rp_str_starts(a, "/usr/") ? (struct ct_str){ a.p + 4, a.len - 4 } : a;
	struct ct_str ub = rp_str_starts(b, "/usr/") ? (struct ct_str){ b.p + 4, b.len - 4 } : b;
	if (rp_str_eq(ua, ub))
		return true;
	char pa[4096], pb[4096];
	struct stat sa, sb;
	snprintf(pa, sizeof(pa), "%.*s", (int)a.len, a.p);
	snprintf(pb, sizeof(pb), "%.*s", (int)b.len, b.p);
	return stat(pa, &sa) == 0 && stat(pb, &sb) == 0 && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

/* A module a hooked call runs code in: the hooked libcrypto, OpenSSL's provider and engine
 * modules, the preload (its hook, or a route's own AES), and libgcrypt when its cipher calls were
 * hooked (gcrypt). */
static bool hooked_module(const struct rp_profile_item *it, struct ct_str lib, bool gcrypt)
{
	if (!strncmp(it->module, "libcryptrace", 12) || rp_str_find(it->path, "/ossl-modules/").p ||
	    rp_str_find(it->path, "/engines-").p || (gcrypt && !strncmp(it->module, "libgcrypt", 9)))
		return true;
	if (!strncmp(it->module, "libcrypto", 9))
		return !lib.len || same_file(it->path, lib);
	return false;
}

/* The report's selection cuts paths out (--cipher, --api, --path, sizes, a time window): the
 * profile still covers all the work, so the two cannot be compared. */
static bool selection_cuts(const struct rp_model *m)
{
	const struct rp_filter *f = &m->filter;
	return m->window.active || f->api || f->cipher_glob || f->min_size || f->max_size || f->path_cut;
}

static double bound_s(double n, double lambda, double sample_s, double hooks_s)
{
	return CHECK_SIGMAS * sqrt(fmax(fmax(n, lambda), 1)) * sample_s + CHECK_SLACK * hooks_s;
}

/* The cpu-clock's timer runs on wall time while the task is on its CPU, and on a VM that includes
 * time the hypervisor took the vCPU away (steal; interrupts too): then the samples over-count the
 * process's CPU, by 20-30 % on a loaded host. The kernel's own per-task CPU time (utime, taken at
 * exit) leaves steal out: where the samples exceed it beyond the sampler's error, a sample stands
 * for its share of that time instead of a full period. Only against the exit's snapshot (a
 * process killed early has an older one), and never up: a profile that began late (attach) has
 * fewer samples than the process's lifetime CPU, and that is no error. */
void rp_profile_sample_time(struct rp_proc *p)
{
	struct rp_profile *pr = &p->prof;
	pr->sample_s = pr->period_us / 1e6;
	uint64_t n = pr->samples + pr->lost;
	if (!pr->has || !pr->period_us || n < CLOCK_MIN_SAMPLES || !p->has_proc ||
	    !(p->proc.flags & CT_PROC_FINAL) || !p->proc.utime_ns)
		return;
	double user_s = p->proc.utime_ns / 1e9;
	if ((double)n * pr->sample_s > CLOCK_AHEAD * user_s)
		pr->sample_s = user_s / (double)n;
}

void rp_profile_hooks_check(const struct rp_model *m, struct rp_proc *p)
{
	struct rp_profile *pr = &p->prof;
	struct rp_hooks_check *c = &pr->check;
	memset(c, 0, sizeof(*c));
	if (!pr->has || !pr->samples || !pr->period_us || selection_cuts(m))
		return;
	bool any = false, gcrypt = false;
	for (size_t k = 0; k < p->npaths; k++) {
		const struct rp_path *pp = &p->paths[k];
		if ((pp->def.api != CT_API_EVP && pp->def.api != CT_API_AES &&
		     pp->def.api != CT_API_GCRYPT) ||
		    !rp_path_selected(m, pp))
			continue;
		any = true;
		gcrypt |= pp->def.api == CT_API_GCRYPT;
		/* in-process code runs on the CPU while timed: WALL is its CPU when none was sampled */
		if (pp->d.cpu_known)
			c->hooks_s += pp->d.user_ns / 1e9;
		else if (pp->d.wall_known && !rp_str_starts(pp->def.impl, "engine:"))
			c->hooks_s += pp->d.wall_ns / 1e9;
	}
	if (!any)
		return;
	struct ct_str lib = hooked_libcrypto(p);
	snprintf(c->hooked_module, sizeof(c->hooked_module), "%.*s", (int)rp_str_basename(lib).len,
		 rp_str_basename(lib).p);
	if (!lib.len)
		snprintf(c->hooked_module, sizeof(c->hooked_module), gcrypt ? "libgcrypt" : "libcrypto");
	double sample_s = rp_profile_sample_s(pr); /* a period, less under steal */
	uint64_t cipher = 0, hooked = 0, outside = 0;
	uint64_t out_best = 0;
	for (size_t k = 0; k < pr->nitems; k++) {
		const struct rp_profile_item *it = &pr->items[k];
		bool in = hooked_module(it, lib, gcrypt), ciph = cipher_category(it->category);
		cipher += ciph ? it->samples : 0;
		hooked += in ? it->samples : 0;
		if (!ciph || in)
			continue;
		outside += it->samples;
		/* the outside module with the most cipher code: its samples summed over its items */
		uint64_t mod = 0;
		for (size_t j = 0; j < pr->nitems; j++)
			if (cipher_category(pr->items[j].category) &&
			    rp_str_eq(pr->items[j].path, it->path) &&
			    !strcmp(pr->items[j].module, it->module))
				mod += pr->items[j].samples;
		if (mod > out_best) {
			out_best = mod;
			c->outside_path = it->path;
			snprintf(c->outside_module, sizeof(c->outside_module), "%s", it->module);
		}
	}
	double lambda = c->hooks_s / sample_s;
	c->made = true;
	c->profile_s = (double)cipher * sample_s;
	c->error_s = bound_s((double)cipher, lambda, sample_s, c->hooks_s);
	/* samples the kernel lost (a full ring buffer) may have been anywhere: the most has them */
	uint64_t most = hooked + outside + pr->lost;
	c->profile_max_s = (double)most * sample_s;
	c->error_max_s = bound_s((double)most, lambda, sample_s, c->hooks_s);
	c->outside_s = (double)outside * sample_s;
	if (c->hooks_s < c->profile_s - c->error_s)
		c->verdict = 1;
	else if (c->hooks_s > c->profile_max_s + c->error_max_s)
		c->verdict = -1;
}
