/* SPDX-License-Identifier: MIT */
/*
 * evp_internal.h - what evp.c (contexts: inits, finals, ctrls, life cycle) takes from
 * evp_data.c (the data calls and the thread's one-entry context cache).
 */
#ifndef CT_EVP_INTERNAL_H
#define CT_EVP_INTERNAL_H

#include <openssl/evp.h>

#include "internal.h"

#pragma GCC visibility push(hidden)

/* ctx's path, through the data calls' one-entry cache (else the ctxmap): CT_NO_PATH for a ctx
 * we never saw initialised. */
uint32_t ct_evp_ctx_path(struct ct_thread *t, const EVP_CIPHER_CTX *ctx);

/* The counters of ctx's path on this thread (through the data calls' one-entry cache), and the
 * path; NULL for a ctx we never saw initialised. */
struct ct_counters *ct_evp_ctx_counters(struct ct_thread *t, const EVP_CIPHER_CTX *ctx, uint32_t *path);

/* The direct lane (route/lane.h, hooks/evp_lane.c): ctx's provider context when this thread
 * learnt it and no provider context was freed since (ct_lane_gen), else NULL.
 * ct_evp_lane_learn records what a real call on ctx captured (NULL: forget ctx). */
void *ct_evp_lane(struct ct_thread *t, const EVP_CIPHER_CTX *ctx);
void ct_evp_lane_learn(struct ct_thread *t, const EVP_CIPHER_CTX *ctx, void *rctx);
/* ctx's provider context asked of the provider itself (ctx routed to it, its lane lost), learnt
 * and returned; NULL when ctx's cipher is not our provider's. */
void *ct_evp_lane_relearn(struct ct_thread *t, EVP_CIPHER_CTX *ctx);

/* libcrypto's own test of a context's direction (EVP_CIPHER_CTX_is_encrypting; before 3.0
 * EVP_CIPHER_CTX_encrypting), resolved once; NULL where neither is found. The traced Cipher
 * functions run the Encrypt or Decrypt function themselves with it, as libcrypto's would
 * (evp_data.c). */
typedef int (*ct_direction_fn)(const EVP_CIPHER_CTX *);
ct_direction_fn ct_evp_direction_fn(void);

/* Whether ctx is the thread's cached context (the data calls' one-entry cache: t->hot_*), and
 * the cache still valid. */
static inline bool ct_evp_hot_ctx_is(const struct ct_thread *t, const EVP_CIPHER_CTX *ctx)
{
	return ctx == t->hot_ctx && t->hot_gen == atomic_load_explicit(&ct_ctxmap_gen, memory_order_relaxed);
}

/* ctx's direct lane (route/lane.h): the cached one for the cached context, else the thread's
 * lane slots; NULL when ctx has none. */
static inline void *ct_evp_ctx_lane(struct ct_thread *t, const EVP_CIPHER_CTX *ctx)
{
	return ct_evp_hot_ctx_is(t, ctx) ? t->hot_lane : ct_evp_lane(t, ctx);
}

void ct_evp_phase_slow(struct ct_thread *t, const EVP_CIPHER_CTX *ctx, enum ct_phase phase, uint64_t bytes,
		       struct ct_timed *tm);

/* A phase call on ctx (enum ct_phase): counted on ctx's path before the real call runs, and *tm
 * begun when the call is timed (a sample, or the end of a span); follow the real call with
 * ct_timed_end(t, tm), which does nothing when it was not.
 * Inline, the common case: ctx is the cached context and the call needs no timing (timing.h's
 * ct_tick_quiet on the cached counters): a message's init, ctrl and final between two samples
 * cost a count each. Anything else, ct_evp_phase_slow. */
static inline void ct_evp_phase_begin(struct ct_thread *t, const EVP_CIPHER_CTX *ctx, enum ct_phase phase,
				      uint64_t bytes, struct ct_timed *tm)
{
	tm->what = 0;
	if (CT_LIKELY(ct_evp_hot_ctx_is(t, ctx) && ct_tick_quiet(t, t->hot_c, CT_CELL_PHASE(phase), bytes)))
		return;
	ct_evp_phase_slow(t, ctx, phase, bytes, tm);
}

/* `cryptrace attach`: the path of a ctx initialised before the attach (its init never came
 * through us), classified at its first use as its init would have been; CT_NO_PATH when it has
 * no cipher (never initialised). */
uint32_t ct_evp_classify_unseen(EVP_CIPHER_CTX *ctx);

#pragma GCC visibility pop

#endif
