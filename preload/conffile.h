/* SPDX-License-Identifier: MIT */
/*
 * conffile.h - the always-on configuration file (/etc/cryptrace.conf, or CRYPTRACE_CONFIG):
 * small "key = value" lines (docs/fleet.md). Parsed without malloc or stdio, in the constructor
 * of every process on a host, so a bad line is a warning and is skipped; never fatal.
 */
#ifndef CT_CONFFILE_H
#define CT_CONFFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CT_CONF_DEFAULT_PATH "/etc/cryptrace.conf"
#define CT_CONF_MAX_BYTES 16384 /* a longer file: the rest is ignored, with a warning */
#define CT_CONF_MAX_LINE 1024   /* a longer line is skipped whole, with a warning */
#define CT_CONF_MAX_GLOBS 16    /* per list (include, exclude) */
#define CT_CONF_GLOB_LEN 256

struct ct_conffile {
	char spool[512]; /* "" when unset */
	char include[CT_CONF_MAX_GLOBS][CT_CONF_GLOB_LEN];
	char exclude[CT_CONF_MAX_GLOBS][CT_CONF_GLOB_LEN];
	unsigned n_include, n_exclude;
	int mode;                 /* -1 unset, 0 stats, 1 calls */
	uint64_t max_file_bytes;  /* 0: no cap */
	uint64_t max_spool_bytes; /* 0: no cap */
	uint64_t max_age_s;       /* 0: no cap */
	unsigned warnings;        /* lines skipped */
};

/* Called once per skipped line (line 0: about the whole file). */
typedef void (*ct_conf_warn_fn)(void *arg, unsigned line, const char *what);

/* Parses len bytes of text into *c (reset first); NUL bytes, over-long lines, unknown keys and
 * bad values are warned about and skipped. */
void ct_conffile_parse(const char *text, size_t len, struct ct_conffile *c, ct_conf_warn_fn warn, void *arg);

/* Reads and parses path. 1: parsed into *c (reset first); 0: no such file, -1: cannot read it
 * (warned); *c is untouched in both. */
int ct_conffile_load(const char *path, struct ct_conffile *c, ct_conf_warn_fn warn, void *arg);

/* Whether the executable at exe is traced: no exclude glob matches it and, when include globs
 * are given, one of them does (fnmatch without flags: '*' crosses '/'). */
bool ct_conffile_selects(const struct ct_conffile *c, const char *exe);

#endif
