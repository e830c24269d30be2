/* SPDX-License-Identifier: MIT */
/*
 * mapped.h - every shared object the process mapped, for the trace (see mapped.c).
 */
#ifndef CT_PRELOAD_MAPPED_H
#define CT_PRELOAD_MAPPED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Encodes MODULE records (CT_MODULE_MAPPED) for the mapped objects this trace file does not
 * name yet into buf; returns the bytes used, 0 when there is nothing (more) to write. Call again
 * after writing buf out until it returns 0; all: a new trace file, name every object again.
 * Writer only (under its flush lock). */
size_t ct_mapped_encode(uint8_t *buf, size_t cap, bool all);

#endif
