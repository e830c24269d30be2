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
		    ". cryptrace sees the calls the dynamic linker resolves by name (the "
		    "program's, and those of libraries linked against libcrypto as usual) and "
		    "passes each to the copy it finds first, normally the first one listed (%.*s: "
		    "%.*s). "
		    "It does not see calls that reach another copy directly: through function "
		    "pointers taken with dlsym() on that copy's handle, or that copy's calls into "
		    "itself. Work done there is missing from this report, and the trace cannot "
		    "say how much.",
		    S(rp_str_basename(libs[0])), S(first_version));
		bool versions_differ = false;
		for (unsigned j = 1; j < n; j++)
			versions_differ |= !rp_str_eq(rp_str_basename(libs[j]), rp_str_basename(libs[0]));
		if (versions_differ)
			CAT(message,
			    " The copies are different versions: code built against one of them "
			    "also reaches cryptrace's hooks, which pass it to the first copy; check "
			    "that the program behaves the same without cryptrace.");
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
