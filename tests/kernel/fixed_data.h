/* SPDX-License-Identifier: MIT */
/*
 * fixed_data.h - the key, IV and data that afalg_calls.c and tests/emulation/emul_client.c hand
 * to the kernel interfaces: fixed patterns, so that the secrets scan can rebuild them
 * (tests/lib/ctlib/secretscan.py, GENERATED) and look for them in the traces. Included once per
 * program.
 */
#ifndef CT_FIXED_DATA_H
#define CT_FIXED_DATA_H

#include <stddef.h>
#include <stdint.h>

static void fixed_data_fill(uint8_t *key, size_t nkey, uint8_t *iv, size_t niv, uint8_t *data, size_t ndata)
{
	for (size_t i = 0; i < nkey; i++)
		key[i] = (uint8_t)(i * 7 + 1);
	for (size_t i = 0; i < niv; i++)
		iv[i] = (uint8_t)(0xa0 + i);
	for (size_t i = 0; i < ndata; i++)
		data[i] = (uint8_t)(i * 13 + 5);
}

#endif
