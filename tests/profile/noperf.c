/* SPDX-License-Identifier: MIT */
/*
 * noperf.c - runs a command in a seccomp filter that refuses perf_event_open with EACCES, as a
 * container runtime's default policy does: the profile's "refused" path, taken for real.
 * usage: noperf CMD [ARG...]
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
#define HOST_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define HOST_ARCH AUDIT_ARCH_AARCH64
#elif defined(__i386__)
#define HOST_ARCH AUDIT_ARCH_I386
#endif

int main(int argc, char **argv)
{
#ifdef HOST_ARCH
	struct sock_filter f[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, HOST_ARCH, 0, 3),
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_perf_event_open, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EACCES & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(f) / sizeof(f[0]), f };
	if (argc < 2) {
		fprintf(stderr, "usage: noperf CMD [ARG...]\n");
		return 2;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
		perror("noperf: seccomp");
		return 77;
	}
	execvp(argv[1], argv + 1);
	perror("noperf: exec");
	return 127;
#else
	(void)argc;
	(void)argv;
	fprintf(stderr, "noperf: no seccomp filter for this architecture\n");
	return 77;
#endif
}
