/* SPDX-License-Identifier: MIT */
/*
 * lane.h - the direct lane: a routed EVP context's calls served by the route's provider without
 * libcrypto's EVP layer in between. In OpenSSL 3 the provider context (ours: struct ct_rctx)
 * holds a cipher's whole state, and for a context already set up EVP's init, update, final,
 * EVP_Cipher and a few ctrls only pass the call on, at the price of parameter arrays, accessor
 * queries and lookups (about half of a short GCM message's cost under OpenSSL 3.0). The hooks call these
 * functions instead, in exactly the cases where the EVP function would only pass the call on;
 * in every other case they answer CT_LANE_PASS and the hook runs the real function. The state
 * stays in the provider context, so a call that takes the real road meets the same state.
 *
 * Which provider context belongs to an EVP context is learnt from a real init: the provider's
 * init functions note the context they were given (ct_lane_seen), and the hook reads it back
 * (ct_lane_capture_begin/end) around the real call. docs/routes.md, "The direct lane".
 */
#ifndef CT_ROUTE_LANE_H
#define CT_ROUTE_LANE_H

#include <stdbool.h>

#pragma GCC visibility push(hidden)

/* The real function must run: the case is one where EVP does more than pass the call on. */
#define CT_LANE_PASS (-2)

/* Set once our provider initialised a context, unless CRYPTRACE_ROUTE_DIRECT=0: until then no
 * EVP context can have a lane, and the hooks skip the lane's bookkeeping (a trace without a
 * route, or with the lane off, pays nothing for it). */
extern bool ct_lane_any;
static inline bool ct_lane_possible(void)
{
	return __atomic_load_n(&ct_lane_any, __ATOMIC_RELAXED);
}

/* Around a real EVP call on one context: the provider context our provider's init saw during
 * it, or NULL (the call did not reach our provider's init: another provider, or an error). */
void ct_lane_capture_begin(void);
void *ct_lane_capture_end(void);
/* Called by the provider's init functions with their context. */
void ct_lane_seen(void *rctx);

/* The provider's private context parameter that answers the provider context itself (an
 * OSSL_PARAM_OCTET_PTR whose data receives it): how the hooks find a routed EVP context's
 * provider context again when its lane was lost (any provider context freed voids every lane)
 * and no init comes to learn it (a TLS 1.2 or SSH context is initialised once). */
#define CT_LANE_PARAM_RCTX "cryptrace-rctx"

/* EVP_*Init* on a context already set up (no cipher, engine or parameters): enc as EVP takes it
 * (1, 0, or -1 for the current direction). */
int ct_lane_init(void *rctx, const unsigned char *key, const unsigned char *iv, int enc);
/* EVP_{Encrypt,Decrypt,Cipher}Update: dir 1 encrypt, 0 decrypt, -1 the context's. */
int ct_lane_update(void *rctx, int dir, unsigned char *out, int *outl, const unsigned char *in, int inl);
/* EVP_{Encrypt,Decrypt,Cipher}Final[_ex]. */
int ct_lane_final(void *rctx, int dir, unsigned char *out, int *outl);
/* EVP_Cipher (any input, none included): its return value, or CT_LANE_PASS. */
int ct_lane_cipher(void *rctx, unsigned char *out, const unsigned char *in, unsigned int inl);
/* EVP_CIPHER_CTX_ctrl: GCM's AEAD_GET_TAG, AEAD_SET_TAG, GCM_IV_GEN and AEAD_TLS1_AAD, and an
 * AEAD_SET_IVLEN that keeps the length. */
int ct_lane_ctrl(void *rctx, int type, int arg, void *ptr);
/* The ctrl types ct_lane_ctrl may serve (a cheap test before looking the context up). */
int ct_lane_ctrl_type(int type);

#pragma GCC visibility pop

#endif
