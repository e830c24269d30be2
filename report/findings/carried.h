/* SPDX-License-Identifier: MIT */
/*
 * carried.h - the crypto a process carries that the hooks cannot see: another crypto library it
 * mapped, or one linked statically into its executable or a shared object it mapped (carried.c).
 */
#ifndef CT_REPORT_CARRIED_H
#define CT_REPORT_CARRIED_H

#include <stdbool.h>

#include "exescan.h"
#include "model.h"

/* The crypto library cryptrace does not hook that did p's cipher work, from the libraries it
 * mapped (proc.crypto_libs): a TLS library before the crypto library beneath it. *path is its
 * file, *name "GnuTLS", "libgcrypt"..., *how where it runs ciphers ("does its cipher work inside
 * itself"); false when p mapped none. */
bool rp_unhooked_lib(const struct rp_proc *p, struct ct_str *path, const char **name, const char **how);

struct rp_carrier {
	char path[512];                 /* the file that carries it */
	bool is_exe;                    /* the process's executable, not a mapped shared object */
	const struct rp_exe_scan *scan; /* what exescan.c found in path (cached: do not free) */
};
/* The first of p's executable and the shared objects it mapped with a crypto library linked in
 * statically. False when none has one; c->path and c->scan then describe the executable (its
 * scan may say why it could not be examined). */
bool rp_proc_carrier(const struct rp_proc *p, struct rp_carrier *c);
/* p's trace names every shared object it mapped (a preload that writes them). */
bool rp_proc_lists_mapped(const struct rp_proc *p);
/* exescan.c's scan of one file, cached while the file is unchanged. */
const struct rp_exe_scan *rp_scan_file(const char *path);

#endif
