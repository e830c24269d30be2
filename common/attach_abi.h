/* SPDX-License-Identifier: MIT */
/*
 * attach_abi.h - what `cryptrace attach` (tracer/cmd_attach.c) and the library it loads into a
 * running process (preload/attach.c) agree on: the names of the functions it calls there, the
 * configuration string it passes, the state word it reads, and the figures it writes back.
 */
#ifndef CT_ATTACH_ABI_H
#define CT_ATTACH_ABI_H

#include <stdint.h>

/* int64_t cryptrace_attach_begin(const char *config): config is "key=value" lines (out=DIR,
 * mode=stats|calls, flush_ms=N, tsc_hz=N: the machine's TSC rate, 0 unknown); returns the address of a struct ct_attach_figures for the
 * tracer to fill once the process runs again, or a negative errno (CT_ATTACH_E*). */
#define CT_ATTACH_BEGIN_SYM "cryptrace_attach_begin"
/* int64_t cryptrace_attach_end(void): every patched slot put back, the trace flushed and ended;
 * returns the number of slots put back, or a negative errno. */
#define CT_ATTACH_END_SYM "cryptrace_attach_end"
/* uint32_t cryptrace_attach_state: CT_ATTACH_STATE_* */
#define CT_ATTACH_STATE_SYM "cryptrace_attach_state"

enum ct_attach_state {
	CT_ATTACH_STATE_PRELOADED = 0, /* loaded at start (LD_PRELOAD): tracing by itself */
	CT_ATTACH_STATE_ATTACHED = 1,  /* loaded late, hooks in place */
	CT_ATTACH_STATE_DETACHED = 2,  /* loaded late, inert: a new attach may begin */
};

/* Written by the tracer after the process runs again: how long the attach stopped it. */
struct ct_attach_figures {
	uint64_t pause_ns; /* first thread stopped to last thread resumed, CLOCK_MONOTONIC */
	uint32_t threads;  /* threads stopped */
	uint32_t slots;    /* import slots redirected to the hooks */
};

#endif
