/* SPDX-License-Identifier: MIT */
/*
 * cbc_partial.c - AES_cbc_encrypt on lengths that end in a partial block, printed: every length
 * 1-80, and lengths around OpenSSL's fast/slow path limits up to 4097, encrypt and decrypt,
 * separate and in place, each with the output buffer past the request, and the IV it leaves.
 * tests/port/cbc-partial.sh compares its output unrouted and routed (the route must reproduce
 * the program's own libcrypto, 32-bit x86's tail rule included: preload/route/lowlevel.c).
 */
#include <stdio.h>
#include <string.h>

#include <openssl/aes.h>

#define MAXLEN 4097

static void hex(const unsigned char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		printf("%02x", p[i]);
}

int main(void)
{
	static unsigned char in[MAXLEN + 16], out[MAXLEN + 64];
	unsigned char key[16], iv0[16], iv[16];
	for (int i = 0; i < 16; i++) {
		key[i] = (unsigned char)(i * 7 + 1);
		iv0[i] = (unsigned char)(i * 13 + 5);
	}
	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (unsigned char)(i * 31 + 3);
	AES_KEY ek, dk;
	if (AES_set_encrypt_key(key, 128, &ek) || AES_set_decrypt_key(key, 128, &dk))
		return 1;
	static const int big[] = { 255, 257, 500, 511, 513, 529, 1000, 1025, 4097 };
	for (int enc = 0; enc < 2; enc++)
		for (int inplace = 0; inplace < 2; inplace++)
			for (int k = 1; k <= 80 + (int)(sizeof(big) / sizeof(big[0])); k++) {
				int len = k <= 80 ? k : big[k - 81];
				memset(out, 0xee, sizeof(out));
				memcpy(iv, iv0, 16);
				const unsigned char *src = in;
				if (inplace) {
					memcpy(out, in, (size_t)len + 16);
					src = out;
				}
				AES_cbc_encrypt(src, out, (size_t)len, enc ? &ek : &dk, iv,
						enc ? AES_ENCRYPT : AES_DECRYPT);
				/* the last whole block, the tail's block and what follows it */
				size_t from = len > 32 ? ((size_t)len & ~(size_t)15) - 16 : 0;
				printf("%s %s %4d out[%zu..]=", enc ? "enc" : "dec",
				       inplace ? "inplace" : "apart", len, from);
				hex(out + from, 64);
				printf(" iv=");
				hex(iv, 16);
				printf("\n");
			}
	return 0;
}
