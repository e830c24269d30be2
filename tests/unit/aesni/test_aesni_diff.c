/* SPDX-License-Identifier: MIT */
/*
 * test_aesni_diff.c - differential test of the in-process AES backend against OpenSSL EVP:
 * every mode (ECB, CBC, CTR, CFB128, OFB, XTS, GCM), key size and direction, random keys, IVs
 * and lengths 0..64 KiB (weighted to small sizes and block boundaries), our side cut into random
 * update chunks, random buffer alignment and in-place operation, GCM with random AAD splits,
 * IV lengths 1..64 and tag lengths 4..16, counters placed next to their carry points. Each case
 * runs on a random code path (VAES or the plain AES-NI one on x86; ARMv8 CE on aarch64), and the IV/num state left behind
 * is compared with EVP's too.
 *
 *   test_aesni_diff [--cases N] [--long] [--seed S] [--only I] [--quiet]
 * Every case derives from (seed, index): the first case that differs fails the test with the
 * line that reproduces it.
 */
#include <inttypes.h>
#include <openssl/evp.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "aes_internal.h" /* the 512-bit GHASH forms */
#include "aesni.h"

#define MAX_LEN 65536

enum mode { M_ECB, M_CBC, M_CTR, M_CFB, M_OFB, M_XTS, M_GCM, M_COUNT };
static const char *const mode_name[M_COUNT] = { "ecb", "cbc", "ctr", "cfb128", "ofb", "xts", "gcm" };

static uint64_t rng;
static uint64_t rnd(void)
{
	/* splitmix64: tiny, good enough for test data, reproducible from one seed */
	uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}
static size_t below(size_t n)
{
	return n ? (size_t)(rnd() % n) : 0;
}
static void fill(uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		p[i] = (uint8_t)rnd();
}

static size_t pick_len(size_t max)
{
	const size_t r = below(100);
	long len;
	if (r < 40)
		len = (long)below(65);
	else if (r < 65)
		len = 16 * (long)below(65) + (long)below(3) - 1;
	else if (r < 85)
		len = (long)below(8193);
	else if (r < 95)
		len = 16 * (long)below(4097) + (long)below(3) - 1;
	else
		len = (long)below(MAX_LEN + 1);
	if (len < 0)
		len = 0;
	return (size_t)len > max ? max : (size_t)len;
}

/* The EVP cipher of a mode for the key size index i (0: 128, 1: 192, 2: 256). */
#define BY_BITS(m) (const EVP_CIPHER *[]){ EVP_aes_128_##m(), EVP_aes_192_##m(), EVP_aes_256_##m() }[i]

static const EVP_CIPHER *evp_cipher(enum mode m, unsigned bits)
{
	const int i = bits == 128 ? 0 : bits == 192 ? 1 : 2;
	switch (m) {
	case M_ECB:
		return BY_BITS(ecb);
	case M_CBC:
		return BY_BITS(cbc);
	case M_CTR:
		return BY_BITS(ctr);
	case M_CFB:
		return BY_BITS(cfb128);
	case M_OFB:
		return BY_BITS(ofb);
	case M_XTS:
		return bits == 128 ? EVP_aes_128_xts() : EVP_aes_256_xts();
	case M_GCM:
		return BY_BITS(gcm);
	default:
		return NULL;
	}
}

/* Buffers on 64-byte lines with slack for a random misalignment; our_buf's bytes outside the
 * output keep GUARD_BYTE. */
#define GUARD_BYTE 0x5a
static uint8_t src_buf[MAX_LEN + 64] __attribute__((aligned(64))),
	ref_buf[MAX_LEN + 64] __attribute__((aligned(64))),
	our_buf[MAX_LEN + 64] __attribute__((aligned(64)));

/* A data pointer's place on its line: half the time whole blocks off it (0, 16, 32 or 48 bytes:
 * the 512-bit kernels align to the line from there, XTS_ALIGN_MIN_BLOCKS), else any byte. */
static size_t line_offset(void)
{
	return below(2) ? 16 * below(4) : below(64);
}

/* The end of MAX_LEN bytes followed by a page nothing may touch: an input placed there ends at
 * the page, and a kernel that loads a whole register past its input's end (where a 16-byte tail
 * should be loaded alone) faults instead of reading another input's bytes unnoticed. */
static uint8_t *guarded_end(void)
{
	static uint8_t *end;
	if (!end) {
		const size_t page = (size_t)sysconf(_SC_PAGESIZE);
		const size_t span = (MAX_LEN + page - 1) / page * page;
		uint8_t *p =
			mmap(NULL, span + page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED || mprotect(p + span, page, PROT_NONE) != 0)
			abort();
		end = p + span;
	}
	return end;
}

struct outcome {
	uint8_t iv[16]; /* EVP's updated IV / counter */
	int num;
	uint8_t tag[16];
};

/* OpenSSL's answer, in one update call. */
static int reference(enum mode m, unsigned bits, const uint8_t *key, const uint8_t *iv, size_t ivlen,
		     const uint8_t *aad, size_t aadlen, const uint8_t *in, uint8_t *out, size_t len, int enc,
		     struct outcome *res)
{
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	int ok = 0, n = 0;
	if (!ctx)
		return 0;
	if (!EVP_CipherInit_ex(ctx, evp_cipher(m, bits), NULL, NULL, NULL, enc))
		goto done;
	if (m == M_GCM && !EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_IVLEN, (int)ivlen, NULL))
		goto done;
	if (!EVP_CipherInit_ex(ctx, NULL, NULL, key, iv, enc))
		goto done;
	EVP_CIPHER_CTX_set_padding(ctx, 0);
	if (aadlen && !EVP_CipherUpdate(ctx, NULL, &n, aad, (int)aadlen))
		goto done;
	if (len && !EVP_CipherUpdate(ctx, out, &n, in, (int)len))
		goto done;
	if (m == M_GCM) {
		if (!EVP_CipherFinal_ex(ctx, out + len, &n))
			goto done;
		if (!EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, 16, res->tag))
			goto done;
	} else if (m != M_XTS) {
		if (!EVP_CIPHER_CTX_get_updated_iv(ctx, res->iv, 16))
			goto done;
		res->num = EVP_CIPHER_CTX_get_num(ctx);
	}
	ok = 1;
done:
	EVP_CIPHER_CTX_free(ctx);
	return ok;
}

struct case_desc {
	uint64_t index;
	enum mode m;
	unsigned bits;
	int enc;
	size_t len, ivlen, aadlen, taglen;
	int inplace;
	int tweaked; /* XTS: the unit from its encrypted tweak (ct_aes_xts_tweaked) */
	enum ct_aesni_level level;
};

/* The run: set by main() from the command line. */
static uint64_t seed, cases = 100000, only = UINT64_MAX;
static int quiet;

static void report(const struct case_desc *c, const char *what)
{
	fail_msg("case %" PRIu64
		 ": %s %s-%u %s len=%zu ivlen=%zu aad=%zu tag=%zu %s%s [%s]\n"
		 "  reproduce: test_aesni_diff --seed %" PRIu64 " --only %" PRIu64,
		 c->index, what, mode_name[c->m], c->bits, c->enc ? "enc" : "dec", c->len, c->ivlen,
		 c->aadlen, c->taglen, c->inplace ? "in-place" : "", c->tweaked ? " tweaked" : "",
		 ct_aesni_level_name(c->level), seed, c->index);
}

/* Random cut points; whole blocks only where the API takes whole blocks. */
static size_t next_chunk(size_t left, size_t unit)
{
	if (left == 0)
		return 0;
	const size_t r = below(4);
	size_t n = r == 0 ? left : r == 1 ? below(left + 1) : below(unit == 16 ? 80 : 40);
	if (unit == 16)
		n &= ~(size_t)15;
	if (n == 0)
		n = unit == 16 ? 16 : 1;
	return n > left ? left : n;
}

/* The levels this run covers: every one of this build up to the best the CPU (and
 * CRYPTRACE_AESNI_MAX) allows, lowest first; main() fills them. */
static enum ct_aesni_level levels[4];
static size_t nlevels;

static void run_case(uint64_t index, uint64_t *bytes)
{
	struct case_desc c = { .index = index };
	uint8_t key[64], iv[64], aad[512], tag[16];
	struct outcome ref = { 0 };

	rng = seed ^ (index * 0xd1b54a32d192ed03ull);
	rnd();
	c.m = (enum mode)below(M_COUNT);
	c.bits = (unsigned[]){ 128, 192, 256 }[below(3)];
	if (c.m == M_XTS && c.bits == 192)
		c.bits = below(2) ? 128 : 256;
	c.enc = (int)below(2);
	c.level = levels[below(nlevels)];
	c.inplace = below(4) == 0;
	c.len = pick_len(MAX_LEN);
	if (c.m == M_ECB || c.m == M_CBC)
		c.len &= ~(size_t)15;
	if (c.m == M_XTS && c.len < 16)
		c.len += 16;
	c.tweaked = c.m == M_XTS && below(2);
	c.ivlen = 16;
	if (c.m == M_GCM) {
		c.ivlen = below(2) ? 12 : 1 + below(64);
		c.aadlen = below(3) == 0 ? 0 : below(4) == 0 ? below(sizeof(aad) + 1) : below(40);
		c.taglen = 4 + below(13);
	}
	ct_aesni_set_max_level(c.level);
#if CT_AES_HAVE_X86_KERNELS
	ct_aes_vaes512_set_ghash_form((int)(index & 1));    /* both forms, whichever this CPU picks */
	ct_aes_vaes512_set_xts_keys((int)(index >> 1 & 1)); /* both XTS key sources, too */
#endif

	const size_t keylen = c.bits / 8 * (c.m == M_XTS ? 2 : 1);
	fill(key, keylen);
	fill(iv, c.ivlen);
	fill(aad, c.aadlen);
	if (c.m == M_CTR && below(4) == 0) {
		/* Next to the 64-bit or the full 128-bit carry of the counter. */
		memset(iv + 8, 0xff, 8);
		iv[15] = (uint8_t)(0xff - below(40));
		if (below(2))
			memset(iv, 0xff, 8);
	}
	uint8_t *src = below(4) == 0 ? guarded_end() - c.len : src_buf + line_offset(),
		*refo = ref_buf + below(16);
	uint8_t *out = our_buf + line_offset();
	fill(src, c.len);
	*bytes += c.len;

	/* GCM decryption needs a genuine tag: the reference encrypts, we decrypt its output. */
	const int ref_enc = c.m == M_GCM ? 1 : c.enc;
	if (!reference(c.m, c.bits, key, iv, c.ivlen, aad, c.aadlen, src, refo, c.len, ref_enc, &ref)) {
		report(&c, "OpenSSL refused the case");
		return;
	}
	const uint8_t *in = (c.m == M_GCM && !c.enc) ? refo : src;
	const uint8_t *want = (c.m == M_GCM && !c.enc) ? src : refo;
	const uint8_t *from = in;
	/* Guard bytes round the output: a kernel's masked or whole-register store must not reach
	 * past the data. */
	memset(our_buf, GUARD_BYTE, sizeof(our_buf));
	if (c.inplace) {
		memcpy(out, in, c.len);
		from = out;
	}

	struct ct_aes_key k1, k2;
	uint8_t state[16], ecount[16];
	unsigned num = 0;
	memcpy(state, iv, 16);
	const size_t unit = (c.m == M_ECB || c.m == M_CBC) ? 16 : 1;
	int rc = 0;

	if (c.m == M_XTS) {
		ct_aes_set_key(&k1, key, c.bits);
		ct_aes_set_key(&k2, key + c.bits / 8, c.bits);
		if (c.tweaked) {
			uint8_t t[16];
			ct_aes_xts_tweak(&k2, iv, t);
			rc = ct_aes_xts_tweaked(&k1, t, from, out, c.len, c.enc);
		} else {
			rc = ct_aes_xts(&k1, &k2, iv, from, out, c.len, c.enc);
		}
	} else if (c.m == M_GCM) {
		struct ct_aes_gcm g;
		ct_aes_gcm_init(&g, key, c.bits);
		rc |= ct_aes_gcm_setiv(&g, iv, c.ivlen);
		for (size_t off = 0, n; off < c.aadlen; off += n) {
			n = next_chunk(c.aadlen - off, 1);
			rc |= ct_aes_gcm_aad(&g, aad + off, n);
		}
		for (size_t off = 0, n; off < c.len; off += n) {
			n = next_chunk(c.len - off, 1);
			rc |= (c.enc ? ct_aes_gcm_encrypt : ct_aes_gcm_decrypt)(&g, from + off, out + off, n);
		}
		if (c.enc) {
			ct_aes_gcm_tag(&g, tag);
			if (memcmp(tag, ref.tag, c.taglen) != 0)
				report(&c, "tag differs");
		} else {
			struct ct_aes_gcm copy = g;
			uint8_t forged[16];
			if (ct_aes_gcm_verify(&g, ref.tag, c.taglen) != 0)
				report(&c, "genuine tag rejected");
			memcpy(forged, ref.tag, 16);
			forged[below(c.taglen)] ^= (uint8_t)(1u << below(8));
			if (ct_aes_gcm_verify(&copy, forged, c.taglen) == 0)
				report(&c, "forged tag accepted");
		}
		ct_aes_gcm_wipe(&g);
	} else {
		ct_aes_set_key(&k1, key, c.bits);
		for (size_t off = 0, n; off < c.len; off += n) {
			n = next_chunk(c.len - off, unit);
			const uint8_t *i = from + off;
			uint8_t *o = out + off;
			switch (c.m) {
			case M_ECB:
				(c.enc ? ct_aes_ecb_encrypt : ct_aes_ecb_decrypt)(&k1, i, o, n);
				break;
			case M_CBC:
				(c.enc ? ct_aes_cbc_encrypt : ct_aes_cbc_decrypt)(&k1, state, i, o, n);
				break;
			case M_CTR:
				ct_aes_ctr128(&k1, state, ecount, &num, i, o, n);
				break;
			case M_CFB:
				ct_aes_cfb128(&k1, state, &num, i, o, n, c.enc);
				break;
			case M_OFB:
				ct_aes_ofb128(&k1, state, &num, i, o, n);
				break;
			default:
				break;
			}
		}
		if (c.m != M_ECB && memcmp(state, ref.iv, 16) != 0)
			report(&c, "IV/counter state differs from EVP's updated IV");
		if ((c.m == M_CTR || c.m == M_CFB || c.m == M_OFB) && (int)num != ref.num)
			report(&c, "num differs");
	}
	if (rc != 0)
		report(&c, "our call failed");
	if (memcmp(out, want, c.len) != 0)
		report(&c, "output differs");
	for (const uint8_t *g = our_buf; g < our_buf + sizeof(our_buf); g++)
		if ((g < out || g >= out + c.len) && *g != GUARD_BYTE) {
			report(&c, "wrote outside the output");
			break;
		}
	ct_aes_key_wipe(&k1);
	ct_aes_key_wipe(&k2);
}

/* GCM's inc32 must wrap inside the low 32 bits: find an IV whose J0 ends just below 2^32 so a
 * 64 KiB message crosses the wrap, and compare with OpenSSL there. */
static void gcm_wrap_case(void)
{
	uint8_t key[16] = { 1, 2, 3 }, iv[16], tag[16];
	struct ct_aes_gcm g;
	struct outcome ref;
	uint32_t low = 0;

	ct_aes_gcm_init(&g, key, 128);
	for (uint64_t tries = 0;; tries++) {
		memcpy(iv, &tries, 8);
		memset(iv + 8, 0x5c, 8);
		ct_aes_gcm_setiv(&g, iv, 16);
		low = (uint32_t)g.ctr[12] << 24 | (uint32_t)g.ctr[13] << 16 | (uint32_t)g.ctr[14] << 8 |
		      g.ctr[15];
		if (low >= 0xfffff800u)
			break;
	}
	fill(src_buf, MAX_LEN);
	if (!reference(M_GCM, 128, key, iv, 16, NULL, 0, src_buf, ref_buf, MAX_LEN, 1, &ref))
		fail_msg("gcm-wrap: OpenSSL refused");
	ct_aes_gcm_encrypt(&g, src_buf, our_buf, MAX_LEN);
	ct_aes_gcm_tag(&g, tag);
	if (memcmp(our_buf, ref_buf, MAX_LEN) || memcmp(tag, ref.tag, 16))
		fail_msg("gcm-wrap: counter 0x%08x crossing 2^32 differs from OpenSSL [%s]", low,
			 ct_aesni_level_name(ct_aesni_level()));
	ct_aes_gcm_wipe(&g);
}

/* The best level this CPU (and CRYPTRACE_AESNI_MAX) allows, read before any test caps it. */
static enum ct_aesni_level best;

/* GCM at the edges of the bulk kernels (the stitched ones take whole batches of 32 blocks, the
 * rest goes to the two-pass kernels, 16 and then 8 blocks at a time, then block-wise): every
 * length 16k + r around 1, 2, 3, 4, 6, 8, 16 and 17 batches of 16 blocks with r in
 * {0, 1, 15}, AAD of 0, 1, 5, 13, 16, 17 and 31 bytes (one call: up to a block, it waits in pend;
 * TLS's are 5 and 13), encryption and decryption, out of place
 * (misaligned) and in place, the data in one call or after a 5-byte first call (the kernel then
 * starts mid-stream on an unaligned pointer); ciphertext/plaintext and the tag compared with
 * OpenSSL, decryption's tag verified and a forged one refused. On the level given. */
static void gcm_edges(enum ct_aesni_level level)
{
	static const size_t ks[] = { 15, 16, 17, 31,  32,  33,  47,  48,  49,  63,  64, 65,
				     95, 96, 97, 127, 128, 129, 255, 256, 257, 271, 272 };
	static const size_t rs[] = { 0, 1, 15 }, aads[] = { 0, 1, 5, 13, 16, 17, 31 };
	uint8_t key[32], iv[12], aad[32], tag[16];
	unsigned n = 0;

	ct_aesni_set_max_level(level);
	for (size_t a = 0; a < sizeof(ks) / sizeof(ks[0]); a++)
		for (size_t b = 0; b < 3; b++)
			for (size_t c = 0; c < sizeof(aads) / sizeof(aads[0]); c++)
				for (int v = 0; v < 8; v++, n++) {
					const int enc = v & 1, inplace = v >> 1 & 1, lead = v >> 2 & 1;
					const size_t len = 16 * ks[a] + rs[b], alen = aads[c];
					const unsigned bits = (unsigned[]){ 128, 192, 256 }[n % 3];
					struct outcome ref;
					rng = n * 0x9e3779b97f4a7c15ull + 1;
					fill(key, sizeof(key));
					fill(iv, sizeof(iv));
					fill(aad, sizeof(aad));
					uint8_t *src = src_buf + 1, *refo = ref_buf, *out = our_buf + 3;
					fill(src, len);
					if (!reference(M_GCM, bits, key, iv, 12, aad, alen, src, refo, len, 1,
						       &ref))
						fail_msg("gcm-edges: OpenSSL refused");
					const uint8_t *in = enc ? src : refo, *want = enc ? refo : src;
					if (inplace) {
						memcpy(out, in, len);
						in = out;
					}
					struct ct_aes_gcm g;
					int rc = ct_aes_gcm_init(&g, key, bits) |
						 ct_aes_gcm_setiv(&g, iv, 12) | ct_aes_gcm_aad(&g, aad, alen);
					int (*const op)(struct ct_aes_gcm *, const uint8_t *, uint8_t *,
							size_t) = enc ? ct_aes_gcm_encrypt
								      : ct_aes_gcm_decrypt;
					const size_t first = lead ? 5 : 0;
					if (first) /* else the data in one call (with a pending AAD block, a
						    * first call of 0 bytes would take its share alone) */
						rc |= op(&g, in, out, first);
					rc |= op(&g, in + first, out + first, len - first);
					int tag_ok;
					if (enc) {
						ct_aes_gcm_tag(&g, tag);
						tag_ok = memcmp(tag, ref.tag, 16) == 0;
					} else {
						struct ct_aes_gcm copy = g;
						uint8_t forged[16];
						memcpy(forged, ref.tag, 16);
						forged[n % 16] ^= 0x40;
						tag_ok = ct_aes_gcm_verify(&g, ref.tag, 16) == 0 &&
							 ct_aes_gcm_verify(&copy, forged, 16) != 0;
					}
					ct_aes_gcm_wipe(&g);
					if (rc || memcmp(out, want, len) || !tag_ok)
						fail_msg(
							"gcm-edges [%s]: AES-%u %s len=%zu aad=%zu %s%s: %s differs",
							ct_aesni_level_name(level), bits, enc ? "enc" : "dec",
							len, alen, inplace ? "in-place" : "misaligned",
							lead ? ", 5-byte first call" : "",
							rc        ? "return code"
							: !tag_ok ? "tag"
								  : "output");
				}
	print_message("gcm-edges [%s]: %u cases\n", ct_aesni_level_name(level), n);
}

static void test_gcm_batch_edges(void **state)
{
	(void)state;
	for (size_t l = 0; l < nlevels; l++)
		gcm_edges(levels[l]);
#if CT_AES_HAVE_X86_KERNELS
	/* the 512-bit level in the form this CPU did not pick too */
	for (size_t l = 0; l < nlevels; l++)
		if (levels[l] == CT_AESNI_VAES512) {
			const int picked = ct_aes_vaes512_ghash_form();
			ct_aes_vaes512_set_ghash_form(!picked);
			print_message("gcm-edges [vaes512], GHASH %s:\n",
				      picked ? "Karatsuba" : "schoolbook");
			gcm_edges(levels[l]);
			ct_aes_vaes512_set_ghash_form(-1);
		}
#endif
	ct_aesni_set_max_level(best);
}

static void test_gcm_counter_wrap(void **state)
{
	(void)state;
	for (size_t l = 0; l < nlevels; l++) {
		ct_aesni_set_max_level(levels[l]);
		gcm_wrap_case();
	}
	ct_aesni_set_max_level(best);
}

static void test_random_cases(void **state)
{
	(void)state;
	uint64_t bytes = 0, per_mode[M_COUNT] = { 0 };
	if (only != UINT64_MAX) {
		run_case(only, &bytes);
	} else {
		for (uint64_t i = 0; i < cases; i++) {
			run_case(i, &bytes);
			per_mode[(rng = seed ^ (i * 0xd1b54a32d192ed03ull), rnd(), below(M_COUNT))]++;
			if (!quiet && i && i % 500000 == 0)
				print_message("  %" PRIu64 " cases\n", i);
		}
	}
	print_message("cases per mode:");
	for (int m = 0; m < M_COUNT; m++)
		print_message(" %s=%" PRIu64, mode_name[m], per_mode[m]);
	print_message("\n%.1f MB compared, seed %" PRIu64 "\n", bytes / 1e6, seed);
#if CT_AES_HAVE_X86_KERNELS
	ct_aes_vaes512_set_ghash_form(-1);
	ct_aes_vaes512_set_xts_keys(-1);
#endif
}

int main(int argc, char **argv)
{
	seed = (uint64_t)time(NULL) * 2654435761u ^ (uint64_t)clock();
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--cases") && i + 1 < argc)
			cases = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--long"))
			cases = 3000000;
		else if (!strcmp(argv[i], "--seed") && i + 1 < argc)
			seed = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--only") && i + 1 < argc)
			only = strtoull(argv[++i], NULL, 0);
		else if (!strcmp(argv[i], "--quiet"))
			quiet = 1;
		else {
			fprintf(stderr, "usage: %s [--cases N] [--long] [--seed S] [--only I] [--quiet]\n",
				argv[0]);
			return 2;
		}
	}
	if (!ct_aesni_available()) {
		printf("SKIP: this CPU has no AES-NI + PCLMULQDQ nor ARMv8 AES + PMULL (or "
		       "CRYPTRACE_AESNI_MAX=none)\n");
		return 77;
	}
	best = ct_aesni_level();
	const size_t built = ct_aesni_build_levels(levels, 4);
	printf("seed %" PRIu64 ", %" PRIu64 " cases, levels:", seed, cases);
	for (size_t l = 0; l < built; l++)
		if (levels[l] <= best) /* ascending: the runnable ones come first */
			printf(" %s", ct_aesni_level_name(levels[nlevels++] = levels[l]));
	for (size_t l = nlevels; l < built; l++)
		printf("; not run here: %s (the CPU lacks it, or CRYPTRACE_AESNI_MAX)",
		       ct_aesni_level_name(levels[l]));
	printf("\n");
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_gcm_counter_wrap),
		cmocka_unit_test(test_gcm_batch_edges),
		cmocka_unit_test(test_random_cases),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
