/* SPDX-License-Identifier: MIT */
/*
 * doctor.h - the checklist `cryptrace doctor` builds: each probe file adds checks (a status, a
 * one-line title, the evidence and a few named values for --json) and recommendations; doctor.c
 * runs the probes in order and prints the list as text or JSON.
 */
#ifndef CT_DOCTOR_H
#define CT_DOCTOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum dr_status { DR_OK = 0, DR_INFO = 1, DR_WARN = 2, DR_FAIL = 3 };

#define DR_MAX_VALUES 10

struct dr_value {
	char key[24];
	char val[160];
	bool number; /* printed unquoted in JSON */
};

struct dr_check {
	char id[48];        /* stable: "cpu", "libcrypto", "engine:afalg", "afalg:cbc(aes)" ... */
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
	bool cryptodev_ok;     /* /dev/crypto opens */
	bool aes_software;     /* the default libcrypto runs AES at software speed */
	bool ia32cap_masks_aes;
	const char *ia32cap;
	char libcrypto_path[512]; /* the one `openssl` loads */
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

/* The probes, in the order doctor.c runs them. */
void dr_probe_cpu(struct dr_report *r);
void dr_probe_libcrypto(struct dr_report *r); /* doctor_libcrypto.c: libcryptos, engines, providers */
void dr_probe_afalg(struct dr_report *r);     /* doctor_kernel.c */
void dr_probe_cryptodev(struct dr_report *r);
void dr_probe_crossover(struct dr_report *r);

#endif
