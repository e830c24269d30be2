/* SPDX-License-Identifier: MIT */
/*
 * attach_arch_x86_64.c - the registers of a remote call on x86-64 (attach.h); tracer/meson.build
 * picks it by the target's CPU family (attach_arch_aarch64.c, attach_arch_none.c elsewhere).
 *
 * The whole vector state (XSAVE area: AVX, AVX-512, AMX tiles) is saved with
 * PTRACE_GETREGSET NT_X86_XSTATE, else the legacy FXSAVE area (NT_PRFPREG): the function we call
 * (dlopen, the library's set-up) may use any of them, and the interrupted code must find its
 * registers as it left them.
 */
#include "attach.h"
#include "unwind.h"

#include <string.h>

#include <elf.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>

#define XSTATE_MAX (64u << 10) /* the XSAVE area is ~11 KB with AMX; the kernel says how much */
#define RED_ZONE 128u          /* the SysV ABI's */
#define EFLAGS_DF (1u << 10)   /* the ABI wants the direction flag clear at a call */

struct ct_arch_state {
	struct user_regs_struct regs;
	unsigned fp_type; /* NT_X86_XSTATE or NT_PRFPREG */
	size_t fp_len;
	uint8_t fp[XSTATE_MAX];
};

bool ct_arch_attach_supported(char *why, size_t cap)
{
	(void)why;
	(void)cap;
	return true;
}

const size_t ct_arch_state_size = sizeof(struct ct_arch_state);

bool ct_arch_save(pid_t tid, struct ct_arch_state *st, int *pending)
{
	(void)pending; /* x86-64's kernel restarts the call after the stop, from orig_rax and rax */
	if (ptrace(PTRACE_GETREGS, tid, NULL, &st->regs) != 0)
		return false;
	struct iovec iov = { .iov_base = st->fp, .iov_len = sizeof(st->fp) };
	st->fp_type = NT_X86_XSTATE;
	if (ptrace(PTRACE_GETREGSET, tid, (void *)(uintptr_t)NT_X86_XSTATE, &iov) != 0) {
		iov.iov_len = sizeof(st->fp);
		st->fp_type = NT_PRFPREG;
		if (ptrace(PTRACE_GETREGSET, tid, (void *)(uintptr_t)NT_PRFPREG, &iov) != 0)
			return false;
	}
	st->fp_len = iov.iov_len;
	return true;
}

bool ct_arch_restore(pid_t tid, const struct ct_arch_state *st)
{
	struct iovec iov = { .iov_base = (void *)st->fp, .iov_len = st->fp_len };
	bool ok = ptrace(PTRACE_SETREGSET, tid, (void *)(uintptr_t)st->fp_type, &iov) == 0;
	/* the general registers last: orig_rax and rax, as saved, let the kernel restart the
	 * system call the thread was interrupted in */
	return ptrace(PTRACE_SETREGS, tid, NULL, &st->regs) == 0 && ok;
}

uint64_t ct_arch_sp(const struct ct_arch_state *st)
{
	return st->regs.rsp;
}

uint64_t ct_arch_pc(const struct ct_arch_state *st)
{
	return st->regs.rip;
}

bool ct_arch_unwind_regs(const struct ct_arch_state *st, struct ct_unwind_regs *r)
{
	*r = (struct ct_unwind_regs){ st->regs.rip, st->regs.rsp, st->regs.rbp };
	return true;
}

size_t ct_arch_red_zone(void)
{
	return RED_ZONE;
}

bool ct_arch_call_setup(pid_t tid, const struct ct_arch_state *saved, uint64_t fn, const uint64_t *args,
			unsigned nargs, uint64_t sp)
{
	if (nargs > 6)
		return false;
	struct user_regs_struct r = saved->regs;
	__typeof__(&r.rdi) slot[6] = { &r.rdi, &r.rsi, &r.rdx, &r.rcx, &r.r8, &r.r9 };
	for (unsigned i = 0; i < nargs; i++)
		*slot[i] = args[i];
	/* a call pushes its return address: 0, so that the return faults with rip 0 */
	uint64_t zero = 0;
	sp -= sizeof(zero);
	if (!ct_remote_write(tid, sp, &zero, sizeof(zero)))
		return false;
	r.rsp = sp;
	r.rip = fn;
	r.rax = 0;                               /* no vector registers used by a variadic call */
	r.orig_rax = (__typeof__(r.orig_rax))-1; /* not in a system call: nothing to restart on the way out */
	r.eflags &= ~(__typeof__(r.eflags))EFLAGS_DF;
	return ptrace(PTRACE_SETREGS, tid, NULL, &r) == 0;
}

bool ct_arch_call_returned(pid_t tid, uint64_t *ret)
{
	struct user_regs_struct r;
	if (ptrace(PTRACE_GETREGS, tid, NULL, &r) != 0 || r.rip != 0)
		return false;
	*ret = r.rax;
	return true;
}
