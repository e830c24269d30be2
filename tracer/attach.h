/* SPDX-License-Identifier: MIT */
/*
 * attach.h - what `cryptrace attach` (cmd_attach.c) is made of, one concern per file: the
 * checks that refuse a process before anything in it changes (attach_checks.c), the symbols of
 * a file mapped in another process (attach_symbols.c), stopping a process's threads and calling
 * a function in one of them (attach_ptrace.c), and the registers of that call per architecture
 * (attach_arch_x86_64.c, attach_arch_aarch64.c; attach_arch_none.c elsewhere: tracer/meson.build
 * picks one by the target's CPU family), and whether a stopped thread is inside the dynamic
 * loader (attach_loader.c).
 */
#ifndef CT_TRACER_ATTACH_H
#define CT_TRACER_ATTACH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Exit status of a refusal: one line on stderr, nothing changed in the target. */
#define CT_ATTACH_REFUSED 2

/* ---- attach_checks.c --------------------------------------------------------------------- */

/* The process may be attached: it exists, nobody traces it, Yama and our capabilities allow it,
 * it is dynamically linked with a libc, it maps libcrypto (or uses a kernel interface we hook)
 * and has no libcryptrace yet, and (unless allow_seccomp) runs under no seccomp filter. False with
 * one line in why (which names what to do). lib is the library we would load (its architecture
 * must be the process's). */
bool ct_attach_check(pid_t pid, const char *lib, bool allow_seccomp, char *why, size_t cap);

/* The library's cryptrace_attach_state in pid (attach_abi.h's CT_ATTACH_STATE_*), or -1 when
 * the library is not mapped there or does not say. */
int ct_remote_attach_state(pid_t pid);

/* ---- attach_symbols.c -------------------------------------------------------------------- */

/* The run-time address of the dynamic symbol name in the first file mapped in pid whose base
 * name starts with prefix ("libc.so", "libcryptrace.so"), read from that file (through
 * /proc/PID/root) and the process's maps. 0 when no such file is mapped or it lacks the name;
 * *path (may be NULL) gets the mapped file's path. */
uint64_t ct_remote_symbol(pid_t pid, const char *prefix, const char *name, char *path, size_t cap);

/* Whether a file whose base name starts with prefix is mapped in pid. */
bool ct_remote_maps_file(pid_t pid, const char *prefix);
/* One file mapping of another process, as /proc/PID/maps lists it (" (deleted)" cut off). */
struct ct_remote_mapping {
	uint64_t start, end, off;
	char *path;
	const char *base; /* the base name, in path */
};
/* pid's file mappings, in the maps' order: *out is malloc'd (ct_remote_mappings_free); 0 when
 * none could be read. */
size_t ct_remote_mappings(pid_t pid, struct ct_remote_mapping **out);
void ct_remote_mappings_free(struct ct_remote_mapping *m, size_t n);

/* ---- attach_loader.c --------------------------------------------------------------------- */

struct ct_arch_state;
/* Whether the thread whose registers st holds (stopped) is inside pid's dynamic loader (ld-linux*,
 * ld64.so*, ld-musl*), mid-load: its pc there, or, where its stack can be walked (x86-64), any
 * of its callers, as when the loader calls malloc between mapping a module and relocating it. */
bool ct_remote_in_loader(pid_t pid, const struct ct_arch_state *st);

/* ---- attach_ptrace.c --------------------------------------------------------------------- */

/* struct ct_arch_state: one thread's registers and FP/vector state (attach_arch_*.c) */

struct ct_stopped {
	pid_t pid;
	pid_t *tids;  /* every thread seized */
	int *pending; /* per thread: a signal that stopped it first, handed back at detach */
	unsigned n;
	unsigned stopped;  /* how many are stopped now (all, or only the caller on a detach) */
	pid_t caller;      /* the thread that makes the calls */
	uint64_t stop0_ns; /* CLOCK_MONOTONIC when the first thread stopped */
	struct ct_arch_state *saved;
};

/* Seizes every thread of pid; when all_threads, stops every one, else only the one that will
 * make the calls (the main thread when it can). False with one line in why; nothing stays
 * seized then. */
bool ct_stop_process(pid_t pid, bool all_threads, struct ct_stopped *s, char *why, size_t cap);

/* Calls fn(args...) (at most 6 integer or pointer arguments) in the caller thread; a string
 * argument is passed as strs[i] != NULL (copied to the thread's stack below its red zone), else
 * args[i]. The thread's registers, FP state and the stack bytes used are put back as they were.
 * False with one line in why (the call did not return, or the thread went away). */
bool ct_remote_call(struct ct_stopped *s, uint64_t fn, const uint64_t *args, const char *const *strs,
		    unsigned nargs, uint64_t *ret, char *why, size_t cap);

/* Lets every thread go and detaches from it; returns the nanoseconds from the first stop to the
 * last resume. */
uint64_t ct_resume_process(struct ct_stopped *s);

/* Waits for the next stop of tid (seized), at most limit_ns: 1 stopped (*status), 0 the limit
 * passed, -1 the thread is gone. */
int ct_wait_stop(pid_t tid, int *status, uint64_t limit_ns);

/* Writes n bytes at addr in pid (no stop needed: process_vm_writev). */
bool ct_remote_write(pid_t pid, uint64_t addr, const void *buf, size_t n);
bool ct_remote_read(pid_t pid, uint64_t addr, void *buf, size_t n);

/* ---- attach_arch_*.c --------------------------------------------------------------------- */

/* False (with the line to print) where attach has no implementation for this architecture. */
bool ct_arch_attach_supported(char *why, size_t cap);
/* The size of struct ct_arch_state, which ct_arch_state_new (attach_ptrace.c) allocates. */
extern const size_t ct_arch_state_size;
struct ct_arch_state *ct_arch_state_new(void);
void ct_arch_state_free(struct ct_arch_state *st);
/* The thread's registers and FP/vector state, and its stack pointer. *pending is the signal
 * that stopped it (0: our interrupt did); where the architecture has to run the thread on to
 * the entry of a system call the kernel restarts (aarch64), a signal that stops it first is
 * put there, to be handed back at the detach. */
bool ct_arch_save(pid_t tid, struct ct_arch_state *st, int *pending);
bool ct_arch_restore(pid_t tid, const struct ct_arch_state *st);
uint64_t ct_arch_sp(const struct ct_arch_state *st);
/* Where the thread was stopped (its program counter). */
uint64_t ct_arch_pc(const struct ct_arch_state *st);
/* Its pc, sp and frame pointer for the stack walker (unwind.h), where it walks this
 * architecture's stacks (x86-64); else false. */
struct ct_unwind_regs;
bool ct_arch_unwind_regs(const struct ct_arch_state *st, struct ct_unwind_regs *r);
/* Bytes below the stack pointer a leaf function may use without moving it (x86-64: 128). */
size_t ct_arch_red_zone(void);
/* Sets the thread up to call fn(args) with sp (16-byte aligned) as its stack and a return to
 * address 0, so that the return faults back to us; no system call restarts meanwhile. */
bool ct_arch_call_setup(pid_t tid, const struct ct_arch_state *saved, uint64_t fn, const uint64_t *args,
			unsigned nargs, uint64_t sp);
/* After the fault: whether the thread stopped at the return address 0, and the call's result. */
bool ct_arch_call_returned(pid_t tid, uint64_t *ret);

#endif
