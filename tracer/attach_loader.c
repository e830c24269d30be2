/* SPDX-License-Identifier: MIT */
/*
 * attach_loader.c - whether a stopped thread is inside the dynamic loader (attach.h). A thread
 * stopped there holds the loader's lock mid-load: the library's set-up run on it would patch a
 * module the loader has mapped but not yet relocated (the relocation then undoes or shifts the
 * patch), and a detach run on it would wait for the flusher thread, which waits for that lock
 * (preload/gotpatch.c). The loader's own code is not all of it: between mapping a module and
 * relocating it glibc's loader calls malloc, in libc. So the thread's stack is walked (unwind.c,
 * with the .eh_frame of each file it passes through, as the profile walks its samples), and any
 * frame in the loader counts. So does a frame in libc's allocator: the set-up's dlopen
 * allocates, and a thread stopped inside malloc holds the arena's lock, so the call would wait
 * for itself (the injected call then never returns); one in dl_iterate_phdr, which holds the
 * loader's list lock while its callback runs (a C++ exception being unwound); and one in the
 * exit handlers' list (__cxa_finalize runs a closing module's destructors holding its lock, which
 * the library's own registration takes). Where the walker
 * does not read the architecture's stacks (unwind.c is x86-64's), the pc alone is looked at.
 */
#include "attach.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include "elfsyms.h"
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

/* libc's functions that hold a lock the set-up needs (above); a static helper of theirs
 * (_int_malloc) is left through them, as its caller's frame is theirs. */
static bool holds_libc_lock(const char *fn)
{
	static const char *const names[] = {
		"malloc",          "free",          "calloc",         "realloc",       "reallocarray",
		"memalign",        "aligned_alloc", "posix_memalign", "valloc",        "pvalloc",
		"cfree",           "__libc_malloc", "__libc_free",    "__libc_calloc", "__libc_realloc",
		"__libc_memalign", "__libc_valloc", "__libc_pvalloc", "malloc_trim",   "malloc_stats",
		"malloc_info",     "mallinfo",      "mallinfo2",      "mallopt",       "dl_iterate_phdr",
		"__cxa_finalize",  "__cxa_atexit",  "atexit",         "on_exit",       "exit",
	};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(fn, names[i]))
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

/* A frame in libc inside one of holds_libc_lock's functions, by libc's dynamic symbols. */
static bool in_libc_lock_holder(struct walk *w, const struct ct_unwind_frame *f)
{
	const char *base = w->maps[f->file].base;
	const struct ct_file_cfi *c = &w->cfi[f->file];
	if ((strncmp(base, "libc.so", 7) && strncmp(base, "libc-", 5)) || !c->ok)
		return false;
	struct rp_elfsyms syms;
	rp_elfsyms_index(&syms, &c->cf.im, &c->cf.eh);
	uint64_t start, end;
	const char *fn = rp_elfsyms_function_at(&syms, ct_file_cfi_vaddr(c, f->off), &start, &end);
	return fn && holds_libc_lock(fn);
}

/* The walk ended where the thread's first frame begins (its last frame's unwind entry leaves
 * the return address undefined: _start, a thread's start), not at a frame it could not leave. */
static bool natural_end(struct walk *w, unsigned depth, const struct ct_unwind_regs *end)
{
	struct ct_unwind_where at;
	struct ct_cfi_row row;
	return locate(w, depth > 1 ? end->ip - 1 : end->ip, &at) && at.t &&
	       ct_cfi_row_at(at.t, at.vaddr, &row) && row.ra_how == CT_CFI_UNDEFINED;
}

/* Where the walk stopped at a frame without unwind entry (a module's _init, or the helper that
 * runs its destructors, which the crt files leave without one; the loader calls both with its
 * lock held), its return address is guessed, at sp (a function's entry) and above the frame
 * pointer, and the walk goes on from each guess: frames found so count as the walk's. A wrong
 * guess only costs a retry. stack holds stack_len bytes from sp0. */
static unsigned guess_on(struct walk *w, const uint8_t *stack, size_t stack_len, uint64_t sp0,
			 const struct ct_unwind_regs *end, struct ct_unwind_frame *out, unsigned max)
{
	struct ct_unwind_regs guesses[2];
	unsigned nguess = 0, n = 0;
	uint64_t ra, bp;
	if (end->sp >= sp0 && end->sp - sp0 + 8 <= stack_len && (memcpy(&ra, stack + (end->sp - sp0), 8), ra))
		guesses[nguess++] = (struct ct_unwind_regs){ ra - 1, end->sp + 8, end->bp };
	if (end->bp >= end->sp && end->bp >= sp0 && end->bp - sp0 + 16 <= stack_len) {
		memcpy(&bp, stack + (end->bp - sp0), 8);
		memcpy(&ra, stack + (end->bp - sp0) + 8, 8);
		if (ra)
			guesses[nguess++] = (struct ct_unwind_regs){ ra - 1, end->bp + 16, bp };
	}
	for (unsigned g = 0; g < nguess && n < max; g++) {
		const size_t at = (size_t)(guesses[g].sp - sp0); /* both guesses lie above sp0 */
		if (at < stack_len)
			n += ct_unwind_to(&guesses[g], stack + at, stack_len - at, locate, w, out + n,
					  max - n, NULL);
	}
	return n;
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
	struct ct_unwind_regs end;
	if (stack_len)
		depth = ct_unwind_to(&regs, stack, stack_len, locate, &w, frames, MAX_FRAMES, &end);
	if (depth && depth < MAX_FRAMES && !natural_end(&w, depth, &end))
		depth += guess_on(&w, stack, stack_len, regs.sp, &end, frames + depth, MAX_FRAMES - depth);
	bool in = false;
	for (unsigned i = 0; i < depth; i++)
		in |= is_loader(w.maps[frames[i].file].base) || in_libc_lock_holder(&w, &frames[i]);
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
