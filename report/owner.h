/* SPDX-License-Identifier: MIT */
/*
 * owner.h - whose code a file is (a traced executable, a call-site module, a mapped object), so
 * that a finding's fix names a change the reader can make: their code, their installation, not
 * somebody else's program. See owner.c.
 */
#ifndef CT_REPORT_OWNER_H
#define CT_REPORT_OWNER_H

#include <stdbool.h>

enum rp_owner_kind {
	RP_OWNER_UNKNOWN = 0, /* no absolute path to judge by */
	RP_OWNER_SYSTEM = 1,  /* the distribution's: a package lists it, or a system directory */
	RP_OWNER_PIP = 2,     /* a Python package pip installed (site-packages outside the system's) */
	RP_OWNER_LOCAL = 3,   /* anything else: the reader's own build or installation */
};

struct rp_owner {
	enum rp_owner_kind kind;
	char package[64]; /* "openssh-client" (dpkg), "cryptography" (pip), "" when unknown */
	char desc[128];   /* "from the package openssh-client", "from the Python package ..." */
};

void rp_file_owner(const char *path, struct rp_owner *o);
/* Code the reader builds or installs themselves (or cannot tell): advice to change it fits. */
bool rp_owner_is_readers(const struct rp_owner *o);
/* Tests: read dpkg's file lists from dir instead of /var/lib/dpkg/info (NULL: the default). */
void rp_owner_set_dpkg_dir(const char *dir);

#endif
