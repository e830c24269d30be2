/* SPDX-License-Identifier: MIT */
/*
 * local_plugin.c - a plugin that links GnuTLS, for local_host.c to dlopen RTLD_LOCAL: its
 * gnutls_* references bind to the preload's hooks (global scope first), while GnuTLS itself is
 * only in the plugin's local scope, out of reach of dlsym(RTLD_NEXT). One AES-128-CBC handle,
 * 4 encryptions of 64 bytes; returns the last call's result (0) or the first failure.
 */
#include <gnutls/crypto.h>

int local_plugin_run(void)
{
	unsigned char key[16] = { 0 }, iv[16] = { 0 }, buf[64] = { 0 };
	gnutls_datum_t k = { key, sizeof(key) }, v = { iv, sizeof(iv) };
	gnutls_cipher_hd_t h;
	int r = gnutls_cipher_init(&h, GNUTLS_CIPHER_AES_128_CBC, &k, &v);
	if (r < 0)
		return r;
	for (int i = 0; r >= 0 && i < 4; i++)
		r = gnutls_cipher_encrypt2(h, buf, sizeof(buf), buf, sizeof(buf));
	gnutls_cipher_deinit(h);
	return r;
}
