/* SPDX-License-Identifier: MIT */
/*
 * aes_gcm.c - GCM (NIST SP 800-38D) with CRYPTO_gcm128's streaming semantics: AAD in any number
 * of calls before the data, data in any chunk sizes, partial blocks folded into the GHASH state
 * byte by byte, IVs of any length. Whole blocks go to the dispatched CTR and GHASH kernels.
 */
#include <stddef.h>
#include <string.h>

#include "aes_internal.h"

/* Bulk data is handled in L1-sized pieces: CTR over a piece, then GHASH over the same bytes
 * while they are still in cache. */
#define GCM_PIECE_BLOCKS 128

static const uint8_t zero_block[16];

static void store_be64(uint8_t *p, uint64_t v)
{
	v = __builtin_bswap64(v);
	memcpy(p, &v, 8);
}

/* One block's work (E(J0), a partial block's keystream, x * H) goes to the base level directly:
 * every wider table hands a single block down to it anyway, one indirect call per level. */
static void gmult(struct ct_aes_gcm *g)
{
	ct_aes_base_kernels.ghash((const uint8_t(*)[16])g->hpow, g->xi, zero_block, 1);
}

static void encrypt_counter(struct ct_aes_gcm *g, uint8_t out[16])
{
	ct_aes_base_kernels.ecb_enc(&g->key, g->ctr, out, 1);
}

int ct_aes_gcm_init(struct ct_aes_gcm *g, const uint8_t *key, unsigned bits)
{
	uint8_t h[16];

	memset(g, 0, sizeof(*g));
	if (ct_aes_set_key(&g->key, key, bits) != 0)
		return -1;
	ct_aes_encrypt_block(&g->key, zero_block, h);
	ct_ghash_init_base(g->hpow, h);
	explicit_bzero(h, sizeof(h));
	return 0;
}

void ct_aes_gcm_reset(struct ct_aes_gcm *g)
{
	memset(g->ek0, 0, sizeof(*g) - offsetof(struct ct_aes_gcm, ek0));
}

/* Whole blocks, xi absorbing the ciphertext: the level's stitched kernel (CTR and GHASH in one
 * pass) for whole batches where it has one, else CTR then GHASH over L1-sized pieces while the
 * bytes are still in cache (decryption hashes first: in-place input is overwritten). inc32 of
 * SP 800-38D: only the low 32 bits count, so the kernels (64-bit adds) are called in runs that
 * end at a 32-bit wrap, and the bits above are put back afterwards. */
static void gcm_blocks(const struct ct_aes_kernels *kt, struct ct_aes_gcm *g, const uint8_t *in, uint8_t *out,
		       size_t nblocks, bool enc)
{
	const uint8_t(*hpow)[16] = (const uint8_t(*)[16])g->hpow;
	while (nblocks) {
		uint32_t lo32, upper;
		memcpy(&lo32, g->ctr + 12, 4);
		memcpy(&upper, g->ctr + 8, 4);
		const uint64_t room = (1ull << 32) - __builtin_bswap32(lo32);
		const size_t run = room < nblocks ? (size_t)room : nblocks;
		size_t (*const stitched)(const struct ct_aes_key *, uint8_t *, const uint8_t(*)[16],
					 uint8_t *, const uint8_t *, uint8_t *, size_t) = enc ? kt->gcm_enc
											      : kt->gcm_dec;
		size_t done = stitched && run >= 16 ? stitched(&g->key, g->ctr, hpow, g->xi, in, out, run)
						    : 0;
		while (done < run) {
			const size_t left = run - done,
				     piece = left < GCM_PIECE_BLOCKS ? left : GCM_PIECE_BLOCKS;
			const struct ct_aes_kernels *pk = ct_aes_kernels_for(piece);
			if (!enc)
				pk->ghash(hpow, g->xi, in + 16 * done, piece);
			pk->ctr(&g->key, g->ctr, in + 16 * done, out + 16 * done, piece);
			if (enc)
				pk->ghash(hpow, g->xi, out + 16 * done, piece);
			done += piece;
		}
		memcpy(g->ctr + 8, &upper, 4);
		in += 16 * run, out += 16 * run, nblocks -= run;
	}
}

static void inc32(uint8_t ctr[16])
{
	uint32_t v;
	memcpy(&v, ctr + 12, 4);
	v = __builtin_bswap32(__builtin_bswap32(v) + 1);
	memcpy(ctr + 12, &v, 4);
}

int ct_aes_gcm_setiv(struct ct_aes_gcm *g, const uint8_t *iv, size_t ivlen)
{
	const struct ct_aes_kernels *kt = ct_aes_active_kernels();

	if (ivlen == 0)
		return -1;
	memset(g->xi, 0, 16);
	memset(g->ks, 0, 16);
	g->aad_len = g->msg_len = 0;
	g->ares = g->mres = 0;
	if (ivlen == 12) {
		memcpy(g->ctr, iv, 12);
		memcpy(g->ctr + 12, "\0\0\0\1", 4);
	} else {
		/* J0 = GHASH(IV || 0-pad || 0^64 || [len(IV) in bits]64) */
		uint8_t blk[16];
		memset(g->ctr, 0, 16);
		if (ivlen >= 16)
			kt->ghash((const uint8_t(*)[16])g->hpow, g->ctr, iv, ivlen / 16);
		if (ivlen & 15) {
			memset(blk, 0, 16);
			memcpy(blk, iv + (ivlen & ~(size_t)15), ivlen & 15);
			ct_aes_base_kernels.ghash((const uint8_t(*)[16])g->hpow, g->ctr, blk, 1);
		}
		memset(blk, 0, 8);
		store_be64(blk + 8, (uint64_t)ivlen * 8);
		ct_aes_base_kernels.ghash((const uint8_t(*)[16])g->hpow, g->ctr, blk, 1);
	}
	encrypt_counter(g, g->ek0);
	inc32(g->ctr);
	return 0;
}

int ct_aes_gcm_aad(struct ct_aes_gcm *g, const uint8_t *aad, size_t len)
{
	const struct ct_aes_kernels *kt = ct_aes_active_kernels();
	unsigned n = g->ares;

	if (g->msg_len != 0)
		return -1;
	const uint64_t total = g->aad_len + len;
	if (total > (1ull << 61) || total < g->aad_len)
		return -1;
	g->aad_len = total;

	for (; n && len; len--) {
		g->xi[n] ^= *aad++;
		n = (n + 1) & 15;
		if (n == 0)
			gmult(g);
	}
	if (len >= 16) {
		kt->ghash((const uint8_t(*)[16])g->hpow, g->xi, aad, len / 16);
		aad += len & ~(size_t)15;
		len &= 15;
	}
	for (; len; len--)
		g->xi[n++] ^= *aad++;
	g->ares = n;
	return 0;
}

/* Checks the length limit and closes a partial AAD block before the first data byte. */
static int data_start(struct ct_aes_gcm *g, size_t len)
{
	const uint64_t total = g->msg_len + len;
	if (total > (1ull << 36) - 32 || total < g->msg_len)
		return -1;
	g->msg_len = total;
	if (g->ares) {
		gmult(g);
		g->ares = 0;
	}
	return 0;
}

int ct_aes_gcm_encrypt(struct ct_aes_gcm *g, const uint8_t *in, uint8_t *out, size_t len)
{
	const struct ct_aes_kernels *kt = ct_aes_active_kernels();
	unsigned n = g->mres;

	if (data_start(g, len) != 0)
		return -1;
	for (; n && len; len--) {
		const uint8_t c = *in++ ^ g->ks[n];
		*out++ = c;
		g->xi[n] ^= c;
		n = (n + 1) & 15;
		if (n == 0)
			gmult(g);
	}
	gcm_blocks(kt, g, in, out, len / 16, true);
	in += len & ~(size_t)15, out += len & ~(size_t)15;
	len &= 15;
	if (len) {
		encrypt_counter(g, g->ks);
		inc32(g->ctr);
		for (; n < len; n++) {
			const uint8_t c = in[n] ^ g->ks[n];
			out[n] = c;
			g->xi[n] ^= c;
		}
	}
	g->mres = n;
	return 0;
}

int ct_aes_gcm_decrypt(struct ct_aes_gcm *g, const uint8_t *in, uint8_t *out, size_t len)
{
	const struct ct_aes_kernels *kt = ct_aes_active_kernels();
	unsigned n = g->mres;

	if (data_start(g, len) != 0)
		return -1;
	for (; n && len; len--) {
		const uint8_t c = *in++;
		*out++ = c ^ g->ks[n];
		g->xi[n] ^= c;
		n = (n + 1) & 15;
		if (n == 0)
			gmult(g);
	}
	gcm_blocks(kt, g, in, out, len / 16, false);
	in += len & ~(size_t)15, out += len & ~(size_t)15;
	len &= 15;
	if (len) {
		encrypt_counter(g, g->ks);
		inc32(g->ctr);
		for (; n < len; n++) {
			const uint8_t c = in[n];
			out[n] = c ^ g->ks[n];
			g->xi[n] ^= c;
		}
	}
	g->mres = n;
	return 0;
}

void ct_aes_gcm_tag(struct ct_aes_gcm *g, uint8_t tag[16])
{
	uint8_t lens[16];

	if (g->ares || g->mres)
		gmult(g);
	g->ares = g->mres = 0;
	store_be64(lens, g->aad_len * 8);
	store_be64(lens + 8, g->msg_len * 8);
	ct_aes_base_kernels.ghash((const uint8_t(*)[16])g->hpow, g->xi, lens, 1);
	for (int i = 0; i < 16; i++)
		tag[i] = g->xi[i] ^ g->ek0[i];
}

int ct_aes_gcm_verify(struct ct_aes_gcm *g, const uint8_t *tag, size_t taglen)
{
	uint8_t mine[16];
	uint8_t diff = 0;

	if (taglen == 0 || taglen > 16)
		return -1;
	ct_aes_gcm_tag(g, mine);
	for (size_t i = 0; i < taglen; i++)
		diff |= mine[i] ^ tag[i];
	explicit_bzero(mine, sizeof(mine));
	/* Branch-free on the secret: only the final yes/no leaves this function. */
	return -(int)((diff | (uint8_t)-diff) >> 7 & 1);
}

void ct_aes_gcm_wipe(struct ct_aes_gcm *g)
{
	explicit_bzero(g, sizeof(*g));
}
