/* SPDX-License-Identifier: MIT */
/*
 * lowlevel.c - the side table AES_KEY* -> our expanded key, and the AES_* modes served from it
 * (see lowlevel.h).
 *
 * The table is a fixed array, allocated at the first routed key set-up, open addressing over a
 * short probe window. Writers (the set-key hooks) take a lock; readers (every data call) take
 * none: each slot has a sequence counter (odd while written), and a reader copies the schedule
 * out and checks the counter did not move, so a slot re-keyed or evicted under its feet makes the
 * call run natively instead of with a torn key. The copy also makes the program's own AES_KEY the
 * authority: the entry keeps the bytes the real set-up wrote, and any difference means the
 * memory now holds another key.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "aesni.h"
#include "lowlevel.h"
#include "route.h"

#define SLOTS 1024 /* power of two */
#define PROBES 8

struct slot {
	_Atomic uint32_t seq;
	bool enc; /* set by AES_set_encrypt_key (else by AES_set_decrypt_key) */
	const AES_KEY *owner;
	AES_KEY snap; /* the program's AES_KEY as the real set-up left it */
	struct ct_aes_key ck;
};

static struct slot *_Atomic slots;
static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned evict_next;

bool ct_lowlevel_enabled(void)
{
	return ct_route_active() != NULL && ct_aesni_available();
}

static unsigned slot_hash(const AES_KEY *key)
{
	uint64_t p = (uintptr_t)key; /* 64 bits on 32-bit targets too: the >> 40 below */
	p ^= p >> 17;
	p *= 0x9e3779b97f4a7c15ull;
	return (unsigned)(p >> 40) & (SLOTS - 1);
}

void ct_lowlevel_key_set(const AES_KEY *key, const unsigned char *user_key, int bits, bool enc)
{
	if (!key || !user_key || (bits != 128 && bits != 192 && bits != 256) || !ct_lowlevel_enabled())
		return;
	struct ct_aes_key ck;
	if (ct_aes_set_key(&ck, user_key, (unsigned)bits) != 0)
		return;
	pthread_mutex_lock(&slots_lock);
	struct slot *tab = atomic_load_explicit(&slots, memory_order_acquire);
	if (!tab) {
		tab = aligned_alloc(64, sizeof(struct slot) * SLOTS);
		if (tab) {
			memset(tab, 0, sizeof(struct slot) * SLOTS);
			atomic_store_explicit(&slots, tab, memory_order_release);
		}
	}
	if (tab) {
		unsigned h = slot_hash(key), pick = SLOTS;
		for (unsigned i = 0; i < PROBES; i++) {
			unsigned s = (h + i) & (SLOTS - 1);
			if (tab[s].owner == key || (!tab[s].owner && pick == SLOTS))
				pick = s;
			if (tab[s].owner == key)
				break;
		}
		if (pick == SLOTS) /* window full of other keys: evict one (its owner then runs natively) */
			pick = (h + evict_next++ % PROBES) & (SLOTS - 1);
		struct slot *sl = &tab[pick];
		uint32_t s0 = atomic_load_explicit(&sl->seq, memory_order_relaxed);
		atomic_store_explicit(&sl->seq, s0 + 1, memory_order_relaxed);
		atomic_thread_fence(memory_order_release);
		sl->owner = key;
		sl->enc = enc;
		memcpy(&sl->snap, key, sizeof(sl->snap));
		memcpy(&sl->ck, &ck, sizeof(ck));
		atomic_store_explicit(&sl->seq, s0 + 2, memory_order_release);
	}
	pthread_mutex_unlock(&slots_lock);
	ct_aes_key_wipe(&ck);
}

/* Copies the schedule for key into *out when the entry is current and was made for the
 * direction OpenSSL would use (an encrypt schedule for enc, a decrypt one otherwise). */
static bool key_get(const AES_KEY *key, bool enc, struct ct_aes_key *out)
{
	struct slot *tab = atomic_load_explicit(&slots, memory_order_acquire);
	if (!tab || !key)
		return false;
	unsigned h = slot_hash(key);
	for (unsigned i = 0; i < PROBES; i++) {
		struct slot *sl = &tab[(h + i) & (SLOTS - 1)];
		uint32_t s1 = atomic_load_explicit(&sl->seq, memory_order_acquire);
		if (s1 & 1)
			return false;
		if (sl->owner != key)
			continue;
		bool ok = sl->enc == enc && memcmp(&sl->snap, key, sizeof(sl->snap)) == 0;
		if (ok)
			memcpy(out, &sl->ck, sizeof(*out));
		atomic_thread_fence(memory_order_acquire);
		if (atomic_load_explicit(&sl->seq, memory_order_relaxed) != s1)
			ok = false;
		if (!ok)
			explicit_bzero(out, sizeof(*out));
		return ok;
	}
	return false;
}

bool ct_lowlevel_block(const AES_KEY *key, const uint8_t *in, uint8_t *out, bool enc)
{
	struct ct_aes_key ck;
	if (!key_get(key, enc, &ck))
		return false;
	if (enc)
		ct_aes_encrypt_block(&ck, in, out);
	else
		ct_aes_decrypt_block(&ck, in, out);
	ct_aes_key_wipe(&ck);
	return true;
}

/* CRYPTO_cbc128_{en,de}crypt's rules, which AES_cbc_encrypt follows: a partial last block is
 * encrypted as if padded with zeros (all 16 output bytes written, the IV becomes that block);
 * decrypting one writes only its length, and the IV becomes the whole input block. Except on
 * 32-bit x86: OpenSSL's assembly there (aes-586.pl) XORs a partial last block after whole ones
 * with the IV the call began with, not with the ciphertext block before it (its tail reloads the
 * IV from the caller's ivec, which it writes back only at the end). Differential against Debian
 * 12's i386 libcrypto, every length from 17 to 4097 and in place (tests/port/cbc-partial.sh); the
 * route keeps a program's output what it is unrouted, quirk included. */
bool ct_lowlevel_cbc(const AES_KEY *key, const uint8_t *in, uint8_t *out, size_t len, uint8_t *ivec, bool enc)
{
	struct ct_aes_key ck;
	if (!key_get(key, enc, &ck))
		return false;
	size_t whole = len & ~(size_t)15, rest = len - whole;
	if (enc) {
#if defined(__i386__)
		uint8_t iv_in[16];
		memcpy(iv_in, ivec, 16);
		const uint8_t *tail_iv = iv_in;
#else
		const uint8_t *tail_iv = ivec;
#endif
		ct_aes_cbc_encrypt(&ck, ivec, in, out, whole);
		if (rest) {
			uint8_t blk[16];
			for (size_t i = 0; i < 16; i++)
				blk[i] = (uint8_t)((i < rest ? in[whole + i] : 0) ^ tail_iv[i]);
			ct_aes_encrypt_block(&ck, blk, out + whole);
			memcpy(ivec, out + whole, 16);
			explicit_bzero(blk, sizeof(blk));
		}
	} else {
		uint8_t last[16], tmp[16];
		if (rest)
			memcpy(last, in + whole, 16); /* before an in-place decrypt overwrites it */
		ct_aes_cbc_decrypt(&ck, ivec, in, out, whole);
		if (rest) {
			ct_aes_decrypt_block(&ck, last, tmp);
			for (size_t i = 0; i < rest; i++)
				out[whole + i] = tmp[i] ^ ivec[i];
			memcpy(ivec, last, 16);
			explicit_bzero(tmp, sizeof(tmp));
		}
	}
	ct_aes_key_wipe(&ck);
	return true;
}

bool ct_lowlevel_cfb128(const AES_KEY *key, const uint8_t *in, uint8_t *out, size_t len, uint8_t *ivec,
			int *num, bool enc)
{
	if (!num || *num < 0 || *num > 15)
		return false;
	struct ct_aes_key ck;
	if (!key_get(key, true, &ck))
		return false;
	unsigned n = (unsigned)*num;
	ct_aes_cfb128(&ck, ivec, &n, in, out, len, enc);
	*num = (int)n;
	ct_aes_key_wipe(&ck);
	return true;
}

bool ct_lowlevel_ofb128(const AES_KEY *key, const uint8_t *in, uint8_t *out, size_t len, uint8_t *ivec,
			int *num)
{
	if (!num || *num < 0 || *num > 15)
		return false;
	struct ct_aes_key ck;
	if (!key_get(key, true, &ck))
		return false;
	unsigned n = (unsigned)*num;
	ct_aes_ofb128(&ck, ivec, &n, in, out, len);
	*num = (int)n;
	ct_aes_key_wipe(&ck);
	return true;
}
