/* SPDX-License-Identifier: MIT */
/*
 * kpath.c - kernel paths: interned with whether an EVP engine drives them, and their call sites.
 * Sessions come and go (one per EVP context with OpenSSL's afalg engine) but map to few paths:
 * walk the stack only for the first session of each path.
 */
#include <stdatomic.h>

#include "core.h"
#include "khooks.h"

void ct_kernel_path_callsite(uint32_t path_id)
{
	static _Atomic uint64_t done[65536 / 64];
	char site[1024];

	if (path_id >= 65536)
		return;
	uint64_t bit = 1ull << (path_id % 64);
	if (atomic_fetch_or(&done[path_id / 64], bit) & bit)
		return;
	ct_path_set_callsite(path_id, ct_callsite(site, sizeof(site), 0));
}

uint32_t ct_kernel_path_intern(struct ct_thread *t, struct ct_path_key *key)
{
	/* Inside an EVP call, an engine (OpenSSL's afalg, devcrypto) is driving the kernel interface
	 * for libcrypto: the path is marked nested. */
	if (ct_enter(t, CT_FAM_EVP))
		ct_leave(t, CT_FAM_EVP);
	else
		key->flags |= CT_PATH_NESTED;
	uint32_t id = ct_path_intern(key);
	if (id != CT_NO_PATH)
		ct_kernel_path_callsite(id);
	return id;
}
