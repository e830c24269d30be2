/* SPDX-License-Identifier: MIT */
/*
 * nothing_intercepted.c - the `nothing-intercepted` finding: no cipher call in any selected
 * process. It says why from each process's facts (no libcrypto, libcrypto idle, statically
 * linked, setuid, refused by the kernel, no snapshot) and looks for the crypto the process
 * carries where the hooks cannot see it (carried.c): another crypto library it mapped, or one
 * linked into its executable or a shared object it mapped. The processes that carry crypto lead,
 * and the fix fits whose code that is (owner.c): the reader's build, a pip wheel, a package.
 * rp_nothing_reason gives the text report's one-line "why" too.
 */
#include "carried.h"
#include "findings.h"
#include "owner.h"
#include "report.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct ct_event *launcher_event(const struct rp_proc *p, const char *call)
{
	for (size_t k = 0; k < p->nevents; k++) {
		const struct ct_event *e = &p->events[k].ev;
		if (e->kind == CT_EV_TRACE_WARNING && rp_str_is(e->call, call))
			return e;
	}
	return NULL;
}

/* The launcher wrote this process's trace: it is statically linked (tracer/static_trace.c). */
static const struct ct_event *static_exe_event(const struct rp_proc *p)
{
	return launcher_event(p, RP_STATIC_EXE_CALL);
}

/* ---- which processes matter when nothing was seen, and what they carry (carried.c) */

/* A process ranked by what it carries: a crypto library linked into its executable or a shared
 * object it mapped, then another crypto library it mapped, then libcrypto loaded; then by CPU
 * time. A pyenv shim's bash, env and basename rank after the python that ran the script. */
struct proc_rank {
	const struct rp_proc *p;
	int score;
	double cpu_ns;
	bool carries;
	struct rp_carrier carrier;
	struct ct_str lib; /* rp_unhooked_lib */
	const char *lib_name, *lib_how;
};

static int cmp_rank(const void *a, const void *b)
{
	const struct proc_rank *x = a, *y = b;
	if (x->score != y->score)
		return x->score < y->score ? 1 : -1;
	if (x->cpu_ns != y->cpu_ns)
		return x->cpu_ns < y->cpu_ns ? 1 : -1;
	return x->p < y->p ? -1 : x->p > y->p;
}

/* The selected processes, best first (NULL when out of memory); the caller frees it. */
static struct proc_rank *ranked_procs(const struct rp_model *m, size_t *n)
{
	struct proc_rank *r = calloc(m->nprocs ? m->nprocs : 1, sizeof(*r));
	*n = 0;
	if (!r)
		return NULL;
	for (size_t i = 0; i < m->nprocs; i++) {
		const struct rp_proc *p = &m->procs[i];
		if (!rp_proc_shown(m, p) || !p->has_hdr || (p->hdr.flags & CT_HDR_SECURE_EXEC))
			continue;
		struct proc_rank *x = &r[(*n)++];
		x->p = p;
		x->carries = rp_proc_carrier(p, &x->carrier);
		if (!p->has_end && !x->carries) {
			/* an unfinished trace: what is missing is its end, not a library
			 * (unfinished-trace says so) */
			(*n)--;
			continue;
		}
		bool other = rp_unhooked_lib(p, &x->lib, &x->lib_name, &x->lib_how);
		x->score = x->carries ? 3 : other ? 2 : (p->proc.flags & CT_PROC_HAS_LIBCRYPTO) ? 1 : 0;
		x->cpu_ns = p->has_proc ? (double)(p->proc.utime_ns + p->proc.stime_ns) : 0;
	}
	qsort(r, *n, sizeof(*r), cmp_rank);
	return r;
}

/* The libraries of carried.c's list whose calls the preload hooks all the same (GnuTLS: its cipher
 * API and its TLS records, preload/hooks/gnutls*.c; libgcrypt: its cipher API, hooks/gcrypt.c):
 * loaded without a path, it did no such work, which is no reason to change anything. */
static const struct hooked_lib {
	const char *name;
	const char *calls; /* what the hooks count of it: "it made no %s through it" */
	const char *api;   /* "cryptrace hooks LIB's %s" */
	const char *none;  /* "this run made no such call (no %s)" */
} hooked_libs[] = {
	{ "GnuTLS", "cipher or TLS record call", "cipher API and its TLS records",
	  "TLS connection, no cipher" },
	{ "libgcrypt", "cipher call", "cipher API", "cipher" },
};

/* name's entry in hooked_libs, or NULL: a library the hooks do not see. */
static const struct hooked_lib *lib_hooked(const char *name)
{
	for (size_t i = 0; name && i < sizeof(hooked_libs) / sizeof(hooked_libs[0]); i++)
		if (!strcmp(name, hooked_libs[i].name))
			return &hooked_libs[i];
	return NULL;
}

static void nothing_reason(const struct rp_model *m, char *buf, size_t cap, bool with_exe)
{
	size_t never = 0, other = 0, idle = 0, nofacts = 0, secure = 0, statics = 0, refused = 0;
	size_t unseen = 0;   /* ended without exit handlers before a snapshot (tracer/end_trace.c) */
	size_t cut = 0;      /* killed after a snapshot that showed no cipher work (unfinished-trace) */
	size_t attached = 0; /* `cryptrace attach`: what it did before the attach is not in the trace */
	for (size_t i = 0; i < m->nprocs; i++) {
		const struct rp_proc *p = &m->procs[i];
		if (!rp_proc_shown(m, p))
			continue;
		if (rp_kernel_refusal(p))
			refused++;
		else if (p->hdr.flags & CT_HDR_SECURE_EXEC)
			secure++;
		else if (static_exe_event(p))
			statics++;
		else if (!p->has_proc && launcher_event(p, RP_EXIT_UNSEEN_CALL))
			unseen++;
		else if (!p->has_proc)
			nofacts++;
		else if (!p->has_end && ((p->proc.flags & CT_PROC_HAS_LIBCRYPTO) || !p->proc.crypto_libs.len))
			cut++; /* killed: its last snapshot is not what it did */
		else if ((p->proc.flags & CT_PROC_HAS_LIBCRYPTO) && (p->hdr.flags & CT_HDR_ATTACHED))
			attached++;
		else if (p->proc.flags & CT_PROC_HAS_LIBCRYPTO)
			idle++;
		else if (p->proc.crypto_libs.len)
			other++;
		else
			never++;
	}
	size_t nr = 0;
	struct proc_rank *r = ranked_procs(m, &nr);
	const struct proc_rank *lib = NULL, *carrier = NULL;
	for (size_t i = 0; r && i < nr; i++) {
		if (!lib && r[i].lib_name)
			lib = &r[i];
		if (!carrier && r[i].carries)
			carrier = &r[i];
	}
	/* why, in this order (other: the crypto library it used, named below) */
	const struct {
		size_t n;
		const char *why;
	} reasons[] = {
		{ refused,
		  "it asked the kernel for cipher work and was refused (see "
		  "kernel-refused)" },
		{ statics, "it is statically linked, so LD_PRELOAD cannot load cryptrace into it" },
		{ other, NULL },
		{ never, "libcrypto was never loaded" },
		{ idle, "no cipher work was done: libcrypto was loaded but no cipher was used" },
		{ attached,
		  "no cipher call was made while cryptrace was attached (what it did before the "
		  "attach is not in the trace; attach it while it serves)" },
		{ cut,
		  "it ended without an END record and its last snapshot shows none; what it did "
		  "after that snapshot is not in the trace (unfinished-trace)" },
		{ nofacts,
		  "it ended without an END record before its first snapshot, so the trace "
		  "cannot say what it did (unfinished-trace)" },
		{ unseen,
		  "it exited without running its exit handlers (as Go programs do) before its "
		  "first snapshot, so only its start and exit status are known" },
		{ secure, "tracing is disabled in setuid/setgid programs" },
	};
	size_t nreasons = sizeof(reasons) / sizeof(reasons[0]), kinds = 0;
	for (size_t i = 0; i < nreasons; i++)
		kinds += reasons[i].n != 0;
	buf[0] = 0;
	for (size_t i = 0; i < nreasons; i++) {
		if (!reasons[i].n)
			continue;
		if (reasons[i].why)
			rp_finding_cat(buf, cap, "%s", reasons[i].why);
		else if (lib && lib_hooked(lib->lib_name))
			rp_finding_cat(buf, cap, "it loaded %s (%.*s) but made no %s through it",
				       lib->lib_name, S(lib->lib), lib_hooked(lib->lib_name)->calls);
		else if (lib)
			rp_finding_cat(buf, cap, "it used %s (%.*s), which cryptrace does not hook",
				       lib->lib_name, S(lib->lib));
		else
			rp_finding_cat(buf, cap, "it used a crypto library cryptrace does not hook");
		if (kinds > 1) /* counts only when the processes differ in why */
			rp_finding_cat(buf, cap, " (%zu process(es))", reasons[i].n);
		rp_finding_cat(buf, cap, "; ");
	}
	if (with_exe && carrier)
		rp_finding_cat(buf, cap, "%s has %s linked in statically; ", carrier->carrier.path,
			       carrier->carrier.scan->libs);
	free(r);
	size_t n = strlen(buf);
	if (n >= 2 && buf[n - 2] == ';')
		buf[n - 2] = 0;
	if (!buf[0])
		snprintf(buf, cap, "no trace files were read");
}

void rp_nothing_reason(const struct rp_model *m, char *buf, size_t cap)
{
	nothing_reason(m, buf, cap, true);
}

/* What the finding's fix must address: the first carrier or other library shown, and whose code
 * it is in (owner.c). */
struct nothing_verdict {
	bool embedded, other;
	struct rp_owner owner; /* of the carrier file, or of the executable using the library */
	char carrier_libs[200];
	char lib_name[32];
};

/* One process's sentence: what its executable and mapped objects carry. */
static void describe_one(struct rp_finding *f, const struct proc_rank *x, struct nothing_verdict *v)
{
	const struct rp_proc *p = x->p;
	const struct rp_carrier *c = &x->carrier;
	struct rp_owner own;
	char clause[900];
	CAT(message, " For pid %u (%s), ", p->hdr.pid, rp_proc_role_label(p));
	if (x->carries) {
		rp_file_owner(c->path, &own);
		if (c->is_exe) {
			rp_exe_scan_describe(c->path, c->scan, clause, sizeof(clause));
			CAT(message, "%s.", clause);
		} else {
			CAT(message,
			    "a shared object it loaded, %s (%s), has %s linked in statically "
			    "(%s): calls inside it never go through the dynamic linker, so "
			    "LD_PRELOAD cannot intercept them.",
			    c->path, own.desc, c->scan->libs, c->scan->evidence);
		}
		CAT(evidence, "; %s: %s", c->path, c->scan->evidence);
		if (!v->embedded && !v->other) {
			v->embedded = true;
			v->owner = own;
			snprintf(v->carrier_libs, sizeof(v->carrier_libs), "%s", c->scan->libs);
		}
		return;
	}
	if (c->scan)
		rp_exe_scan_describe(c->path, c->scan, clause, sizeof(clause));
	else
		snprintf(clause, sizeof(clause), "its executable is not named in the trace");
	if (x->lib_name) {
		rp_file_owner(c->path, &own);
		CAT(message, "it used %s (%.*s), which %s.", x->lib_name, S(x->lib), x->lib_how);
		if (!v->embedded && !v->other) {
			v->other = true;
			v->owner = own;
			snprintf(v->lib_name, sizeof(v->lib_name), "%s", x->lib_name);
		}
	} else if (rp_proc_lists_mapped(p)) {
		CAT(message, "%s, and no shared object it loaded carries one inside it.", clause);
	} else {
		CAT(message, "%s.", clause);
	}
	const struct ct_event *st = static_exe_event(p);
	struct ct_str carried = st ? rp_str_find(st->detail, "; it carries ") : (struct ct_str){ 0 };
	if (c->scan && c->scan->state != RP_EXE_SCANNED && carried.p) {
		CAT(message, " When it was traced, the launcher found that %.*s.", (int)(carried.len - 2),
		    carried.p + 2);
		if (!v->embedded && !v->other) {
			v->embedded = true;
			rp_file_owner(c->path, &v->owner);
			snprintf(v->carrier_libs, sizeof(v->carrier_libs), "a crypto library");
		}
	}
}

#define NOTHING_SHOWN 3

/* The processes that matter (those that carry crypto, else the busiest one; up to
 * NOTHING_SHOWN, one per executable), then one line for the rest. */
static void describe_processes(const struct rp_model *m, struct rp_finding *f, struct nothing_verdict *v)
{
	memset(v, 0, sizeof(*v));
	size_t nr = 0;
	struct proc_rank *r = ranked_procs(m, &nr);
	if (!r || !nr) {
		free(r);
		return;
	}
	const struct proc_rank *shown[NOTHING_SHOWN];
	size_t nshown = 0, rest_carry = 0, same_exe = 0;
	for (size_t i = 0; i < nr; i++) {
		bool dup = false;
		for (size_t k = 0; k < nshown; k++)
			dup |= shown[k]->p->hdr.exe.len && rp_str_eq(shown[k]->p->hdr.exe, r[i].p->hdr.exe);
		if (nshown < NOTHING_SHOWN && !dup && (r[i].score > 0 || nshown == 0))
			shown[nshown++] = &r[i];
		else if (dup)
			same_exe++;
		else if (r[i].score > 0)
			rest_carry++;
	}
	for (size_t k = 0; k < nshown; k++)
		describe_one(f, shown[k], v);
	if (same_exe)
		CAT(message, " %zu more process(es) ran the same executable(s).", same_exe);
	size_t rest = nr - nshown - same_exe;
	if (rest) {
		/* the others by executable, most frequent first: "bash x40, env x8, basename" */
		struct {
			struct ct_str name;
			size_t n;
		} by[8];
		size_t nby = 0, unlisted = 0;
		for (size_t i = 0; i < nr; i++) {
			bool skip = false;
			for (size_t k = 0; k < nshown; k++)
				skip |= shown[k] == &r[i] ||
					(shown[k]->p->hdr.exe.len &&
					 rp_str_eq(shown[k]->p->hdr.exe, r[i].p->hdr.exe));
			if (skip)
				continue;
			struct ct_str b = rp_str_basename(r[i].p->hdr.exe.len
								  ? r[i].p->hdr.exe
								  : rp_str_part(r[i].p->hdr.argv, '\0', 0));
			size_t j = 0;
			while (j < nby && !rp_str_eq(by[j].name, b))
				j++;
			if (j < nby)
				by[j].n++;
			else if (nby < sizeof(by) / sizeof(by[0]))
				by[nby++] = (typeof(by[0])){ .name = b, .n = 1 };
			else
				unlisted++;
		}
		for (size_t i = 1; i < nby; i++) /* insertion sort, by count */
			for (size_t j = i; j > 0 && by[j].n > by[j - 1].n; j--) {
				typeof(by[0]) t = by[j];
				by[j] = by[j - 1];
				by[j - 1] = t;
			}
		char names[300] = "";
		for (size_t i = 0; i < nby; i++) {
			rp_finding_cat(names, sizeof(names), "%s%.*s", i ? ", " : "", S(by[i].name));
			if (by[i].n > 1)
				rp_finding_cat(names, sizeof(names), " x%zu", by[i].n);
		}
		if (unlisted)
			rp_finding_cat(names, sizeof(names), ", ...");
		if (rest_carry)
			CAT(message, " %zu other process(es) (%s) carry crypto too.", rest, names);
		else
			CAT(message, " The other %zu process(es) (%s) loaded no crypto library.", rest,
			    names);
	}
	free(r);
}

/* What the CPU profile saw where the hooks saw nothing (report/profile.c): each process's largest
 * crypto line, so that the reader knows the work is there and what code ran it. */
static void profile_saw(const struct rp_model *m, struct rp_finding *f)
{
	bool first = true;
	for (size_t i = 0; i < m->nprocs; i++) {
		const struct rp_proc *p = &m->procs[i];
		const struct rp_profile *pr = &p->prof;
		if (!rp_proc_shown(m, p) || !pr->crypto_samples || !pr->samples)
			continue;
		const struct rp_profile_item *top = NULL;
		for (size_t k = 0; k < pr->nitems && !top; k++)
			if (pr->items[k].category[0])
				top = &pr->items[k];
		if (!top)
			continue;
		CAT(message,
		    "%s pid %u: %s%s%s%s in %s, %.1f%% of its sampled CPU (crypto code in all: %.1f%%)",
		    first ? " The CPU profile saw crypto code all the same:" : ";", p->hdr.pid, top->category,
		    top->impl[0] ? " (" : "", top->impl, top->impl[0] ? ")" : "", top->module,
		    100.0 * (double)top->samples / (double)pr->samples,
		    100.0 * (double)pr->crypto_samples / (double)pr->samples);
		first = false;
	}
	if (!first)
		CAT(message, ".");
}

void rp_eval_nothing_intercepted(struct rp_model *m)
{
	uint64_t calls = 0;
	size_t nproc = 0, statics = 0, refused = 0;
	for (size_t i = 0; i < m->npaths; i++)
		calls += m->paths[i].st.calls;
	for (size_t i = 0; i < m->nprocs; i++) {
		const struct rp_proc *p = &m->procs[i];
		if (!rp_proc_shown(m, p))
			continue;
		nproc++;
		statics += static_exe_event(p) != NULL;
		refused += rp_kernel_refusal(p) != NULL;
	}
	if (calls || !nproc)
		return;
	struct rp_finding *f = rp_finding_add(m, "nothing-intercepted", RP_INFO, 0);
	if (!f)
		return;
	char why[600];
	nothing_reason(m, why, sizeof(why), false);
	CAT(message, "No crypto calls were seen in %zu process(es): %s.", nproc, why);
	profile_saw(m, f);
	CAT(evidence, "0 intercepted cipher calls in %zu trace file(s)", nproc);
	if (statics)
		CAT(evidence, "; %zu written by the launcher for a statically linked program", statics);
	struct nothing_verdict v;
	describe_processes(m, f, &v);
	/* A warning when the crypto sits in code the reader builds: rebuilding it is theirs to do.
	 * A distribution's package or a pip wheel doing its own crypto is information: nothing is
	 * wrong with it, and the fix is another build of that package, if the trace is wanted. */
	bool readers = v.owner.kind == RP_OWNER_LOCAL || v.owner.kind == RP_OWNER_UNKNOWN;
	if ((v.embedded || (v.other && !lib_hooked(v.lib_name))) && readers)
		f->severity = RP_WARNING;
	if (refused) {
		CAT(fix,
		    "See kernel-refused: the program asked the kernel for its cipher work, and what "
		    "to do about the refusal is said there.");
	} else if (v.embedded && v.owner.kind == RP_OWNER_PIP) {
		CAT(fix,
		    "Nothing is wrong with the program; cryptrace cannot see into the %s that "
		    "the Python package %s carries. To measure this work, use a build of %s "
		    "linked against the system's shared libcrypto: `pip install --no-binary %s %s` "
		    "builds it from source against the system's OpenSSL",
		    v.carrier_libs, v.owner.package, v.owner.package, v.owner.package, v.owner.package);
		if (!strcmp(v.owner.package, "cryptography"))
			CAT(fix, ", as Debian's python3-cryptography (for /usr/bin/python3) is");
		CAT(fix, ".");
	} else if (v.embedded && v.owner.kind == RP_OWNER_SYSTEM) {
		CAT(fix,
		    "Nothing to change here: the program (%s) does its crypto in code linked into "
		    "it (it carries %s), which cryptrace's hooks cannot see (they hook OpenSSL's "
		    "shared libcrypto, /dev/crypto and AF_ALG only; the CPU profile names that code).",
		    v.owner.desc, v.carrier_libs);
	} else if (v.embedded) {
		CAT(fix,
		    "Build the program against the shared libcrypto (libcrypto.so, not libcrypto.a "
		    "or a static binary) to trace it; cryptrace hooks OpenSSL's shared libcrypto, "
		    "/dev/crypto and AF_ALG only.");
	} else if (v.other && lib_hooked(v.lib_name)) {
		const struct hooked_lib *h = lib_hooked(v.lib_name);
		CAT(fix,
		    "Nothing to change here: cryptrace hooks %s's %s, and this run made no such call (no %s).",
		    v.lib_name, h->api, h->none);
	} else if (v.other && !readers) {
		CAT(fix,
		    "Nothing to change here: the program (%s) uses %s for its crypto, which "
		    "cryptrace does not hook (it hooks OpenSSL's libcrypto, /dev/crypto and AF_ALG "
		    "only); to measure it, use %s's own tools.",
		    v.owner.desc, v.lib_name, v.lib_name);
	} else if (v.other) {
		CAT(fix,
		    "cryptrace hooks OpenSSL's libcrypto, /dev/crypto and AF_ALG only; trace this "
		    "program's crypto library (%s) with its own tools, or build it against OpenSSL.",
		    v.lib_name);
	} else if (statics) {
		CAT(fix,
		    "Nothing to fix if the program does no encryption. To trace one that does, "
		    "link it dynamically against libcrypto: LD_PRELOAD needs the dynamic loader.");
	} else {
		CAT(fix,
		    "Nothing to fix if the program should do no encryption. A statically linked "
		    "program cannot be traced: link it dynamically against libcrypto.");
	}
}
