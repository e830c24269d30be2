/* SPDX-License-Identifier: MIT */
/*
 * lane_shim.h - with CT_ROUTE_LANE=1, the test's EVP calls take the direct lane (route/lane.h)
 * exactly where the preload's hooks would (hooks/evp.c, evp_data.c, evp_lane.c): a routed
 * context's re-init, update, final, EVP_Cipher and lane ctrls go to the provider straight once a
 * real init showed which provider context is its, and any provider context freed forgets them
 * all (the hooks' ct_lane_gen). Contexts of other providers are never learnt, so they take EVP.
 * Included after the OpenSSL headers; it renames the entry points it wraps.
 */
#ifndef CT_ROUTE_LANE_SHIM_H
#define CT_ROUTE_LANE_SHIM_H

#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/evp.h>

#include "lane.h"

static struct {
	bool on;
	struct {
		const EVP_CIPHER_CTX *ctx;
		void *rctx;
	} slot[8];
	unsigned next;
	unsigned long served; /* calls the lane answered: the test asserts it was used */
} shim;

static void shim_forget_all(void)
{
	memset(shim.slot, 0, sizeof(shim.slot));
}

static void *shim_lane(const EVP_CIPHER_CTX *ctx)
{
	for (unsigned i = 0; shim.on && i < sizeof(shim.slot) / sizeof(shim.slot[0]); i++)
		if (shim.slot[i].ctx == ctx)
			return shim.slot[i].rctx;
	return NULL;
}

static void shim_learn(const EVP_CIPHER_CTX *ctx, void *rctx)
{
	const unsigned n = sizeof(shim.slot) / sizeof(shim.slot[0]);
	for (unsigned i = 0; i < n; i++)
		if (shim.slot[i].ctx == ctx)
			shim.slot[i].ctx = NULL;
	if (!rctx || !shim.on)
		return;
	unsigned i = shim.next++ % n;
	shim.slot[i].ctx = ctx;
	shim.slot[i].rctx = rctx;
}

static int shim_served(int r)
{
	if (r != CT_LANE_PASS)
		shim.served++;
	return r;
}

static int shim_CipherInit_ex(EVP_CIPHER_CTX *ctx, const EVP_CIPHER *cipher, ENGINE *impl,
			      const unsigned char *key, const unsigned char *iv, int enc)
{
	void *lane = !cipher && !impl ? shim_lane(ctx) : NULL;
	int r = lane ? shim_served(ct_lane_init(lane, key, iv, enc)) : CT_LANE_PASS;
	if (r == CT_LANE_PASS) {
		ct_lane_capture_begin();
		r = EVP_CipherInit_ex(ctx, cipher, impl, key, iv, enc);
		void *seen = ct_lane_capture_end();
		shim_learn(ctx, r == 1 ? seen : NULL);
	}
	return r;
}

static int shim_CipherInit(EVP_CIPHER_CTX *ctx, const EVP_CIPHER *cipher, const unsigned char *key,
			   const unsigned char *iv, int enc)
{
	void *lane = !cipher ? shim_lane(ctx) : NULL;
	int r = lane ? shim_served(ct_lane_init(lane, key, iv, enc)) : CT_LANE_PASS;
	if (r == CT_LANE_PASS) {
		ct_lane_capture_begin();
		r = EVP_CipherInit(ctx, cipher, key, iv, enc);
		void *seen = ct_lane_capture_end();
		shim_learn(ctx, r == 1 ? seen : NULL);
	}
	return r;
}

static int shim_CipherUpdate(EVP_CIPHER_CTX *ctx, unsigned char *out, int *outl, const unsigned char *in,
			     int inl)
{
	void *lane = shim_lane(ctx);
	int r = lane ? shim_served(ct_lane_update(lane, -1, out, outl, in, inl)) : CT_LANE_PASS;
	return r == CT_LANE_PASS ? EVP_CipherUpdate(ctx, out, outl, in, inl) : r;
}

static int shim_CipherFinal_ex(EVP_CIPHER_CTX *ctx, unsigned char *out, int *outl)
{
	void *lane = shim_lane(ctx);
	int r = lane ? shim_served(ct_lane_final(lane, -1, out, outl)) : CT_LANE_PASS;
	return r == CT_LANE_PASS ? EVP_CipherFinal_ex(ctx, out, outl) : r;
}

static int shim_Cipher(EVP_CIPHER_CTX *ctx, unsigned char *out, const unsigned char *in, unsigned int inl)
{
	void *lane = shim_lane(ctx);
	int r = lane ? shim_served(ct_lane_cipher(lane, out, in, inl)) : CT_LANE_PASS;
	return r == CT_LANE_PASS ? EVP_Cipher(ctx, out, in, inl) : r;
}

static int shim_CIPHER_CTX_ctrl(EVP_CIPHER_CTX *ctx, int type, int arg, void *ptr)
{
	void *lane = ct_lane_ctrl_type(type) ? shim_lane(ctx) : NULL;
	int r = lane ? shim_served(ct_lane_ctrl(lane, type, arg, ptr)) : CT_LANE_PASS;
	return r == CT_LANE_PASS ? EVP_CIPHER_CTX_ctrl(ctx, type, arg, ptr) : r;
}

/* Called by core_stub.c's ct_route_ctx_freed. */
static void shim_on_ctx_freed(void)
{
	shim_forget_all();
}

static void shim_setup(void)
{
	const char *e = getenv("CT_ROUTE_LANE");
	shim.on = e && !strcmp(e, "1");
	ct_stub_on_ctx_freed = shim_on_ctx_freed;
}

#define EVP_CipherInit_ex shim_CipherInit_ex
#define EVP_CipherInit shim_CipherInit
#define EVP_CipherUpdate shim_CipherUpdate
#define EVP_CipherFinal_ex shim_CipherFinal_ex
#define EVP_Cipher shim_Cipher
#define EVP_CIPHER_CTX_ctrl shim_CIPHER_CTX_ctrl

#endif
