/* SPDX-License-Identifier: MIT */
/*
 * kernel_refused.c - a program asked the kernel for cipher work and was refused: socket(AF_ALG)
 * failed (EAFNOSUPPORT: no af_alg in this kernel, or a sandbox refusing the family), or
 * /dev/crypto could not be opened. `cryptsetup benchmark` does exactly this and fails; without
 * this finding the report said "no cipher work was done ... Nothing to fix". Inside an offload
 * engine's failed load (the afalg engine) engine-failed says it already, with the failed call.
 * One finding per interface and errno, listing the processes.
 */
#include "findings.h"

#include <errno.h>
#include <string.h>

enum iface { IF_AFALG, IF_CRYPTODEV, IF_COUNT };

/* The kernel interface a failed call asked for, or -1. */
static int refused_iface(const struct ct_event *e)
{
	if (e->kind != CT_EV_CALL_FAILED || !e->err)
		return -1;
	if (rp_str_is(e->call, "socket") && rp_str_starts(e->detail, "family=AF_ALG"))
		return IF_AFALG;
	if (rp_str_starts(e->call, "open") && rp_str_find(e->detail, "path=/dev/crypto").p)
		return IF_CRYPTODEV;
	return -1;
}

/* An offload engine or provider that failed in p: engine-failed then lists the refused call. */
static bool offload_module_failed(const struct rp_proc *p)
{
	for (size_t k = 0; k < p->nevents; k++)
		if (rp_offload_module_failed(&p->events[k].ev))
			return true;
	return false;
}

const struct ct_event *rp_kernel_refusal(const struct rp_proc *p)
{
	if (offload_module_failed(p))
		return NULL;
	for (size_t k = 0; k < p->nevents; k++)
		if (refused_iface(&p->events[k].ev) >= 0)
			return &p->events[k].ev;
	return NULL;
}

/* Why the kernel says no, by interface and errno. */
static const char *why(int iface, int err)
{
	if (iface == IF_AFALG) {
		if (err == EAFNOSUPPORT)
			return "this kernel offers no AF_ALG sockets: the af_alg and algif_skcipher "
			       "modules are not loaded or not built (CONFIG_CRYPTO_USER_API_SKCIPHER), or a "
			       "sandbox (a seccomp filter, a container's profile, gVisor) refuses the address "
			       "family";
		if (err == EPERM || err == EACCES)
			return "a security policy (a seccomp filter, SELinux, AppArmor) refuses AF_ALG "
			       "sockets to this process";
		return "the kernel would not create an AF_ALG socket";
	}
	if (err == ENOENT || err == ENXIO || err == ENODEV)
		return "there is no /dev/crypto here: the cryptodev-linux module is not loaded (it is "
		       "not part of the mainline kernel)";
	if (err == EPERM || err == EACCES)
		return "/dev/crypto exists but this process may not open it (permissions or a security "
		       "policy)";
	return "/dev/crypto could not be opened";
}

void rp_eval_kernel_refused(struct rp_model *m)
{
	for (int iface = 0; iface < IF_COUNT; iface++) {
		/* one finding per errno of this interface */
		int errs[8];
		size_t nerr = 0;
		for (size_t i = 0; i < m->nprocs; i++) {
			const struct rp_proc *p = &m->procs[i];
			if (!rp_proc_shown(m, p) || offload_module_failed(p))
				continue;
			for (size_t k = 0; k < p->nevents; k++) {
				const struct ct_event *e = &p->events[k].ev;
				if (refused_iface(e) != iface)
					continue;
				bool seen = false;
				for (size_t j = 0; j < nerr; j++)
					seen |= errs[j] == e->err;
				if (!seen && nerr < sizeof(errs) / sizeof(errs[0]))
					errs[nerr++] = e->err;
			}
		}
		for (size_t j = 0; j < nerr; j++) {
			const struct ct_event *first = NULL;
			uint32_t first_pid = 0;
			uint64_t times = 0, sw_calls = 0;
			size_t nproc = 0;
			char pids[200] = "";
			struct rp_finding exes = {
				0
			}; /* the executables of the processes: rp_finding_note_exe */
			for (size_t i = 0; i < m->nprocs; i++) {
				const struct rp_proc *p = &m->procs[i];
				if (!rp_proc_shown(m, p) || offload_module_failed(p))
					continue;
				bool here = false;
				for (size_t k = 0; k < p->nevents; k++) {
					const struct ct_event *e = &p->events[k].ev;
					if (refused_iface(e) != iface || e->err != errs[j])
						continue;
					here = true;
					times += e->count ? e->count : 1;
					if (!first) {
						first = e;
						first_pid = p->hdr.pid;
					}
				}
				if (!here)
					continue;
				nproc++;
				rp_finding_note_exe(&exes, p);
				rp_finding_cat(pids, sizeof(pids), "%s%u (%s)", nproc > 1 ? ", " : "",
					       p->hdr.pid, rp_proc_role_label(p));
				for (size_t k = 0; k < p->npaths; k++)
					if (rp_path_in_process(&p->paths[k]) &&
					    rp_path_selected(m, &p->paths[k]))
						sw_calls += p->paths[k].st.calls;
			}
			if (!first)
				continue;
			struct rp_finding *f =
				rp_finding_add(m, "kernel-refused", RP_WARNING, nproc == 1 ? first_pid : 0);
			if (!f)
				return;
			f->exe = exes.exe;
			f->exe_mixed = exes.exe_mixed;
			char eb[32];
			const char *en = rp_errno_name(first->err, eb, sizeof(eb));
			RP_CAT(f, message,
			       "The program asked the kernel for cipher work through %s "
			       "(%.*s: %.*s) and was refused with %s (%s): %s.",
			       iface == IF_AFALG ? "an AF_ALG socket" : "/dev/crypto", (int)first->call.len,
			       first->call.p, (int)first->detail.len, first->detail.p, en,
			       strerror(first->err), why(iface, first->err));
			if (sw_calls)
				RP_CAT(f, message,
				       " The process(es) then ran %llu cipher calls in their "
				       "own software instead (see silent-fallback).",
				       (unsigned long long)sw_calls);
			else
				RP_CAT(f, message,
				       " No cipher work ran in the process(es) at all: what the "
				       "program asked the kernel for did not happen, and a "
				       "program that cannot do without it fails.");
			RP_CAT(f, evidence, "%.*s -> %s %llu time(s) in %zu process(es): %s",
			       (int)first->call.len, first->call.p, en, (unsigned long long)times, nproc,
			       pids);
			if (first->callsite.len)
				RP_CAT(f, evidence, "; at %.*s",
				       (int)rp_str_part(first->callsite, '\n', 0).len,
				       rp_str_part(first->callsite, '\n', 0).p);
			if (iface == IF_AFALG)
				RP_CAT(f, fix,
				       "Load the kernel's AF_ALG modules (modprobe af_alg "
				       "algif_skcipher; `cryptrace doctor` checks AF_ALG and its "
				       "drivers), allow the AF_ALG family in the sandbox, or let "
				       "cryptrace serve AF_ALG in-process with %s: `cryptrace run "
				       "--route 'aes-*=%s' -- CMD` (docs/emulation.md).",
				       rp_cpu_aes_name(m), rp_cpu_route_target(m));
			else
				RP_CAT(f, fix,
				       "Load cryptodev-linux (modprobe cryptodev) if this machine "
				       "has hardware it drives, or let cryptrace serve /dev/crypto "
				       "in-process with %s: `cryptrace run --route 'aes-*=%s' -- "
				       "CMD` (docs/emulation.md).",
				       rp_cpu_aes_name(m), rp_cpu_route_target(m));
		}
	}
}
