/* SPDX-License-Identifier: MIT */
/*
 * doctor.h - the checklist `cryptrace doctor` builds: each probe file adds checks (a status, a
 * one-line title, the evidence and a few named values for --json) and recommendations;
 * cmd_doctor.c runs the probes in order and prints the list (doctor_checklist.c) as text or
 * JSON.
 */
#ifndef CT_DOCTOR_H
#define CT_DOCTOR_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum dr_status { DR_OK = 0, DR_INFO = 1, DR_WARN = 2, DR_FAIL = 3 };

#define DR_MAX_VALUES 10

struct dr_value {
	char key[24];
	char val[160];
	bool number; /* printed unquoted in JSON */
};

struct dr_check {
	char id[48]; /* stable: "cpu", "libcrypto", "engine:afalg", "afalg:cbc(aes)" ... */
	enum dr_status status;
	char title[256];
	char evidence[768];
	struct dr_value values[DR_MAX_VALUES];
	int nvalues;
};

struct dr_report {
	struct dr_check *checks;
	size_t nchecks, cap;
	char *recs[24];
	int nrecs;
	/* Facts one probe leaves for the next ones. */
	uint32_t cpu_flags;
	bool afalg_ok;
	int afalg_errno;
	bool cryptodev_ok; /* /dev/crypto opens */
	bool aes_software; /* the default libcrypto runs AES at software speed */
	bool ia32cap_masks_aes;
	const char *ia32cap;
	const char *libcrypto_given;      /* --libcrypto PATH: measured instead of `openssl`'s */
	char libcrypto_path[512];         /* the one `openssl` loads (or the one given) */
	char libcrypto_version[200];      /* its OpenSSL_version(): "OpenSSL 3.0.19 27 Jan 2026" */
	char libcrypto_version_short[64]; /* "OpenSSL 3.0.19" */
	bool kernel_offers_nothing;       /* neither AF_ALG nor /dev/crypto: the kernel's crypto drivers
					   * serve no program here */
};

/* Adds a check; returns it so values can be attached. Never NULL (a static spare on ENOMEM). */
struct dr_check *dr_add(struct dr_report *r, const char *id, enum dr_status st, const char *title,
			const char *evidence_fmt, ...) __attribute__((format(printf, 5, 6)));
void dr_value(struct dr_check *c, const char *key, bool number, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* Adds a recommendation once (the same text twice is kept once). */
void dr_recommend(struct dr_report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The list in 80 columns, or as one JSON object. */
void dr_print_text(const struct dr_report *r, FILE *out);
void dr_print_json(const struct dr_report *r, FILE *out);

/* doctor_libcrypto_child.c: loads the libcrypto at path in a child process and returns its
 * answer, "key value" lines (version, ctr, cbc; with full also the engines and providers), or
 * an "error" line; malloc'ed, NULL when no child could be started. */
char *dr_libcrypto_child(const char *path, bool full);

/* doctor_libfind.c */
/* The libcrypto the dynamic loader gives `openssl` (found in PATH, written to openssl even when
 * the loader names none); false when there is none. */
bool dr_openssl_libcrypto(char *openssl, size_t ocap, char *lib, size_t lcap);
/* True when the program at path is of another architecture than this doctor (an x86-64 openssl
 * on PATH while an aarch64 doctor runs under qemu-user): arch gets its name. */
bool dr_foreign_program(const char *path, char *arch, size_t cap);
/* The libcrypto copies beside the one `openssl` loads (skip_real, its real path): in the usual
 * directories, every multiarch directory (/usr/lib/<triplet>) and, for the tests,
 * CRYPTRACE_DOCTOR_LIBDIRS (colon-separated, searched first). */
#define DR_MAX_LIBS 8
struct dr_lib_scan {
	char native[DR_MAX_LIBS][PATH_MAX]; /* loadable here: measured */
	int nnative;
	char foreign[DR_MAX_LIBS][PATH_MAX]; /* of another architecture: listed */
	char foreign_arch[DR_MAX_LIBS][48];
	int nforeign;
};
void dr_find_libcryptos(const char *skip_real, struct dr_lib_scan *ls);
/* The check listing the foreign copies, if any. */
void dr_foreign_check(struct dr_report *r, const struct dr_lib_scan *ls);

/* The probes, in the order cmd_doctor.c runs them. */
void dr_probe_cpu(struct dr_report *r);       /* doctor_cpu.c */
void dr_probe_libcrypto(struct dr_report *r); /* doctor_libcrypto.c: libcryptos, engines, providers */
void dr_probe_afalg(struct dr_report *r);     /* doctor_kernel.c */
void dr_probe_cryptodev(struct dr_report *r);
void dr_probe_crossover(struct dr_report *r); /* doctor_crossover.c */
void dr_probe_fleet(struct dr_report *r);     /* doctor_fleet.c: the always-on mode, where configured */

#endif
