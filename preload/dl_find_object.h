/* SPDX-License-Identifier: MIT */
/* dl_find_object.h - the unwinder's object lookup where the C library has none (dl_find_object.c). */
#ifndef CT_DL_FIND_OBJECT_H
#define CT_DL_FIND_OBJECT_H

#include <stdbool.h>

/* This library's own frames can be unwound (it was linked with its .eh_frame_hdr). */
bool ct_unwind_self_ok(void);

#endif
