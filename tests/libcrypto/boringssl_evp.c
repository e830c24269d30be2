/* SPDX-License-Identifier: MIT */
/*
 * boringssl_evp.c - a program linked against BoringSSL's libcrypto (Debian's android-libboringssl),
 * not OpenSSL's: EVP AES-128-CBC, CTR and GCM encryption and decryption, and BoringSSL's own AEAD
 * API (EVP_AEAD_CTX_seal / open with AES-128-GCM; EVP_AEAD_CTX_new, seal_scatter and open_gather
 * with AES-256-GCM), with fixed, known numbers of calls and bytes.
 * It prints what a tracer must see as lines
 *   expect api=<evp|aead|aes|raw> cipher=<name> dir=<encrypt|decrypt> calls=<n> bytes=<n>
 * (raw: EVP_Cipher; aes: the low-level AES_* API)
 * (data calls only) and a line "aes-hardware <0|1>" (EVP_has_aes_hardware: what BoringSSL itself
 * says it uses), and checks each round trip so that the work is real. A digest of the
 * ciphertexts, printed last, lets a test compare the output with and without a tracer. With
 * `--also-load LIB` it first dlopens LIB (RTLD_LOCAL: OpenSSL's libcrypto, as a plugin would), so
 * that two libcryptos share the process. Exit 0 on success, 2 on bad arguments.
 */
#include <dlfcn.h>
#include <openssl/aead.h>
#include <openssl/aes.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

enum {
	CBC_CALLS = 64,
	CBC_LEN = 4096,
	CTR_CALLS = 50,
	CTR_LEN = 1000,
	GCM_CALLS = 40,
	GCM_LEN = 2048,
	GCM_AAD_LEN = 13,
	AEAD_CALLS = 30,
	AEAD_LEN = 1500,
	SCATTER_CALLS = 12,
	SCATTER_LEN = 700,
	LOWLEVEL_CALLS = 20,
	LOWLEVEL_LEN = 512,
	RAW_CALLS = 10,
	RAW_LEN = 256,
	BUF = 8192
};

static uint8_t key[16], iv[16], aad[GCM_AAD_LEN];
static uint8_t plain[BUF], sealed[BUF + 64], opened[BUF + 64];
static uint64_t digest = 1469598103934665603ull; /* FNV-1a over every ciphertext */

static void expect(const char *api, const char *cipher, const char *dir, unsigned long calls,
		   unsigned long bytes)
{
	printf("expect api=%s cipher=%s dir=%s calls=%lu bytes=%lu\n", api, cipher, dir, calls, bytes);
}

static void absorb(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		digest = (digest ^ p[i]) * 1099511628211ull;
}

/* `calls` updates of `len` bytes each way through one EVP cipher; GCM adds its AAD and tag. */
static int evp_round_trip(const char *name, const EVP_CIPHER *cipher, int calls, int len, int gcm)
{
	EVP_CIPHER_CTX *enc = EVP_CIPHER_CTX_new(), *dec = EVP_CIPHER_CTX_new();
	int ok = enc && dec && EVP_EncryptInit_ex(enc, cipher, NULL, key, iv) == 1 &&
		 EVP_DecryptInit_ex(dec, cipher, NULL, key, iv) == 1 &&
		 /* no padding: CBC's decryption then holds no block back, so each call checks alone */
		 EVP_CIPHER_CTX_set_padding(enc, 0) == 1 && EVP_CIPHER_CTX_set_padding(dec, 0) == 1;
	int outl = 0;
	uint8_t tag[16];
	if (ok && gcm)
		ok = EVP_EncryptUpdate(enc, NULL, &outl, aad, sizeof(aad)) == 1 &&
		     EVP_DecryptUpdate(dec, NULL, &outl, aad, sizeof(aad)) == 1;
	for (int i = 0; ok && i < calls; i++) {
		int n = 0, m = 0;
		ok = EVP_EncryptUpdate(enc, sealed, &n, plain, len) == 1 &&
		     EVP_DecryptUpdate(dec, opened, &m, sealed, n) == 1;
		absorb(sealed, (size_t)n);
		ok = ok && n == len && m == len && memcmp(opened, plain, (size_t)m) == 0;
	}
	ok = ok && EVP_EncryptFinal_ex(enc, sealed, &outl) == 1;
	if (ok && gcm)
		ok = EVP_CIPHER_CTX_ctrl(enc, EVP_CTRL_GCM_GET_TAG, sizeof(tag), tag) == 1 &&
		     EVP_CIPHER_CTX_ctrl(dec, EVP_CTRL_GCM_SET_TAG, sizeof(tag), tag) == 1;
	ok = ok && EVP_DecryptFinal_ex(dec, opened, &outl) == 1;
	EVP_CIPHER_CTX_free(enc);
	EVP_CIPHER_CTX_free(dec);
	if (!ok) {
		fprintf(stderr, "boringssl_evp: %s round trip failed\n", name);
		return 0;
	}
	expect("evp", name, "encrypt", (unsigned long)calls, (unsigned long)calls * (unsigned long)len);
	/* the decryption side's data calls were given the ciphertext: as many bytes */
	expect("evp", name, "decrypt", (unsigned long)calls, (unsigned long)calls * (unsigned long)len);
	return 1;
}

/* BoringSSL's preferred AEAD API: one seal and one open per message, nonce per message. */
static int aead_round_trip(void)
{
	const EVP_AEAD *aead = EVP_aead_aes_128_gcm();
	EVP_AEAD_CTX ctx;
	if (!EVP_AEAD_CTX_init(&ctx, aead, key, sizeof(key), EVP_AEAD_DEFAULT_TAG_LENGTH, NULL))
		return 0;
	size_t nonce_len = EVP_AEAD_nonce_length(aead), overhead = EVP_AEAD_max_overhead(aead);
	int ok = 1;
	for (int i = 0; ok && i < AEAD_CALLS; i++) {
		size_t n = 0, m = 0;
		iv[0] = (uint8_t)i; /* a fresh nonce per message */
		ok = EVP_AEAD_CTX_seal(&ctx, sealed, &n, sizeof(sealed), iv, nonce_len, plain, AEAD_LEN, aad,
				       sizeof(aad)) == 1 &&
		     n == AEAD_LEN + overhead &&
		     EVP_AEAD_CTX_open(&ctx, opened, &m, sizeof(opened), iv, nonce_len, sealed, n, aad,
				       sizeof(aad)) == 1 &&
		     m == AEAD_LEN && memcmp(opened, plain, m) == 0;
		absorb(sealed, n);
	}
	EVP_AEAD_CTX_cleanup(&ctx);
	iv[0] = 0;
	if (!ok) {
		fprintf(stderr, "boringssl_evp: EVP_AEAD aes-128-gcm round trip failed\n");
		return 0;
	}
	/* a seal is given the plaintext; an open the sealed message (ciphertext and tag) */
	expect("aead", "aes-128-gcm", "encrypt", AEAD_CALLS, (unsigned long)AEAD_CALLS * AEAD_LEN);
	expect("aead", "aes-128-gcm", "decrypt", AEAD_CALLS,
	       (unsigned long)AEAD_CALLS * (AEAD_LEN + overhead));
	return 1;
}

/* The calls OpenSSL advises against, which in BoringSSL run the same AES code as EVP: low-level
 * AES_cbc_encrypt, and EVP_Cipher (whose length is a size_t in BoringSSL, unsigned in OpenSSL). */
static int lowlevel_and_raw(void)
{
	AES_KEY ks;
	uint8_t chain[16];
	memcpy(chain, iv, sizeof(chain));
	if (AES_set_encrypt_key(key, 128, &ks) != 0)
		return 0;
	for (int i = 0; i < LOWLEVEL_CALLS; i++) {
		AES_cbc_encrypt(plain, sealed, LOWLEVEL_LEN, &ks, chain, AES_ENCRYPT);
		absorb(sealed, LOWLEVEL_LEN);
	}
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	int ok = ctx && EVP_EncryptInit_ex(ctx, EVP_aes_128_ctr(), NULL, key, iv) == 1;
	for (int i = 0; ok && i < RAW_CALLS; i++) {
		ok = EVP_Cipher(ctx, sealed, plain, RAW_LEN) == 1;
		absorb(sealed, RAW_LEN);
	}
	EVP_CIPHER_CTX_free(ctx);
	if (!ok) {
		fprintf(stderr, "boringssl_evp: EVP_Cipher aes-128-ctr failed\n");
		return 0;
	}
	expect("aes", "aes-128-cbc", "encrypt", LOWLEVEL_CALLS, (unsigned long)LOWLEVEL_CALLS * LOWLEVEL_LEN);
	expect("raw", "aes-128-ctr", "encrypt", RAW_CALLS, (unsigned long)RAW_CALLS * RAW_LEN);
	return 1;
}

/* The same API's other forms, as BoringSSL's libssl uses them: a context from EVP_AEAD_CTX_new
 * (AES-256-GCM), sealed with seal_scatter (tag apart) and opened with open_gather. */
static int scatter_round_trip(void)
{
	static uint8_t key256[32];
	memcpy(key256, key, sizeof(key));
	memcpy(key256 + sizeof(key), key, sizeof(key));
	const EVP_AEAD *aead = EVP_aead_aes_256_gcm();
	EVP_AEAD_CTX *ctx = EVP_AEAD_CTX_new(aead, key256, sizeof(key256), EVP_AEAD_DEFAULT_TAG_LENGTH);
	if (!ctx)
		return 0;
	size_t nonce_len = EVP_AEAD_nonce_length(aead);
	uint8_t tag[EVP_AEAD_MAX_OVERHEAD];
	int ok = 1;
	for (int i = 0; ok && i < SCATTER_CALLS; i++) {
		size_t tag_len = 0;
		iv[1] = (uint8_t)i;
		ok = EVP_AEAD_CTX_seal_scatter(ctx, sealed, tag, &tag_len, sizeof(tag), iv, nonce_len, plain,
					       SCATTER_LEN, NULL, 0, aad, sizeof(aad)) == 1 &&
		     EVP_AEAD_CTX_open_gather(ctx, opened, iv, nonce_len, sealed, SCATTER_LEN, tag, tag_len,
					      aad, sizeof(aad)) == 1 &&
		     memcmp(opened, plain, SCATTER_LEN) == 0;
		absorb(sealed, SCATTER_LEN);
		absorb(tag, tag_len);
	}
	EVP_AEAD_CTX_free(ctx);
	iv[1] = 0xf1;
	if (!ok) {
		fprintf(stderr, "boringssl_evp: EVP_AEAD aes-256-gcm scatter/gather round trip failed\n");
		return 0;
	}
	/* seal_scatter is given the plaintext (no extra_in), open_gather the ciphertext (tag apart) */
	expect("aead", "aes-256-gcm", "encrypt", SCATTER_CALLS, (unsigned long)SCATTER_CALLS * SCATTER_LEN);
	expect("aead", "aes-256-gcm", "decrypt", SCATTER_CALLS, (unsigned long)SCATTER_CALLS * SCATTER_LEN);
	return 1;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "--also-load") == 0) {
		if (!dlopen(argv[2], RTLD_NOW | RTLD_LOCAL)) {
			fprintf(stderr, "boringssl_evp: %s\n", dlerror());
			return 2;
		}
		printf("also-loaded %s\n", argv[2]);
	} else if (argc != 1) {
		fprintf(stderr, "usage: boringssl_evp [--also-load LIBRARY]\n");
		return 2;
	}
	for (size_t i = 0; i < sizeof(key); i++)
		key[i] = (uint8_t)(0x2b + 7 * i);
	for (size_t i = 0; i < sizeof(iv); i++)
		iv[i] = (uint8_t)(0xf0 + i);
	for (size_t i = 0; i < sizeof(aad); i++)
		aad[i] = (uint8_t)i;
	for (size_t i = 0; i < sizeof(plain); i++)
		plain[i] = (uint8_t)(i * 31 + 5);
	printf("library %s\n", OpenSSL_version(OPENSSL_VERSION));
	printf("aes-hardware %d\n", EVP_has_aes_hardware());
	int ok = evp_round_trip("aes-128-cbc", EVP_aes_128_cbc(), CBC_CALLS, CBC_LEN, 0) &&
		 evp_round_trip("aes-128-ctr", EVP_aes_128_ctr(), CTR_CALLS, CTR_LEN, 0) &&
		 evp_round_trip("aes-128-gcm", EVP_aes_128_gcm(), GCM_CALLS, GCM_LEN, 1) &&
		 aead_round_trip() && scatter_round_trip() && lowlevel_and_raw();
	printf("digest %016llx\n", (unsigned long long)digest);
	return ok ? 0 : 1;
}
