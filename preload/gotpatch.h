/* SPDX-License-Identifier: MIT */
/* gotpatch.h - a late library's hooks: the importing modules' GOT slots (gotpatch.c). */
#ifndef CT_GOTPATCH_H
#define CT_GOTPATCH_H

#include <stddef.h>

/* Points every loaded module's import slots of our hooks at them; returns how many, or -1 where
 * this architecture has no implementation. */
long ct_got_patch_all(void);
/* The slots of modules loaded since (the flusher thread asks, while attached); returns how
 * many were patched now (0 when no module was added). */
long ct_got_patch_new(void);
/* Puts back every slot still holding our hook; returns how many. */
size_t ct_got_restore_all(void);
/* The function the slots of name held before the patch (the real one for CT_REAL), or NULL. */
void *ct_got_real(const char *name);

#endif
