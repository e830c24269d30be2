/* SPDX-License-Identifier: MIT */
/*
 * evp_lane.c - which provider context serves a routed EVP context, per thread, for the direct
 * lane (route/lane.h): the last few contexts this thread initialised through our provider.
 * An entry is valid while the ctxmap's generation is the one it was learnt under: every change
 * of a context's path, every context freed or reset and every provider context freed bumps it
 * (ct_route_ctx_freed), so an entry never outlives the provider context it names. A context that
 * changes threads is learnt again at its next init on the new thread.
 */
#include "evp_internal.h"
#include "lane.h"

#define LANE_SLOTS (sizeof(((struct ct_thread *)0)->lane) / sizeof(((struct ct_thread *)0)->lane[0]))

void *ct_evp_lane_at(struct ct_thread *t, const EVP_CIPHER_CTX *ctx, uint32_t gen)
{
	for (unsigned i = 0; i < LANE_SLOTS; i++) {
		if (t->lane[i].ctx == ctx)
			return t->lane[i].gen == gen ? t->lane[i].rctx : NULL;
	}
	return NULL;
}

void *ct_evp_lane(struct ct_thread *t, const EVP_CIPHER_CTX *ctx)
{
	return ct_evp_lane_at(t, ctx, atomic_load_explicit(&ct_ctxmap_gen, memory_order_relaxed));
}

void ct_evp_lane_learn(struct ct_thread *t, const EVP_CIPHER_CTX *ctx, void *rctx)
{
	unsigned slot = LANE_SLOTS;
	for (unsigned i = 0; i < LANE_SLOTS; i++) {
		if (t->lane[i].ctx == ctx)
			slot = i;
	}
	const uint32_t gen = atomic_load_explicit(&ct_ctxmap_gen, memory_order_relaxed);
	/* the data calls' cached context (evp_data.c) takes the lane now, not at its next refill:
	 * its generation may be the one this ctx's first data call moved on to */
	if (t->hot_ctx == ctx)
		t->hot_lane = t->hot_gen == gen ? rctx : NULL;
	if (!rctx) {
		if (slot < LANE_SLOTS)
			t->lane[slot].ctx = NULL;
		return;
	}
	if (slot == LANE_SLOTS)
		slot = t->lane_next++ % LANE_SLOTS;
	t->lane[slot].ctx = ctx;
	t->lane[slot].rctx = rctx;
	t->lane[slot].gen = gen;
}
