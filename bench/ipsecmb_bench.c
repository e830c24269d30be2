/* SPDX-License-Identifier: MIT */
/*
 * ipsecmb_bench.c - Intel ipsec-mb (Debian's libIPSec_MB) as one of bench/peers.py's peers:
 * AES-128 in one mode and request size through its job API, for a given time, single stream.
 *
 *   ipsecmb_bench MODE BYTES SECONDS [OFFSET]
 *                                        MODE: ecb, ctr, cbc-dec, gcm (ipsec-mb has no XTS)
 *
 * Without OFFSET, from one buffer to another; with it (0..63), in place, the buffer OFFSET bytes
 * past a cache line's start, as `openssl speed` runs (bench/peers.py --places).
 *
 * Prints one line: "<bytes per second> <ipsec-mb's code level> <version>". Before timing, the
 * job's output for that size is compared with OpenSSL EVP's (ciphertext, GCM tag too): a figure
 * is only printed for work that was really done (exit 1 otherwise; 2 for a usage error).
 *
 * A request is one job: ECB, CTR and CBC-decrypt a buffer with the same key and IV each time
 * (what `openssl speed -evp` does with its one context, minus the chaining state); GCM a whole
 * message: IV, data and a 16-byte tag (ipsec-mb's job API has no streaming GCM).
 */
#include <intel-ipsec-mb.h>
#include <openssl/evp.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_BYTES 65536

enum pmode { P_ECB, P_CTR, P_CBC_DEC, P_GCM };

static uint8_t key[16], iv[16], ref[MAX_BYTES], tag[16], ref_tag[16];
static uint8_t src_store[MAX_BYTES + 64] __attribute__((aligned(64))),
	dst_store[MAX_BYTES] __attribute__((aligned(64)));
static uint8_t *src = src_store, *dst = dst_store;
static DECLARE_ALIGNED(uint32_t enc_keys[4 * 15], 16);
static DECLARE_ALIGNED(uint32_t dec_keys[4 * 15], 16);
static DECLARE_ALIGNED(struct gcm_key_data gkey, 64);

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static const char *arch_name(IMB_ARCH a)
{
	static const char *const names[IMB_ARCH_NUM] = {
		[IMB_ARCH_NOAESNI] = "no-aesni", [IMB_ARCH_SSE] = "sse",       [IMB_ARCH_AVX] = "avx",
		[IMB_ARCH_AVX2] = "avx2",        [IMB_ARCH_AVX512] = "avx512",
	};
	return a > IMB_ARCH_NONE && a < IMB_ARCH_NUM ? names[a] : "?";
}

static void fill_job(IMB_JOB *job, enum pmode m, size_t len)
{
	job->src = src;
	job->dst = dst;
	job->cipher_start_src_offset_in_bytes = 0;
	job->msg_len_to_cipher_in_bytes = len;
	job->key_len_in_bytes = IMB_KEY_128_BYTES;
	job->enc_keys = enc_keys;
	job->dec_keys = dec_keys;
	job->iv = iv;
	job->iv_len_in_bytes = 16;
	job->hash_alg = IMB_AUTH_NULL;
	job->cipher_direction = IMB_DIR_ENCRYPT;
	job->chain_order = IMB_ORDER_CIPHER_HASH;
	switch (m) {
	case P_ECB:
		job->cipher_mode = IMB_CIPHER_ECB;
		job->iv_len_in_bytes = 0;
		break;
	case P_CTR:
		job->cipher_mode = IMB_CIPHER_CNTR;
		break;
	case P_CBC_DEC:
		job->cipher_mode = IMB_CIPHER_CBC;
		job->cipher_direction = IMB_DIR_DECRYPT;
		job->chain_order = IMB_ORDER_HASH_CIPHER;
		break;
	case P_GCM:
		job->cipher_mode = IMB_CIPHER_GCM;
		job->hash_alg = IMB_AUTH_AES_GMAC;
		job->enc_keys = job->dec_keys = &gkey;
		job->iv_len_in_bytes = 12;
		job->hash_start_src_offset_in_bytes = 0;
		job->msg_len_to_hash_in_bytes = len;
		job->u.GCM.aad = NULL;
		job->u.GCM.aad_len_in_bytes = 0;
		job->auth_tag_output = tag;
		job->auth_tag_output_len_in_bytes = 16;
		break;
	}
}

/* OpenSSL's answer for the same request, into ref and ref_tag. */
static int reference(enum pmode m, size_t len)
{
	const EVP_CIPHER *c = m == P_ECB   ? EVP_aes_128_ecb()
			      : m == P_CTR ? EVP_aes_128_ctr()
			      : m == P_GCM ? EVP_aes_128_gcm()
					   : EVP_aes_128_cbc();
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	int n = 0, f = 0, ok = ctx != NULL;
	if (ok && m == P_GCM) {
		ok = EVP_CipherInit_ex(ctx, c, NULL, NULL, NULL, 1) &&
		     EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_IVLEN, 12, NULL) &&
		     EVP_CipherInit_ex(ctx, NULL, NULL, key, iv, 1);
	} else if (ok) {
		ok = EVP_CipherInit_ex(ctx, c, NULL, key, m == P_ECB ? NULL : iv, m != P_CBC_DEC);
	}
	ok = ok && EVP_CIPHER_CTX_set_padding(ctx, 0) && EVP_CipherUpdate(ctx, ref, &n, src, (int)len) &&
	     EVP_CipherFinal_ex(ctx, ref + n, &f);
	if (ok && m == P_GCM)
		ok = EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, 16, ref_tag);
	EVP_CIPHER_CTX_free(ctx);
	return ok;
}

int main(int argc, char **argv)
{
	static const char *const names[] = { "ecb", "ctr", "cbc-dec", "gcm" };
	int m = -1;
	const bool args_ok = argc == 4 || argc == 5;
	for (int i = 0; args_ok && i < 4; i++)
		if (!strcmp(argv[1], names[i]))
			m = i;
	const long len = args_ok ? atol(argv[2]) : 0;
	const double seconds = args_ok ? atof(argv[3]) : 0;
	const long offset = argc == 5 ? atol(argv[4]) : 0;
	/* ECB and CBC take whole blocks; CTR and GCM any length (a TLS record's) */
	const bool whole_blocks_only = m == 0 || m == 2;
	if (m < 0 || len < 16 || len > MAX_BYTES || (whole_blocks_only && len % 16) || seconds <= 0 ||
	    offset < 0 || offset > 63) {
		fprintf(stderr,
			"usage: %s ecb|ctr|cbc-dec|gcm BYTES SECONDS [OFFSET] (BYTES: 16..%d, whole blocks for ecb "
			"and cbc-dec; OFFSET 0..63: in place, that far past a cache line)\n",
			argv[0], MAX_BYTES);
		return 2;
	}
	if (argc == 5)
		src = dst = src_store + offset;
	for (int i = 0; i < 16; i++) {
		key[i] = (uint8_t)(i * 29 + 1);
		iv[i] = (uint8_t)(0xa0 + i);
	}
	for (long i = 0; i < len; i++)
		src[i] = (uint8_t)(i * 131 + 7);

	IMB_MGR *mgr = alloc_mb_mgr(0);
	IMB_ARCH arch = IMB_ARCH_NONE;
	if (!mgr) {
		fprintf(stderr, "ipsecmb_bench: alloc_mb_mgr failed\n");
		return 1;
	}
	init_mb_mgr_auto(mgr, &arch);
	if (imb_get_errno(mgr) != 0) {
		fprintf(stderr, "ipsecmb_bench: init_mb_mgr_auto: %s\n",
			imb_get_strerror(imb_get_errno(mgr)));
		return 1;
	}
	IMB_AES_KEYEXP_128(mgr, key, enc_keys, dec_keys);
	IMB_AES128_GCM_PRE(mgr, key, &gkey);

	/* One request, checked against OpenSSL. */
	if (!reference((enum pmode)m, (size_t)len)) {
		fprintf(stderr, "ipsecmb_bench: OpenSSL could not make the reference\n");
		return 1;
	}
	IMB_JOB *job = IMB_GET_NEXT_JOB(mgr);
	fill_job(job, (enum pmode)m, (size_t)len);
	job = IMB_SUBMIT_JOB(mgr);
	if (!job)
		job = IMB_FLUSH_JOB(mgr);
	if (!job || job->status != IMB_STATUS_COMPLETED || memcmp(dst, ref, (size_t)len) ||
	    (m == P_GCM && memcmp(tag, ref_tag, 16))) {
		fprintf(stderr, "ipsecmb_bench: %s %ld bytes differs from OpenSSL's (status %d)\n", names[m],
			len, job ? (int)job->status : -1);
		return 1;
	}

	/* Timed: jobs back to back, the clock read every 64; completed jobs counted. */
	uint64_t done = 0;
	const double t0 = now();
	double t = t0;
	while (t - t0 < seconds) {
		for (int i = 0; i < 64; i++) {
			job = IMB_GET_NEXT_JOB(mgr);
			fill_job(job, (enum pmode)m, (size_t)len);
			job = IMB_SUBMIT_JOB(mgr);
			for (; job; job = IMB_GET_COMPLETED_JOB(mgr))
				done += job->status == IMB_STATUS_COMPLETED;
		}
		t = now();
	}
	while ((job = IMB_FLUSH_JOB(mgr)) != NULL)
		done += job->status == IMB_STATUS_COMPLETED;
	t = now();
	printf("%.6e %s %s\n", (double)done * (double)len / (t - t0), arch_name(arch), imb_get_version_str());
	free_mb_mgr(mgr);
	return 0;
}
