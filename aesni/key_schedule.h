/* SPDX-License-Identifier: MIT */
/*
 * key_schedule.h - FIPS-197's key expansion (section 5.2), shared by the kernel files: only
 * SubWord differs by instruction set (AESENCLAST on x86, AESE on ARM, each with a zero key and
 * the word in all four columns, where ShiftRows is the identity). Always inlined into the
 * caller, under the caller's target attribute, and its SubWord with it.
 */
#ifndef CT_KEY_SCHEDULE_H
#define CT_KEY_SCHEDULE_H

#include <stdint.h>
#include <string.h>

#include "aesni.h"

/* Writes the encryption round keys of a bits-long key into k->enc, and k->rounds, k->bits. */
static inline __attribute__((always_inline)) void
ct_aes_schedule(struct ct_aes_key *k, const uint8_t *key, unsigned bits, uint32_t (*sub_word)(uint32_t))
{
	const unsigned nk = bits / 32, rounds = nk + 6, total = 4 * (rounds + 1);
	uint32_t w[4 * (CT_AES_MAX_ROUNDS + 1)];
	uint32_t rcon = 1;

	memcpy(w, key, 4 * nk); /* little-endian words: byte 0 of the word is its low byte */
	for (unsigned i = nk; i < total; i++) {
		uint32_t t = w[i - 1];
		if (i % nk == 0) {
			t = sub_word((t >> 8) | (t << 24)) ^ rcon; /* RotWord, SubWord, Rcon */
			rcon = (rcon << 1) ^ ((rcon >> 7) * 0x11b);
		} else if (nk > 6 && i % nk == 4) {
			t = sub_word(t);
		}
		w[i] = w[i - nk] ^ t;
	}
	memcpy(k->enc, w, 16 * (rounds + 1));
	explicit_bzero(w, sizeof(w));
	k->rounds = rounds;
	k->bits = bits;
}

#endif
