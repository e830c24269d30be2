/* SPDX-License-Identifier: MIT */
/*
 * findings.h - what the evaluators share: findings.c holds the table of evaluators and most of
 * them; the ones with a concern of their own (modules that are not an offload, a kernel that
 * refused its crypto interface, the crypto a process carries, whose code a file is) live in their
 * own files and add their findings through these two helpers.
 */
#ifndef CT_REPORT_FINDINGS_H
#define CT_REPORT_FINDINGS_H

#include <stdbool.h>
#include <stddef.h>

#include "model.h"

/* A new finding (zeroed texts), or NULL when out of memory. pid 0: the whole run. */
struct rp_finding *rp_finding_add(struct rp_model *m, const char *kind, enum rp_severity sev,
				  uint32_t pid);
/* Appends to a fixed buffer, truncating quietly. */
void rp_finding_cat(char *buf, size_t cap, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
#define RP_CAT(f, field, ...) rp_finding_cat((f)->field, sizeof((f)->field), __VA_ARGS__)

/* ---- offload_probe.c: providers and engines that are not a crypto offload */
struct rp_module_role {
	const char *name;   /* "fips", "legacy", ... */
	const char *what;   /* what it is, for a sentence: "OpenSSL's FIPS 140 module" */
	const char *fix;    /* when the reader needs it, and how to get it */
};
/* The role of the provider or engine an ENGINE_REQUEST / PROVIDER_LOAD event names when it is
 * not a crypto offload (fips, legacy, base, default, null providers; the rdrand engine), else
 * NULL: a request for anything else is a request for offload. */
const struct rp_module_role *rp_non_offload_module(const struct ct_event *e);
/* The module's name as the event gives it ("fips" of "name=fips retain_fallbacks=1; ..."). */
struct ct_str rp_requested_module(const struct ct_event *e);

/* ---- kernel_refused.c */
/* The failed socket(AF_ALG) or open(/dev/crypto) of p that no failed offload engine explains,
 * or NULL. */
const struct ct_event *rp_kernel_refusal(const struct rp_proc *p);
/* kernel-refused: the program asked the kernel for cipher work and was refused. */
void rp_eval_kernel_refused(struct rp_model *m);

#endif
