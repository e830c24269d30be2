/* SPDX-License-Identifier: MIT */
/*
 * emul_route.c - whether CRYPTRACE_ROUTE sends a kernel interface's cipher to aesni. The kernel
 * interfaces learn the cipher at session set-up (bind, CIOCGSESSION), before any request size or
 * (for AF_ALG) key size is known, so the decision is made there, once per session: a rule applies
 * when it says aesni for either direction, and a size condition is read as "at some size".
 */
#include <stdio.h>

#include "core.h"
#include "emul.h"
#include "route.h"

void ct_emul_cipher_name(enum ct_emul_mode m, uint32_t keylen, char *buf, size_t cap)
{
	uint32_t bits = keylen * 8;

	if (m == CT_EM_XTS)
		bits /= 2;
	if (!bits)
		bits = 128;
	snprintf(buf, cap, "aes-%u-%s", bits, ct_emul_mode_name(m));
}

bool ct_emul_routed(const char *cipher)
{
	const struct ct_route_table *t = ct_route_active();

	if (!t)
		return false;
	return ct_route_lookup(t, cipher, CT_DIR_UNKNOWN, CT_ROUTE_SIZE_UNKNOWN) == CT_ROUTE_AESNI ||
	       ct_route_lookup(t, cipher, CT_DIR_ENCRYPT, CT_ROUTE_SIZE_UNKNOWN) == CT_ROUTE_AESNI ||
	       ct_route_lookup(t, cipher, CT_DIR_DECRYPT, CT_ROUTE_SIZE_UNKNOWN) == CT_ROUTE_AESNI;
}

bool ct_emul_mode_routed(enum ct_emul_mode m, uint32_t keylen)
{
	char name[32];

	if (m == CT_EM_NONE)
		return false;
	ct_emul_cipher_name(m, keylen, name, sizeof(name));
	return ct_emul_routed(name);
}

__thread int ct_emul_bypass __attribute__((tls_model("initial-exec")));

bool ct_emul_enabled(void)
{
	static _Atomic int state; /* 0 unknown, 1 yes, 2 no */
	int s = atomic_load_explicit(&state, memory_order_relaxed);

	if (CT_UNLIKELY(ct_emul_bypass))
		return false;
	if (CT_LIKELY(s))
		return s == 1;
	/* Attached late (docs/attach.md): an emulated descriptor or session would outlive the
	 * detach, and the kernel would then get requests for sessions it never made. */
	if (ct_attach_late()) {
		atomic_store_explicit(&state, 2, memory_order_relaxed);
		return false;
	}
	const struct ct_route_table *t = ct_route_active();
	bool wanted = false;
	for (unsigned i = 0; t && i < t->count; i++)
		wanted |= t->rules[i].target == CT_ROUTE_AESNI;
	bool ok = wanted && ct_aesni_available();
	if (wanted && !ok) {
		struct ct_thread *th = ct_thread_get();
		if (th && ct_enter(th, CT_FAM_KERNEL)) {
			ct_event(CT_EV_FALLBACK, "route", ENOSYS, -1, CT_NO_PATH, false,
				 "route=" CT_AESNI_TARGET " api=cryptodev,afalg reason=no " CT_AESNI_NEEDS
				 " on this CPU: kernel "
				 "interfaces are left to the kernel");
			ct_leave(th, CT_FAM_KERNEL);
		}
	}
	atomic_store_explicit(&state, ok ? 1 : 2, memory_order_relaxed);
	return ok;
}
