/* SPDX-License-Identifier: MIT */
/*
 * attach_loader.c - whether a stopped thread is inside the dynamic loader (attach.h). A thread
 * stopped there holds the loader's lock mid-load: the library's set-up run on it would patch a
 * module the loader has mapped but not yet relocated (the relocation then undoes or shifts the
 * patch), and a detach run on it would wait for the flusher thread, which waits for that lock
 * (preload/gotpatch.c). The loader's own code is not all of it: between mapping a module and
 * relocating it glibc's loader calls malloc, in libc. So the thread's stack is walked (unwind.c,
 * with the .eh_frame of each file it passes through, as the profile walks its samples), and any
 * frame in the loader counts. Where the walker does not read the architecture's stacks
 * (unwind.c is x86-64's), the pc alone is looked at.
 */
#include "attach.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "unwind_files.h"

#define STACK_BYTES (32u << 10) /* the loader's frames lie near the top: a dlopen is shallow */
#define MAX_FRAMES 64
#define PAGE 4096u

static bool is_loader(const char *base)
{
	static const char *const loaders[] = { "ld-linux", "ld64.so", "ld-musl" };
	for (size_t i = 0; i < sizeof(loaders) / sizeof(loaders[0]); i++)
		if (!strncmp(base, loaders[i], strlen(loaders[i])))
			return true;
	return false;
}

struct walk {
	pid_t pid;
	struct ct_remote_mapping *maps;
	size_t n;
	struct ct_file_cfi *cfi; /* per mapping; the first mapping of a file holds its tables */
};

/* The first mapping of the file of mapping i. */
static size_t first_of_file(const struct walk *w, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (!strcmp(w->maps[j].path, w->maps[i].path))
			return j;
	return i;
}

/* The tables of the file mapping i maps: the very file (/proc/PID/map_files: one deleted or
 * replaced since), else by its path inside the process's root. */
static const struct ct_unwind_tables *tables(struct walk *w, size_t i)
{
	struct ct_file_cfi *c = &w->cfi[i];
	if (c->tried)
		return c->ok ? &c->t : NULL;
	char path[4096 + 64];
	snprintf(path, sizeof(path), "/proc/%d/map_files/%" PRIx64 "-%" PRIx64, (int)w->pid, w->maps[i].start,
		 w->maps[i].end);
	const struct ct_unwind_tables *t = ct_file_cfi_tables(c, path);
	if (!t && !c->ok) {
		memset(c, 0, sizeof(*c));
		snprintf(path, sizeof(path), "/proc/%d/root%s", (int)w->pid, w->maps[i].path);
		t = ct_file_cfi_tables(c, path);
	}
	return t;
}

static bool locate(void *ctx, uint64_t ip, struct ct_unwind_where *where)
{
	struct walk *w = ctx;
	for (size_t i = 0; i < w->n; i++) {
		const struct ct_remote_mapping *m = &w->maps[i];
		if (ip < m->start || ip >= m->end)
			continue;
		size_t f = first_of_file(w, i);
		where->file = (uint32_t)f;
		where->off = ip - m->start + m->off;
		where->t = tables(w, f);
		where->vaddr = ct_file_cfi_vaddr(&w->cfi[f], where->off);
		if (where->vaddr == UINT64_MAX)
			where->t = NULL;
		return true;
	}
	return false;
}

/* The stack from sp up, page by page to the end of its mapping or STACK_BYTES. */
static size_t read_stack(pid_t pid, uint64_t sp, uint8_t *buf)
{
	struct iovec local = { buf, STACK_BYTES }, remote[STACK_BYTES / PAGE + 1];
	unsigned n = 0;
	for (uint64_t at = sp; at - sp < STACK_BYTES; n++) {
		uint64_t next = (at & ~(uint64_t)(PAGE - 1)) + PAGE;
		if (next - sp > STACK_BYTES)
			next = sp + STACK_BYTES;
		remote[n] = (struct iovec){ (void *)(uintptr_t)at, (size_t)(next - at) };
		at = next;
	}
	ssize_t got = process_vm_readv(pid, &local, 1, remote, n, 0);
	return got > 0 ? (size_t)got : 0;
}

bool ct_remote_in_loader(pid_t pid, const struct ct_arch_state *st)
{
	struct walk w = { .pid = pid };
	w.n = ct_remote_mappings(pid, &w.maps);
	struct ct_unwind_regs regs = { .ip = ct_arch_pc(st) };
	uint8_t *stack = NULL;
	size_t stack_len = 0;
	if (ct_arch_unwind_regs(st, &regs) && (stack = malloc(STACK_BYTES)) &&
	    (w.cfi = calloc(w.n ? w.n : 1, sizeof(*w.cfi))))
		stack_len = read_stack(pid, regs.sp, stack);
	struct ct_unwind_frame frames[MAX_FRAMES];
	unsigned depth = 0;
	if (stack_len)
		depth = ct_unwind(&regs, stack, stack_len, locate, &w, frames, MAX_FRAMES);
	uint64_t top;
	if (depth == 1 && stack_len >= 8 && (memcpy(&top, stack, 8), top)) {
		/* the leaf has no CFI (a module's _init, called by the loader: the stop lands on its
		 * first instruction, where the fault on its new page enters the kernel): as at a
		 * function's entry, its return address is at sp; a wrong guess only costs a retry */
		struct ct_unwind_regs caller = { top - 1, regs.sp + 8, regs.bp };
		depth += ct_unwind(&caller, stack + 8, stack_len - 8, locate, &w, frames + 1, MAX_FRAMES - 1);
	}
	bool in = false;
	for (unsigned i = 0; i < depth; i++)
		in |= is_loader(w.maps[frames[i].file].base);
	/* no walk (another architecture, an unreadable stack): the pc alone */
	for (size_t i = 0; !depth && i < w.n; i++)
		in |= regs.ip >= w.maps[i].start && regs.ip < w.maps[i].end && is_loader(w.maps[i].base);
	for (size_t i = 0; w.cfi && i < w.n; i++)
		ct_file_cfi_close(&w.cfi[i]);
	free(w.cfi);
	free(stack);
	ct_remote_mappings_free(w.maps, w.n);
	return in;
}
