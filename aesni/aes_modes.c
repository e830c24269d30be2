/* SPDX-License-Identifier: MIT */
/*
 * aes_modes.c - key setup and the non-AEAD modes with OpenSSL's semantics: the byte-wise num
 * state of CTR/CFB/OFB (CRYPTO_ctr128/cfb128/ofb128), the 128-bit counter carry of EVP
 * aes-*-ctr, and XTS ciphertext stealing. Whole blocks go to the dispatched kernels.
 */
#include <string.h>

#include "aes_internal.h"

int ct_aes_set_key(struct ct_aes_key *k, const uint8_t *key, unsigned bits)
{
	if (bits != 128 && bits != 192 && bits != 256)
		return -1;
	if (!ct_aesni_available())
		return -1;
	ct_aes_expand_key_base(k, key, bits);
	return 0;
}

void ct_aes_key_wipe(struct ct_aes_key *k)
{
	explicit_bzero(k, sizeof(*k));
}

void ct_aes_encrypt_block(const struct ct_aes_key *k, const uint8_t in[16], uint8_t out[16])
{
	ct_aes_base_kernels.ecb_enc(k, in, out, 1); /* what both tables do for one block */
}

void ct_aes_decrypt_block(const struct ct_aes_key *k, const uint8_t in[16], uint8_t out[16])
{
	ct_aes_base_kernels.ecb_dec(k, in, out, 1);
}

/* ECB, CBC decryption, CTR and XTS call the level's own kernel at any length: the 512- and
 * 256-bit ones take short inputs in one pass of as many registers as they need (aes_vaes512.c,
 * aes_vaes.c). One or two blocks of ECB and CBC
 * go to the base level: a lone block is AES latency alone, and on 512-bit registers a 16-byte
 * call ran 25 % slower. */
static const struct ct_aes_kernels *kernels_at_any_length(size_t nblocks)
{
	return nblocks <= 2 ? &ct_aes_base_kernels : ct_aes_active_kernels();
}

void ct_aes_ecb_encrypt(const struct ct_aes_key *k, const uint8_t *in, uint8_t *out, size_t len)
{
	if (len >= 16)
		kernels_at_any_length(len / 16)->ecb_enc(k, in, out, len / 16);
}

void ct_aes_ecb_decrypt(const struct ct_aes_key *k, const uint8_t *in, uint8_t *out, size_t len)
{
	if (len >= 16)
		kernels_at_any_length(len / 16)->ecb_dec(k, in, out, len / 16);
}

void ct_aes_cbc_encrypt(const struct ct_aes_key *k, uint8_t iv[16], const uint8_t *in, uint8_t *out,
			size_t len)
{
	if (len >= 16)
		ct_aes_active_kernels()->cbc_enc(k, iv, in, out, len / 16);
}

void ct_aes_cbc_decrypt(const struct ct_aes_key *k, uint8_t iv[16], const uint8_t *in, uint8_t *out,
			size_t len)
{
	if (len >= 16)
		kernels_at_any_length(len / 16)->cbc_dec(k, iv, in, out, len / 16);
}

/* A block as one 16-byte vector (GCC/clang vector extension): stored whole, read back whole. */
typedef uint64_t block_vec __attribute__((vector_size(16)));

static uint64_t load_be64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return __builtin_bswap64(v);
}

static void store_be64(uint8_t *p, uint64_t v)
{
	v = __builtin_bswap64(v);
	memcpy(p, &v, 8);
}

/* Big-endian increment of the whole 16-byte counter, as OpenSSL's ctr96_inc + ctr32 do. */
static void ctr128_inc(uint8_t ctr[16])
{
	const uint64_t lo = load_be64(ctr + 8) + 1;
	store_be64(ctr + 8, lo);
	if (lo == 0)
		store_be64(ctr, load_be64(ctr) + 1);
}

void ct_aes_ctr128(const struct ct_aes_key *k, uint8_t ctr[16], uint8_t ecount[16], unsigned *num,
		   const uint8_t *in, uint8_t *out, size_t len)
{
	const struct ct_aes_kernels *kt = ct_aes_active_kernels(); /* at any length: above */
	unsigned n = *num & 15;

	for (; n && len; len--)
		*out++ = *in++ ^ ecount[n], n = (n + 1) & 15;

	size_t nblocks = len / 16;
	if (len & 15) {
		/* The partial last block's keystream first, from its own counter (ctr + nblocks, the
		 * 128-bit sum): its rounds then run beside the whole blocks', not after them (a
		 * 1000-byte call spent 20 ns more than a 992-byte one). */
		const uint64_t lo = load_be64(ctr + 8), sum = lo + nblocks;
		/* built in a register and stored whole: two 8-byte stores read back by the AES pass
		 * as one 16-byte load wait ~15 cycles (24-40-byte calls were 20 % slower so) */
		const block_vec c = { __builtin_bswap64(load_be64(ctr) + (sum < lo)),
				      __builtin_bswap64(sum) };
		uint8_t last_ctr[16];
		memcpy(last_ctr, &c, 16);
		ct_aes_base_kernels.ecb_enc(k, last_ctr, ecount, 1);
	}
	while (nblocks) {
		/* The kernel only adds to the low 64 bits: stop where they wrap, carry here. */
		const uint64_t lo = load_be64(ctr + 8);
		const uint64_t room = -lo; /* blocks until the wrap; 0 means 2^64 */
		const size_t chunk = (lo != 0 && room < nblocks) ? (size_t)room : nblocks;
		kt->ctr(k, ctr, in, out, chunk);
		if (lo != 0 && chunk == room)
			store_be64(ctr, load_be64(ctr) + 1);
		in += 16 * chunk, out += 16 * chunk, nblocks -= chunk;
	}

	len &= 15;
	if (len) {
		ctr128_inc(ctr); /* past the partial block, whose keystream ecount holds */
		for (; n < len; n++)
			out[n] = in[n] ^ ecount[n];
	}
	*num = n;
}

void ct_aes_cfb128(const struct ct_aes_key *k, uint8_t iv[16], unsigned *num, const uint8_t *in, uint8_t *out,
		   size_t len, bool encrypt)
{
	const struct ct_aes_kernels *kt =
		(encrypt ? ct_aes_kernels_for : ct_aes_kernels_for_loaded)(len / 16);
	unsigned n = *num & 15;

	if (encrypt) {
		for (; n && len; len--)
			*out++ = iv[n] ^= *in++, n = (n + 1) & 15;
		if (len >= 16)
			kt->cfb_enc(k, iv, in, out, len / 16);
		in += len & ~(size_t)15, out += len & ~(size_t)15, len &= 15;
		if (len) {
			kt->ecb_enc(k, iv, iv, 1);
			for (; n < len; n++)
				out[n] = iv[n] ^= in[n];
		}
	} else {
		for (; n && len; len--) {
			const uint8_t c = *in++;
			*out++ = iv[n] ^ c;
			iv[n] = c;
			n = (n + 1) & 15;
		}
		if (len >= 16)
			kt->cfb_dec(k, iv, in, out, len / 16);
		in += len & ~(size_t)15, out += len & ~(size_t)15, len &= 15;
		if (len) {
			kt->ecb_enc(k, iv, iv, 1);
			for (; n < len; n++) {
				const uint8_t c = in[n];
				out[n] = iv[n] ^ c;
				iv[n] = c;
			}
		}
	}
	*num = n;
}

void ct_aes_ofb128(const struct ct_aes_key *k, uint8_t iv[16], unsigned *num, const uint8_t *in, uint8_t *out,
		   size_t len)
{
	const struct ct_aes_kernels *kt = ct_aes_kernels_for(len / 16);
	unsigned n = *num & 15;

	for (; n && len; len--)
		*out++ = *in++ ^ iv[n], n = (n + 1) & 15;
	if (len >= 16)
		kt->ofb(k, iv, in, out, len / 16);
	in += len & ~(size_t)15, out += len & ~(size_t)15, len &= 15;
	if (len) {
		kt->ecb_enc(k, iv, iv, 1);
		for (; n < len; n++)
			out[n] = in[n] ^ iv[n];
	}
	*num = n;
}

/* The stealing takes its last whole block into the kernel's pass from this many whole blocks on
 * (measured on the Intel Xeon against the two blocks after a bulk of the rest: encrypting, 264
 * and 392 bytes 1.05-1.11x faster at the 512-bit level, 264 bytes 1.13x at the 256-bit one, 1032
 * bytes 1.18x; decrypting, 264-1032 bytes 1.05-1.07x; under 16 blocks mixed, 1-4 whole blocks
 * 3-10 % slower). */
#define XTS_STEAL_IN_BATCH_MIN 16
/* From this many whole blocks on, the kernel encrypts the tweak itself (aes_internal.h): the
 * 512-bit kernel then multiplies it into the first batch's 32 tweaks in registers, and 1 KiB units
 * ran 1.04-1.05x faster on the Intel Xeon, 2-4 KiB 1.01-1.02x. Shorter units keep the encryption
 * here: in the kernel (a copy of the IV passed in, the encrypted tweak stored for the short pass)
 * 32-256 bytes ran 4-9 % slower. */
#define XTS_TWEAK_IN_KERNEL_MIN_BLOCKS 33

/* The scratch of one unit: its tweak and the stealing's last 16 input bytes, one object on a
 * cache line of its own, so one wipe: with the tweak alone on the stack (16 bytes, sharing a line
 * with the frame), 1 KiB units ran 12 % slower on the Intel Xeon. */
struct xts_scratch {
	uint8_t t[16], ending[16];
} __attribute__((aligned(64)));

/* One unit of two or more blocks: s->t holds the encrypted tweak, or with tk (not NULL) the IV,
 * which the kernel encrypts with tk first. */
static inline __attribute__((always_inline)) void xts_unit(const struct ct_aes_key *data_key,
							   const struct ct_aes_key *tk, struct xts_scratch *s,
							   const uint8_t *in, uint8_t *out, size_t len,
							   bool encrypt)
{
	const struct ct_aes_kernels *kt = ct_aes_active_kernels(); /* at any length: above */
	const size_t tail = len & 15, whole = len / 16;
	if (!tail || (whole >= XTS_STEAL_IN_BATCH_MIN && (encrypt || kt->xts_dec_steal))) {
		/* Every whole block in the kernel's pass, the stealing's first block too: encrypting,
		 * CC = E(P_{m-1}) with T_{m-1}, which needs nothing from the tail; decrypting, PP =
		 * D(C_{m-1}) with T_m, in the pass's last lane (xts_dec_steal). Its rounds run beside
		 * the others', and the stealing adds one AES latency after the pass, not two (1032-byte
		 * units 1.2-1.3x faster encrypting, 1.05x decrypting). The second block then in
		 * registers, its tail bytes from a copy of the unit's last 16 bytes made first (after
		 * the pass, in place, those bytes straddle its last store). */
		if (tail)
			memcpy(s->ending, in + len - 16, 16);
		if (encrypt)
			kt->xts_enc(data_key, tk, s->t, in, out, whole);
		else
			(tail ? kt->xts_dec_steal : kt->xts_dec)(data_key, tk, s->t, in, out, whole);
		if (tail) /* s->t is T_m encrypting, T_{m-1} decrypting */
			ct_aes_xts_steal_last_base(data_key, s->t, s->ending, out + 16 * (whole - 1), tail,
						   encrypt);
		return;
	}
	/* Otherwise the stealing's two blocks (the last whole one and the tail) follow the bulk of
	 * the unit, in registers, with its last tweak (ct_aes_xts_steal_base). Before, they were two
	 * one-block kernel calls that passed the blocks through the stack in pieces, and each 16-byte
	 * load of them waited for narrower stores: decryption of 40-100-byte units is now 1.7-1.9x
	 * faster. Running them before the bulk instead, their tweaks made from T, measured 3-10 %
	 * slower at every length. */
	const size_t bulk = whole - 1;
	if (bulk) /* s->t ends as T_bulk; with no bulk (one whole block) tk is NULL */
		(encrypt ? kt->xts_enc : kt->xts_dec)(data_key, tk, s->t, in, out, bulk);
	ct_aes_xts_steal_base(data_key, s->t, in + 16 * bulk, out + 16 * bulk, tail, encrypt);
}

void ct_aes_xts_tweak(const struct ct_aes_key *tweak_key, const uint8_t iv[16], uint8_t tweak[16])
{
	ct_aes_base_kernels.ecb_enc(tweak_key, iv, tweak, 1);
}

int ct_aes_xts(const struct ct_aes_key *data_key, const struct ct_aes_key *tweak_key, const uint8_t iv[16],
	       const uint8_t *in, uint8_t *out, size_t len, bool encrypt)
{
	if (len < 16)
		return -1;
	if (len == 16) {
		ct_aes_xts_one_base(data_key, tweak_key, iv, in, out, encrypt);
		return 0;
	}
	struct xts_scratch s;
	const struct ct_aes_key *tk = NULL;
	if (len / 16 >= XTS_TWEAK_IN_KERNEL_MIN_BLOCKS) {
		memcpy(s.t, iv, 16);
		tk = tweak_key; /* the kernel encrypts it */
	} else {
		ct_aes_xts_tweak(tweak_key, iv, s.t);
	}
	xts_unit(data_key, tk, &s, in, out, len, encrypt);
	ct_wipe(&s, sizeof(s));
	return 0;
}

int ct_aes_xts_tweaked(const struct ct_aes_key *data_key, const uint8_t tweak[16], const uint8_t *in,
		       uint8_t *out, size_t len, bool encrypt)
{
	if (len < 16)
		return -1;
	struct xts_scratch s;
	memcpy(s.t, tweak, 16);
	xts_unit(data_key, NULL, &s, in, out, len, encrypt);
	ct_wipe(&s, sizeof(s));
	return 0;
}
