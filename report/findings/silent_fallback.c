/* SPDX-License-Identifier: MIT */
/*
 * silent_fallback.c - the `silent-fallback` finding: offload was requested and did not happen,
 * and the process's cipher work ran in its own software instead, without the program saying so.
 * Which software paths count depends on how the offload failed (a failed set-up, failed kernel
 * operations, or a path served by something other than what was requested); the set-up failures
 * themselves are offload_failed.c's findings.
 */
#include "findings.h"

#include <stdlib.h>
#include <string.h>

static bool requested_differs(const struct rp_path *p)
{
	return p->def.requested.len && !rp_str_eq(p->def.requested, p->def.impl) && p->st.calls;
}

/* "aes-128-cbc" -> "cbc". */
static struct ct_str cipher_mode(struct ct_str c)
{
	return rp_str_after_last(c, '-');
}

/*
 * A software path whose work was meant for something else (requested "engine:afalg", served by
 * "provider:default") fell back only if that something serves this mode elsewhere in the trace:
 * an afalg engine that does CBC is not failing when the DRBG's AES-256-CTR stays in the default
 * provider, but an AES-192-CBC context it refused is a fallback. A kernel path's requested
 * algorithm name ("cbc(aes)" -> "kernel:cbc-aes-aesni") is a name, not a fallback.
 */
static bool fell_back(const struct rp_model *m, const struct rp_path *p)
{
	if (!rp_path_own_software(p) || !requested_differs(p))
		return false;
	for (size_t i = 0; i < m->nprocs; i++)
		for (size_t k = 0; k < m->procs[i].npaths; k++) {
			const struct rp_path *o = &m->procs[i].paths[k];
			if (o->st.calls && rp_str_eq(o->def.impl, p->def.requested) &&
			    rp_str_eq(cipher_mode(o->def.cipher), cipher_mode(p->def.cipher)))
				return true;
		}
	return false;
}

static int cmp_bytes_desc(const void *a, const void *b)
{
	const struct rp_path *x = *(const struct rp_path *const *)a;
	const struct rp_path *y = *(const struct rp_path *const *)b;
	return x->st.bytes < y->st.bytes ? 1 : x->st.bytes > y->st.bytes ? -1 : 0;
}

/* How an offload failed in a process: at load, init or session set-up (the failure rarely names
 * the cipher, so every software path may carry the work meant for it), or only at operation time
 * on kernel paths (their ciphers are known: only software paths of those count). */
enum offload_failure { OFFLOAD_OK = 0, OFFLOAD_OPS_ONLY = 1, OFFLOAD_SETUP = 2 };

/* A kernel path of p whose operations failed and whose cipher is sw's. */
static bool kernel_ops_failed_for(const struct rp_proc *p, const struct rp_path *sw)
{
	for (size_t k = 0; k < p->npaths; k++) {
		const struct rp_path *kp = &p->paths[k];
		if (rp_path_reached_kernel(kp) && kp->st.errors && rp_str_eq(kp->def.cipher, sw->def.cipher))
			return true;
	}
	return false;
}

/* Failures that say an offload did not work in this process (why: what they were; *route_only:
 * every one of them was a route's fallback, whose detail says why the route could not serve,
 * e.g. "libcrypto has no providers (OpenSSL 1.x)"). */
static enum offload_failure offload_failed(const struct rp_proc *p, char *why, size_t cap, bool *route_only)
{
	enum offload_failure how = OFFLOAD_OK;
	why[0] = 0;
	*route_only = true;
	for (size_t k = 0; k < p->nevents; k++) {
		const struct ct_event *e = &p->events[k].ev;
		bool bad = false;
		switch (e->kind) {
		case CT_EV_ENGINE_REQUEST:
		case CT_EV_PROVIDER_LOAD:
			bad = rp_offload_module_failed(e);
			break;
		case CT_EV_SESSION:
			bad = rp_event_failed(e);
			break;
		case CT_EV_CALL_FAILED:
			bad = rp_offload_call_failed(e);
			break;
		case CT_EV_FALLBACK:
			bad = true;
			break;
		default:
			break;
		}
		if (!bad)
			continue;
		how = OFFLOAD_SETUP;
		char eb[32];
		bool route = e->kind == CT_EV_FALLBACK;
		*route_only &= route;
		rp_finding_cat(why, cap, "%s%s %.*s%s%s%s%.*s", why[0] ? "; " : "",
			       ct_event_kind_name(e->kind), S(e->call), e->err ? " " : "",
			       e->err ? rp_errno_name(e->err, eb, sizeof(eb)) : "", route ? ": " : "",
			       route ? (int)e->detail.len : 0, route ? e->detail.p : "");
	}
	for (size_t k = 0; k < p->npaths; k++) {
		const struct rp_path *pp = &p->paths[k];
		if (rp_path_reached_kernel(pp) && pp->st.errors) {
			rp_finding_cat(why, cap, "%s%llu failed %s operations on %.*s (%.*s)",
				       why[0] ? "; " : "", (unsigned long long)pp->st.errors,
				       ct_api_name(pp->def.api), S(pp->def.impl), S(pp->def.cipher));
			if (how == OFFLOAD_OK)
				how = OFFLOAD_OPS_ONLY;
			*route_only = false;
		}
	}
	*route_only &= how != OFFLOAD_OK;
	return how;
}

/* Paths served by something other than what was requested, grouped by the request. */
static bool paths_fell_back(const struct rp_model *m, const struct rp_proc *p, char *why, size_t cap)
{
	bool any = false;
	for (size_t k = 0; k < p->npaths; k++) {
		const struct rp_path *pp = &p->paths[k];
		if (!fell_back(m, pp))
			continue;
		any = true;
		bool earlier = false;
		size_t n = 0;
		for (size_t j = 0; j < p->npaths; j++) {
			const struct rp_path *o = &p->paths[j];
			if (!fell_back(m, o) || !rp_str_eq(o->def.requested, pp->def.requested))
				continue;
			earlier |= j < k;
			n++;
		}
		if (!earlier)
			rp_finding_cat(why, cap,
				       "%s%.*s was requested, %.*s served it "
				       "(%zu path(s))",
				       why[0] ? "; " : "", S(pp->def.requested), S(pp->def.impl), n);
	}
	return any;
}

/* Does this path's work count as fallen back? */
static bool fallback_path(const struct rp_model *m, const struct rp_proc *pr, const struct rp_path *p,
			  enum offload_failure failed)
{
	return rp_path_own_software(p) && p->st.calls && rp_path_selected(m, p) &&
	       (failed == OFFLOAD_SETUP || fell_back(m, p) ||
		(failed == OFFLOAD_OPS_ONLY && kernel_ops_failed_for(pr, p)));
}

void rp_eval_silent_fallback(struct rp_model *m)
{
	for (size_t i = 0; i < m->nprocs; i++) {
		const struct rp_proc *p = &m->procs[i];
		if (!rp_proc_shown(m, p))
			continue;
		char why[600];
		/* After a failure at set-up every software path counts (the failure rarely names its
		 * cipher); after failed kernel operations, the software paths of those ciphers; without
		 * a failure, only the paths that demonstrably fell back. */
		bool route_only;
		enum offload_failure failed = offload_failed(p, why, sizeof(why), &route_only);
		bool fell = paths_fell_back(m, p, why, sizeof(why));
		route_only &= !fell;
		if (!failed && !fell)
			continue;
		uint64_t calls = 0, bytes = 0;
		size_t npaths = 0;
		for (size_t k = 0; k < p->npaths; k++) {
			const struct rp_path *pp = &p->paths[k];
			if (fallback_path(m, p, pp, failed)) {
				calls += pp->st.calls;
				bytes += pp->st.bytes;
				npaths++;
			}
		}
		if (!calls)
			continue;
		struct rp_finding *f = rp_finding_add(m, "silent-fallback", RP_ERROR, p->hdr.pid);
		if (!f)
			return;
		char b[32];
		rp_fmt_bytes(b, sizeof(b), (double)bytes);
		if (route_only)
			CAT(message,
			    "The route in force (CRYPTRACE_ROUTE=%.*s) could not serve %llu cipher calls "
			    "(%s): they ran in this process's own libcrypto instead (%s):",
			    S(p->hdr.route_spec), (unsigned long long)calls, b, why);
		else
			CAT(message,
			    "Offload was requested but did not happen: %llu cipher calls (%s) ran in "
			    "this process's own software instead:",
			    (unsigned long long)calls, b);
		const struct rp_path **sorted = calloc(npaths, sizeof(*sorted));
		size_t ns = 0;
		for (size_t k = 0; k < p->npaths && sorted; k++) {
			const struct rp_path *pp = &p->paths[k];
			if (fallback_path(m, p, pp, failed))
				sorted[ns++] = pp;
		}
		if (ns > 1)
			qsort(sorted, ns, sizeof(*sorted), cmp_bytes_desc);
		for (size_t k = 0; k < ns; k++) {
			const struct rp_path *pp = sorted[k];
			rp_fmt_bytes(b, sizeof(b), (double)pp->st.bytes);
			CAT(message, " %.*s %s in %.*s (%llu calls, %s);", S(pp->def.cipher),
			    ct_dir_name(pp->def.dir), S(pp->def.impl), (unsigned long long)pp->st.calls, b);
		}
		free(sorted);
		size_t n = strlen(f->message);
		if (n && f->message[n - 1] == ';')
			f->message[n - 1] = '.';
		if (!route_only)
			CAT(message, " The program did not report it.");
		CAT(evidence, "%s; %zu software path(s), %llu calls, %llu bytes", why, npaths,
		    (unsigned long long)calls, (unsigned long long)bytes);
		if (route_only)
			CAT(fix,
			    "Remove what the fallback names (docs/routes.md says what each target "
			    "serves, docs/openssl-versions.md on which OpenSSL), or drop the rule for "
			    "these calls: they ran as they would without the route.");
		else
			CAT(fix,
			    "Fix the offload (see engine-failed / session-failed), or stop requesting "
			    "it if software is fast enough here; check offload with `cryptrace report` "
			    "after configuration changes.");
	}
}
