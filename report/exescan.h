/* SPDX-License-Identifier: MIT */
/*
 * exescan.h - which crypto library an executable carries inside itself. When nothing was
 * intercepted, the reason may be a crypto library linked statically into the program (a static
 * binary, or libcrypto.a in a dynamic one): its calls never go through the dynamic linker, so
 * LD_PRELOAD cannot see them. Used by the reporter's nothing-intercepted finding and by the
 * launcher for the trace it writes for a static program.
 */
#ifndef CT_REPORT_EXESCAN_H
#define CT_REPORT_EXESCAN_H

#include <stdbool.h>
#include <stddef.h>

/* The call name of the trace-warning event the launcher writes for a statically linked program
 * (tracer/static_trace.c); its detail says why nothing was seen. */
#define RP_STATIC_EXE_CALL "static-executable"

enum rp_exe_state {
	RP_EXE_MISSING = 0,    /* no such file on this host */
	RP_EXE_UNREADABLE = 1, /* exists, cannot be opened or mapped */
	RP_EXE_NOT_ELF = 2,    /* a script or something else */
	RP_EXE_SCANNED = 3,
};

struct rp_exe_scan {
	enum rp_exe_state state;
	char libs[200];     /* "OpenSSL 3.0.19 27 Jan 2026, Go crypto/aes", "" when none was found */
	char evidence[400]; /* what each was recognised by */
};

/* Looks inside path (never runs it). Returns s->state. */
enum rp_exe_state rp_exe_scan(const char *path, struct rp_exe_scan *s);

/* One clause for a message: "its executable /x holds a statically linked OpenSSL 3.0.19 ...",
 * "its executable /x holds no crypto library cryptrace recognises", "the executable /x is not on
 * this host, so it was not examined". */
void rp_exe_scan_describe(const char *path, const struct rp_exe_scan *s, char *buf, size_t cap);

#endif
