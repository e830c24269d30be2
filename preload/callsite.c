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
 * once libgcc_s is loaded, which the warm-up below does at start, outside any sandbox.
 */
#include <dlfcn.h>
#include <link.h>
#include <unistd.h>
#include <stdio.h>
#include <string.h>

#include <execinfo.h>

#include "internal.h"

#define MAX_FRAMES 16
#define KEEP_FRAMES 8

/* The main program's mapping and name. dladdr names it after argv[0], which programs rewrite
 * (sshd's setproctitle: "sshd: root [priv]"); /proc/self/exe is what it really is. */
static uintptr_t main_base;
static char main_name[64];

static int main_cb(struct dl_phdr_info *info, size_t size, void *arg)
{
	(void)size;
	(void)arg;
	uintptr_t lo = UINTPTR_MAX;
	for (unsigned i = 0; i < info->dlpi_phnum; i++)
		if (info->dlpi_phdr[i].p_type == PT_LOAD && info->dlpi_phdr[i].p_vaddr < lo)
			lo = info->dlpi_phdr[i].p_vaddr;
	main_base = info->dlpi_addr + (lo == UINTPTR_MAX ? 0 : lo);
	return 1; /* the first object is the main program */
}

void ct_callsite_init(void)
{
	dl_iterate_phdr(main_cb, NULL);
	char exe[512];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = 0;
		const char *b = strrchr(exe, '/');
		snprintf(main_name, sizeof(main_name), "%.63s", b ? b + 1 : exe);
	}
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

char *ct_callsite(char *buf, size_t cap, unsigned skip_frames)
{
	if (!buf || cap == 0)
		return buf;
	buf[0] = 0;
	int saved = errno;
	void *ips[MAX_FRAMES];
	int n = backtrace(ips, MAX_FRAMES);
	const void *mine = self_base();
	size_t used = 0;
	unsigned kept = 0;
	for (int i = 0; i < n && kept < KEEP_FRAMES; i++) {
		Dl_info info = { 0 };
		/* return addresses point after the call: look up ip-1 so a call at a function's very
		 * end is not attributed to the next symbol */
		void *ip = (char *)ips[i] - (i ? 1 : 0);
		if (!dladdr(ip, &info) || !info.dli_fname)
			continue;
		if (info.dli_fbase == mine)
			continue;
		if (skip_frames) {
			skip_frames--;
			continue;
		}
		const char *mod = strrchr(info.dli_fname, '/');
		mod = mod ? mod + 1 : info.dli_fname;
		if ((uintptr_t)info.dli_fbase == main_base && main_name[0])
			mod = main_name;
		if (!*mod)
			mod = "main";
		int w;
		if (info.dli_sname && info.dli_saddr)
			w = snprintf(buf + used, cap - used, "%s%s!%s+0x%lx", kept ? "\n" : "", mod,
				     info.dli_sname, (unsigned long)((char *)ips[i] - (char *)info.dli_saddr));
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
