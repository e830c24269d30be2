/* SPDX-License-Identifier: MIT */
/*
 * static_trace.c - the trace file of a process the preload cannot enter. A statically linked
 * program has no dynamic loader, so LD_PRELOAD never loads libcryptrace.so into it and it writes
 * no trace; the launcher writes a small one in its stead, in the same format (the shared encoder
 * of common/trace_format.c): a header (pid, exe, argv with its secrets redacted as the preload
 * does, start time, this host), a trace-warning
 * event saying why nothing was seen (and which crypto library the file carries, looked up while
 * the file is surely there), the process facts from wait4 and an END with its exit status. The
 * report then says nothing-intercepted with that reason instead of finding no trace at all.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "cpu.h"
#include "errno_abi.h"
#include "exescan.h"
#include "redact.h"
#include "trace_format.h"
#include "tracer.h"

#define REC_CAP 16384

/* "<comm>.<pid>.ctrace" as the preload names its files: comm is the first 15 bytes of the
 * executable's name, like the kernel's. ".N" on a clash. */
static int create_file(const char *outdir, const char *exe, uint32_t pid, char *path, size_t cap)
{
	const char *base = strrchr(exe, '/');
	char comm[16];

	snprintf(comm, sizeof(comm), "%s", base ? base + 1 : exe);
	for (unsigned i = 0; i < 100; i++) {
		if (i)
			snprintf(path, cap, "%s/%s.%u.ctrace.%u", outdir, comm, pid, i);
		else
			snprintf(path, cap, "%s/%s.%u.ctrace", outdir, comm, pid);
		int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);

		if (fd >= 0 || errno != EEXIST)
			return fd;
	}
	return -1;
}

bool ct_static_trace_write(const struct ct_static_run *r)
{
	char cmdline[4096], argv[6144], cpu_model[128] = "", kernel[256] = "", hostname[128] = "";
	size_t clen = 0;
	unsigned redacted = 0;
	struct utsname u;

	for (int i = 0; r->argv[i]; i++) {
		size_t n = strlen(r->argv[i]) + 1;

		if (clen + n > sizeof(cmdline))
			break;
		memcpy(cmdline + clen, r->argv[i], n);
		clen += n;
	}
	/* recorded as the preload records it: secrets redacted, or argv[0] alone (redact.h) */
	size_t alen = ct_argv_redact(cmdline, clen, r->argv_exe_only, argv, sizeof(argv), &redacted);
	ct_cpu_model(cpu_model, sizeof(cpu_model));
	if (uname(&u) == 0)
		snprintf(kernel, sizeof(kernel), "%s %s %s", u.sysname, u.release, u.machine);
	gethostname(hostname, sizeof(hostname) - 1);

	const char *ia32cap = getenv(CT_OPENSSL_CAP_ENV);
	struct ct_header h = {
		.pid = r->pid,
		.ppid = (uint32_t)getpid(),
		.start_realtime_ns = r->start_realtime_ns,
		.start_mono_ns = r->start_mono_ns,
		.cpu_flags = ct_cpu_features(),
		.flags = r->argv_exe_only ? CT_HDR_ARGV_OMITTED : 0,
		.sample_period = 1,
		.exe = ct_str_from(r->exe),
		.argv = { .p = argv, .len = (uint32_t)alen },
		.cpu_model = ct_str_from(cpu_model),
		.kernel = ct_str_from(kernel),
		.hostname = ct_str_from(hostname),
		.libcrypto = ct_str_from(""),
		.ia32cap = ct_str_from(ia32cap ? ia32cap : ""),
		.route_spec = ct_str_from(r->route ? r->route : ""),
		.timing = ct_str_from("not traced: a statically linked program (this file was written "
				      "by the launcher)"),
		.argv_redacted = redacted,
		.errno_abi = ct_str_from(ct_errno_abi_label(ct_errno_abi_own())),
	};

	struct rp_exe_scan scan;
	char detail[700];

	rp_exe_scan(r->exe, &scan);
	snprintf(detail, sizeof(detail),
		 "%s is statically linked (no dynamic loader): LD_PRELOAD "
		 "cannot load cryptrace into it, so none of its calls are seen%s%s%s",
		 r->exe, scan.libs[0] ? "; it carries " : "", scan.libs, scan.libs[0] ? " itself" : "");

	struct ct_event ev = {
		.event_id = 1,
		.kind = CT_EV_TRACE_WARNING,
		.path_id = CT_NO_PATH,
		.tid = r->pid,
		.first_mono_ns = r->start_mono_ns,
		.last_mono_ns = r->start_mono_ns,
		.count = 1,
		.call = ct_str_from(RP_STATIC_EXE_CALL),
		.detail = ct_str_from(detail),
		.callsite = ct_str_from(""),
	};
	struct ct_proc pr = {
		.mono_ns = r->end_mono_ns,
		.utime_ns = (uint64_t)r->rusage.ru_utime.tv_sec * 1000000000ull +
			    (uint64_t)r->rusage.ru_utime.tv_usec * 1000ull,
		.stime_ns = (uint64_t)r->rusage.ru_stime.tv_sec * 1000000000ull +
			    (uint64_t)r->rusage.ru_stime.tv_usec * 1000ull,
		.maxrss_kb = (uint64_t)r->rusage.ru_maxrss,
		.flags = CT_PROC_FINAL,
		.threads_seen = 0,
		.crypto_libs = ct_str_from(""),
		.libcrypto = ct_str_from(""),
	};
	struct ct_end end = {
		.mono_ns = r->end_mono_ns,
		.reason = r->signaled ? CT_END_SIGNAL : CT_END_EXIT,
		.status = r->status,
	};

	/* the whole file in one buffer (each record is a few hundred bytes), then one write */
	uint8_t *buf = malloc(REC_CAP);
	size_t used = 0, n = 1;
	if (buf) {
		n = n ? ct_encode_preamble(buf + used, REC_CAP - used) : 0;
		used += n;
		n = n ? ct_encode_header(buf + used, REC_CAP - used, &h) : 0;
		used += n;
		n = n ? ct_encode_event(buf + used, REC_CAP - used, &ev) : 0;
		used += n;
		n = n ? ct_encode_proc(buf + used, REC_CAP - used, &pr) : 0;
		used += n;
		n = n ? ct_encode_end(buf + used, REC_CAP - used, &end) : 0;
		used += n;
	}
	char path[PATH_MAX + 64];
	int fd = buf && n ? create_file(r->outdir, r->exe, r->pid, path, sizeof(path)) : -1;
	bool ok = fd >= 0 && ct_write_all(fd, buf, used);
	if (fd >= 0 && close(fd) != 0)
		ok = false;
	if (!ok && fd >= 0)
		unlink(path);
	free(buf);
	return ok;
}
