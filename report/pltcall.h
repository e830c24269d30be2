/* SPDX-License-Identifier: MIT */
/*
 * pltcall.h - the imported function a caller frame called, by the call before its return address
 * (pltcall.c): x86-64 `call rel32` to a PLT entry, or `call *disp32(%rip)` to a GOT slot.
 */
#ifndef CT_REPORT_PLTCALL_H
#define CT_REPORT_PLTCALL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "codefile.h"

/* *name: the function the call ending at ret (a vaddr in e) goes to through the PLT or GOT;
 * false when that call is no such call. */
bool rp_plt_callee(const struct rp_codefile *e, uint64_t ret, char *name, size_t cap);

#endif
