/* SPDX-License-Identifier: MIT */
/*
 * classify.c - an EVP context's path from the facts gathered at init (classify.h). What serves
 * the work, in this order: an engine named at init; cryptrace's AES-NI provider or a kernel
 * route (a rerouted context); the provider that supplied the cipher; with no provider (OpenSSL
 * 1.1, BoringSSL), the engine registered as the cipher's default, else libcrypto's built-in code
 * (named, when the hooks could tell: BoringSSL's AES-NI, vpaes or C code).
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "aesni.h"
#include "classify.h"
#include "route.h"

static void lower_copy(char *dst, size_t cap, const char *src)
{
	size_t i = 0;
	for (; src && src[i] && i + 1 < cap; i++)
		dst[i] = (char)tolower((unsigned char)src[i]);
	dst[i] = 0;
}

void ct_evp_classify(const struct ct_evp_facts *f, struct ct_evp_class *out)
{
	uint8_t route = CT_ROUTE_NONE;
	if (f->has_engine) {
		snprintf(out->impl, sizeof(out->impl), "engine:%s", f->engine_id ? f->engine_id : "?");
	} else if (f->has_provider && f->route_aesni) {
		snprintf(out->impl, sizeof(out->impl), "%s", CT_ROUTE_IMPL_AESNI);
		route = CT_ROUTE_AESNI;
	} else if (f->has_provider && f->kernel_route != CT_ROUTE_NONE) {
		snprintf(out->impl, sizeof(out->impl), "%s", f->kernel_impl ? f->kernel_impl : "route:?");
		route = f->kernel_route;
	} else if (f->has_provider) {
		snprintf(out->impl, sizeof(out->impl), "provider:%s",
			 f->provider_name ? f->provider_name : "?");
	} else if (f->default_engine) {
		snprintf(out->impl, sizeof(out->impl), "engine:%s", f->default_engine);
	} else {
		snprintf(out->impl, sizeof(out->impl), "%s", f->builtin_impl ? f->builtin_impl : "builtin");
	}
	lower_copy(out->cipher, sizeof(out->cipher), f->cipher_name ? f->cipher_name : "unknown");
	/* an engine was asked for, but something else serves this context */
	bool req = f->requested_engine && f->requested_engine[0] && strncmp(out->impl, "engine:", 7) != 0;
	if (req)
		snprintf(out->requested, sizeof(out->requested), "engine:%.56s", f->requested_engine);
	else
		out->requested[0] = 0;
	out->key = (struct ct_path_key){
		.api = CT_API_EVP,
		.dir = f->dir,
		.entry = CT_ENTRY_UNKNOWN,
		.route = route,
		.flags = route != CT_ROUTE_NONE ? CT_PATH_ROUTED : 0,
		.key_bits = (uint16_t)(f->key_len > 0 ? f->key_len * 8 : 0),
		.impl = out->impl,
		.cipher = out->cipher,
		.requested = req ? out->requested : NULL,
	};
}
