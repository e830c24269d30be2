/* SPDX-License-Identifier: MIT */
/*
 * evp_lane.c - which provider context serves a routed EVP context, per thread, for the direct
 * lane (route/lane.h): the contexts this thread initialised through our provider, in a small
 * direct-mapped table. An entry is valid while ct_lane_gen is the one it was learnt under: every
 * provider context freed bumps it (ct_route_ctx_freed), so an entry never outlives the provider
 * context it names, and a real init that reaches the provider learns the context again, or, for a
 * context no init comes to (TLS 1.2, SSH: set up once), ct_evp_lane_relearn asks our provider for
 * it (a private context parameter, lane.h) when the data calls' cache takes the context. A path
 * change (a data call's entry, a direction) leaves it valid: the EVP context keeps its provider
 * context. A context that changes threads is learnt again at its next init on the new thread.
 */
#include "core.h"
#include "evp_internal.h"
#include "lane.h"

#define LANE_SLOTS (sizeof(((struct ct_thread *)0)->lane) / sizeof(((struct ct_thread *)0)->lane[0]))

/* Direct-mapped: one compare to find a context; a program's own contexts rarely share one of
 * the 16 slots, and libcrypto's DRBG contexts (re-keyed through the same inits) rarely take
 * theirs. */
static unsigned lane_slot(const EVP_CIPHER_CTX *ctx)
{
	/* Fibonacci hashing: contexts a few hundred bytes apart (malloc's neighbours) spread */
	return (unsigned)((((uint64_t)(uintptr_t)ctx >> 4) * 0x9E3779B97F4A7C15ull) >> 60) % LANE_SLOTS;
}

void *ct_evp_lane(struct ct_thread *t, const EVP_CIPHER_CTX *ctx)
{
	const unsigned i = lane_slot(ctx);
	if (t->lane[i].ctx != ctx ||
	    t->lane[i].gen != atomic_load_explicit(&ct_lane_gen, memory_order_relaxed))
		return NULL;
	return t->lane[i].rctx;
}

void ct_evp_lane_learn(struct ct_thread *t, const EVP_CIPHER_CTX *ctx, void *rctx)
{
	const unsigned i = lane_slot(ctx);
	/* the data calls' cached context (evp_data.c) takes the lane now, not at its next refill */
	if (ct_evp_hot_ctx_is(t, ctx))
		t->hot_lane = rctx;
	if (!rctx) {
		if (t->lane[i].ctx == ctx)
			t->lane[i].ctx = NULL;
		return;
	}
	t->lane[i].ctx = ctx;
	t->lane[i].rctx = rctx;
	t->lane[i].gen = atomic_load_explicit(&ct_lane_gen, memory_order_relaxed);
}

void *ct_evp_lane_relearn(struct ct_thread *t, EVP_CIPHER_CTX *ctx)
{
	__typeof__(&EVP_CIPHER_CTX_get_params) get = CT_REAL(EVP_CIPHER_CTX_get_params);
	if (!get)
		return NULL;
	void *rctx = NULL;
	OSSL_PARAM params[2] = { { CT_LANE_PARAM_RCTX, OSSL_PARAM_OCTET_PTR, &rctx, sizeof(rctx), 0 },
				 { NULL, 0, NULL, 0, 0 } };
	const uint32_t guard = ct_guard_all(t);
	const int ok = get(ctx, params);
	ct_guard_restore(t, guard);
	if (ok != 1 || !rctx)
		return NULL;
	ct_evp_lane_learn(t, ctx, rctx);
	return rctx;
}
