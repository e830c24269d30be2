/* SPDX-License-Identifier: MIT */
/*
 * errno_name.c - errno values as their symbolic names ("EAFNOSUPPORT"), for event details and
 * the examples' messages; an unknown value prints as a number.
 */
#include <stdio.h>
#include <string.h>

#include "kernel_decode.h"

const char *ct_errno_name(int err, char *buf, size_t cap)
{
	const char *name = err ? strerrorname_np(err) : NULL;

	if (name)
		return name;
	if (cap)
		snprintf(buf, cap, "%d", err);
	return buf;
}
