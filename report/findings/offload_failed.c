/* SPDX-License-Identifier: MIT */
/*
 * offload_failed.c - set-ups that failed: `engine-failed` (an offload engine or provider was
 * asked for and could not load or initialise, with what OpenSSL's error queue said and the failed
 * kernel calls beneath it), `provider-absent` (a provider or engine that is not an offload, such
 * as stunnel's FIPS probe, is not there: information, since no cipher work moves) and
 * `session-failed` (a /dev/crypto or AF_ALG session could not be set up). Where the work went
 * instead is silent_fallback.c's.
 */
#include "findings.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

/* ---- what a failed engine or provider request says */

/* The preload appends what OpenSSL's error queue said about a failed engine or provider call to
 * the event's parameters after this separator (preload/hooks/engine.c). */
#define OSSL_ERROR_SEP "; openssl error: "

/* detail -> the call's parameters and OpenSSL's reason (empty when it gave none). */
static void split_ossl_reason(struct ct_str detail, struct ct_str *params, struct ct_str *reason)
{
	struct ct_str at = rp_str_find(detail, OSSL_ERROR_SEP);
	*params = detail;
	*reason = (struct ct_str){ .p = "", .len = 0 };
	if (!at.p)
		return;
	params->len = (uint32_t)(at.p - detail.p);
	reason->p = at.p + strlen(OSSL_ERROR_SEP);
	reason->len = at.len - (uint32_t)strlen(OSSL_ERROR_SEP);
}

/* "filename(/usr/lib/.../nosuch.so)" in OpenSSL's DSO error: the module it could not load. */
static struct ct_str missing_module(struct ct_str reason)
{
	struct ct_str none = { .p = NULL, .len = 0 };
	if (!rp_str_find(reason, "cannot open shared object file").p)
		return none;
	struct ct_str f = rp_str_find(reason, "filename(");
	if (!f.p)
		return none;
	f.p += 9;
	f.len -= 9;
	for (uint32_t i = 0; i < f.len; i++)
		if (f.p[i] == ')')
			return (struct ct_str){ .p = f.p, .len = i };
	return none;
}

/* Requested by OpenSSL's configuration module (openssl.cnf or $OPENSSL_CONF), not by the program
 * itself: the call site runs through CONF_modules_load / OPENSSL_config / OPENSSL_init_crypto's
 * config step. */
static bool requested_by_config(struct ct_str callsite)
{
	return rp_str_find(callsite, "CONF_modules").p || rp_str_find(callsite, "OPENSSL_config").p ||
	       rp_str_find(callsite, "ossl_config").p;
}

/* A failed ENGINE_REQUEST or PROVIDER_LOAD event, and what its detail says. */
struct module_failure {
	const struct rp_proc *p;
	const struct ct_event *e;
	struct ct_str params, reason; /* the call's parameters; OpenSSL's reason ("" without one) */
	struct ct_str missing;        /* the module file OpenSSL could not open (.p NULL: none) */
	bool by_config;               /* the OpenSSL configuration file asked for it */
};

/* Calls judge on each failed engine or provider request of the shown processes: the requests for
 * an offload (offload true), or those for a module that is not one. judge returns false when out
 * of memory, which ends the walk. */
static void each_module_failure(struct rp_model *m, bool offload,
				bool (*judge)(struct rp_model *m, const struct module_failure *x))
{
	for (size_t i = 0; i < m->nprocs; i++) {
		const struct rp_proc *p = &m->procs[i];
		if (!rp_proc_shown(m, p))
			continue;
		for (size_t k = 0; k < p->nevents; k++) {
			const struct ct_event *e = &p->events[k].ev;
			if (offload ? !rp_offload_module_failed(e)
				    : !rp_non_offload_module(e) || !rp_event_failed(e))
				continue;
			struct module_failure x = { .p = p, .e = e };
			split_ossl_reason(e->detail, &x.params, &x.reason);
			x.missing = missing_module(x.reason);
			x.by_config = requested_by_config(e->callsite);
			if (!judge(m, &x))
				return;
		}
	}
}

/* The evidence both findings start with: what the request returned, how often. */
static void request_evidence(struct rp_finding *f, const struct ct_event *e)
{
	CAT(evidence, "%.*s returned %lld, %llu time(s)", S(e->call), (long long)e->ret,
	    (unsigned long long)(e->count ? e->count : 1));
}

/* ---- engine-failed */

/* The process's failed kernel-interface calls beneath the failed request (the afalg engine's
 * socket(AF_ALG)). */
static void list_call_failures(struct rp_finding *f, const struct rp_proc *p)
{
	unsigned shown = 0;
	for (size_t k = 0; k < p->nevents; k++) {
		const struct ct_event *e = &p->events[k].ev;
		if (!rp_offload_call_failed(e))
			continue;
		char eb[32];
		if (shown++ == 0)
			CAT(message, " Underneath, ");
		else if (shown <= 3)
			CAT(message, "; ");
		if (shown <= 3)
			CAT(message, "%.*s%s%.*s%s failed with %s (%s)", S(e->call),
			    e->detail.len ? " [" : "", S(e->detail), e->detail.len ? "]" : "",
			    rp_errno_name(e->err, eb, sizeof(eb)), e->err ? strerror(e->err) : "no errno");
		CAT(evidence, "; %.*s -> %s x%llu", S(e->call), rp_errno_name(e->err, eb, sizeof(eb)),
		    (unsigned long long)(e->count ? e->count : 1));
	}
	if (shown)
		CAT(message, ".");
	for (size_t k = 0; k < p->nevents; k++) {
		const struct ct_event *e = &p->events[k].ev;
		if (e->err == EAFNOSUPPORT && e->kind == CT_EV_CALL_FAILED) {
			CAT(message,
			    " EAFNOSUPPORT from socket() means this kernel has no AF_ALG support "
			    "(or a sandbox refuses it).");
			break;
		}
	}
}

/* Whether the process failed to open /dev/crypto (the cryptodev hooks record it). */
static bool dev_crypto_open_failed(const struct rp_proc *p)
{
	for (size_t k = 0; k < p->nevents; k++) {
		const struct ct_event *e = &p->events[k].ev;
		if (e->kind == CT_EV_CALL_FAILED &&
		    (rp_str_is(e->call, "open") || rp_str_is(e->call, "openat")))
			return true;
	}
	return false;
}

/* The devcrypto engine (/dev/crypto) is not a module anyone installs: OpenSSL builds it only when
 * configured with enable-devcryptoeng, off by default and off in Debian's and Ubuntu's 1.1.1 and
 * 3.x; so "install the module" would send the reader looking for a package that does not exist.
 * Where it is built, it opens /dev/crypto as it loads and is not registered when that fails:
 * the same "no such engine", told apart by that failed open. */
enum devcrypto_cause { DEVCRYPTO_NA, DEVCRYPTO_NOT_BUILT, DEVCRYPTO_NO_DEVICE };

static enum devcrypto_cause devcrypto_cause(const struct module_failure *x)
{
	if (x->e->kind != CT_EV_ENGINE_REQUEST || !rp_str_is(rp_requested_module(x->e), "devcrypto") ||
	    rp_str_is(x->e->call, "ENGINE_init"))
		return DEVCRYPTO_NA;
	return dev_crypto_open_failed(x->p) ? DEVCRYPTO_NO_DEVICE : DEVCRYPTO_NOT_BUILT;
}

static bool engine_failed(struct rp_model *m, const struct module_failure *x)
{
	const struct ct_event *e = x->e;
	struct rp_finding *f = rp_finding_add(m, "engine-failed", RP_ERROR, x->p->hdr.pid);
	if (!f)
		return false;
	bool engine = e->kind == CT_EV_ENGINE_REQUEST;
	bool init = rp_str_is(e->call, "ENGINE_init");
	CAT(message, "%s asked for %s with %.*s%s%.*s%s and it %s.",
	    x->by_config ? "The OpenSSL configuration file (openssl.cnf or $OPENSSL_CONF)" : "The program",
	    engine ? "an engine" : "a provider", S(e->call), x->params.len ? " (" : "", S(x->params),
	    x->params.len ? ")" : "",
	    init     ? "was found but could not be initialised"
	    : engine ? "could not be loaded or initialised"
		     : "could not be loaded");
	if (x->reason.len)
		CAT(message, " OpenSSL's error queue says: %.*s.", S(x->reason));
	else
		CAT(message, " OpenSSL's error queue gave no reason.");
	enum devcrypto_cause dc = devcrypto_cause(x);
	if (dc == DEVCRYPTO_NOT_BUILT)
		CAT(message,
		    " This libcrypto has no devcrypto engine: OpenSSL builds it only when configured "
		    "with enable-devcryptoeng (into libcrypto in 1.1.1, as the module devcrypto.so in "
		    "3.x), which is off by default and in Debian's and Ubuntu's packages.");
	else if (dc == DEVCRYPTO_NO_DEVICE)
		CAT(message,
		    " The devcrypto engine is built in, but it registers itself only when it can open "
		    "/dev/crypto as it loads, and that open failed (below).");
	else if (x->missing.p)
		CAT(message, " The module's shared object %.*s does not exist.", S(x->missing));
	else if (rp_str_find(x->reason, ": lib(").p || rp_str_starts(x->reason, "lib("))
		CAT(message, " (lib(N) is a code of the module itself, whose text is gone with it.)");
	request_evidence(f, e);
	if (e->callsite.len)
		CAT(evidence, ", called at %.*s", S(rp_str_part(e->callsite, '\n', 0)));
	list_call_failures(f, x->p);
	if (dc == DEVCRYPTO_NO_DEVICE)
		CAT(fix,
		    "Load the cryptodev module (`modprobe cryptodev`, from cryptodev-linux) so that "
		    "/dev/crypto exists and this process may open it, or use the afalg engine "
		    "(`-engine afalg`), which needs no extra module; `cryptrace doctor` checks both.");
	else if (dc == DEVCRYPTO_NOT_BUILT)
		CAT(fix,
		    "For the kernel's crypto drivers use the afalg engine (`-engine afalg`, shipped with "
		    "OpenSSL: AF_ALG, no extra module), or a libcrypto built with enable-devcryptoeng "
		    "(OpenWrt's libopenssl-devcrypto package) with the cryptodev module loaded; "
		    "`cryptrace doctor` lists the engines that load here.");
	else if (x->missing.p)
		CAT(fix,
		    "Install the module, point OPENSSL_ENGINES (engines) or OPENSSL_MODULES "
		    "(providers) at the directory that holds it, or correct the name; `cryptrace "
		    "doctor` lists what loads here.");
	else
		CAT(fix,
		    "Check that the engine/provider module exists and that what it needs is there "
		    "(for afalg: a kernel with AF_ALG and algif_skcipher, not blocked by a sandbox); "
		    "run `cryptrace doctor`.");
	CAT(fix,
	    " Make the program fail loudly instead of continuing in software when the offload "
	    "is required.");
	return true;
}

void rp_eval_engine_failed(struct rp_model *m)
{
	each_module_failure(m, true, engine_failed);
}

/* ---- provider-absent */

/* A provider or engine that is not an offload (offload_modules.c) was asked for and is not there:
 * what it is, where the process's cipher work ran instead, and when the reader would need it. */
static bool provider_absent(struct rp_model *m, const struct module_failure *x)
{
	const struct rp_proc *p = x->p;
	const struct ct_event *e = x->e;
	const struct rp_module_role *role = rp_non_offload_module(e);
	struct rp_finding *f = rp_finding_add(m, "provider-absent", RP_INFO, p->hdr.pid);
	if (!f)
		return false;
	CAT(message, "%s asked for the %.*s %s with %.*s (%.*s), and it %s",
	    x->by_config ? "The OpenSSL configuration file" : "The program", S(rp_requested_module(e)),
	    e->kind == CT_EV_PROVIDER_LOAD ? "provider" : "engine", S(e->call), S(x->params),
	    x->missing.p ? "is not installed here" : "could not be loaded");
	if (x->missing.p)
		CAT(message, " (%.*s does not exist)", S(x->missing));
	CAT(message, ". That is %s: not a crypto offload, so its absence moves no cipher work.", role->what);
	uint64_t calls = 0, bytes = 0;
	struct ct_str impls[3];
	unsigned nimpl = 0;
	for (size_t j = 0; j < p->npaths; j++) {
		const struct rp_path *pp = &p->paths[j];
		if (!pp->st.calls)
			continue;
		calls += pp->st.calls;
		bytes += pp->st.bytes;
		bool seen = false;
		for (unsigned q = 0; q < nimpl; q++)
			seen |= rp_str_eq(impls[q], pp->def.impl);
		if (!seen && nimpl < 3)
			impls[nimpl++] = pp->def.impl;
	}
	char b[32];
	rp_fmt_bytes(b, sizeof(b), (double)bytes);
	if (calls) {
		CAT(message, " This process's %llu cipher calls (%s) ran in", (unsigned long long)calls, b);
		for (unsigned q = 0; q < nimpl; q++)
			CAT(message, "%s %.*s", q ? (q + 1 == nimpl ? " and" : ",") : "", S(impls[q]));
		CAT(message, ".");
	}
	request_evidence(f, e);
	if (x->reason.len)
		CAT(evidence, "; OpenSSL's error queue: %.*s", S(x->reason));
	if (e->callsite.len)
		CAT(evidence, "; called at %.*s", S(rp_str_part(e->callsite, '\n', 0)));
	CAT(fix, "%s", role->fix);
	return true;
}

void rp_eval_provider_absent(struct rp_model *m)
{
	each_module_failure(m, false, provider_absent);
}

/* ---- session-failed */

static bool session_failure(const struct ct_event *e)
{
	if (e->kind == CT_EV_SESSION)
		return rp_event_failed(e);
	if (e->kind != CT_EV_CALL_FAILED || rp_ktls_event(e))
		return false;
	return rp_str_starts(e->call, "ioctl(CIOCGSESSION") || rp_str_starts(e->call, "bind") ||
	       rp_str_starts(e->call, "setsockopt") || rp_str_starts(e->call, "accept");
}

void rp_eval_session_failed(struct rp_model *m)
{
	for (size_t i = 0; i < m->nevents; i++) {
		const struct rp_event *e = &m->events[i];
		if (!session_failure(&e->ev))
			continue;
		struct rp_finding *f =
			rp_finding_add(m, "session-failed", RP_WARNING, e->pids.n == 1 ? e->pid : 0);
		if (!f)
			return;
		for (size_t k = 0; k < e->pids.n; k++)
			rp_finding_note_pid(m, f, e->pids.v[k]);
		char eb[32];
		CAT(message,
		    "A kernel crypto session could not be set up: %.*s failed with %s (%s)%s%.*s%s, "
		    "%llu time(s). Work meant for it runs elsewhere, usually in software.",
		    S(e->ev.call), rp_errno_name(e->ev.err, eb, sizeof(eb)),
		    e->ev.err ? strerror(e->ev.err) : "no errno", e->ev.detail.len ? " for " : "",
		    S(e->ev.detail), e->ev.detail.len ? "" : "", (unsigned long long)e->ev.count);
		if (e->ev.err == EINVAL)
			CAT(message, " EINVAL usually means the driver lacks this algorithm or key size.");
		CAT(evidence, "%.*s ret=%lld errno=%s count=%llu in %zu process(es)", S(e->ev.call),
		    (long long)e->ev.ret, rp_errno_name(e->ev.err, eb, sizeof(eb)),
		    (unsigned long long)e->ev.count, e->pids.n);
		if (e->ev.callsite.len)
			CAT(evidence, "; at %.*s", S(rp_str_part(e->ev.callsite, '\n', 0)));
		CAT(fix,
		    "Check the kernel's drivers for this algorithm and key size (/proc/crypto, "
		    "`cryptrace doctor`), load the module that provides it, or use a supported key "
		    "size.");
	}
}
