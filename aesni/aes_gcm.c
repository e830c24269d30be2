/* SPDX-License-Identifier: MIT */
/*
 * aes_gcm.c - GCM (NIST SP 800-38D) with CRYPTO_gcm128's streaming semantics: AAD in any number
 * of calls before the data, data in any chunk sizes, partial blocks folded into the GHASH state
 * byte by byte, IVs of any length. Whole blocks go to the dispatched CTR and GHASH kernels.
 *
 * A short message (a data call of up to CT_GCM_SHORT_BLOCKS blocks, the usual TLS record or
 * packet) is a chain of dependent steps when each is its own call: E(J0), the counter blocks,
 * the data's GHASH, the lengths block's. The short path makes it two: one AES pass for E(J0) and
 * every counter block together (independent blocks, so one AES latency), and one GHASH
 * reduction at the tag for the data blocks and the lengths block together (gcm->pend). An AAD
 * of up to a block in one call (a TLS record's 13 or 5 bytes, SSH's 4) waits in pend too, for
 * that reduction or the long path's first GHASH.
 */
#include <stddef.h>
#include <string.h>

#include "aes_internal.h"

/* Bulk data is handled in L1-sized pieces: CTR over a piece, then GHASH over the same bytes
 * while they are still in cache. */
#define GCM_PIECE_BLOCKS 128

static const uint8_t zero_block[16];

/* A counter block's last word is its big-endian 32-bit counter (SP 800-38D's inc32 field). */
static inline uint32_t be32(uint32_t v)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return __builtin_bswap32(v);
#else
	return v;
#endif
}

static inline uint64_t be64(uint64_t v)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return __builtin_bswap64(v);
#else
	return v;
#endif
}

static void store_be64(uint8_t *p, uint64_t v)
{
	v = be64(v);
	memcpy(p, &v, 8);
}

static inline uint64_t le64(uint64_t v)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return v;
#else
	return __builtin_bswap64(v);
#endif
}

static inline uint32_t le32(uint32_t v)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
	return v;
#else
	return __builtin_bswap32(v);
#endif
}

static inline uint64_t load_le64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return le64(v);
}

static inline uint32_t load_le32(const uint8_t *p)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return le32(v);
}

/* A block as one 16-byte vector (GCC/clang vector extension, SSE2 or NEON): a block stored
 * whole and read back whole, as the GHASH kernels read pend, forwards from the store; two 8-byte
 * stores read back as one 16-byte load stall for ~15 cycles a block. */
typedef uint64_t block_vec __attribute__((vector_size(16)));
typedef uint32_t block_words __attribute__((vector_size(16)));

/* Macros, not functions: a function taking or returning a vector changes the ABI on targets
 * without SSE (i386's baseline), which GCC warns about. */
#define LOAD_BLOCK(v, p) memcpy(&(v), (p), 16)
#define STORE_BLOCK(p, v) memcpy((p), &(v), 16)

/* A partial block's n (1..16) bytes as two little-endian words (w[0]: bytes 0-7), zero above n:
 * two overlapping loads of a word or half-word each, no byte read past p + n. Inlined, so that
 * the words stay in registers (called, they went through the stack, and 13 bytes of AAD made
 * a 1 KiB message 5 % slower). */
static inline __attribute__((always_inline)) void load_partial(const uint8_t *p, size_t n, uint64_t w[2])
{
	uint64_t lo = 0, hi = 0;
	if (n > 8)
		lo = load_le64(p), hi = load_le64(p + n - 8) >> (8 * (16 - n));
	else if (n == 8)
		lo = load_le64(p);
	else if (n >= 4)
		lo = load_le32(p) | (uint64_t)load_le32(p + n - 4) << (8 * (n - 4));
	else
		for (size_t i = 0; i < n; i++)
			lo |= (uint64_t)p[i] << (8 * i);
	w[0] = lo, w[1] = hi;
}

static void store_le64(uint8_t *p, uint64_t v)
{
	v = le64(v);
	memcpy(p, &v, 8);
}

static void store_le32(uint8_t *p, uint32_t v)
{
	v = le32(v);
	memcpy(p, &v, 4);
}

/* Its inverse: n (1..15) bytes to p, in overlapping stores, none past p + n. */
static inline __attribute__((always_inline)) void store_partial(uint8_t *p, size_t n, const uint64_t w[2])
{
	if (n > 8) {
		store_le64(p, w[0]);
		store_le64(p + n - 8, w[0] >> (8 * (n - 8)) | w[1] << (8 * (16 - n)));
	} else if (n == 8) {
		store_le64(p, w[0]);
	} else if (n >= 4) {
		store_le32(p, (uint32_t)w[0]);
		store_le32(p + n - 4, (uint32_t)(w[0] >> (8 * (n - 4))));
	} else {
		for (size_t i = 0; i < n; i++)
			p[i] = (uint8_t)(w[0] >> (8 * i));
	}
}

/* The two words as one whole-block store (GHASH loads pend's blocks whole: from a block written
 * byte by byte, that load waits for the bytes to reach the cache). */
static inline __attribute__((always_inline)) void store_words(uint8_t dst[16], const uint64_t w[2])
{
	const block_vec v = { le64(w[0]), le64(w[1]) };
	STORE_BLOCK(dst, v);
}

/* n (1..16) bytes from p, zero-padded, into dst. */
static void pad_block(uint8_t dst[16], const uint8_t *p, size_t n)
{
	uint64_t w[2];
	load_partial(p, n, w);
	store_words(dst, w);
}

/* One block's work (E(J0), a partial block's keystream, x * H) goes to the base level directly:
 * every wider table hands a single block down to it anyway, one indirect call per level. */
static void gmult(struct ct_aes_gcm *g)
{
	ct_aes_base_kernels.ghash((const uint8_t(*)[16])g->hpow, g->xi, zero_block, 1);
}

/* A partial last block (rest: 1..15 bytes, its keystream in ks): out = in ^ ks, and its
 * ciphertext, zero-padded, in pend for the tag (or the next call) to hash, in words, not bytes
 * (load_partial, store_partial). The input is read before out is written: in may be out. */
static void partial_block(const uint8_t ks[16], const uint8_t *in, uint8_t *out, size_t rest, bool enc,
			  uint8_t pend[16])
{
	uint64_t x[2], y[2];
	load_partial(in, rest, x);
	/* the keystream's bytes past rest cleared: y is then the ciphertext zero-padded */
	const uint64_t m0 = rest >= 8 ? ~0ull : (1ull << (8 * rest)) - 1,
		       m1 = rest > 8 ? (1ull << (8 * (rest - 8))) - 1 : 0;
	y[0] = (x[0] ^ load_le64(ks)) & m0;
	y[1] = (x[1] ^ load_le64(ks + 8)) & m1;
	store_partial(out, rest, y);
	store_words(pend, enc ? y : x);
}

/* A data call's partial last block, which follows its len / 16 whole blocks: done before them
 * and left pending, as the short path leaves one (partial_block). Its keystream, from
 * its own counter (inc32'd past the whole blocks, built in a register and stored whole), made
 * first so that its rounds overlap theirs: after them, it put one AES latency on every message
 * whose length is not a multiple of 16 (1000 bytes took 25 ns more than 992). Its bytes go to
 * pend before the whole blocks run too: put into xi after them, the tag's GHASH loaded xi while
 * those byte stores were still on their way to the cache, a load that cannot take them, and a
 * 1000-byte message took 15 ns more than a 1008-byte one. (partial_block after the whole blocks
 * measured 2-3 % slower at 1000-1400 bytes.) The caller inc32s the counter past it after the
 * whole blocks. Not called where the stitched kernel makes that keystream (an encryption at
 * the 512-bit level: blocks_and_partial). */
static void partial_first(struct ct_aes_gcm *g, const uint8_t *in, uint8_t *out, size_t len, bool enc)
{
	const size_t whole = len / 16, rest = len & 15;
	block_words c;
	uint8_t blk[16];
	LOAD_BLOCK(c, g->ctr);
	c[3] = be32(be32(c[3]) + (uint32_t)whole);
	STORE_BLOCK(blk, c);
	ct_aes_base_kernels.ecb_enc(&g->key, blk, g->ks, 1);
	partial_block(g->ks, in + 16 * whole, out + 16 * whole, rest, enc, g->pend[0]);
	g->npend = 1;
}

/* The Karatsuba rows (aesni.h, CT_GHASH_KEY_ROWS): each power's two halves XORed, in both
 * halves of its row. XOR works byte by byte, so 64-bit words give the kernels' register images
 * whatever the host's byte order. */
static void ghash_karatsuba_rows(uint8_t hpow[CT_GHASH_KEY_ROWS][16])
{
	for (size_t j = 0; j < CT_GHASH_POWERS; j++) {
		uint64_t lo, hi;
		memcpy(&lo, hpow[j], 8);
		memcpy(&hi, hpow[j] + 8, 8);
		lo ^= hi;
		memcpy(hpow[CT_GHASH_POWERS + j], &lo, 8);
		memcpy(hpow[CT_GHASH_POWERS + j] + 8, &lo, 8);
	}
}

int ct_aes_gcm_init(struct ct_aes_gcm *g, const uint8_t *key, unsigned bits)
{
	uint8_t h[16];

	memset(g, 0, sizeof(*g));
	if (ct_aes_set_key(&g->key, key, bits) != 0)
		return -1;
	ct_aes_encrypt_block(&g->key, zero_block, h);
	ct_ghash_init_base(g->hpow, h);
	ghash_karatsuba_rows(g->hpow);
	explicit_bzero(h, sizeof(h));
	return 0;
}

/* Field by field, not one memset of the whole message state: that one (256 bytes) compiled to
 * `rep stos`, whose start-up alone was ~5 % of a routed 16-byte message (perf). pend's blocks
 * are read only below npend, so they need no zeroing. */
_Static_assert(offsetof(struct ct_aes_gcm, ks) - offsetof(struct ct_aes_gcm, ek0) == 48,
	       "ek0, ctr, xi and ks are four adjacent blocks");
void ct_aes_gcm_reset(struct ct_aes_gcm *g)
{
	memset(g->ek0, 0, 64); /* ek0, ctr, xi, ks */
	g->npend = 0;
	g->ek0_due = 0;
	g->aad_len = g->msg_len = 0;
	g->ares = g->mres = 0;
}

/* Whole blocks, xi absorbing the ciphertext: the level's stitched kernel (CTR and GHASH in one
 * pass) for whole batches where it has one, else CTR then GHASH over L1-sized pieces while the
 * bytes are still in cache (decryption hashes first: in-place input is overwritten). inc32 of
 * SP 800-38D: only the low 32 bits count, so the kernels (64-bit adds) are called in runs that
 * end at a 32-bit wrap, and the bits above are put back afterwards. ks: as for the stitched
 * kernel (aes_internal.h), given only where it takes every block in one run (stitched_makes_ks). */
static void gcm_blocks(struct ct_aes_gcm *g, const uint8_t *in, uint8_t *out, size_t nblocks, bool enc,
		       uint8_t *ks)
{
	const uint8_t(*hpow)[16] = (const uint8_t(*)[16])g->hpow;
	while (nblocks) {
		uint32_t lo32, upper;
		memcpy(&lo32, g->ctr + 12, 4);
		memcpy(&upper, g->ctr + 8, 4);
		const uint64_t room = (1ull << 32) - be32(lo32);
		const size_t run = room < nblocks ? (size_t)room : nblocks;
		/* the level's stitched kernel, where it has one, for the whole 16-block steps (the
		 * 512-bit one's, from 16 blocks on), then the two passes for the rest */
		size_t done = 0;
		if (run >= CT_GCM_STITCH_MIN_BLOCKS) {
			const struct ct_aes_kernels *sk = ct_aes_active_kernels();
			if (enc && sk->gcm_enc)
				done = sk->gcm_enc(&g->key, g->ctr, hpow, g->xi, in, out, run, ks);
			else if (!enc && sk->gcm_dec)
				done = sk->gcm_dec(&g->key, g->ctr, hpow, g->xi, in, out, run);
		}
		/* the rest in two passes, each on the level's own kernel at any length (the 512-bit
		 * ones take short runs in one pass themselves) */
		const struct ct_aes_kernels *pk = ct_aes_active_kernels();
		while (done < run) {
			const size_t left = run - done,
				     piece = left < GCM_PIECE_BLOCKS ? left : GCM_PIECE_BLOCKS;
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
	v = be32(be32(v) + 1);
	memcpy(ctr + 12, &v, 4);
}

/* Whether the level's stitched kernel takes an encryption's whole blocks in one run and makes
 * the partial block's keystream in its last step: from CT_GCM_STITCH_MIN_BLOCKS, no 32-bit wrap
 * up to the partial block. A separate AES for that one block, however early (partial_first),
 * cost a 1000-byte message 8.5 ns (11 %) on an Intel Xeon (1,000 against 992 bytes: 88 and
 * 79.7 ns alone in a loop), about what a chain of 40 multiplies in its place cost, though
 * nothing waits for it until after the blocks: most likely the kernel's first step, all AES on
 * one port, fills the reorder window before that chain retires. Decryption keeps partial_first:
 * with the keystream from the kernel and the partial block after it, 520-1032 bytes measured
 * 2-5 % slower. */
static bool stitched_makes_ks(const struct ct_aes_gcm *g, size_t whole, bool enc)
{
	const struct ct_aes_kernels *sk = ct_aes_active_kernels();
	uint32_t lo32;
	memcpy(&lo32, g->ctr + 12, 4);
	return enc && sk->gcm_enc && whole >= CT_GCM_STITCH_MIN_BLOCKS && whole < (1ull << 32) - be32(lo32);
}

/* A data call's whole blocks and its partial last block (len bytes from a block boundary,
 * len % 16 not 0, nothing pending): the partial block's keystream from the stitched kernel where
 * it makes it, and its bytes after the blocks; else partial_first's, before them. Returns the
 * partial block's bytes. (Whole blocks alone go to gcm_blocks directly: with them through this
 * function, 272-512-byte decryption measured 1-2 % slower.) */
static unsigned blocks_and_partial(struct ct_aes_gcm *g, const uint8_t *in, uint8_t *out, size_t len,
				   bool enc)
{
	const size_t whole = len / 16;
	const unsigned rest = len & 15;
	if (!stitched_makes_ks(g, whole, enc)) {
		partial_first(g, in, out, len, enc);
		gcm_blocks(g, in, out, whole, enc, NULL);
	} else {
		gcm_blocks(g, in, out, whole, enc, g->ks);
		partial_block(g->ks, in + 16 * whole, out + 16 * whole, rest, enc, g->pend[0]);
		g->npend = 1;
	}
	inc32(g->ctr); /* past the partial block */
	return rest;
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
	block_words j0;
	if (ivlen == 12) {
		/* built in a register and stored whole: the short path reads ctr and ek0 as blocks */
		uint32_t w[3];
		memcpy(w, iv, 12);
		j0 = (block_words){ w[0], w[1], w[2], be32(1) };
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
		LOAD_BLOCK(j0, g->ctr);
	}
	STORE_BLOCK(g->ek0, j0);
	j0[3] = be32(be32(j0[3]) + 1);
	STORE_BLOCK(g->ctr, j0);
	g->ek0_due = 1;
	g->npend = 0;
	return 0;
}

/* E(J0), where no AES pass took it along. */
static void ek0_now(struct ct_aes_gcm *g)
{
	if (g->ek0_due) {
		ct_aes_base_kernels.ecb_enc(&g->key, g->ek0, g->ek0, 1);
		g->ek0_due = 0;
	}
}

/* Puts the pending blocks into xi, leaving the state the byte-wise code expects: an open last
 * block (open: its bytes, the data's mres or the AAD's ares) folded into xi, not multiplied. */
static void pend_fold(struct ct_aes_gcm *g, unsigned open)
{
	const unsigned whole = g->npend - (open ? 1 : 0);
	if (whole)
		ct_aes_active_kernels()->ghash((const uint8_t(*)[16])g->hpow, g->xi, g->pend[0], whole);
	if (open) {
		block_vec x, p;
		LOAD_BLOCK(x, g->xi);
		LOAD_BLOCK(p, g->pend[whole]);
		x ^= p;
		STORE_BLOCK(g->xi, x);
	}
	g->npend = 0;
}

/* A data call of len (1 .. 16 * CT_GCM_SHORT_BLOCKS) bytes at a block boundary with nothing
 * pending: E(J0) while due and the keystream of every block, a last partial one's too, in one
 * AES pass; the ciphertext blocks are left pending for the tag (or the next call) to hash. A
 * partial AAD block still open goes first as a zero block (its bytes are in xi already). */
static void gcm_short(struct ct_aes_gcm *g, const uint8_t *in, uint8_t *out, size_t len, bool enc)
{
	uint8_t ks[CT_GCM_SHORT_BLOCKS + 1][16];
	const size_t whole = len / 16, rest = len & 15, blocks = whole + (rest != 0);
	const unsigned j0 = g->ek0_due;
	size_t k = 0;

	if (j0)
		memcpy(ks[k++], g->ek0, 16);
	/* the counters built in a register, each stored whole (a 4-byte store into a block the AES
	 * pass then loads whole would stall every block) */
	block_words c;
	LOAD_BLOCK(c, g->ctr);
	const uint32_t low = be32(c[3]);
	for (size_t i = 0; i < blocks; i++, k++) {
		c[3] = be32(low + (uint32_t)i);
		STORE_BLOCK(ks[k], c);
	}
	c[3] = be32(low + (uint32_t)blocks);
	STORE_BLOCK(g->ctr, c);
	ct_aes_kernels_for(k)->ecb_enc(&g->key, ks[0], ks[0], k);
	if (j0) {
		memcpy(g->ek0, ks[0], 16);
		ct_wipe(ks[0], 16);
		g->ek0_due = 0;
	}
	unsigned n = g->npend;
	if (g->ares) { /* xi holds the AAD's partial block: a zero block multiplies it by H */
		memset(g->pend[n++], 0, 16);
		g->ares = 0;
	}
	for (size_t i = 0; i < whole; i++, n++) {
		block_vec x, y;
		LOAD_BLOCK(x, in + 16 * i);
		LOAD_BLOCK(y, ks[j0 + i]);
		y ^= x;
		if (enc)
			STORE_BLOCK(g->pend[n], y);
		else
			STORE_BLOCK(g->pend[n], x);
		STORE_BLOCK(out + 16 * i, y);
	}
	if (rest) {
		memcpy(g->ks, ks[j0 + whole], 16);
		partial_block(g->ks, in + 16 * whole, out + 16 * whole, rest, enc, g->pend[n++]);
	}
	g->npend = n;
	g->mres = (unsigned)rest;
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

	if (total == len && len - 1 < 16) {
		/* The usual AAD, one call of at most a block (TLS's 13- or 5-byte record header): left
		 * pending, zero-padded (pad_block), for the short path's single reduction at the tag,
		 * or the long path's GHASH at the data's start. Folded into xi byte by byte and
		 * multiplied by H here, it made 13 bytes of AAD cost a 256-byte to 1 KiB message
		 * 15-30 % (the byte stores, then a whole-block load of xi that waits for them, then a
		 * multiply of its own). ares counts its bytes while more AAD may follow. */
		pad_block(g->pend[0], aad, len);
		g->npend = 1;
		g->ares = (unsigned)(len & 15);
		return 0;
	}
	if (g->npend) /* more AAD after a pending block: into xi, for the code below */
		pend_fold(g, g->ares);
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

/* Checks the length limit and puts pending blocks into xi; 1: a call the short path takes,
 * else 0, with a partial AAD block closed before the first data byte. */
static int data_start(struct ct_aes_gcm *g, size_t len)
{
	const uint64_t total = g->msg_len + len;
	if (total > (1ull << 36) - 32 || total < g->msg_len)
		return -1;
	if (g->msg_len == 0 && g->npend)
		g->ares = 0; /* the AAD's pending block: its zero padding closes it */
	g->msg_len = total;
	/* the short path keeps one pending block (the AAD's, or a whole one from the call before):
	 * with its 8 and the lengths block, pend's 10 */
	if (g->mres == 0 && len && len <= 16 * CT_GCM_SHORT_BLOCKS && g->npend <= 1)
		return 1; /* it closes an open AAD block in xi itself */
	if (g->npend)
		pend_fold(g, g->mres);
	if (g->ares) {
		gmult(g);
		g->ares = 0;
	}
	return 0;
}

int ct_aes_gcm_encrypt(struct ct_aes_gcm *g, const uint8_t *in, uint8_t *out, size_t len)
{
	const int start = data_start(g, len);

	if (start < 0)
		return -1;
	if (start == 1) {
		gcm_short(g, in, out, len, true);
		return 0;
	}
	ek0_now(g); /* its AES latency hides under the data's */
	unsigned n = g->mres;
	for (; n && len; len--) {
		const uint8_t c = *in++ ^ g->ks[n];
		*out++ = c;
		g->xi[n] ^= c;
		n = (n + 1) & 15;
		if (n == 0)
			gmult(g);
	}
	if (len & 15) /* n is 0: the bytes before reached a block boundary */
		n = blocks_and_partial(g, in, out, len, true);
	else
		gcm_blocks(g, in, out, len / 16, true, NULL);
	g->mres = n;
	return 0;
}

int ct_aes_gcm_decrypt(struct ct_aes_gcm *g, const uint8_t *in, uint8_t *out, size_t len)
{
	const int start = data_start(g, len);

	if (start < 0)
		return -1;
	if (start == 1) {
		gcm_short(g, in, out, len, false);
		return 0;
	}
	ek0_now(g); /* its AES latency hides under the data's */
	unsigned n = g->mres;
	for (; n && len; len--) {
		const uint8_t c = *in++;
		*out++ = c ^ g->ks[n];
		g->xi[n] ^= c;
		n = (n + 1) & 15;
		if (n == 0)
			gmult(g);
	}
	if (len & 15) /* n is 0: the bytes before reached a block boundary */
		n = blocks_and_partial(g, in, out, len, false);
	else
		gcm_blocks(g, in, out, len / 16, false, NULL);
	g->mres = n;
	return 0;
}

void ct_aes_gcm_tag(struct ct_aes_gcm *g, uint8_t tag[16])
{
	/* the pending blocks (or a zero block closing a partial one folded into xi) and the lengths
	 * block: one GHASH call, one reduction */
	ek0_now(g); /* independent of the GHASH chain below: their latencies overlap */
	unsigned n = g->npend;
	if (!n && (g->ares || g->mres))
		memset(g->pend[n++], 0, 16);
	const block_vec lens = { be64(g->aad_len * 8), be64(g->msg_len * 8) }; /* stored whole */
	STORE_BLOCK(g->pend[n], lens);
	n++;
	ct_aes_base_kernels.ghash((const uint8_t(*)[16])g->hpow, g->xi, g->pend[0], n);
	g->npend = 0;
	g->ares = g->mres = 0;
	/* one vector XOR: GCC does not vectorize a byte loop whose output may alias g (48
	 * instructions of a 16-byte message's ~1,600 through the route) */
	block_vec x, e;
	LOAD_BLOCK(x, g->xi);
	LOAD_BLOCK(e, g->ek0);
	x ^= e;
	STORE_BLOCK(tag, x);
}

int ct_aes_gcm_verify(struct ct_aes_gcm *g, const uint8_t *tag, size_t taglen)
{
	uint8_t mine[16];
	uint8_t diff = 0;

	if (taglen == 0 || taglen > 16)
		return -1;
	ct_aes_gcm_tag(g, mine);
	if (taglen == 16) { /* the usual tag: one vector compare, no byte loop */
		block_vec a, b;
		LOAD_BLOCK(a, mine);
		LOAD_BLOCK(b, tag);
		a ^= b;
		uint64_t d = a[0] | a[1];
		d |= d >> 32; /* every bit folded into the low byte */
		d |= d >> 16;
		d |= d >> 8;
		diff = (uint8_t)d;
	} else {
		for (size_t i = 0; i < taglen; i++)
			diff |= mine[i] ^ tag[i];
	}
	ct_wipe(mine, sizeof(mine));
	/* Branch-free on the secret: only the final yes/no leaves this function. */
	return -(int)((diff | (uint8_t)-diff) >> 7 & 1);
}

void ct_aes_gcm_wipe(struct ct_aes_gcm *g)
{
	explicit_bzero(g, sizeof(*g));
}
