/* SPDX-License-Identifier: MIT */
/*
 * emul_cipher.c - the cipher core of the emulated kernel interfaces: kernel algorithm names and
 * cryptodev ids to modes, key checks with the kernel's accepted lengths, and one request with the
 * kernel's semantics (a request starts at a block boundary; the IV chains to the next request the
 * way cbc(aes) and ctr(aes) write it back) on top of the aesni backend.
 */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "emul.h"
#include "kernel/cryptodev_abi.h"

enum ct_emul_mode ct_emul_mode_of_alg(const char *name)
{
	static const struct {
		const char *name;
		enum ct_emul_mode mode;
	} names[] = {
		{ "ecb(aes)", CT_EM_ECB }, { "cbc(aes)", CT_EM_CBC }, { "ctr(aes)", CT_EM_CTR },
		{ "xts(aes)", CT_EM_XTS }, { "gcm(aes)", CT_EM_GCM },
	};
	for (size_t i = 0; name && i < sizeof(names) / sizeof(names[0]); i++)
		if (!strcmp(name, names[i].name))
			return names[i].mode;
	return CT_EM_NONE;
}

enum ct_emul_mode ct_emul_mode_of_cdev(uint32_t cipher)
{
	switch (cipher) {
	case CT_CRYPTO_AES_ECB:
		return CT_EM_ECB;
	case CT_CRYPTO_AES_CBC:
		return CT_EM_CBC;
	case CT_CRYPTO_AES_CTR:
		return CT_EM_CTR;
	case CT_CRYPTO_AES_XTS:
		return CT_EM_XTS;
	case CT_CRYPTO_AES_GCM:
		return CT_EM_GCM;
	default:
		return CT_EM_NONE;
	}
}

const char *ct_emul_mode_name(enum ct_emul_mode m)
{
	static const char *const names[] = { "none", "ecb", "cbc", "ctr", "xts", "gcm" };
	return (unsigned)m < sizeof(names) / sizeof(names[0]) ? names[m] : "none";
}

int ct_emul_key_set(struct ct_emul_key *k, enum ct_emul_mode mode, const uint8_t *key, size_t len)
{
	bool xts = mode == CT_EM_XTS;
	size_t half = xts ? len / 2 : len;

	if (mode == CT_EM_NONE || (xts && len % 2) || (half != 16 && half != 24 && half != 32))
		return -EINVAL;
	if (!ct_aesni_available())
		return -ENOSYS;
	struct ct_emul_key nk = { .mode = (uint8_t)mode, .keylen = (uint32_t)len };
	int r;
	if (mode == CT_EM_GCM)
		r = ct_aes_gcm_init(&nk.gcm, key, (unsigned)len * 8);
	else if (xts)
		r = ct_aes_set_key(&nk.k1, key, (unsigned)half * 8) ||
				    ct_aes_set_key(&nk.k2, key + half, (unsigned)half * 8)
			    ? -1
			    : 0;
	else
		r = ct_aes_set_key(&nk.k1, key, (unsigned)len * 8);
	if (r == 0)
		*k = nk;
	explicit_bzero(&nk, sizeof(nk));
	return r == 0 ? 0 : -EINVAL;
}

void ct_emul_key_wipe(struct ct_emul_key *k)
{
	explicit_bzero(k, sizeof(*k));
}

int ct_emul_skcipher(const struct ct_emul_key *k, bool enc, uint8_t iv[16], const uint8_t *in, uint8_t *out,
		     size_t len)
{
	switch (k->mode) {
	case CT_EM_ECB:
		if (len % CT_AES_BLOCK)
			return -EINVAL;
		(enc ? ct_aes_ecb_encrypt : ct_aes_ecb_decrypt)(&k->k1, in, out, len);
		return 0;
	case CT_EM_CBC:
		if (len % CT_AES_BLOCK)
			return -EINVAL;
		(enc ? ct_aes_cbc_encrypt : ct_aes_cbc_decrypt)(&k->k1, iv, in, out, len);
		return 0;
	case CT_EM_CTR: {
		/* The kernel starts every request on a fresh keystream block; OpenSSL's counter
		 * then stands ceil(len/16) blocks on, as the kernel writes it back. */
		uint8_t ecount[16];
		unsigned num = 0;
		ct_aes_ctr128(&k->k1, iv, ecount, &num, in, out, len);
		explicit_bzero(ecount, sizeof(ecount));
		return 0;
	}
	case CT_EM_XTS:
		return ct_aes_xts(&k->k1, &k->k2, iv, in, out, len, enc) ? -EINVAL : 0;
	default:
		return -EINVAL;
	}
}

int ct_emul_gcm(const struct ct_emul_key *k, bool enc, const uint8_t *iv, size_t ivlen, const uint8_t *aad,
		size_t aadlen, const uint8_t *in, uint8_t *out, size_t len, uint8_t *tag, size_t taglen)
{
	struct ct_aes_gcm g;
	int r = -EINVAL;

	if (k->mode != CT_EM_GCM || !ivlen || !taglen || taglen > 16)
		return -EINVAL;
	g = k->gcm; /* the key schedule and H powers; the message state is ours alone */
	if (ct_aes_gcm_setiv(&g, iv, ivlen) || (aadlen && ct_aes_gcm_aad(&g, aad, aadlen)))
		goto out;
	if (enc) {
		uint8_t full[16];
		if (ct_aes_gcm_encrypt(&g, in, out, len))
			goto out;
		ct_aes_gcm_tag(&g, full);
		memcpy(tag, full, taglen);
		explicit_bzero(full, sizeof(full));
		r = 0;
	} else {
		if (ct_aes_gcm_decrypt(&g, in, out, len))
			goto out;
		r = ct_aes_gcm_verify(&g, tag, taglen) ? -EBADMSG : 0;
		if (r)
			explicit_bzero(out, len); /* the kernel releases no plaintext on a bad tag */
	}
out:
	ct_aes_gcm_wipe(&g);
	return r;
}

void *ct_emul_alloc(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

void ct_emul_free(void *p, size_t size)
{
	ct_emul_free_used(p, size, size);
}

void ct_emul_free_used(void *p, size_t size, size_t used)
{
	if (!p)
		return;
	explicit_bzero(p, used < size ? used : size); /* keys and data; untouched pages are zero */
	munmap(p, size);
}
