/* SPDX-License-Identifier: MIT */
/*
 * attach_arch_aarch64.c - the registers of a remote call on aarch64 (attach.h); tracer/meson.build
 * picks it by the target's CPU family.
 *
 * Saved and put back exactly, through PTRACE_GETREGSET / SETREGSET: the general registers
 * (NT_PRSTATUS: x0..x30, sp, pc, pstate), the FP/SIMD state (NT_FPREGSET: v0..v31, fpsr,
 * fpcr), the SVE state where the CPU has it (NT_ARM_SVE: the Z and P registers and FFR, whose
 * low 128 bits are the V registers; the function we call may use any of them, glibc's string
 * functions do on SVE CPUs) and the system call number (NT_ARM_SYSTEM_CALL).
 *
 * The call: x0..x5 the arguments, lr (x30) 0 so that the return branches to address 0 and
 * faults back to us, pc the function, sp 16-byte aligned below what the thread uses.
 *
 * A thread stopped in a system call: arm64's kernel decides the restart before the stop a tracer
 * sees (arch/arm64/kernel/signal.c, do_signal: "so that a debugger will see the already changed
 * PC"): for -ERESTARTSYS, -ERESTARTNOINTR, -ERESTARTNOHAND and -ERESTART_RESTARTBLOCK the pc
 * is already back on the `svc` and x0 holds the call's first argument again, and the syscall
 * number is forgotten (NT_ARM_SYSTEM_CALL -1), so that resuming at a pc of ours restarts
 * nothing. Putting the registers back re-executes the `svc`: the restart the kernel prepared.
 * The one step it takes after the stop, for -ERESTART_RESTARTBLOCK only (a relative nanosleep,
 * a futex wait with a relative timeout), is to make that `svc` restart_syscall (x8), which goes
 * on with the time left, and only while the pc is still on it: ct_arch_save lets the thread take
 * it (enter_restarted_call) before the pc is ours, and keeps the x8 it leads to.
 */
#include "attach.h"
#include "unwind.h"

#include <signal.h>
#include <string.h>

#include <elf.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>

#define FP_MAX 1024u              /* NT_FPREGSET: 528 bytes (struct user_fpsimd_state) */
#define SVE_MAX (64u << 10)       /* NT_ARM_SVE: ~9 KB at the architecture's longest vectors */
#define MARGIN 128u               /* no red zone in the ABI: a margin all the same, as x86-64's */
#define PSTATE_BTYPE (3ull << 10) /* BTI: the call starts as a fresh branch target */
#define NO_SYSCALL (-1)
#define SVC_MASK 0xffe0001fu /* svc #imm */
#define SVC 0xd4000001u
#define SYSCALL_STOP (SIGTRAP | 0x80)     /* with PTRACE_O_TRACESYSGOOD */
#define STEP_LIMIT_NS (5000ull * 1000000) /* the svc is the next instruction: microseconds */

struct ct_arch_state {
	struct user_regs_struct regs;
	int syscallno;
	size_t fp_len;
	uint8_t fp[FP_MAX];
	size_t sve_len; /* 0: no SVE */
	uint8_t sve[SVE_MAX];
};

bool ct_arch_attach_supported(char *why, size_t cap)
{
	(void)why;
	(void)cap;
	return true;
}

const size_t ct_arch_state_size = sizeof(struct ct_arch_state);

static bool get_regset(pid_t tid, unsigned type, void *buf, size_t *len)
{
	struct iovec iov = { .iov_base = buf, .iov_len = *len };
	if (ptrace(PTRACE_GETREGSET, tid, (void *)(uintptr_t)type, &iov) != 0)
		return false;
	*len = iov.iov_len;
	return true;
}

static bool set_regset(pid_t tid, unsigned type, const void *buf, size_t len)
{
	struct iovec iov = { .iov_base = (void *)buf, .iov_len = len };
	return ptrace(PTRACE_SETREGSET, tid, (void *)(uintptr_t)type, &iov) == 0;
}

static bool get_regs(pid_t tid, struct user_regs_struct *r)
{
	size_t len = sizeof(*r);
	return get_regset(tid, NT_PRSTATUS, r, &len) && len == sizeof(*r);
}

/* A thread our interrupt stopped (no signal of its own: *pending 0) with its pc on an `svc`
 * and no system call in progress is at a restart the kernel prepared, or about to make the call:
 * PTRACE_SYSCALL runs it to that svc's entry, executing nothing before, after the kernel's last
 * step of the restart. There x8 is the call the thread will make: restart_syscall for
 * -ERESTART_RESTARTBLOCK, else the call itself. The other registers stay those of the stop (x7,
 * which a syscall stop shows as 0 or 1, among them). A signal that stops it first is handed back
 * at the detach (*pending), the registers being still those of the stop. The thread stays at the
 * call's entry: let go, it makes the call; a remote call's set-up cancels it (syscallno -1). */
static bool enter_restarted_call(pid_t tid, struct ct_arch_state *st, int *pending)
{
	uint32_t insn;
	if (*pending || st->syscallno != NO_SYSCALL ||
	    !ct_remote_read(tid, st->regs.pc, &insn, sizeof(insn)) || (insn & SVC_MASK) != SVC)
		return true;
	int status;
	if (ptrace(PTRACE_SETOPTIONS, tid, NULL, (void *)(uintptr_t)PTRACE_O_TRACESYSGOOD) != 0 ||
	    ptrace(PTRACE_SYSCALL, tid, NULL, NULL) != 0 || ct_wait_stop(tid, &status, STEP_LIMIT_NS) != 1)
		return false;
	if ((status >> 16) == 0 && WSTOPSIG(status) == SYSCALL_STOP) {
		struct user_regs_struct r;
		if (!get_regs(tid, &r) || r.pc != st->regs.pc + 4)
			return false;
		st->regs.regs[8] = r.regs[8];
	} else if ((status >> 16) == 0)
		*pending = WSTOPSIG(status);
	return true;
}

bool ct_arch_save(pid_t tid, struct ct_arch_state *st, int *pending)
{
	size_t len = sizeof(st->syscallno);
	st->fp_len = sizeof(st->fp);
	if (!get_regs(tid, &st->regs) || !get_regset(tid, NT_ARM_SYSTEM_CALL, &st->syscallno, &len) ||
	    !get_regset(tid, NT_FPREGSET, st->fp, &st->fp_len))
		return false;
	/* SVE: EINVAL where the CPU has none. The header's size is what the state holds (the
	 * kernel pads the buffer to its length). */
	st->sve_len = sizeof(st->sve);
	if (!get_regset(tid, NT_ARM_SVE, st->sve, &st->sve_len))
		st->sve_len = 0;
	else {
		uint32_t size;
		memcpy(&size, st->sve, sizeof(size)); /* struct user_sve_header's first field */
		if (size > st->sve_len)
			return false;
		st->sve_len = size;
	}
	return enter_restarted_call(tid, st, pending);
}

bool ct_arch_restore(pid_t tid, const struct ct_arch_state *st)
{
	/* FP/SIMD first: written while the thread's SVE state is live, it zeroes the Z registers'
	 * upper bits, which the SVE state then puts back */
	bool ok = set_regset(tid, NT_FPREGSET, st->fp, st->fp_len);
	if (st->sve_len)
		ok = set_regset(tid, NT_ARM_SVE, st->sve, st->sve_len) && ok;
	ok = set_regset(tid, NT_ARM_SYSTEM_CALL, &st->syscallno, sizeof(st->syscallno)) && ok;
	/* the general registers last: the pc on the `svc` re-executes the interrupted call */
	return set_regset(tid, NT_PRSTATUS, &st->regs, sizeof(st->regs)) && ok;
}

uint64_t ct_arch_sp(const struct ct_arch_state *st)
{
	return st->regs.sp;
}

uint64_t ct_arch_pc(const struct ct_arch_state *st)
{
	return st->regs.pc;
}

bool ct_arch_unwind_regs(const struct ct_arch_state *st, struct ct_unwind_regs *r)
{
	(void)st;
	(void)r;
	return false; /* unwind.c reads x86-64 CFI only: the pc alone is looked at here */
}

size_t ct_arch_red_zone(void)
{
	return MARGIN;
}

bool ct_arch_call_setup(pid_t tid, const struct ct_arch_state *saved, uint64_t fn, const uint64_t *args,
			unsigned nargs, uint64_t sp)
{
	if (nargs > 6 || (sp & 15))
		return false;
	struct user_regs_struct r = saved->regs;
	for (unsigned i = 0; i < nargs; i++)
		r.regs[i] = args[i];
	r.regs[30] = 0; /* lr: the return branches to 0 and faults */
	r.sp = sp;
	r.pc = fn;
	r.pstate &= ~PSTATE_BTYPE;
	int none = NO_SYSCALL; /* not in a system call: nothing to restart on the way out */
	return set_regset(tid, NT_ARM_SYSTEM_CALL, &none, sizeof(none)) &&
	       set_regset(tid, NT_PRSTATUS, &r, sizeof(r));
}

bool ct_arch_call_returned(pid_t tid, uint64_t *ret)
{
	struct user_regs_struct r;
	if (!get_regs(tid, &r) || r.pc != 0)
		return false;
	*ret = r.regs[0];
	return true;
}
