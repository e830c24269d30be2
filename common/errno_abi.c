/* SPDX-License-Identifier: MIT */
/*
 * errno_abi.c - errno numberings: this build's own, a trace's by its header label, and the same
 * error's number in another numbering (by name, through the generated tables).
 */
#include <string.h>

#include "errno_abi.h"

static const char *const labels[] = {
	[CT_ERRNO_ABI_GENERIC] = "generic", [CT_ERRNO_ABI_MIPS] = "mips",     [CT_ERRNO_ABI_ALPHA] = "alpha",
	[CT_ERRNO_ABI_SPARC] = "sparc",     [CT_ERRNO_ABI_PARISC] = "parisc", [CT_ERRNO_ABI_UNKNOWN] = "",
};

enum ct_errno_abi ct_errno_abi_own(void)
{
#if defined(__mips__)
	return CT_ERRNO_ABI_MIPS;
#elif defined(__alpha__)
	return CT_ERRNO_ABI_ALPHA;
#elif defined(__sparc__)
	return CT_ERRNO_ABI_SPARC;
#elif defined(__hppa__)
	return CT_ERRNO_ABI_PARISC;
#else
	return CT_ERRNO_ABI_GENERIC;
#endif
}

const char *ct_errno_abi_label(enum ct_errno_abi abi)
{
	return (unsigned)abi <= CT_ERRNO_ABI_UNKNOWN ? labels[abi] : "";
}

enum ct_errno_abi ct_errno_abi_parse(struct ct_str label)
{
	if (!label.len)
		return CT_ERRNO_ABI_GENERIC;
	for (unsigned i = 0; i < CT_ERRNO_ABI_UNKNOWN; i++)
		if (strlen(labels[i]) == label.len && !memcmp(labels[i], label.p, label.len))
			return (enum ct_errno_abi)i;
	return CT_ERRNO_ABI_UNKNOWN;
}

/* A numbering's own names, which follow errno-base.h's (1-34, the same everywhere). */
static const struct ct_errno_entry *table(enum ct_errno_abi abi, size_t *n)
{
	switch (abi) {
	case CT_ERRNO_ABI_GENERIC:
		*n = ct_errno_generic_count;
		return ct_errno_generic;
	case CT_ERRNO_ABI_MIPS:
		*n = ct_errno_mips_count;
		return ct_errno_mips;
	default:
		*n = 0;
		return NULL;
	}
}

/* The first entry of a numbering with that value (name NULL) or that name (value 0). */
static const struct ct_errno_entry *lookup(enum ct_errno_abi abi, int value, const char *name)
{
	size_t n;
	const struct ct_errno_entry *own = table(abi, &n);
	const struct {
		const struct ct_errno_entry *t;
		size_t n;
	} parts[2] = {
		{ own ? ct_errno_base : NULL, own ? ct_errno_base_count : 0 },
		{ own, n },
	};
	for (unsigned k = 0; k < 2; k++)
		for (size_t i = 0; i < parts[k].n; i++)
			if (name ? !strcmp(parts[k].t[i].name, name) : parts[k].t[i].value == value)
				return &parts[k].t[i];
	return NULL;
}

bool ct_errno_abi_has_table(enum ct_errno_abi abi)
{
	size_t n;
	return table(abi, &n) != NULL;
}

const char *ct_errno_abi_name(enum ct_errno_abi abi, int err)
{
	const struct ct_errno_entry *e = err ? lookup(abi, err, NULL) : NULL;
	return e ? e->name : NULL;
}

int ct_errno_abi_value(enum ct_errno_abi abi, const char *name)
{
	const struct ct_errno_entry *e = lookup(abi, 0, name);
	return e ? e->value : 0;
}

int ct_errno_to_own(enum ct_errno_abi abi, int err)
{
	enum ct_errno_abi own = ct_errno_abi_own();
	if (abi == own && abi != CT_ERRNO_ABI_UNKNOWN)
		return err;
	const char *name = ct_errno_abi_name(abi, err);
	return name ? ct_errno_abi_value(own, name) : 0;
}
