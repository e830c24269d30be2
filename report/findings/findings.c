/* SPDX-License-Identifier: MIT */
/*
 * findings.c - plain-language diagnoses over the merged model. A table of evaluators, each
 * adding zero or more findings {kind, severity, message, evidence, fix}. Thresholds are named
 * constants below, and docs/report.md explains each one.
 */
#include "model.h"
#include "report.h"
#include "carried.h"
#include "exescan.h"
#include "findings.h"
#include "owner.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* user-time-misleads: wall / user at or above this, on a path with enough calls and samples. */
#define USER_MISLEADS_FACTOR 2.0
#define USER_MISLEADS_MIN_CALLS 100
#define USER_MISLEADS_MIN_SAMPLES 5
/* software-aes: cycles/byte at >= 8 KiB requests above SOFTWARE_AES_FACTOR x the calibrated
 * AES-NI bound (and never below SOFTWARE_AES_FLOOR_CPB: the bound may come from a parallel mode
 * while CBC encryption is serial), or above SOFTWARE_AES_FIXED_CPB when no bound was calibrated;
 * and whenever OPENSSL_ia32cap masks AES-NI (bit 57) out, whatever the timing: masked vpaes CBC
 * measured 8.0 cycles/byte here one run, 21.9 another, too close to a loaded clean run to tell
 * by speed alone, while the mask is a fact. */
#define SOFTWARE_AES_FACTOR 3.0
#define SOFTWARE_AES_FLOOR_CPB 4.0
#define SOFTWARE_AES_FIXED_CPB 5.0
#define SOFTWARE_AES_MIN_BYTES 8192
/* Serial modes (CBC/CFB encryption, OFB) chain every block through all the rounds, so AES-NI
 * itself runs them at rounds x the AESENC latency (3-4 cycles) per 16 bytes: about 2.2
 * cycles/byte for AES-128 and 3.1 for AES-256 in core cycles (TSC cycles run higher on a
 * throttled or shared core). With a calibrated bound (from a parallel mode), their limit is at
 * least SOFTWARE_AES_FACTOR x that: measured here (h10), a clean CBC-128 encryption ran at 5.6
 * TSC cycles/byte on a loaded 2-core VM, masked to software AES at 21.9. */
#define SOFTWARE_AES_ROUND_LATENCY 3.5
/* ... and their limit is wider than the parallel modes' factor: a clean CBC-128 encryption ran at
 * 6.6 TSC cycles/byte while the other vCPU ran AES too (the reports suite's diff test), above 3x
 * the latency bound. Software AES without assembly (seed 001: 7-10x slower than AES-NI) runs CBC
 * above 15, so 4.5x (9.8 for AES-128, 13.8 for AES-256) still separates the two. */
#define SOFTWARE_AES_SERIAL_FACTOR 4.5
/* small-requests-offload: in-process cost when the trace has nothing better (about 2 GB/s). */
#define INPROC_DEFAULT_NS_PER_BYTE 0.5
#define SMALL_OFFLOAD_MIN_CALLS 10

/* OPENSSL_ia32cap bit 57 is CPUID.1:ECX.AES (bit 25 of the ECX word at bit 32). */
#define IA32CAP_AESNI (1ull << 57)

const char *rp_severity_name(enum rp_severity s)
{
	return s == RP_ERROR ? "error" : s == RP_WARNING ? "warning" : "info";
}

static struct rp_finding *add(struct rp_model *m, const char *kind, enum rp_severity sev,
			      uint32_t pid)
{
	if (m->nfindings == m->cap_findings) {
		size_t ncap = m->cap_findings ? m->cap_findings * 2 : 8;
		void *p = realloc(m->findings, ncap * sizeof(*m->findings));
		if (!p)
			return NULL;
		m->findings = p;
		m->cap_findings = ncap;
	}
	struct rp_finding *f = &m->findings[m->nfindings++];
	memset(f, 0, sizeof(*f));
	f->kind = kind;
	f->severity = sev;
	f->pid = pid;
	return f;
}

/* Appends to a fixed buffer, truncating quietly (findings.h: shared with the evaluators in
 * their own files). */
void rp_finding_cat(char *buf, size_t cap, const char *fmt, ...)
{
	size_t n = strlen(buf);
	if (n + 1 >= cap)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf + n, cap - n, fmt, ap);
	va_end(ap);
}

#define cat rp_finding_cat
#define CAT(field, ...) cat(f->field, sizeof(f->field), __VA_ARGS__)

struct rp_finding *rp_finding_add(struct rp_model *m, const char *kind, enum rp_severity sev,
				  uint32_t pid)
{
	return add(m, kind, sev, pid);
}
#define S(s) (int)(s).len, (s).p

static bool proc_selected(const struct rp_model *m, const struct rp_proc *p)
{
	return rp_proc_shown(m, p); /* superseded files (a later one of the same process) are stale */
}

static bool is_inprocess(const struct rp_path *p)
{
	return p->def.api == CT_API_EVP || p->def.api == CT_API_AES;
}

/* Work that went through a kernel interface into the kernel: /dev/crypto or AF_ALG requests
 * that a route served in-process (emulation, route:aesni) never reached it. */
static bool is_kernel(const struct rp_path *p)
{
	return (p->def.api == CT_API_CRYPTODEV || p->def.api == CT_API_AFALG) &&
	       p->def.route != CT_ROUTE_AESNI;
}

/* A path whose work ran in this process's software/provider code, not in an engine or kernel. */
static bool is_software(const struct rp_path *p)
{
	return is_inprocess(p) && !rp_str_starts(p->def.impl, "engine:") &&
	       !(p->def.flags & CT_PATH_ROUTED);
}

static const struct rp_proc *first_header(const struct rp_model *m)
{
	for (size_t i = 0; i < m->nprocs; i++)
		if (m->procs[i].has_hdr && proc_selected(m, &m->procs[i]))
			return &m->procs[i];
	return NULL;
}

static void fmt_bytes(char *b, size_t cap, uint64_t n)
{
	rp_fmt_bytes(b, cap, (double)n);
}

/* ---- nothing-intercepted */

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
	struct ct_str lib;      /* rp_unhooked_lib */
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
		if (!proc_selected(m, p) || !p->has_hdr || (p->hdr.flags & CT_HDR_SECURE_EXEC))
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

static void nothing_reason(const struct rp_model *m, char *buf, size_t cap, bool with_exe)
{
	size_t never = 0, other = 0, idle = 0, nofacts = 0, secure = 0, statics = 0, refused = 0;
	size_t unseen = 0; /* ended without exit handlers before a snapshot (tracer/end_trace.c) */
	size_t cut = 0;    /* killed after a snapshot that showed no cipher work (unfinished.c) */
	for (size_t i = 0; i < m->nprocs; i++) {
		const struct rp_proc *p = &m->procs[i];
		if (!proc_selected(m, p))
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
	buf[0] = 0;
	/* Counts only when the processes differ in why. */
	bool mixed = (other != 0) + (never != 0) + (idle != 0) + (nofacts != 0) + (secure != 0) +
		     (statics != 0) + (refused != 0) + (unseen != 0) + (cut != 0) > 1;
	char cnt[48];
#define COUNT(x) (mixed ? (snprintf(cnt, sizeof(cnt), " (%zu process(es))", (x)), cnt) : "")
	if (refused)
		cat(buf, cap, "it asked the kernel for cipher work and was refused (see "
			      "kernel-refused)%s; ", COUNT(refused));
	if (statics)
		cat(buf, cap, "it is statically linked, so LD_PRELOAD cannot load cryptrace into "
			      "it%s; ", COUNT(statics));
	if (other && lib)
		cat(buf, cap, "it used %s (%.*s), which cryptrace does not hook%s; ", lib->lib_name,
		    S(lib->lib), COUNT(other));
	else if (other)
		cat(buf, cap, "it used a crypto library cryptrace does not hook%s; ", COUNT(other));
	if (never)
		cat(buf, cap, "libcrypto was never loaded%s; ", COUNT(never));
	if (idle)
		cat(buf, cap, "no cipher work was done: libcrypto was loaded but no cipher was used%s; ",
		    COUNT(idle));
	if (cut)
		cat(buf, cap, "it ended without an END record and its last snapshot shows none; what "
			      "it did after that snapshot is not in the trace (unfinished-trace)%s; ",
		    COUNT(cut));
	if (nofacts)
		cat(buf, cap, "it ended without an END record before its first snapshot, so the trace "
			      "cannot say what it did (unfinished-trace)%s; ", COUNT(nofacts));
	if (unseen)
		cat(buf, cap, "it exited without running its exit handlers (as Go programs do) before "
			      "its first snapshot, so only its start and exit status are known%s; ",
		    COUNT(unseen));
	if (secure)
		cat(buf, cap, "tracing is disabled in setuid/setgid programs%s; ", COUNT(secure));
#undef COUNT
	if (with_exe && carrier)
		cat(buf, cap, "%s has %s linked in statically; ", carrier->carrier.path,
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
	struct rp_owner owner;  /* of the carrier file, or of the executable using the library */
	char carrier_libs[200];
	char lib_name[32];
};

/* "python3.11 gcm.py" style label of a process: its role (merge.c). */
static const char *proc_label(const struct rp_proc *p)
{
	return p->role[0] ? p->role : "?";
}

/* One process's sentence: what its executable and mapped objects carry. */
static void describe_one(struct rp_finding *f, const struct proc_rank *x, struct nothing_verdict *v)
{
	const struct rp_proc *p = x->p;
	const struct rp_carrier *c = &x->carrier;
	struct rp_owner own;
	char clause[900];
	CAT(message, " For pid %u (%s), ", p->hdr.pid, proc_label(p));
	if (x->carries) {
		rp_file_owner(c->path, &own);
		if (c->is_exe) {
			rp_exe_scan_describe(c->path, c->scan, clause, sizeof(clause));
			CAT(message, "%s.", clause);
		} else {
			CAT(message, "a shared object it loaded, %s (%s), has %s linked in statically "
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
		CAT(message, " When it was traced, the launcher found that %.*s.",
		    (int)(carried.len - 2), carried.p + 2);
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
static void describe_processes(const struct rp_model *m, struct rp_finding *f,
			       struct nothing_verdict *v)
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
		struct { struct ct_str name; size_t n; } by[8];
		size_t nby = 0, unlisted = 0;
		for (size_t i = 0; i < nr; i++) {
			bool skip = false;
			for (size_t k = 0; k < nshown; k++)
				skip |= shown[k] == &r[i] || (shown[k]->p->hdr.exe.len &&
							      rp_str_eq(shown[k]->p->hdr.exe, r[i].p->hdr.exe));
			if (skip)
				continue;
			struct ct_str b = rp_str_basename(r[i].p->hdr.exe.len ? r[i].p->hdr.exe :
						    rp_str_part(r[i].p->hdr.argv, '\0', 0));
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
			cat(names, sizeof(names), "%s%.*s", i ? ", " : "", S(by[i].name));
			if (by[i].n > 1)
				cat(names, sizeof(names), " x%zu", by[i].n);
		}
		if (unlisted)
			cat(names, sizeof(names), ", ...");
		if (rest_carry)
			CAT(message, " %zu other process(es) (%s) carry crypto too.", rest, names);
		else
			CAT(message, " The other %zu process(es) (%s) loaded no crypto library.", rest,
			    names);
	}
	free(r);
}

static void eval_nothing_intercepted(struct rp_model *m)
{
	uint64_t calls = 0;
	size_t nproc = 0, statics = 0, refused = 0;
	for (size_t i = 0; i < m->npaths; i++)
		calls += m->paths[i].st.calls;
	for (size_t i = 0; i < m->nprocs; i++) {
		const struct rp_proc *p = &m->procs[i];
		if (!proc_selected(m, p))
			continue;
		nproc++;
		statics += static_exe_event(p) != NULL;
		refused += rp_kernel_refusal(p) != NULL;
	}
	if (calls || !nproc)
		return;
	struct rp_finding *f = add(m, "nothing-intercepted", RP_INFO, 0);
	if (!f)
		return;
	char why[600];
	nothing_reason(m, why, sizeof(why), false);
	CAT(message, "No crypto calls were seen in %zu process(es): %s.", nproc, why);
	CAT(evidence, "0 intercepted cipher calls in %zu trace file(s)", nproc);
	if (statics)
		CAT(evidence, "; %zu written by the launcher for a statically linked program", statics);
	struct nothing_verdict v;
	describe_processes(m, f, &v);
	/* A warning when the crypto sits in code the reader builds: rebuilding it is theirs to do.
	 * A distribution's package or a pip wheel doing its own crypto is information: nothing is
	 * wrong with it, and the fix is another build of that package, if the trace is wanted. */
	bool readers = v.owner.kind == RP_OWNER_LOCAL || v.owner.kind == RP_OWNER_UNKNOWN;
	if ((v.embedded || v.other) && readers)
		f->severity = RP_WARNING;
	if (refused) {
		CAT(fix, "See kernel-refused: the program asked the kernel for its cipher work, and what "
			 "to do about the refusal is said there.");
	} else if (v.embedded && v.owner.kind == RP_OWNER_PIP) {
		CAT(fix, "Nothing is wrong with the program; cryptrace cannot see into the %s that "
			 "the Python package %s carries. To measure this work, use a build of %s "
			 "linked against the system's shared libcrypto: `pip install --no-binary %s %s` "
			 "builds it from source against the system's OpenSSL",
		    v.carrier_libs, v.owner.package, v.owner.package, v.owner.package, v.owner.package);
		if (!strcmp(v.owner.package, "cryptography"))
			CAT(fix, ", as Debian's python3-cryptography (for /usr/bin/python3) is");
		CAT(fix, ".");
	} else if (v.embedded && v.owner.kind == RP_OWNER_SYSTEM) {
		CAT(fix, "Nothing to change here: the program (%s) does its crypto in %s, linked "
			 "into it, which cryptrace cannot see (it hooks OpenSSL's shared libcrypto, "
			 "/dev/crypto and AF_ALG only).", v.owner.desc, v.carrier_libs);
	} else if (v.embedded) {
		CAT(fix, "Build the program against the shared libcrypto (libcrypto.so, not libcrypto.a "
			 "or a static binary) to trace it; cryptrace hooks OpenSSL's shared libcrypto, "
			 "/dev/crypto and AF_ALG only.");
	} else if (v.other && !readers) {
		CAT(fix, "Nothing to change here: the program (%s) uses %s for its crypto, which "
			 "cryptrace does not hook (it hooks OpenSSL's libcrypto, /dev/crypto and AF_ALG "
			 "only); to measure it, use %s's own tools.", v.owner.desc, v.lib_name,
		    v.lib_name);
	} else if (v.other) {
		CAT(fix, "cryptrace hooks OpenSSL's libcrypto, /dev/crypto and AF_ALG only; trace this "
			 "program's crypto library (%s) with its own tools, or build it against OpenSSL.",
		    v.lib_name);
	} else if (statics) {
		CAT(fix, "Nothing to fix if the program does no encryption. To trace one that does, "
			 "link it dynamically against libcrypto: LD_PRELOAD needs the dynamic loader.");
	} else {
		CAT(fix, "Nothing to fix if the program should do no encryption. A statically linked "
			 "program cannot be traced: link it dynamically against libcrypto.");
	}
}

/* ---- multiple-libcrypto */

static bool is_libcrypto_path(struct ct_str path)
{
	struct ct_str base = rp_str_basename(path);
	return rp_str_starts(base, "libcrypto.so") || rp_str_starts(base, "libcrypto-");
}

/*
 * Two libcrypto copies in one process (tests/reliability/loading.py: a copy dlopen'd RTLD_LOCAL
 * from another directory). The hooks catch every call the dynamic linker resolves by name through
 * the global scope and pass it to the copy found first after the preload (dlsym RTLD_NEXT). Calls
 * that reach another copy without that lookup are not seen: through pointers from
 * dlsym(handle, ...), or the copy's calls into itself. The reporter cannot tell how many.
 */
static void eval_multiple_libcrypto(struct rp_model *m)
{
	for (size_t i = 0; i < m->nprocs; i++) {
		const struct rp_proc *p = &m->procs[i];
		if (!proc_selected(m, p) || !p->has_proc)
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
		struct rp_finding *f = add(m, "multiple-libcrypto", RP_WARNING, p->hdr.pid);
		if (!f)
			return;
		struct ct_str first_version = p->proc.libcrypto.len ? p->proc.libcrypto :
					      ct_str_from("version unknown");
		CAT(message, "%u copies of libcrypto are mapped in this process:", total);
		for (unsigned j = 0; j < n; j++)
			CAT(message, "%s %.*s", j ? (j + 1 == n ? " and" : ",") : "", S(libs[j]));
		CAT(message, ". cryptrace sees the calls the dynamic linker resolves by name (the "
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
			CAT(message, " The copies are different versions: code built against one of them "
				     "also reaches cryptrace's hooks, which pass it to the first copy; check "
				     "that the program behaves the same without cryptrace.");
		CAT(evidence, "crypto_libs:");
		for (unsigned j = 0; j < n; j++)
			CAT(evidence, " %.*s;", S(libs[j]));
		CAT(evidence, " %llu intercepted calls; libcrypto %.*s",
		    (unsigned long long)p->proc.hooked_calls, S(p->proc.libcrypto));
		CAT(fix, "Load one libcrypto per process (drop the private copy, or link the plugin "
			 "against the system one); to measure work in a private copy, trace a program "
			 "that uses only that copy.");
	}
}

/* ---- lowlevel-api */

/* Severity: AES_* carrying a real share of the work is a warning (no provider, no engine, and in
 * OpenSSL 3.0 AES_encrypt & co. are table code without AES-NI). EVP_Cipher still runs in the
 * provider at full speed, and a few AES_* blocks (OpenSSH's UMAC pads) cost nothing: info, or no
 * finding at all when the code is a packaged program's that the reader does not maintain. */
#define LOWLEVEL_WARN_SHARE 0.01

/* The file of the module that created a merged path's contexts (its first call site), from the
 * MODULE records of the processes that have the path, else a traced executable of that name;
 * "" when unknown. */
static void module_file(const struct rp_model *m, const struct rp_path *p, const char *module,
			char *file, size_t cap)
{
	file[0] = 0;
	for (size_t i = 0; i < m->nprocs && !file[0]; i++) {
		const struct rp_proc *q = &m->procs[i];
		bool has = false;
		for (size_t k = 0; k < p->pids.n; k++)
			has |= p->pids.v[k] == q->hdr.pid;
		if (!has && p->pids.n)
			continue;
		for (size_t k = 0; k < q->nmodules; k++)
			if (rp_str_is(q->modules[k].name, module) && q->modules[k].path.len) {
				snprintf(file, cap, "%.*s", S(q->modules[k].path));
				return;
			}
		if (q->hdr.exe.len && rp_str_is(rp_str_basename(q->hdr.exe), module))
			snprintf(file, cap, "%.*s", S(q->hdr.exe));
	}
}

/* `openssl speed` made the calls: what it measures is the reader's command line to change. */
static bool by_openssl_speed(const struct rp_model *m, const struct rp_path *p)
{
	for (size_t i = 0; i < m->nprocs; i++) {
		const struct rp_proc *q = &m->procs[i];
		bool has = false;
		for (size_t k = 0; k < p->pids.n; k++)
			has |= p->pids.v[k] == q->hdr.pid;
		if ((has || !p->pids.n) && rp_str_is(rp_str_basename(q->hdr.exe), "openssl") &&
		    rp_str_is(rp_str_part(q->hdr.argv, '\0', 1), "speed"))
			return true;
	}
	return false;
}

static void eval_lowlevel_api(struct rp_model *m)
{
	uint64_t total_bytes = 0;
	for (size_t i = 0; i < m->npaths; i++)
		total_bytes += m->paths[i].st.bytes;
	for (size_t i = 0; i < m->npaths; i++) {
		const struct rp_path *p = &m->paths[i];
		bool aes = p->def.api == CT_API_AES;
		bool raw = p->def.api == CT_API_EVP && p->def.entry == CT_ENTRY_EVP_CIPHER;
		if (!(aes || raw) || !p->st.calls)
			continue;
		/* whose code made the calls, and what they cost */
		struct rp_creator c;
		char file[512] = "";
		struct rp_owner own = { .kind = RP_OWNER_UNKNOWN };
		bool named = rp_callsite_creator(p->def.callsite, &c);
		if (named) {
			module_file(m, p, c.module, file, sizeof(file));
			rp_file_owner(file, &own);
		}
		bool readers = !named || rp_owner_is_readers(&own);
		bool speed = by_openssl_speed(m, p);
		double share = total_bytes ? (double)p->st.bytes / (double)total_bytes : 0;
		bool weighty = aes && share >= LOWLEVEL_WARN_SHARE;
		/* a packaged program's call that costs nothing measurable is not a finding: nothing in
		 * it for the reader to change, nothing it slows down */
		if (!readers && !speed && !weighty)
			continue;
		struct rp_finding *f = add(m, "lowlevel-api", weighty ? RP_WARNING : RP_INFO, 0);
		if (!f)
			return;
		char b[32], who[700] = "";
		fmt_bytes(b, sizeof(b), p->st.bytes);
		if (named && file[0])
			snprintf(who, sizeof(who), ", called by %s (%s, %s)", c.created_by, file, own.desc);
		else if (named)
			snprintf(who, sizeof(who), ", called by %s", c.created_by);
		if (aes)
			CAT(message, "%llu calls (%s) of %.*s %s went through the low-level AES_* API%s. It "
				     "bypasses engines and providers, so no offload or provider configuration "
				     "can apply, and in OpenSSL 3.0 and older it does not use AES-NI either "
				     "(table code).",
			    (unsigned long long)p->st.calls, b, S(p->def.cipher), ct_dir_name(p->def.dir),
			    who);
		else
			CAT(message, "%llu calls (%s) of %.*s %s went through EVP_Cipher(), the raw one-shot "
				     "entry point%s.",
			    (unsigned long long)p->st.calls, b, S(p->def.cipher), ct_dir_name(p->def.dir),
			    who);
		if (raw && speed)
			CAT(message, " It is what `openssl speed` without -evp measures (older versions "
				     "measured the low-level AES_* functions there); it still runs in %.*s at "
				     "that implementation's speed: this is about what is being measured, not "
				     "a slow path.", S(p->def.impl));
		else if (raw)
			CAT(message, " It runs in %.*s at that implementation's full speed, so it costs "
				     "nothing measurable here; OpenSSL documents it as not meant for "
				     "applications (no buffering or padding, a return value that means "
				     "different things per cipher).", S(p->def.impl));
		else if (weighty)
			CAT(message, " It carries %.1f%% of the bytes here.", 100.0 * share);
		else
			CAT(message, " It carries under 1%% of the bytes here, so it costs nothing "
				     "measurable.");
		CAT(evidence, "path %zu: api=%s entry=%s impl=%.*s calls=%llu bytes=%llu", i + 1,
		    ct_api_name(p->def.api), ct_entry_name(p->def.entry), S(p->def.impl),
		    (unsigned long long)p->st.calls, (unsigned long long)p->st.bytes);
		if (p->def.callsite.len)
			CAT(evidence, "; first used at %.*s", S(rp_str_part(p->def.callsite, '\n', 0)));
		if (file[0])
			CAT(evidence, "; %s: %s", file, own.desc);
		if (speed)
			CAT(fix, "Add -evp to `openssl speed` to measure the EVP path that applications "
				 "use.");
		else if (!readers)
			CAT(fix, "Nothing to change in your code: this is %s's own code (%s). If this "
				 "share matters, a configuration of that program that avoids it (another "
				 "cipher or MAC) or a newer release may.", c.module, own.desc);
		else if (raw)
			CAT(fix, "Nothing to change for speed. In code you maintain, EVP_CipherUpdate and "
				 "EVP_CipherFinal_ex (after EVP_CipherInit_ex2 with a cipher from "
				 "EVP_CIPHER_fetch) are the documented calls.");
		else
			CAT(fix, "Use EVP_CipherInit_ex2 with a cipher from EVP_CIPHER_fetch, then "
				 "EVP_CipherUpdate/EVP_CipherFinal_ex: the provider's AES-NI code, and "
				 "offload where it is configured.");
	}
}

/* ---- user-time-misleads */

/* The wall / user factor of a path, or 0 when the path does not qualify. */
static double user_misleads_factor(const struct rp_path *p)
{
	const struct rp_derived *d = &p->d;
	if (!d->cpu_known || p->st.calls < USER_MISLEADS_MIN_CALLS ||
	    p->st.cpu_samples < USER_MISLEADS_MIN_SAMPLES || d->wall_ns <= 0)
		return 0;
	/* Only where the kernel takes part: in-process software work is all user time, and
	 * wall above it there only means the thread was preempted on a busy machine. */
	bool kernel_involved = is_kernel(p) || rp_str_starts(p->def.impl, "engine:") ||
			       p->st.syscalls > 0 || d->sys_ns > 0.1 * d->wall_ns;
	if (!kernel_involved)
		return 0;
	double factor = d->user_ns > 0 ? d->wall_ns / d->user_ns : INFINITY;
	return factor >= USER_MISLEADS_FACTOR ? factor : 0;
}

static void eval_user_time_misleads(struct rp_model *m)
{
	for (size_t i = 0; i < m->npaths; i++) {
		const struct rp_path *p = &m->paths[i];
		const struct rp_derived *d = &p->d;
		double factor = user_misleads_factor(p);
		if (factor == 0)
			continue;
		/* A kernel path driven from inside an engine's EVP calls is the same work as that
		 * EVP path: say it once, on the EVP path the program's benchmark sees. */
		bool outer_said = false;
		for (size_t j = 0; j < m->npaths && (p->def.flags & CT_PATH_NESTED); j++)
			outer_said |= j != i && !is_kernel(&m->paths[j]) &&
				      rp_str_eq(m->paths[j].def.cipher, p->def.cipher) &&
				      user_misleads_factor(&m->paths[j]) > 0;
		if (outer_said)
			continue;
		struct rp_finding *f = add(m, "user-time-misleads", RP_WARNING, 0);
		if (!f)
			return;
		char w[32], u[32], s[32], fs[32];
		if (isinf(factor) || factor > 1000)
			snprintf(fs, sizeof(fs), "more than 1000");
		else
			snprintf(fs, sizeof(fs), "%.1f", factor);
		CAT(message, "On path %zu (%s %.*s %.*s), wall time is %sx the user CPU time: the work "
			     "happens in the kernel or waiting on it. A benchmark that counts user time "
			     "only (like `openssl speed` without -elapsed) overstates this path's throughput "
			     "by that factor.",
		    i + 1, ct_api_name(p->def.api), S(p->def.impl), S(p->def.cipher), fs);
		CAT(evidence, "wall %s, user %s, sys %s over %llu calls (%llu CPU-sampled)",
		    rp_fmt_ns(w, sizeof(w), d->wall_ns), rp_fmt_ns(u, sizeof(u), d->user_ns),
		    rp_fmt_ns(s, sizeof(s), d->sys_ns), (unsigned long long)p->st.calls,
		    (unsigned long long)p->st.cpu_samples);
		CAT(fix, "Compare paths by wall time (`openssl speed -elapsed`), or by user+sys CPU "
			 "time, never by user time alone.");
	}
}

/* ---- engine-failed */

/* Engine and provider requests return a handle or 1 on success; kernel session set-up calls
 * (ioctl, bind, accept) return 0 or a descriptor. */
static bool event_failed(const struct ct_event *e)
{
	if (e->kind == CT_EV_SESSION)
		return e->err != 0 || e->ret < 0;
	return e->err != 0 || e->ret <= 0;
}

/* A failed hooked call that says an offload did not work: a kernel interface call (socket, bind,
 * open, ioctl, io_submit...), not a library-level failure such as EVP_DecryptFinal on bad
 * padding or AES_set_encrypt_key on a bad key size. */
static bool offload_call_failed(const struct ct_event *e)
{
	return e->kind == CT_EV_CALL_FAILED && !rp_str_starts(e->call, "EVP_") &&
	       !rp_str_starts(e->call, "AES_");
}

static void list_call_failures(struct rp_finding *f, const struct rp_proc *p)
{
	unsigned shown = 0;
	for (size_t k = 0; k < p->nevents; k++) {
		const struct ct_event *e = &p->events[k].ev;
		if (!offload_call_failed(e))
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
			CAT(message, " EAFNOSUPPORT from socket() means this kernel has no AF_ALG support "
				     "(or a sandbox refuses it).");
			break;
		}
	}
}

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

static void eval_engine_failed(struct rp_model *m)
{
	for (size_t i = 0; i < m->nprocs; i++) {
		const struct rp_proc *p = &m->procs[i];
		if (!proc_selected(m, p))
			continue;
		for (size_t k = 0; k < p->nevents; k++) {
			const struct ct_event *e = &p->events[k].ev;
			if ((e->kind != CT_EV_ENGINE_REQUEST && e->kind != CT_EV_PROVIDER_LOAD) ||
			    !event_failed(e) || rp_non_offload_module(e))
				continue;
			struct rp_finding *f = add(m, "engine-failed", RP_ERROR, p->hdr.pid);
			if (!f)
				return;
			struct ct_str params, reason;
			split_ossl_reason(e->detail, &params, &reason);
			bool engine = e->kind == CT_EV_ENGINE_REQUEST;
			bool init = rp_str_is(e->call, "ENGINE_init");
			CAT(message, "%s asked for %s with %.*s%s%.*s%s and it %s.",
			    requested_by_config(e->callsite) ? "The OpenSSL configuration file "
							       "(openssl.cnf or $OPENSSL_CONF)" :
							       "The program",
			    engine ? "an engine" : "a provider", S(e->call), params.len ? " (" : "",
			    S(params), params.len ? ")" : "",
			    init ? "was found but could not be initialised" :
			    engine ? "could not be loaded or initialised" : "could not be loaded");
			struct ct_str module = missing_module(reason);
			if (reason.len)
				CAT(message, " OpenSSL's error queue says: %.*s.", S(reason));
			else
				CAT(message, " OpenSSL's error queue gave no reason.");
			if (module.p)
				CAT(message, " The module's shared object %.*s does not exist.", S(module));
			else if (rp_str_find(reason, ": lib(").p || rp_str_starts(reason, "lib("))
				CAT(message, " (lib(N) is a code of the module itself, whose text is gone "
					     "with it.)");
			CAT(evidence, "%.*s returned %lld, %llu time(s)", S(e->call), (long long)e->ret,
			    (unsigned long long)(e->count ? e->count : 1));
			if (e->callsite.len)
				CAT(evidence, ", called at %.*s", S(rp_str_part(e->callsite, '\n', 0)));
			list_call_failures(f, p);
			if (module.p)
				CAT(fix, "Install the module, point OPENSSL_ENGINES (engines) or "
					 "OPENSSL_MODULES (providers) at the directory that holds it, or "
					 "correct the name; `cryptrace doctor` lists what loads here.");
			else
				CAT(fix, "Check that the engine/provider module exists and that what it "
					 "needs is there (for afalg: a kernel with AF_ALG and algif_skcipher, "
					 "not blocked by a sandbox); run `cryptrace doctor`.");
			CAT(fix, " Make the program fail loudly instead of continuing in software when "
				 "the offload is required.");
		}
	}
}

/* ---- provider-absent */

/* A provider or engine that is not an offload (offload_probe.c) was asked for and is not there:
 * what it is, where the process's cipher work ran instead, and when the reader would need it. */
static void eval_provider_absent(struct rp_model *m)
{
	for (size_t i = 0; i < m->nprocs; i++) {
		const struct rp_proc *p = &m->procs[i];
		if (!proc_selected(m, p))
			continue;
		for (size_t k = 0; k < p->nevents; k++) {
			const struct ct_event *e = &p->events[k].ev;
			const struct rp_module_role *role = rp_non_offload_module(e);
			if (!role || !event_failed(e))
				continue;
			struct rp_finding *f = add(m, "provider-absent", RP_INFO, p->hdr.pid);
			if (!f)
				return;
			struct ct_str params, reason;
			split_ossl_reason(e->detail, &params, &reason);
			struct ct_str module = missing_module(reason);
			CAT(message, "%s asked for the %.*s %s with %.*s (%.*s), and it %s",
			    requested_by_config(e->callsite) ? "The OpenSSL configuration file" :
							       "The program",
			    S(rp_requested_module(e)),
			    e->kind == CT_EV_PROVIDER_LOAD ? "provider" : "engine", S(e->call), S(params),
			    module.p ? "is not installed here" : "could not be loaded");
			if (module.p)
				CAT(message, " (%.*s does not exist)", S(module));
			CAT(message, ". That is %s: not a crypto offload, so its absence moves no cipher "
				     "work.", role->what);
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
			fmt_bytes(b, sizeof(b), bytes);
			if (calls) {
				CAT(message, " This process's %llu cipher calls (%s) ran in",
				    (unsigned long long)calls, b);
				for (unsigned q = 0; q < nimpl; q++)
					CAT(message, "%s %.*s", q ? (q + 1 == nimpl ? " and" : ",") : "",
					    S(impls[q]));
				CAT(message, ".");
			}
			CAT(evidence, "%.*s returned %lld, %llu time(s)", S(e->call), (long long)e->ret,
			    (unsigned long long)(e->count ? e->count : 1));
			if (reason.len)
				CAT(evidence, "; OpenSSL's error queue: %.*s", S(reason));
			if (e->callsite.len)
				CAT(evidence, "; called at %.*s", S(rp_str_part(e->callsite, '\n', 0)));
			CAT(fix, "%s", role->fix);
		}
	}
}

/* ---- silent-fallback */

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
	if (!is_software(p) || !requested_differs(p))
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
		if (is_kernel(kp) && kp->st.errors && rp_str_eq(kp->def.cipher, sw->def.cipher))
			return true;
	}
	return false;
}

/* Failures that say an offload did not work in this process (why: what they were). */
static enum offload_failure offload_failed(const struct rp_proc *p, char *why, size_t cap)
{
	enum offload_failure how = OFFLOAD_OK;
	why[0] = 0;
	for (size_t k = 0; k < p->nevents; k++) {
		const struct ct_event *e = &p->events[k].ev;
		bool bad = false;
		switch (e->kind) {
		case CT_EV_ENGINE_REQUEST:
		case CT_EV_PROVIDER_LOAD:
			bad = event_failed(e) && !rp_non_offload_module(e);
			break;
		case CT_EV_SESSION:
			bad = event_failed(e);
			break;
		case CT_EV_CALL_FAILED:
			bad = offload_call_failed(e);
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
		cat(why, cap, "%s%s %.*s%s%s", why[0] ? "; " : "", ct_event_kind_name(e->kind),
		    S(e->call), e->err ? " " : "", e->err ? rp_errno_name(e->err, eb, sizeof(eb)) : "");
	}
	for (size_t k = 0; k < p->npaths; k++) {
		const struct rp_path *pp = &p->paths[k];
		if (is_kernel(pp) && pp->st.errors) {
			cat(why, cap, "%s%llu failed %s operations on %.*s (%.*s)", why[0] ? "; " : "",
			    (unsigned long long)pp->st.errors, ct_api_name(pp->def.api), S(pp->def.impl),
			    S(pp->def.cipher));
			if (how == OFFLOAD_OK)
				how = OFFLOAD_OPS_ONLY;
		}
	}
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
			cat(why, cap, "%s%.*s was requested, %.*s served it (%zu path(s))",
			    why[0] ? "; " : "", S(pp->def.requested), S(pp->def.impl), n);
	}
	return any;
}

/* Does this path's work count as fallen back? */
static bool fallback_path(const struct rp_model *m, const struct rp_proc *pr, const struct rp_path *p,
			  enum offload_failure failed)
{
	return is_software(p) && p->st.calls && rp_path_selected(m, p) &&
	       (failed == OFFLOAD_SETUP || fell_back(m, p) ||
		(failed == OFFLOAD_OPS_ONLY && kernel_ops_failed_for(pr, p)));
}

static void eval_silent_fallback(struct rp_model *m)
{
	for (size_t i = 0; i < m->nprocs; i++) {
		const struct rp_proc *p = &m->procs[i];
		if (!proc_selected(m, p))
			continue;
		char why[600];
		/* After a failure at set-up every software path counts (the failure rarely names its
		 * cipher); after failed kernel operations, the software paths of those ciphers; without
		 * a failure, only the paths that demonstrably fell back. */
		enum offload_failure failed = offload_failed(p, why, sizeof(why));
		bool fell = paths_fell_back(m, p, why, sizeof(why));
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
		struct rp_finding *f = add(m, "silent-fallback", RP_ERROR, p->hdr.pid);
		if (!f)
			return;
		char b[32];
		fmt_bytes(b, sizeof(b), bytes);
		CAT(message, "Offload was requested but did not happen: %llu cipher calls (%s) ran in "
			     "this process's own software instead:", (unsigned long long)calls, b);
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
			fmt_bytes(b, sizeof(b), pp->st.bytes);
			CAT(message, " %.*s %s in %.*s (%llu calls, %s);", S(pp->def.cipher),
			    ct_dir_name(pp->def.dir), S(pp->def.impl), (unsigned long long)pp->st.calls, b);
		}
		free(sorted);
		size_t n = strlen(f->message);
		if (n && f->message[n - 1] == ';')
			f->message[n - 1] = '.';
		CAT(message, " The program did not report it.");
		CAT(evidence, "%s; %zu software path(s), %llu calls, %llu bytes", why, npaths,
		    (unsigned long long)calls, (unsigned long long)bytes);
		CAT(fix, "Fix the offload (see engine-failed / session-failed), or stop requesting it "
			 "if software is fast enough here; check offload with `cryptrace report` after "
			 "configuration changes.");
	}
}

/* ---- session-failed */

static bool session_failure(const struct ct_event *e)
{
	if (e->kind == CT_EV_SESSION)
		return event_failed(e);
	if (e->kind != CT_EV_CALL_FAILED)
		return false;
	return rp_str_starts(e->call, "ioctl(CIOCGSESSION") || rp_str_starts(e->call, "bind") ||
	       rp_str_starts(e->call, "setsockopt") || rp_str_starts(e->call, "accept");
}

static void eval_session_failed(struct rp_model *m)
{
	for (size_t i = 0; i < m->nevents; i++) {
		const struct rp_event *e = &m->events[i];
		if (!session_failure(&e->ev))
			continue;
		struct rp_finding *f = add(m, "session-failed", RP_WARNING, e->pids.n == 1 ? e->pid : 0);
		if (!f)
			return;
		char eb[32];
		CAT(message, "A kernel crypto session could not be set up: %.*s failed with %s (%s)%s%.*s%s, "
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
		CAT(fix, "Check the kernel's drivers for this algorithm and key size (/proc/crypto, "
			 "`cryptrace doctor`), load the module that provides it, or use a supported key "
			 "size.");
	}
}

/* ---- software-aes */

static bool ia32cap_disables_aesni(struct ct_str cap)
{
	char buf[64];
	if (!cap.len || cap.len >= sizeof(buf))
		return false;
	snprintf(buf, sizeof(buf), "%.*s", S(cap));
	bool clear = buf[0] == '~';
	char *end;
	unsigned long long v = strtoull(buf + clear, &end, 0);
	if (end == buf + clear)
		return false;
	return clear ? (v & IA32CAP_AESNI) != 0 : (v & IA32CAP_AESNI) == 0;
}

/* Cycles per byte over the requests of at least SOFTWARE_AES_MIN_BYTES (on CPU time when
 * sampled); < 0 when unknown. */
static double large_request_cpb(const struct rp_path *p)
{
	double wall = 0;
	uint64_t bytes = 0;
	if (!p->tsc_hz || !p->d.wall_known)
		return -1;
	for (unsigned b = 0; b < CT_SIZE_BUCKETS; b++) {
		if (ct_size_bucket_low(b) < SOFTWARE_AES_MIN_BYTES || !p->st.size[b].calls)
			continue;
		wall += p->d.bucket_wall_ns[b];
		bytes += p->st.size[b].bytes;
	}
	if (!bytes)
		return -1;
	/* On CPU time when it was sampled: a busy machine preempts the thread mid-call, which
	 * inflates wall time but not the cycles the cipher actually spent. */
	double share = 1;
	if (p->d.cpu_known && p->d.wall_ns > 0)
		share = fmin(1, (p->d.user_ns + p->d.sys_ns) / p->d.wall_ns);
	return wall * share * (double)p->tsc_hz / 1e9 / (double)bytes;
}

/* Slow must be the rule among a path's large requests, not a few outliers. On a busy machine a
 * timed call that sits preempted for a scheduler slice (milliseconds) raises the mean cost of a
 * path tenfold while every other call ran at AES-NI speed: curl on a loaded 2-core VM showed a
 * mean of 10.7 cycles/byte over 16 KiB TLS records whose median took 3.5 us (0.5 cycles/byte),
 * and CPU sampling (~1/ms) rarely lands in the preempted call to correct it. So the timed calls
 * slower than an 8 KiB request at the limit must be at least half of the timed large ones: true
 * of software AES, where every large request is that slow. Latency buckets are 4 per power of
 * two, so a call within 25% under the threshold may count. */
static bool slow_is_the_rule(const struct rp_path *p, double limit_cpb)
{
	uint64_t large_timed = 0, slow = 0;
	for (unsigned b = 0; b < CT_SIZE_BUCKETS; b++)
		if (ct_size_bucket_low(b) >= SOFTWARE_AES_MIN_BYTES)
			large_timed += p->st.size[b].timed_calls;
	if (!large_timed || !p->tsc_hz)
		return true; /* nothing to check the mean against */
	double ns = SOFTWARE_AES_MIN_BYTES * limit_cpb / ((double)p->tsc_hz / 1e9);
	for (unsigned b = 0; b < CT_LAT_BUCKETS; b++)
		if ((double)ct_lat_bucket_low(b) >= 0.75 * ns)
			slow += p->st.lat[b];
	return 2 * slow >= large_timed;
}

static double path_limit(const struct rp_path *p, double limit)
{
	char c[64];
	snprintf(c, sizeof(c), "%.*s", (int)(p->def.cipher.len < 63 ? p->def.cipher.len : 63),
		 p->def.cipher.p);
	bool enc = p->def.dir != CT_DIR_DECRYPT;
	bool serial = strstr(c, "-ofb") || (enc && (strstr(c, "-cbc") || strstr(c, "-cfb")));
	if (!serial)
		return limit;
	unsigned bits = p->def.key_bits ? p->def.key_bits : strstr(c, "256") ? 256 :
							    strstr(c, "192") ? 192 : 128;
	double rounds = bits >= 256 ? 14 : bits >= 192 ? 12 : 10;
	return fmax(limit, SOFTWARE_AES_SERIAL_FACTOR * rounds * SOFTWARE_AES_ROUND_LATENCY / 16);
}

static bool is_aes_inprocess(const struct rp_model *m, const struct rp_path *p)
{
	return is_inprocess(p) && p->st.calls && rp_path_selected(m, p) &&
	       (rp_str_starts(p->def.cipher, "aes") || rp_str_starts(p->def.cipher, "id-aes"));
}

/* A mask in OPENSSL_ia32cap slows libcrypto's own AES, not work a route moved off it. */
static bool masked_applies(bool masked, const struct rp_path *p)
{
	return masked && !(p->def.flags & CT_PATH_ROUTED) && p->def.route != CT_ROUTE_AESNI;
}

/* The AES-NI bound of a process in cycles/byte (0: none) and where it came from: the launcher
 * measures it before the program starts (header); a bare LD_PRELOAD run may measure it in the
 * process at its first AES path (PROC record, preload/calib.c). */
static double aesni_bound(const struct rp_proc *p, const char **from)
{
	if (p->has_hdr && p->hdr.aesni_cpb_milli) {
		*from = "measured by cryptrace run on this machine just before the program started";
		return p->hdr.aesni_cpb_milli / 1000.0;
	}
	if (p->has_proc && p->proc.aesni_cpb_milli) {
		*from = "measured inside the traced process after its first AES path (no launcher "
			"passed one in)";
		return p->proc.aesni_cpb_milli / 1000.0;
	}
	*from = "none in this trace: no launcher passed one in, and the process did not measure one "
		"(a seccomp sandbox, no TSC clock, no flush after its first AES path, or an older "
		"trace)";
	return 0;
}

/* One process's verdict: its AES paths that ran at software speed (or, under a mask, every
 * AES path), the one with the most bytes, and the cause. */
enum sw_cause { SW_MASK, SW_LOWLEVEL, SW_SET_CAP, SW_BUILD };

struct sw_proc {
	const struct rp_proc *pr;
	const struct rp_path *main;
	double main_cpb, bound, limit, base_limit;
	bool calibrated, masked;
	const char *bound_from;
	enum sw_cause cause;
	uint64_t calls, bytes;  /* over its slow paths */
};

static bool sw_path_slow(const struct sw_proc *x, const struct rp_model *m, const struct rp_path *p)
{
	if (!is_aes_inprocess(m, p))
		return false;
	double cpb = large_request_cpb(p);
	double lim = x->calibrated ? path_limit(p, x->base_limit) : x->base_limit;
	return (cpb > lim && slow_is_the_rule(p, lim)) || masked_applies(x->masked, p);
}

static bool sw_judge(const struct rp_model *m, const struct rp_proc *pr, struct sw_proc *x)
{
	memset(x, 0, sizeof(*x));
	x->pr = pr;
	if (!proc_selected(m, pr) || !pr->has_hdr || !(pr->hdr.cpu_flags & (CT_CPU_AES | CT_CPU_ARM_AES)))
		return false;
	x->masked = ia32cap_disables_aesni(pr->hdr.ia32cap);
	x->bound = aesni_bound(pr, &x->bound_from);
	x->base_limit = x->bound > 0 ? fmax(SOFTWARE_AES_FACTOR * x->bound, SOFTWARE_AES_FLOOR_CPB) :
				       SOFTWARE_AES_FIXED_CPB;
	x->calibrated = x->bound > 0; /* the serial-mode floor refines a calibrated bound only */
	x->main_cpb = -1;
	for (size_t k = 0; k < pr->npaths; k++) {
		const struct rp_path *p = &pr->paths[k];
		if (!sw_path_slow(x, m, p))
			continue;
		x->calls += p->st.calls;
		x->bytes += p->st.bytes;
		if (!x->main || p->st.bytes > x->main->st.bytes) {
			x->main = p;
			x->main_cpb = large_request_cpb(p);
		}
	}
	if (!x->main)
		return false;
	x->limit = x->calibrated ? path_limit(x->main, x->base_limit) : x->base_limit;
	x->cause = x->masked ? SW_MASK : x->main->def.api == CT_API_AES ? SW_LOWLEVEL :
		   pr->hdr.ia32cap.len ? SW_SET_CAP : SW_BUILD;
	return true;
}

/* Same cause: the same reason (and, for a mask, the same OPENSSL_ia32cap value). */
static bool sw_same_cause(const struct sw_proc *a, const struct sw_proc *b)
{
	return a->cause == b->cause &&
	       (a->cause != SW_MASK || rp_str_eq(a->pr->hdr.ia32cap, b->pr->hdr.ia32cap));
}

/* One finding per cause (issue: nine software-aes warnings for one masked database server):
 * the process with the most slow bytes carries the speed evidence; its other slow paths and
 * every process affected, with its share of the slow bytes, are listed. */
static void eval_software_aes(struct rp_model *m)
{
	struct sw_proc *v = calloc(m->nprocs ? m->nprocs : 1, sizeof(*v));
	bool *done = calloc(m->nprocs ? m->nprocs : 1, sizeof(*done));
	size_t n = 0;
	for (size_t i = 0; v && done && i < m->nprocs; i++)
		if (sw_judge(m, &m->procs[i], &v[n]))
			n++;
	for (size_t g = 0; v && done && g < n; g++) {
		if (done[g])
			continue;
		/* the group of g's cause; x: the process with the most slow bytes */
		const struct sw_proc *x = &v[g];
		size_t members = 0;
		uint64_t group_bytes = 0, group_calls = 0;
		for (size_t j = g; j < n; j++) {
			if (done[j] || !sw_same_cause(&v[g], &v[j]))
				continue;
			members++;
			group_bytes += v[j].bytes;
			group_calls += v[j].calls;
			if (v[j].bytes > x->bytes)
				x = &v[j];
		}
		const struct rp_proc *pr = x->pr;
		const struct rp_path *p = x->main;
		double main_cpb = x->main_cpb, bound = x->bound, limit = x->limit;
		struct rp_finding *f = add(m, "software-aes", RP_WARNING, members == 1 ? pr->hdr.pid : 0);
		if (!f)
			break;
		if (main_cpb > limit && bound > 0)
			CAT(message, "This CPU has AES instructions, but %.*s %s in %.*s ran at %.1f cycles "
				     "per byte on requests of 8 KiB and more, %.1fx the %.2f cycles/byte "
				     "measured for AES-NI on this machine when the trace was taken: that is "
				     "software AES speed.",
			    S(p->def.cipher), ct_dir_name(p->def.dir), S(p->def.impl), main_cpb,
			    main_cpb / bound, bound);
		else if (main_cpb > limit)
			CAT(message, "This CPU has AES instructions, but %.*s %s in %.*s ran at %.1f cycles "
				     "per byte on requests of 8 KiB and more, above the %.0f cycles/byte that "
				     "AES-NI stays under in every mode (CBC encryption, the slowest, runs near "
				     "2): that is software AES speed.",
			    S(p->def.cipher), ct_dir_name(p->def.dir), S(p->def.impl), main_cpb, limit);
		else
			CAT(message, "This CPU has AES instructions, but OPENSSL_ia32cap hides them from "
				     "libcrypto, so %.*s %s in %.*s runs in software AES.",
			    S(p->def.cipher), ct_dir_name(p->def.dir), S(p->def.impl));
		/* the other slow paths, over the whole group, once per cipher and direction */
		struct { struct ct_str cipher; int dir; uint64_t calls; } also[16];
		size_t nalso = 0;
		for (size_t j = g; j < n; j++) {
			if (done[j] || !sw_same_cause(&v[g], &v[j]))
				continue;
			for (size_t k = 0; k < v[j].pr->npaths; k++) {
				const struct rp_path *o = &v[j].pr->paths[k];
				if (!sw_path_slow(&v[j], m, o) ||
				    (rp_str_eq(o->def.cipher, p->def.cipher) && o->def.dir == p->def.dir))
					continue;
				size_t a = 0;
				while (a < nalso && !(rp_str_eq(also[a].cipher, o->def.cipher) &&
						      also[a].dir == o->def.dir))
					a++;
				if (a == nalso && nalso < sizeof(also) / sizeof(also[0]))
					also[nalso++] = (typeof(also[0])){ .cipher = o->def.cipher,
									   .dir = o->def.dir };
				if (a < nalso)
					also[a].calls += o->st.calls;
			}
		}
		for (size_t a = 0; a < nalso; a++)
			CAT(message, "%s %.*s %s (%llu calls)%s", a ? "" : " Also affected:",
			    S(also[a].cipher), ct_dir_name(also[a].dir), (unsigned long long)also[a].calls,
			    a + 1 < nalso ? ";" : ".");
		size_t len;
		if (members > 1) {
			char b[32];
			fmt_bytes(b, sizeof(b), group_bytes);
			CAT(message, " In %zu processes (%llu calls, %s in all):", members,
			    (unsigned long long)group_calls, b);
			size_t listed = 0;
			for (size_t j = g; j < n; j++) {
				if (done[j] || !sw_same_cause(&v[g], &v[j]))
					continue;
				if (listed++ == 8) {
					CAT(message, " and %zu more;", members - 8);
					break;
				}
				fmt_bytes(b, sizeof(b), v[j].bytes);
				CAT(message, " pid %u %s %s (%.1f%%);", v[j].pr->hdr.pid,
				    v[j].pr->role[0] ? v[j].pr->role : "?", b,
				    group_bytes ? 100.0 * (double)v[j].bytes / (double)group_bytes : 0);
			}
			len = strlen(f->message);
			if (f->message[len - 1] == ';')
				f->message[len - 1] = '.';
		}
		CAT(message, " Likely cause: ");
		if (x->cause == SW_MASK)
			CAT(message, "the environment sets OPENSSL_ia32cap=%.*s, which masks AES-NI (bit 57) "
				     "out of libcrypto's CPU capabilities.",
			    S(pr->hdr.ia32cap));
		else if (x->cause == SW_LOWLEVEL)
			CAT(message, "the low-level AES_* API, which may not use AES-NI.");
		else if (x->cause == SW_SET_CAP)
			CAT(message, "OPENSSL_ia32cap=%.*s is set; or a libcrypto built without AES "
				     "assembly (no-asm).",
			    S(pr->hdr.ia32cap));
		else
			CAT(message, "a libcrypto built without AES assembly (no-asm), or a CPU feature "
				     "hidden by a hypervisor.");
		CAT(evidence, "cpu_flags has aes; ");
		if (members > 1)
			CAT(evidence, "pid %u: ", pr->hdr.pid);
		if (main_cpb >= 0)
			CAT(evidence, "%.2f cycles/byte at >= 8 KiB (limit %.2f); ", main_cpb, limit);
		else
			CAT(evidence, "cycles/byte unknown (no timed requests of 8 KiB or more); ");
		if (bound > 0)
			CAT(evidence, "AES-NI bound %.2f cycles/byte, %s; ", bound, x->bound_from);
		else
			CAT(evidence, "AES-NI bound: %s, so the fixed limit of %.0f cycles/byte; ",
			    x->bound_from, SOFTWARE_AES_FIXED_CPB);
		if (pr->hdr.ia32cap.len)
			CAT(evidence, "OPENSSL_ia32cap=%.*s", S(pr->hdr.ia32cap));
		else
			CAT(evidence, "OPENSSL_ia32cap unset");
		if (x->cause == SW_MASK)
			CAT(fix, "Unset OPENSSL_ia32cap (or drop ~0x200000000000000 from its mask).");
		else
			CAT(fix, "Use a libcrypto built with assembly (the distribution's), through EVP; "
				 "compare with `openssl speed -evp aes-128-cbc`.");
		for (size_t j = g; j < n; j++)
			if (!done[j] && sw_same_cause(&v[g], &v[j]))
				done[j] = true;
	}
	free(v);
	free(done);
}

/* ---- kernel-software-driver */

/* In-process cost per byte for a cipher: from an in-process path in the model, else from the
 * calibrated bound; *how says which. */
static double inproc_ns_per_byte(const struct rp_model *m, struct ct_str cipher, const char **how)
{
	for (size_t i = 0; i < m->npaths; i++) {
		const struct rp_path *p = &m->paths[i];
		if (is_software(p) && rp_str_eq(p->def.cipher, cipher) && p->d.wall_known && p->st.bytes) {
			*how = "the in-process path in this trace";
			return p->d.wall_ns / (double)p->st.bytes;
		}
	}
	const struct rp_proc *h = first_header(m);
	const char *from;
	double bound = h ? aesni_bound(h, &from) : 0;
	if (bound > 0 && h->hdr.tsc_hz) {
		*how = h->hdr.aesni_cpb_milli ? "the AES-NI bound calibrated at trace time" :
						"the AES-NI bound measured in the traced process";
		return bound / ((double)h->hdr.tsc_hz / 1e9);
	}
	*how = "a nominal in-process AES-NI cost of 0.5 ns/byte (no better figure in the trace)";
	return INPROC_DEFAULT_NS_PER_BYTE;
}

static void eval_kernel_software_driver(struct rp_model *m)
{
	for (size_t i = 0; i < m->npaths; i++) {
		const struct rp_path *p = &m->paths[i];
		if (!is_kernel(p) || !p->st.calls ||
		    !(p->def.flags & (CT_PATH_SW_DRIVER | CT_PATH_CPU_DRIVER)))
			continue;
		bool sw = p->def.flags & CT_PATH_SW_DRIVER;
		struct rp_finding *f = add(m, "kernel-software-driver", RP_WARNING, 0);
		if (!f)
			return;
		const char *how;
		double in_nspb = inproc_ns_per_byte(m, p->def.cipher, &how);
		CAT(message, "%.*s through %s is served by the kernel driver %.*s, which %s. The offload "
			     "buys nothing: every request also pays system calls and copies.",
		    S(p->def.cipher), ct_api_name(p->def.api), S(p->def.impl),
		    sw ? "is generic software code" : "runs on the same CPU instructions as in-process code");
		if (p->d.wall_known && p->st.bytes) {
			double k_nspb = p->d.wall_ns / (double)p->st.bytes;
			CAT(message, " It cost %.2f ns per byte against %.2f ns per byte in-process (%.1fx), "
				     "by %s.",
			    k_nspb, in_nspb, k_nspb / in_nspb, how);
		}
		CAT(evidence, "path %zu: impl=%.*s flags=%s calls=%llu bytes=%llu syscalls=%llu (%.1f per "
			      "call)",
		    i + 1, S(p->def.impl), sw ? "sw-driver" : "cpu-driver", (unsigned long long)p->st.calls,
		    (unsigned long long)p->st.bytes, (unsigned long long)p->st.syscalls,
		    (double)p->st.syscalls / (double)p->st.calls);
		CAT(fix, "Do the work in-process through EVP (the default provider uses AES-NI), or load "
			 "a hardware driver for this algorithm if the machine has one%s.",
		    sw ? " (for AES-NI in the kernel: modprobe aesni_intel)" : "");
	}
}

/* ---- small-requests-offload */

static void eval_small_requests_offload(struct rp_model *m)
{
	for (size_t i = 0; i < m->npaths; i++) {
		const struct rp_path *p = &m->paths[i];
		if (!is_kernel(p) || !p->st.calls || !p->d.wall_known)
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
		struct rp_finding *f = add(m, "small-requests-offload", RP_WARNING, 0);
		if (!f)
			return;
		char ov[32], cb[32];
		CAT(message, "%llu of %llu %.*s requests through %s were smaller than %s, the size below "
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
		CAT(evidence, " in-process %.2f ns/byte by %s; crossover %.0f bytes; %llu bytes in the "
			      "requests below it",
		    in_nspb, how, crossover, (unsigned long long)below_bytes);
		CAT(fix, "Send requests below %s through the in-process path (e.g. CRYPTRACE_ROUTE "
			 "'%.*s:afalg>=%llu,aesni'), or batch small requests into larger ones.",
		    cb, S(p->def.cipher), (unsigned long long)fmin(ceil(crossover), 1e18));
	}
}

typedef void (*rp_evaluator)(struct rp_model *m);

static const rp_evaluator evaluators[] = {
	rp_eval_unfinished_trace, /* unfinished.c */
	eval_nothing_intercepted,
	eval_multiple_libcrypto,
	eval_engine_failed,
	eval_provider_absent,
	eval_silent_fallback,
	eval_session_failed,
	rp_eval_kernel_refused,
	eval_software_aes,
	eval_lowlevel_api,
	eval_kernel_software_driver,
	eval_small_requests_offload,
	eval_user_time_misleads,
};

void rp_findings_evaluate(struct rp_model *m)
{
	m->nfindings = 0;
	for (size_t i = 0; i < sizeof(evaluators) / sizeof(evaluators[0]); i++)
		evaluators[i](m);
}
