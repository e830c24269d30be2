/* SPDX-License-Identifier: MIT */
/* importer.c - a shared object that calls OpenSSL and carries none of it (test_findings.c): the
 * name EVP_EncryptUpdate is in its file as an import only. */
#include <openssl/evp.h>

int importer_seal(EVP_CIPHER_CTX *ctx, unsigned char *out, int *outl, const unsigned char *in, int n)
{
	return EVP_EncryptUpdate(ctx, out, outl, in, n);
}
