/* SPDX-License-Identifier: MIT */
/*
 * findings.c - plain-language diagnoses over the merged model. The table of evaluators below runs
 * each family of findings (one file each in this folder), and each adds zero or more findings
 * {kind, severity, message, evidence, fix}; the helpers here are what several of them share
 * (findings.h). docs/report.md says what each finding means and explains its thresholds.
 */
#include "findings.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *rp_severity_name(enum rp_severity s)
{
	return s == RP_ERROR ? "error" : s == RP_WARNING ? "warning" : "info";
}

struct rp_finding *rp_finding_add(struct rp_model *m, const char *kind, enum rp_severity sev, uint32_t pid)
{
	if (!rp_grow((void **)&m->findings, &m->cap_findings, m->nfindings, sizeof(*m->findings)))
		return NULL;
	struct rp_finding *f = &m->findings[m->nfindings++];
	memset(f, 0, sizeof(*f));
	f->kind = kind;
	f->severity = sev;
	f->pid = pid;
	return f;
}

void rp_finding_note_exe(struct rp_finding *f, const struct rp_proc *p)
{
	if (!f || f->exe_mixed || !p->has_hdr)
		return;
	if (!f->exe.p)
		f->exe = p->hdr.exe;
	else if (!rp_str_eq(f->exe, p->hdr.exe))
		f->exe_mixed = true;
}

void rp_finding_note_pid(const struct rp_model *m, struct rp_finding *f, uint32_t pid)
{
	for (size_t i = 0; i < m->nprocs; i++)
		if (m->procs[i].hdr.pid == pid)
			rp_finding_note_exe(f, &m->procs[i]);
}

void rp_finding_cat(char *buf, size_t cap, const char *fmt, ...)
{
	size_t n = strlen(buf);
	if (n + 1 >= cap)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf + n, cap - n, fmt, ap);
	va_end(ap);
}

/* ---- shared judgements */

bool rp_path_in_process(const struct rp_path *p)
{
	return p->def.api == CT_API_EVP || p->def.api == CT_API_AES || p->def.api == CT_API_GCRYPT;
}

bool rp_path_reached_kernel(const struct rp_path *p)
{
	return rp_path_is_kernel(p) && p->def.route != CT_ROUTE_AESNI;
}

bool rp_path_own_software(const struct rp_path *p)
{
	return rp_path_in_process(p) && !rp_str_starts(p->def.impl, "engine:") &&
	       !(p->def.flags & CT_PATH_ROUTED);
}

bool rp_event_failed(const struct ct_event *e)
{
	if (e->kind == CT_EV_SESSION)
		return e->err != 0 || e->ret < 0;
	return e->err != 0 || e->ret <= 0;
}

bool rp_offload_call_failed(const struct ct_event *e)
{
	return e->kind == CT_EV_CALL_FAILED && !rp_str_starts(e->call, "EVP_") &&
	       !rp_str_starts(e->call, "AES_") && !rp_str_starts(e->call, "gcry_") && !rp_ktls_event(e);
}

/* The launcher measures the bound before the program starts (header); a bare LD_PRELOAD run may
 * measure it in the process at its first AES path (PROC record, preload/calib.c). */
double rp_aesni_bound(const struct rp_proc *p, const char **from)
{
	if (p->has_hdr && p->hdr.aesni_cpb_milli) {
		*from = "measured by cryptrace run on this machine just before the program started";
		return p->hdr.aesni_cpb_milli / 1000.0;
	}
	if (p->has_proc && p->proc.aesni_cpb_milli) {
		*from = "measured inside the traced process after its first AES path (no launcher "
			"passed one in)";
		return p->proc.aesni_cpb_milli / 1000.0;
	}
	*from = "none in this trace: no launcher passed one in, and the process did not measure one "
		"(a seccomp sandbox, no TSC clock, no flush after its first AES path, or an older "
		"trace)";
	return 0;
}

/* ---- the evaluators, in the order the report lists their findings */

typedef void (*rp_evaluator)(struct rp_model *m);

static const rp_evaluator evaluators[] = {
	rp_eval_unfinished_trace,
	rp_eval_nothing_intercepted,
	rp_eval_multiple_libcrypto,
	rp_eval_engine_failed,
	rp_eval_provider_absent,
	rp_eval_silent_fallback,
	rp_eval_ktls,
	rp_eval_session_failed,
	rp_eval_kernel_refused,
	rp_eval_software_aes,
	rp_eval_profile_aes,
	rp_eval_lowlevel_api,
	rp_eval_kernel_software_driver,
	rp_eval_small_requests_offload,
	rp_eval_user_time_misleads,
};

void rp_findings_evaluate(struct rp_model *m)
{
	m->nfindings = 0;
	for (size_t i = 0; i < sizeof(evaluators) / sizeof(evaluators[0]); i++)
		evaluators[i](m);
}
