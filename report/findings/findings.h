/* SPDX-License-Identifier: MIT */
/*
 * findings.h - what the findings share. findings.c runs the evaluators in one fixed order (the
 * order the report lists their findings in) and holds the helpers below; each family of findings
 * has a file of its own in this folder that exports its evaluator, rp_eval_<kind>, with its
 * thresholds named at the top. docs/report.md says what each finding means and why each
 * threshold is where it is.
 */
#ifndef CT_REPORT_FINDINGS_H
#define CT_REPORT_FINDINGS_H

#include <stdbool.h>
#include <stddef.h>

#include "model.h"

/* ---- findings.c: writing a finding */

/* A new finding (zeroed texts), or NULL when out of memory. pid 0: the whole run. */
struct rp_finding *rp_finding_add(struct rp_model *m, const char *kind, enum rp_severity sev, uint32_t pid);
/* A finding over several processes: p is one of them (f->exe is what all share). */
void rp_finding_note_exe(struct rp_finding *f, const struct rp_proc *p);
/* The same, for a process named by its pid (an event's pids). */
void rp_finding_note_pid(const struct rp_model *m, struct rp_finding *f, uint32_t pid);
/* Appends to a fixed buffer, truncating quietly. */
void rp_finding_cat(char *buf, size_t cap, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
#define RP_CAT(f, field, ...) rp_finding_cat((f)->field, sizeof((f)->field), __VA_ARGS__)
/* Short forms for the evaluators' many sentences: CAT(message, ...) appends to that field of the
 * finding being written, which every evaluator names f; S(s) is a ct_str's "%.*s" arguments. */
#define CAT(field, ...) RP_CAT(f, field, __VA_ARGS__)
#define S(s) (int)(s).len, (s).p

/* ---- findings.c: where a path's work ran, what a failed event means, the CPU's AES bound */

/* Work the program asked of a library in its own process: libcrypto's EVP or low-level AES_*
 * API, or libgcrypt's cipher API. */
bool rp_path_in_process(const struct rp_path *p);
/* Work that went through a kernel interface into the kernel: /dev/crypto or AF_ALG requests
 * that a route served in-process (emulation, route:aesni) never reached it. */
bool rp_path_reached_kernel(const struct rp_path *p);
/* Work that ran in this process's own software or provider code: not in an engine, the kernel
 * or a route's target. */
bool rp_path_own_software(const struct rp_path *p);
/* Engine and provider requests return a handle or 1 on success; kernel session set-up calls
 * (ioctl, bind, accept) return 0 or a descriptor. */
bool rp_event_failed(const struct ct_event *e);
/* A failed hooked call that says an offload did not work: a kernel interface call (socket, bind,
 * open, ioctl, io_submit...), not a library-level failure such as EVP_DecryptFinal on bad
 * padding, AES_set_encrypt_key on a bad key size, or a gcry_cipher_* call libgcrypt refused. */
bool rp_offload_call_failed(const struct ct_event *e);
/* The AES-NI bound of a process in cycles/byte (0: none), and in *from where it came from. */
double rp_aesni_bound(const struct rp_proc *p, const char **from);

/* ---- offload_modules.c: providers and engines that are not a crypto offload */
struct rp_module_role {
	const char *name; /* "fips", "legacy", ... */
	const char *what; /* what it is, for a sentence: "OpenSSL's FIPS 140 module" */
	const char *fix;  /* when the reader needs it, and how to get it */
};
/* The role of the provider or engine an ENGINE_REQUEST / PROVIDER_LOAD event names when it is
 * not a crypto offload (fips, legacy, base, default, null providers; the rdrand engine), else
 * NULL: a request for anything else is a request for offload. */
const struct rp_module_role *rp_non_offload_module(const struct ct_event *e);
/* The module's name as the event gives it ("fips" of "name=fips retain_fallbacks=1; ..."). */
struct ct_str rp_requested_module(const struct ct_event *e);
/* A request for an offload engine or provider that failed (engine-failed's subject). */
bool rp_offload_module_failed(const struct ct_event *e);

/* ---- ktls.c */
/* A kTLS set-up event (setsockopt TCP_ULP "tls" or SOL_TLS, failed or not) or a failed data call
 * on a kTLS socket: ktls.c's findings read them, the AF_ALG and cryptodev findings leave them. */
bool rp_ktls_event(const struct ct_event *e);

/* ---- kernel_refused.c */
/* The failed socket(AF_ALG) or open(/dev/crypto) of p that no failed offload engine explains,
 * or NULL. */
const struct ct_event *rp_kernel_refusal(const struct rp_proc *p);

/* ---- the evaluators, in the order findings.c runs them; each adds zero or more findings */
void rp_eval_unfinished_trace(struct rp_model *m);       /* unfinished.c */
void rp_eval_nothing_intercepted(struct rp_model *m);    /* nothing_intercepted.c */
void rp_eval_multiple_libcrypto(struct rp_model *m);     /* multiple_libcrypto.c */
void rp_eval_engine_failed(struct rp_model *m);          /* offload_failed.c */
void rp_eval_provider_absent(struct rp_model *m);        /* offload_failed.c */
void rp_eval_silent_fallback(struct rp_model *m);        /* silent_fallback.c */
void rp_eval_ktls(struct rp_model *m);                   /* ktls.c */
void rp_eval_session_failed(struct rp_model *m);         /* offload_failed.c */
void rp_eval_kernel_refused(struct rp_model *m);         /* kernel_refused.c */
void rp_eval_software_aes(struct rp_model *m);           /* software_aes.c */
void rp_eval_profile_aes(struct rp_model *m);            /* profile_aes.c */
void rp_eval_lowlevel_api(struct rp_model *m);           /* lowlevel_api.c */
void rp_eval_kernel_software_driver(struct rp_model *m); /* kernel_offload.c */
void rp_eval_small_requests_offload(struct rp_model *m); /* kernel_offload.c */
void rp_eval_user_time_misleads(struct rp_model *m);     /* user_time.c */

/* The traced CPU has ARM's AES instructions (its first shown header says so): fixes name the
 * route target cpu and the ARMv8 Crypto Extensions, not aesni and AES-NI. */
static inline bool rp_model_on_arm(const struct rp_model *m)
{
	for (size_t i = 0; i < m->nprocs; i++)
		if (m->procs[i].has_hdr && rp_proc_shown(m, &m->procs[i]))
			return (m->procs[i].hdr.cpu_flags & CT_CPU_ARM_AES) != 0;
	return false;
}

/* The CPU's AES instructions as a reader of this trace knows them, and the route target that
 * moves work onto them: "AES-NI" / "aesni" on x86, "ARMv8 CE" / "cpu" on ARM (where "aesni" is
 * refused). Every finding that names them asks here. */
static inline const char *rp_cpu_aes_name(const struct rp_model *m)
{
	return rp_model_on_arm(m) ? "ARMv8 CE" : "AES-NI";
}
static inline const char *rp_cpu_route_target(const struct rp_model *m)
{
	return rp_model_on_arm(m) ? "cpu" : "aesni";
}

#endif
