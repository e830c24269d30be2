/* SPDX-License-Identifier: MIT */
/*
 * multiple_libcrypto.c - the `multiple-libcrypto` finding: two libcrypto copies in one process
 * (tests/reliability/loading.py: a copy dlopen'd RTLD_LOCAL from another directory). The hooks
 * catch every call the dynamic linker resolves by name through the global scope and pass it to
 * the copy found first after the preload (dlsym RTLD_NEXT). Calls that reach another copy without
 * that lookup are not seen: through pointers from dlsym(handle, ...), or the copy's calls into
 * itself. The reporter cannot tell how many.
 */
#include "findings.h"

static bool is_libcrypto_path(struct ct_str path)
{
	struct ct_str base = rp_str_basename(path);
	return rp_str_starts(base, "libcrypto.so") || rp_str_starts(base, "libcrypto-");
}

void rp_eval_multiple_libcrypto(struct rp_model *m)
{
	for (size_t i = 0; i < m->nprocs; i++) {
		const struct rp_proc *p = &m->procs[i];
		if (!rp_proc_shown(m, p) || !p->has_proc)
			continue;
		struct ct_str libs[8];
		unsigned n = 0, total = 0;
		for (unsigned k = 0, np = rp_str_nparts(p->proc.crypto_libs, '\n'); k < np; k++) {
			struct ct_str l = rp_str_part(p->proc.crypto_libs, '\n', k);
			if (!l.len || !is_libcrypto_path(l))
				continue;
			bool dup = false;
			for (unsigned j = 0; j < n; j++)
				dup |= rp_str_eq(libs[j], l);
			if (dup)
				continue;
			total++;
			if (n < sizeof(libs) / sizeof(libs[0]))
				libs[n++] = l;
		}
		if (total < 2)
			continue;
		struct rp_finding *f = rp_finding_add(m, "multiple-libcrypto", RP_WARNING, p->hdr.pid);
		if (!f)
			return;
		struct ct_str first_version = p->proc.libcrypto.len ? p->proc.libcrypto
								    : ct_str_from("version unknown");
		CAT(message, "%u copies of libcrypto are mapped in this process:", total);
		for (unsigned j = 0; j < n; j++)
			CAT(message, "%s %.*s", j ? (j + 1 == n ? " and" : ",") : "", S(libs[j]));
		CAT(message,
		    ". cryptrace traces one: the copy it finds first, normally the first one listed "
		    "(%.*s: %.*s). Calls from code bound to another copy (a plugin linked against it, "
		    "a bundled copy) reach its hooks all the same and are passed to that copy "
		    "untouched and untraced; calls through function pointers taken with dlsym() on "
		    "another copy's handle never reach them. Work done in another copy is missing "
		    "from this report, and the trace cannot say how much.",
		    S(rp_str_basename(libs[0])), S(first_version));
		unsigned foreign = 0;
		for (size_t k = 0; k < p->nevents; k++) {
			const struct ct_event *e = &p->events[k].ev;
			if (e->kind != CT_EV_TRACE_WARNING || !rp_str_is(e->call, "foreign-libcrypto"))
				continue;
			/* "calls from OBJECT go to its own LIB (...)": the objects */
			struct ct_str from = e->detail, rest = rp_str_find(e->detail, " go to its own ");
			if (!rp_str_starts(from, "calls from ") || !rest.p)
				continue;
			from.p += 11;
			from.len = (uint32_t)(rest.p - from.p);
			CAT(message, "%s%.*s", foreign++ ? ", " : " Calls passed through from: ", S(from));
		}
		if (foreign)
			CAT(message, " (foreign-libcrypto events).");
		CAT(evidence, "crypto_libs:");
		for (unsigned j = 0; j < n; j++)
			CAT(evidence, " %.*s;", S(libs[j]));
		CAT(evidence, " %llu intercepted calls; libcrypto %.*s",
		    (unsigned long long)p->proc.hooked_calls, S(p->proc.libcrypto));
		CAT(fix,
		    "Load one libcrypto per process (drop the private copy, or link the plugin "
		    "against the system one); to measure work in a private copy, trace a program "
		    "that uses only that copy.");
	}
}
