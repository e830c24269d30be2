/* SPDX-License-Identifier: MIT */
/*
 * attach_arch_none.c - the architecture part of `cryptrace attach` (attach.h) where it has no
 * implementation: the attach is refused before anything is touched (attach_checks.c asks
 * ct_arch_attach_supported first). An architecture gets a file of its own, picked in
 * tracer/meson.build: attach_arch_x86_64.c, attach_arch_aarch64.c.
 */
#include "attach.h"
#include "unwind.h"

#include <stdio.h>

struct ct_arch_state {
	int unused;
};

bool ct_arch_attach_supported(char *why, size_t cap)
{
	snprintf(why, cap,
		 "attach is implemented for x86-64 and aarch64 only so far; use `cryptrace run` here");
	return false;
}

const size_t ct_arch_state_size = sizeof(struct ct_arch_state);

bool ct_arch_save(pid_t tid, struct ct_arch_state *st, int *pending)
{
	(void)tid;
	(void)st;
	(void)pending;
	return false;
}

bool ct_arch_restore(pid_t tid, const struct ct_arch_state *st)
{
	(void)tid;
	(void)st;
	return false;
}

uint64_t ct_arch_sp(const struct ct_arch_state *st)
{
	(void)st;
	return 0;
}

uint64_t ct_arch_pc(const struct ct_arch_state *st)
{
	(void)st;
	return 0;
}

bool ct_arch_unwind_regs(const struct ct_arch_state *st, struct ct_unwind_regs *r)
{
	(void)st;
	(void)r;
	return false;
}

size_t ct_arch_red_zone(void)
{
	return 0;
}

bool ct_arch_call_setup(pid_t tid, const struct ct_arch_state *saved, uint64_t fn, const uint64_t *args,
			unsigned nargs, uint64_t sp)
{
	(void)tid, (void)saved, (void)fn, (void)args, (void)nargs, (void)sp;
	return false;
}

bool ct_arch_call_returned(pid_t tid, uint64_t *ret)
{
	(void)tid;
	(void)ret;
	return false;
}
