/* SPDX-License-Identifier: MIT */
/*
 * unfinished.c - the `unfinished-trace` finding: a process whose trace has no END record. It was
 * killed by a signal cryptrace cannot catch (SIGKILL; the OOM killer), crashed, or was still
 * running when the files were read; its counts are those of its last snapshot, and the finding
 * says how much may be missing after it, from what the last PROC record says about the
 * snapshots that were to follow (docs/trace-format.md):
 *
 *  - CT_PROC_PERIODIC: a flusher thread wrote a snapshot every interval in which something
 *    changed, so at most the last flush interval of work is missing;
 *  - CT_PROC_FSIZE_NEAR: the program limited the size of the files it writes to about this one's
 *    (OpenSSH's sandboxed pre-authentication child sets it to 0): later snapshots were refused;
 *  - neither: snapshots came from the program's own crypto calls only (CT_PROC_NO_FLUSHER:
 *    CRYPTRACE_FLUSHER=0; else a seccomp-sandboxed process, a trace from an older cryptrace):
 *    what it did after the last one is missing, however long before its end that was;
 *  - no PROC at all: it ended before its first snapshot, and the trace cannot say what it did.
 * It never guesses a cause the trace does not show.
 */
#include <stdio.h>

#include "findings.h"

static void who(const struct rp_proc *p, char *buf, size_t cap)
{
	if (p->role[0]) {
		snprintf(buf, cap, "%s", p->role);
		return;
	}
	/* else the executable's name */
	snprintf(buf, cap, "%.*s", S(rp_str_basename(p->hdr.exe)));
}

static void one(struct rp_model *m, const struct rp_proc *p)
{
	bool periodic = p->has_proc && (p->proc.flags & CT_PROC_PERIODIC);
	bool chose_none = p->has_proc && (p->proc.flags & CT_PROC_NO_FLUSHER);
	bool capped = p->has_proc && (p->proc.flags & CT_PROC_FSIZE_NEAR);
	struct rp_finding *f =
		rp_finding_add(m, "unfinished-trace", capped ? RP_INFO : RP_WARNING, p->hdr.pid);
	if (!f)
		return;
	char name[128];
	who(p, name, sizeof(name));
	unsigned interval = p->hdr.flush_interval_ms;
	double at_s = p->has_proc && p->proc.mono_ns > p->hdr.start_mono_ns
			      ? (double)(p->proc.mono_ns - p->hdr.start_mono_ns) / 1e9
			      : 0;
	const char *ended =
		"ended without an END record (killed by SIGKILL or another signal "
		"cryptrace does not catch, crashed, or still running when the trace was "
		"read)";
	if (!p->has_proc) {
		snprintf(f->message, sizeof(f->message),
			 "%s %s before its first snapshot: the trace holds its header only and cannot "
			 "say what the process did.",
			 name, ended);
		snprintf(f->evidence, sizeof(f->evidence), "%s: no PROC record, no END record", p->file);
	} else if (capped) {
		snprintf(f->message, sizeof(f->message),
			 "%s has no END record: its trace stops at the snapshot written %.3f s after "
			 "it started, when the program limited the size of the files it writes "
			 "(RLIMIT_FSIZE) to about this trace's size, as OpenSSH's sandboxed "
			 "pre-authentication child does. Later snapshots and the END record did not "
			 "fit: what it did after that snapshot is not in these counts.",
			 name, at_s);
		snprintf(f->evidence, sizeof(f->evidence),
			 "%s: no END record; the last PROC record (%.3f s) says RLIMIT_FSIZE is at or "
			 "near the file's size",
			 p->file, at_s);
	} else if (periodic) {
		snprintf(f->message, sizeof(f->message),
			 "%s %s. Its counts are those of its last snapshot, written %.3f s after it "
			 "started; a snapshot was written every %u ms in which its counts changed, idle "
			 "or not, so at most its last %u ms of work are missing.",
			 name, ended, at_s, interval, interval);
		snprintf(f->evidence, sizeof(f->evidence),
			 "%s: no END record; the last PROC record (%.3f s) says a flusher thread wrote "
			 "snapshots every %u ms (CRYPTRACE_FLUSH_MS)",
			 p->file, at_s, interval);
	} else {
		snprintf(f->message, sizeof(f->message),
			 "%s %s. Its counts are those of its last snapshot, written %.3f s after it "
			 "started. It had no flusher thread (%s): its snapshots were written by its own "
			 "crypto calls, so whatever it did after that snapshot is missing, however long "
			 "before its end it went quiet.",
			 name, ended, at_s,
			 chose_none ? "CRYPTRACE_FLUSHER=0 was set"
				    : "a seccomp-sandboxed process, or a trace from an older cryptrace");
		snprintf(f->evidence, sizeof(f->evidence),
			 "%s: no END record; the last PROC record (%.3f s) has no periodic snapshots",
			 p->file, at_s);
	}
	if (capped)
		snprintf(f->fix, sizeof(f->fix),
			 "Nothing to change: the program's own sandbox limits what can be written.");
	else if (chose_none)
		snprintf(f->fix, sizeof(f->fix),
			 "Stop the process with SIGTERM, SIGINT, SIGHUP or SIGQUIT rather than SIGKILL: "
			 "cryptrace writes everything before such a signal ends it. Leave "
			 "CRYPTRACE_FLUSHER unset where the program can have one more thread: its "
			 "flusher thread then loses at most CRYPTRACE_FLUSH_MS to a SIGKILL.");
	else
		snprintf(f->fix, sizeof(f->fix),
			 "Stop the process with SIGTERM, SIGINT, SIGHUP or SIGQUIT rather than SIGKILL: "
			 "cryptrace writes everything before such a signal ends it. Lower "
			 "CRYPTRACE_FLUSH_MS to lose less to a SIGKILL.");
}

void rp_eval_unfinished_trace(struct rp_model *m)
{
	for (size_t i = 0; i < m->nprocs; i++) {
		const struct rp_proc *p = &m->procs[i];
		if (rp_proc_shown(m, p) && p->has_hdr && !p->has_end &&
		    !(p->hdr.flags & CT_HDR_SECURE_EXEC) && p->read_status != CT_READ_CORRUPT)
			one(m, p);
	}
}
