/* SPDX-License-Identifier: MIT */
/*
 * callsite.c - "who asked for this": the caller's stack, symbolized with dladdr as
 * "module!symbol+0xoff" (or "module+0xoff" when the symbol is not exported), innermost first,
 * joined by '\n'. The preload's own frames are skipped. Used on failures and context/session
 * set-up only, never per operation.
 *
 * The unwinder is glibc's backtrace() (libgcc's _Unwind_Backtrace over .eh_frame), not libunwind:
 * libunwind 1.6 probes memory with mincore() and makes a pipe2() to validate addresses while it
 * unwinds, and sshd's seccomp sandbox kills a process for either. backtrace() makes no syscall
 * once libgcc_s is loaded, which the warm-up below does at start, outside any sandbox. Where the
 * C library has no backtrace() (musl), the same unwinder is called directly: _Unwind_Backtrace,
 * linked into this library from libgcc_eh, finds each frame's FDE through dl_iterate_phdr and
 * .eh_frame_hdr, in memory: no syscall, nothing to load.
 *
 * dladdr names only exported symbols; a frame in a static function prints as "module+0xoff".
 * Each module a frame names is remembered with its file and GNU build id (read from its notes
 * in memory: no syscall), and written as a MODULE record, so that the reporter can look the
 * offset up in the file's symbol table (or its installed debug file) later.
 */
#include <dlfcn.h>
#include <elf.h>
#include <stddef.h>
#include <link.h>
#include <pthread.h>
#include <unistd.h>
#include <stdio.h>
#include <string.h>

#include "ct_config.h"
#ifdef CT_HAVE_BACKTRACE
#include <execinfo.h>
#else
#include <unwind.h>

#include "dl_find_object.h"
#endif

#include "elf_note.h"
#include "internal.h"
#include "signals.h"

#define MAX_FRAMES 16
#define KEEP_FRAMES 8
#define MAX_MODULES 64

/* The main program's mapping and name. dladdr names it after argv[0], which programs rewrite
 * (sshd's setproctitle: "sshd: root [priv]"); /proc/self/exe is what it really is. */
static uintptr_t main_base;
static char main_name[64], main_path[256];

/* Where an object's lowest PT_LOAD segment is mapped: what dladdr reports as its dli_fbase. */
static uintptr_t load_base(const struct dl_phdr_info *info)
{
	uintptr_t lo = UINTPTR_MAX;
	for (unsigned i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_LOAD && info->dlpi_phdr[i].p_vaddr < lo)
			lo = info->dlpi_phdr[i].p_vaddr;
	return info->dlpi_addr + (lo == UINTPTR_MAX ? 0 : lo);
}

static int main_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	main_base = load_base(info);
	return 1; /* the first object is the main program */
}

/* The program's file: /proc/self/exe, or the program the dynamic loader runs when it was started
 * as a command (then /proc/self/exe is the loader: loader.c). */
static ssize_t program_file(char *exe, size_t cap)
{
	const char *prog = ct_loader_program();
	if (prog)
		return snprintf(exe, cap, "%s", prog);
	ssize_t n = readlink("/proc/self/exe", exe, cap - 1);
	exe[n > 0 ? n : 0] = 0;
	return n;
}

void ct_callsite_init(void)
{
	dl_iterate_phdr(main_cb, NULL);
	char exe[512];
	ssize_t n = program_file(exe, sizeof(exe));
	if (n > 0 && (size_t)n < sizeof(exe)) {
		const char *b = strrchr(exe, '/');
		snprintf(main_name, sizeof(main_name), "%.63s", b ? b + 1 : exe);
		snprintf(main_path, sizeof(main_path), "%.255s", exe);
	}
}

/* Modules named in call sites so far (callsite.c's own lock: ct_callsite runs on several
 * threads); `written` marks the ones the writer already emitted. */
static struct module {
	const void *base;
	char name[64], path[256], build_id[41];
	bool written;
} modules[MAX_MODULES];
static unsigned nmodules;
static pthread_mutex_t modules_lock = PTHREAD_MUTEX_INITIALIZER;

struct build_id_query {
	uintptr_t base;
	char *hex;
	size_t cap;
};

/* The object loaded at q->base: its NT_GNU_BUILD_ID note, from the mapped PT_NOTE segments. */
static int build_id_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	struct build_id_query *q = arg;
	if (load_base(info) != q->base && info->dlpi_addr != q->base)
		return 0;
	for (unsigned i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type == PT_NOTE && ct_elf_build_id((const uint8_t *)(info->dlpi_addr + ph->p_vaddr),
							     ph->p_memsz, q->hex, q->cap))
			return 1;
	}
	return 1;
}

static void remember_module(const void *base, const char *name, const char *path)
{
	ct_lock(&modules_lock);
	for (unsigned i = 0; i < nmodules; i++)
		if (modules[i].base == base) {
			ct_unlock(&modules_lock);
			return;
		}
	if (nmodules < MAX_MODULES) {
		struct module *m = &modules[nmodules];
		*m = (struct module){ .base = base };
		snprintf(m->name, sizeof(m->name), "%s", name);
		snprintf(m->path, sizeof(m->path), "%s", path);
		struct build_id_query q = { .base = (uintptr_t)base,
					    .hex = m->build_id,
					    .cap = sizeof(m->build_id) };
		dl_iterate_phdr(build_id_cb, &q);
		nmodules++;
	}
	ct_unlock(&modules_lock);
}

size_t ct_callsite_encode_modules(uint8_t *buf, size_t cap, bool all)
{
	size_t used = 0;
	ct_lock(&modules_lock);
	for (unsigned i = 0; i < nmodules; i++) {
		struct module *m = &modules[i];
		if (m->written && !all)
			continue;
		struct ct_module rec = { .name = ct_str_from(m->name),
					 .path = ct_str_from(m->path),
					 .build_id = ct_str_from(m->build_id) };
		size_t n = ct_encode_module(buf + used, cap - used, &rec);
		if (!n)
			break; /* the rest at the next flush */
		used += n;
		m->written = true;
	}
	ct_unlock(&modules_lock);
	return used;
}

/* dladdr scans every dynamic symbol of the frame's module: ~40 us for a frame in libcrypto
 * (~5,000 symbols) on a 2 GHz VM, and `ssh -V` made 88 such lookups at its start (its DRBG's
 * three context set-ups and their path), 3.7 ms of a 17 ms run. A process's call sites share
 * most of their frames, so each answer is kept by return address until the loader unloads any
 * object (dl_iterate_phdr's unload count moves): a name kept never outlives its module. */
#define FRAME_MEMO 128
static struct frame_memo {
	void *ip;
	Dl_info info;
	bool named; /* dladdr's answer: false when no module holds ip */
} frame_memo[FRAME_MEMO];
static unsigned long long frame_memo_subs;
static pthread_mutex_t frame_memo_lock = PTHREAD_MUTEX_INITIALIZER;

static int unloads_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	if (size >= offsetof(struct dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs))
		*(unsigned long long *)arg = info->dlpi_subs;
	return 1; /* every object reports the same count */
}

/* Under frame_memo_lock: forgets every answer if an object was unloaded since they were kept. */
static void frame_memo_check_unloads(void)
{
	unsigned long long subs = frame_memo_subs;
	dl_iterate_phdr(unloads_cb, &subs);
	if (subs != frame_memo_subs) {
		memset(frame_memo, 0, sizeof(frame_memo));
		frame_memo_subs = subs;
	}
}

void ct_callsite_after_fork_child(void)
{
	pthread_mutex_init(&modules_lock, NULL);
	pthread_mutex_init(&frame_memo_lock, NULL);
	for (unsigned i = 0; i < nmodules; i++)
		modules[i].written = false; /* the child's trace names them again */
}

/* dladdr(ip), remembered (under frame_memo_lock). */
static bool frame_lookup(void *ip, Dl_info *info)
{
	struct frame_memo *m = &frame_memo[((uintptr_t)ip >> 2) % FRAME_MEMO];
	if (m->ip != ip) {
		m->ip = ip;
		m->named = dladdr(ip, &m->info) && m->info.dli_fname;
	}
	*info = m->info;
	return m->named;
}

static const void *self_base(void)
{
	static const void *base;
	if (!base) {
		Dl_info info;
		if (dladdr((void *)self_base, &info))
			base = info.dli_fbase;
	}
	return base;
}

/* A sanitizer build's runtime intercepts backtrace() and other calls: its frames are ours too,
 * not the program's. */
static bool sanitizer_runtime(const char *path)
{
	const char *b = strrchr(path, '/');
	b = b ? b + 1 : path;
	return !strncmp(b, "libasan.", 8) || !strncmp(b, "libtsan.", 8) || !strncmp(b, "libubsan.", 9) ||
	       !strncmp(b, "liblsan.", 8);
}

#ifndef CT_HAVE_BACKTRACE
struct unwind_state {
	void **ips;
	int n, max;
};

static _Unwind_Reason_Code unwind_frame(struct _Unwind_Context *ctx, void *arg)
{
	struct unwind_state *s = arg;
	uintptr_t ip = _Unwind_GetIP(ctx);
	if (!ip || s->n >= s->max)
		return _URC_END_OF_STACK;
	s->ips[s->n++] = (void *)ip;
	return _URC_NO_REASON;
}
#endif

/* The stack's return addresses, innermost first (the first ones are ours: skipped by module). */
static int stack_ips(void **ips, int max)
{
#ifdef CT_HAVE_BACKTRACE
	return backtrace(ips, max);
#else
	static int self_ok = -1; /* our own FDEs are findable: checked once */
	int ok = __atomic_load_n(&self_ok, __ATOMIC_RELAXED);
	if (ok < 0)
		__atomic_store_n(&self_ok, ok = ct_unwind_self_ok(), __ATOMIC_RELAXED);
	struct unwind_state s = { .ips = ips, .max = max };
	if (ok)
		_Unwind_Backtrace(unwind_frame, &s);
	return s.n;
#endif
}

char *ct_callsite(char *buf, size_t cap, unsigned skip_frames)
{
	if (!buf || cap == 0)
		return buf;
	buf[0] = 0;
	int saved = errno;
	void *ips[MAX_FRAMES];
	int n = stack_ips(ips, MAX_FRAMES);
	const void *mine = self_base();
	size_t used = 0;
	unsigned kept = 0;
	ct_lock(&frame_memo_lock);
	frame_memo_check_unloads();
	for (int i = 0; i < n && kept < KEEP_FRAMES; i++) {
		Dl_info info = { 0 };
		/* return addresses point after the call: look up ip-1 so a call at a function's very
		 * end is not attributed to the next symbol */
		void *ip = (char *)ips[i] - (i ? 1 : 0);
		if (!frame_lookup(ip, &info))
			continue;
		if (info.dli_fbase == mine || sanitizer_runtime(info.dli_fname))
			continue;
		if (skip_frames) {
			skip_frames--;
			continue;
		}
		const char *mod = strrchr(info.dli_fname, '/');
		mod = mod ? mod + 1 : info.dli_fname;
		const char *path = info.dli_fname;
		if ((uintptr_t)info.dli_fbase == main_base && main_name[0]) {
			mod = main_name;
			path = main_path;
		}
		if (!*mod)
			mod = "main";
		if (!info.dli_sname && *path == '/')
			remember_module(info.dli_fbase, mod, path);
		int w;
		if (info.dli_sname && info.dli_saddr)
			w = snprintf(buf + used, cap - used, "%s%s!%s+0x%lx", kept ? "\n" : "", mod,
				     info.dli_sname,
				     (unsigned long)((char *)ips[i] - (char *)info.dli_saddr));
		else
			w = snprintf(buf + used, cap - used, "%s%s+0x%lx", kept ? "\n" : "", mod,
				     (unsigned long)((char *)ips[i] - (char *)info.dli_fbase));
		if (w < 0 || (size_t)w >= cap - used) {
			buf[used] = 0; /* drop the frame that did not fit whole */
			break;
		}
		used += (size_t)w;
		kept++;
	}
	ct_unlock(&frame_memo_lock);
	errno = saved;
	return buf;
}

/* The first backtrace() dlopens libgcc_s: do it early, while open/mmap are still allowed. */
void ct_callsite_warm_up(void)
{
	static int done;
	if (__atomic_exchange_n(&done, 1, __ATOMIC_RELAXED))
		return;
	char buf[256];
	ct_callsite(buf, sizeof(buf), 0);
}
