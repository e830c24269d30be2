/* SPDX-License-Identifier: MIT */
/*
 * roles.c - what each process is ("sshd: monitor [priv]", "ssh client", "openssl speed"), from its
 * executable, its argv and its place in the process tree, for the reports of daemons and servers
 * (docs/tracing-daemons.md). rp_model_merge fills every process's role once the superseded files
 * are known, since a superseded file is not a process of the tree.
 */
#include "model.h"

#include <stdio.h>

static bool argv_has(const struct rp_proc *p, const char *arg)
{
	for (unsigned i = 1, n = rp_str_nparts(p->hdr.argv, '\0'); i < n; i++)
		if (rp_str_is(rp_str_part(p->hdr.argv, '\0', i), arg))
			return true;
	return false;
}

static struct ct_str exe_base(const struct rp_proc *p)
{
	return rp_str_basename(p->hdr.exe.len ? p->hdr.exe : rp_str_part(p->hdr.argv, '\0', 0));
}

static const struct rp_proc *parent_of(const struct rp_model *m, const struct rp_proc *p)
{
	const struct rp_proc *best = NULL;
	for (size_t i = 0; i < m->nprocs; i++) {
		const struct rp_proc *q = &m->procs[i];
		if (q->superseded || q->hdr.pid != p->hdr.ppid || q->hdr.start_mono_ns > p->hdr.start_mono_ns)
			continue;
		if (!best || q->hdr.start_mono_ns > best->hdr.start_mono_ns)
			best = q; /* the image the parent ran when it forked: the latest that started before */
	}
	return best;
}

static bool is_rexec_sshd(const struct rp_proc *p)
{
	return p && rp_str_is(exe_base(p), "sshd") && argv_has(p, "-R");
}

/* sshd's privilege separation (OpenSSH 9): the listener forks per connection and the child
 * re-execs itself with -R; that monitor ("sshd: user [priv]") forks the sandboxed pre-auth
 * child ("[net]"/"[preauth]") first, then after a non-root login the unprivileged child
 * ("user@notty") that carries the traffic; after a root login the monitor carries it itself.
 * Session children (shell, sftp) come from the one that carries the traffic. The trace holds
 * argv from process start, not the title sshd sets later, so roles come from the tree and from
 * which process holds the SSH transport's cipher paths. */
static void sshd_role(const struct rp_model *m, const struct rp_proc *p, char *buf, size_t cap)
{
	const struct rp_proc *parent = parent_of(m, p);
	if (argv_has(p, "-R")) {
		if (p->has_end && p->end.reason == CT_END_EXEC) {
			snprintf(buf, cap, "sshd: session child (exec'd the user's command)");
		} else if (!is_rexec_sshd(parent)) {
			snprintf(buf, cap, "sshd: monitor [priv]%s",
				 rp_proc_ssh_transport(p) ? " (carries the traffic: a root login)" : "");
		} else if (is_rexec_sshd(parent_of(m, parent))) {
			snprintf(buf, cap, "sshd: session child");
		} else {
			/* a child of the monitor: the first one is the pre-auth child */
			size_t earlier = 0;
			for (size_t i = 0; i < m->nprocs; i++) {
				const struct rp_proc *q = &m->procs[i];
				earlier += !q->superseded && q != p && q->hdr.ppid == p->hdr.ppid &&
					   q->hdr.pid != p->hdr.ppid && argv_has(q, "-R") &&
					   q->hdr.start_mono_ns < p->hdr.start_mono_ns;
			}
			if (earlier == 0)
				snprintf(buf, cap, "sshd: [net] pre-auth child (sandboxed)");
			else if (rp_proc_ssh_transport(p))
				snprintf(buf, cap, "sshd: user@notty (carries the traffic)");
			else
				snprintf(buf, cap, "sshd: session child");
		}
	} else if (argv_has(p, "-i")) {
		snprintf(buf, cap, "sshd (inetd mode)");
	} else if (p->has_end && p->end.reason == CT_END_EXEC) {
		snprintf(buf, cap, "sshd: connection fork (re-execs with -R)");
	} else if (parent && rp_str_is(exe_base(parent), "sshd")) {
		snprintf(buf, cap, "sshd child");
	} else {
		snprintf(buf, cap, "sshd listener");
	}
}

void rp_proc_role(const struct rp_model *m, const struct rp_proc *p, char *buf, size_t cap)
{
	struct ct_str base = exe_base(p);
	struct ct_str arg1 = rp_str_part(p->hdr.argv, '\0', 1);
	if (rp_str_is(base, "sshd"))
		sshd_role(m, p, buf, cap);
	else if (rp_str_is(base, "ssh"))
		snprintf(buf, cap, "%s",
			 argv_has(p, "-s") || argv_has(p, "sftp") ? "ssh client (scp/sftp transport)"
								  : "ssh client");
	else if (rp_str_is(base, "openssl") && arg1.len && arg1.p[0] != '-')
		snprintf(buf, cap, "openssl %.*s", (int)(arg1.len > 40 ? 40 : arg1.len), arg1.p);
	else if (rp_str_is(base, "curl"))
		snprintf(buf, cap, "curl (client)");
	else
		snprintf(buf, cap, "%.*s", (int)(base.len > 80 ? 80 : base.len), base.p);
}

const char *rp_proc_role_label(const struct rp_proc *p)
{
	return p->role[0] ? p->role : "?";
}
