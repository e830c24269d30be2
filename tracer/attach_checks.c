/* SPDX-License-Identifier: MIT */
/*
 * attach_checks.c - the reasons `cryptrace attach` refuses a process, each found before the
 * process is touched (attach.h): every refusal is one line that says what to do instead.
 *
 * "Nothing to trace" is decided on what the process maps now: a libcrypto, GnuTLS, libgcrypt or
 * libkcapi, or an open /dev/crypto. A process with none of these may still open an AF_ALG socket
 * later, but attaching to every process that could is attaching to every process: such a program
 * is traced from its start with `cryptrace run` (docs/attach.md).
 */
#include "attach.h"
#include "attach_abi.h"

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tracer.h"

#define CAP_SYS_PTRACE_BIT 19 /* linux/capability.h */
#define YAMA_SCOPE "/proc/sys/kernel/yama/ptrace_scope"

/* The value of "Key:" in /proc/PID/status (pid 0: our own), or -1. */
static long long status_field(pid_t pid, const char *key, int base)
{
	char path[64], line[256];
	if (pid)
		snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	else
		snprintf(path, sizeof(path), "/proc/self/status");
	FILE *f = fopen(path, "re");
	long long v = -1;
	size_t n = strlen(key);
	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, key, n) && line[n] == ':') {
			v = strtoll(line + n + 1, NULL, base);
			break;
		}
	if (f)
		fclose(f);
	return v;
}

static bool have_cap_sys_ptrace(void)
{
	long long eff = status_field(0, "CapEff", 16);
	return eff > 0 && (eff >> CAP_SYS_PTRACE_BIT) & 1;
}

/* Whether we are an ancestor of pid (Yama's scope 1 lets an ancestor trace). */
static bool is_ancestor(pid_t pid)
{
	pid_t me = getpid();
	for (int depth = 0; pid > 1 && depth < 4096; depth++) {
		long long pp = status_field(pid, "PPid", 10);
		if (pp == me)
			return true;
		if (pp <= 0)
			return false;
		pid = (pid_t)pp;
	}
	return false;
}

static bool yama_allows(pid_t pid, char *why, size_t cap)
{
	FILE *f = fopen(YAMA_SCOPE, "re");
	int scope = 0;
	if (!f)
		return true; /* no Yama in this kernel */
	if (fscanf(f, "%d", &scope) != 1)
		scope = 0;
	fclose(f);
	if (scope >= 3) {
		snprintf(why, cap,
			 "kernel.yama.ptrace_scope is %d: ptrace is off on this machine until it reboots "
			 "with a lower value; trace the program from its start with `cryptrace run`",
			 scope);
		return false;
	}
	if (scope == 2 && !have_cap_sys_ptrace()) {
		snprintf(why, cap,
			 "kernel.yama.ptrace_scope is 2: only a process with CAP_SYS_PTRACE may attach; "
			 "run cryptrace attach as root (or with that capability)");
		return false;
	}
	if (scope == 1 && !have_cap_sys_ptrace() && !is_ancestor(pid)) {
		snprintf(why, cap,
			 "kernel.yama.ptrace_scope is 1: only a parent may attach to process %d; run "
			 "cryptrace attach as root (CAP_SYS_PTRACE), or allow it with "
			 "`sysctl kernel.yama.ptrace_scope=0`",
			 (int)pid);
		return false;
	}
	return true;
}

/* A file under /proc/PID/fd that is /dev/crypto. */
static bool has_dev_crypto_open(pid_t pid)
{
	char dir[64];
	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	DIR *d = opendir(dir);
	bool found = false;
	struct dirent *e;
	while (d && !found && (e = readdir(d))) {
		char link[320], target[64];
		snprintf(link, sizeof(link), "%s/%s", dir, e->d_name);
		ssize_t n = readlink(link, target, sizeof(target) - 1);
		found = n > 0 && (target[n] = 0, !strcmp(target, "/dev/crypto"));
	}
	if (d)
		closedir(d);
	return found;
}

/* CRYPTRACE_OUT in pid's environment, as it started ("" when unset or unreadable). */
static void remote_out_dir(pid_t pid, char *dst, size_t cap)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/environ", (int)pid);
	size_t len = 0;
	char *env = ct_read_file(path, &len);
	dst[0] = 0;
	for (size_t i = 0; env && i < len; i += strlen(env + i) + 1)
		if (!strncmp(env + i, "CRYPTRACE_OUT=", 14))
			snprintf(dst, cap, "%s", env + i + 14);
	free(env);
}

int ct_remote_attach_state(pid_t pid)
{
	uint64_t at = ct_remote_symbol(pid, "libcryptrace.so", "cryptrace_attach_state", NULL, 0);
	uint32_t v;
	if (!at || !ct_remote_read(pid, at, &v, sizeof(v)))
		return -1;
	return (int)v;
}

bool ct_attach_check(pid_t pid, const char *lib, bool allow_seccomp, char *why, size_t cap)
{
	char exe[64];
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
	if (status_field(pid, "Pid", 10) != pid) {
		snprintf(why, cap, "no process %d", (int)pid);
		return false;
	}
	if (pid == getpid()) {
		snprintf(why, cap, "process %d is cryptrace itself", (int)pid);
		return false;
	}
	if (!ct_arch_attach_supported(why, cap))
		return false;
	long long tracer = status_field(pid, "TracerPid", 10);
	if (tracer > 0) {
		snprintf(why, cap,
			 "process %d is already traced by process %lld (a debugger, strace?): detach that "
			 "first",
			 (int)pid, tracer);
		return false;
	}
	if (!yama_allows(pid, why, cap))
		return false;
	if (access(exe, R_OK) != 0 && errno == EACCES && !have_cap_sys_ptrace()) {
		snprintf(why, cap,
			 "process %d belongs to another user: run cryptrace attach as that user or as root "
			 "(CAP_SYS_PTRACE)",
			 (int)pid);
		return false;
	}
	struct ct_elf_id mine, theirs;
	char arch[64];
	if (ct_elf_identify(lib, &mine) && ct_elf_identify(exe, &theirs) &&
	    !ct_elf_same_arch(&mine, &theirs)) {
		ct_elf_arch_name(&theirs, arch, sizeof(arch));
		snprintf(why, cap, "process %d is a %s program; %s is not", (int)pid, arch, lib);
		return false;
	}
	if (ct_elf_classify(exe) == CT_ELF_STATIC || !ct_remote_maps_file(pid, "libc.so")) {
		snprintf(why, cap,
			 "process %d is statically linked (no loader, no libc mapped): there is nothing "
			 "to load the tracer with",
			 (int)pid);
		return false;
	}
	/* the library's start opens a file, maps memory and makes a thread: a filter that forbids
	 * one of those (OpenSSH's pre-auth sandbox forbids open and clone) kills the process */
	if (status_field(pid, "Seccomp", 10) >= 2 && !allow_seccomp) {
		snprintf(why, cap,
			 "process %d runs under a seccomp filter: a system call of the tracer's start "
			 "(open, mmap, clone) that it forbids would kill the process; --allow-seccomp "
			 "attaches anyway",
			 (int)pid);
		return false;
	}
	int state = ct_remote_attach_state(pid);
	if (state == CT_ATTACH_STATE_ATTACHED) {
		snprintf(why, cap, "process %d is attached by another cryptrace attach already", (int)pid);
		return false;
	}
	if (ct_remote_maps_file(pid, "libcryptrace.so") && state != CT_ATTACH_STATE_DETACHED) {
		char dir[1024];
		remote_out_dir(pid, dir, sizeof(dir));
		snprintf(why, cap, "process %d is already traced by cryptrace, read its traces in %s",
			 (int)pid, dir[0] ? dir : "its CRYPTRACE_OUT or the always-on spool (docs/fleet.md)");
		return false;
	}
	if (!ct_remote_maps_file(pid, "libcrypto.so") && !ct_remote_maps_file(pid, "libgnutls.so") &&
	    !ct_remote_maps_file(pid, "libgcrypt.so") && !ct_remote_maps_file(pid, "libkcapi.so") &&
	    !has_dev_crypto_open(pid)) {
		snprintf(why, cap,
			 "process %d maps no libcrypto, GnuTLS, libgcrypt or libkcapi and has no "
			 "/dev/crypto open: nothing to trace (a program that opens AF_ALG sockets "
			 "later is traced from its start with `cryptrace run`)",
			 (int)pid);
		return false;
	}
	return true;
}
