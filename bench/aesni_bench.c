/* SPDX-License-Identifier: MIT */
/*
 * aesni_bench.c - the in-process AES backend against OpenSSL EVP, side by side in one run:
 * native OpenSSL, OpenSSL with AES-NI masked off (OPENSSL_ia32cap="~0x200000200000000", the
 * "libcrypto without its AES assembly" case; a child process, because libcrypto reads the mask
 * when it loads) and ours, per mode and request size, as GB/s with the ratios, plus how close
 * ours gets to the instruction-throughput limit measured on this CPU.
 *
 *   aesni_bench [--bits 128|192|256] [--modes m1,m2,..] [--sizes s1,s2,..] [--ms N]
 *               [--level L] [--vs-level L] [--misalign N] [--in-place] [--aad N] [--no-masked]
 *               [--limits]
 * --vs-level L adds our code at level L (aesni, vaes, vaes512), timed in the same rounds as the
 * --level one (default: the best the CPU has), and the ratio of the two.
 * --aad N gives each GCM message N bytes of AAD (0-64) in one call, before its data: a TLS
 * record's (13 bytes in TLS 1.2, 5 in TLS 1.3); 0 (the default) as openssl speed.
 * --limits prints the measured instruction limits, the widest and our code level, and stops.
 * --ghash karatsuba|schoolbook forces the 512-bit level's GHASH multiply form (default: the one
 * measured at first use, aes_vaes512.c); the header says which ran.
 * --xts-keys held|broadcast forces where the 512-bit XTS batch loop takes its round keys from
 * (registers, or the key schedule in every batch; default: by the CPU, as the GHASH form).
 * Single thread; pin it (taskset -c 1) on a quiet machine for stable numbers.
 */
#include <cpuid.h>
#include <openssl/evp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "aes_internal.h" /* the 512-bit GHASH's multiply form */
#include "aesni.h"
#include "cpu.h"
#include "trace_format.h"

#define MASK "~0x200000200000000"
#define MAX_SIZE 16384

enum bmode {
	B_ECB,
	B_CBC_ENC,
	B_CBC_DEC,
	B_CTR,
	B_CFB_ENC,
	B_CFB_DEC,
	B_OFB,
	B_XTS_ENC,
	B_XTS_DEC,
	B_GCM_ENC,
	B_GCM_DEC,
	B_COUNT
};
static const char *const bname[B_COUNT] = { "ecb", "cbc-enc", "cbc-dec", "ctr",     "cfb-enc", "cfb-dec",
					    "ofb", "xts-enc", "xts-dec", "gcm-enc", "gcm-dec" };
/* Serial modes wait for each block: their limit is latency, not throughput. */
static const int serial[B_COUNT] = { [B_CBC_ENC] = 1, [B_CFB_ENC] = 1, [B_OFB] = 1 };

static size_t sizes[16] = { 16, 64, 256, 1024, 8192, 16384 };
static int nsizes = 6;
static int enabled[B_COUNT];
static unsigned bits = 128;
static double trial_ms = 60; /* time budget per table cell */
static double tsc_hz;

static uint8_t key[64], iv[16], tag[16];
/* The data: 64-byte aligned unless --misalign N moves both pointers N bytes on (a program's
 * buffers are often only 16-byte aligned, where every 64-byte load crosses a cache line), and
 * one buffer with --in-place (as openssl speed runs). */
static uint8_t inbuf_store[MAX_SIZE + 128] __attribute__((aligned(64))),
	outbuf_store[MAX_SIZE + 128] __attribute__((aligned(64)));
static uint8_t *inbuf = inbuf_store, *outbuf = outbuf_store;
static unsigned misalign;
static uint8_t aad[64];
static unsigned aad_len;
static int in_place;

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- OpenSSL ---- */

/* The EVP cipher of a mode for the key size index i (0: 128, 1: 192, 2: 256). */
#define BY_BITS(m) (const EVP_CIPHER *[]){ EVP_aes_128_##m(), EVP_aes_192_##m(), EVP_aes_256_##m() }[i]

static const EVP_CIPHER *evp_of(enum bmode m)
{
	const int i = bits == 128 ? 0 : bits == 192 ? 1 : 2;
	switch (m) {
	case B_ECB:
		return BY_BITS(ecb);
	case B_CBC_ENC:
	case B_CBC_DEC:
		return BY_BITS(cbc);
	case B_CTR:
		return BY_BITS(ctr);
	case B_CFB_ENC:
	case B_CFB_DEC:
		return BY_BITS(cfb128);
	case B_OFB:
		return BY_BITS(ofb);
	case B_XTS_ENC:
	case B_XTS_DEC:
		return bits == 256 ? EVP_aes_256_xts() : EVP_aes_128_xts();
	case B_GCM_ENC:
	case B_GCM_DEC:
		return BY_BITS(gcm);
	default:
		return NULL;
	}
}

static int is_enc(enum bmode m)
{
	return !(m == B_CBC_DEC || m == B_CFB_DEC || m == B_XTS_DEC || m == B_GCM_DEC);
}

/* One request the way a program issues it: streaming modes just update; XTS starts each data
 * unit with its IV; GCM is a whole message (IV, data, tag), as in openssl speed -evp. */
__attribute__((noinline)) static void evp_op(EVP_CIPHER_CTX *ctx, enum bmode m, size_t len)
{
	int n;
	switch (m) {
	case B_XTS_ENC:
	case B_XTS_DEC:
		EVP_CipherInit_ex(ctx, NULL, NULL, NULL, iv, -1);
		EVP_CipherUpdate(ctx, outbuf, &n, inbuf, (int)len);
		break;
	case B_GCM_ENC:
		EVP_CipherInit_ex(ctx, NULL, NULL, NULL, iv, -1);
		if (aad_len)
			EVP_CipherUpdate(ctx, NULL, &n, aad, (int)aad_len);
		EVP_CipherUpdate(ctx, outbuf, &n, inbuf, (int)len);
		EVP_CipherFinal_ex(ctx, outbuf + n, &n);
		EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, 16, tag);
		break;
	case B_GCM_DEC:
		EVP_CipherInit_ex(ctx, NULL, NULL, NULL, iv, -1);
		if (aad_len)
			EVP_CipherUpdate(ctx, NULL, &n, aad, (int)aad_len);
		EVP_CipherUpdate(ctx, outbuf, &n, inbuf, (int)len);
		EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_SET_TAG, 16, tag);
		if (EVP_CipherFinal_ex(ctx, outbuf + n, &n) <= 0) {
			fprintf(stderr, "gcm-dec: OpenSSL rejected the tag\n");
			exit(1);
		}
		break;
	default:
		EVP_CipherUpdate(ctx, outbuf, &n, inbuf, (int)len);
		break;
	}
}

/* For decryption benchmarks the input is a genuine ciphertext (GCM checks its tag). */
static void prepare_input(enum bmode m, size_t len)
{
	for (size_t i = 0; i < len; i++)
		inbuf[i] = (uint8_t)(i * 131 + 7);
	if (m == B_GCM_DEC) {
		EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
		int n;
		EVP_EncryptInit_ex(ctx, evp_of(m), NULL, key, iv);
		if (aad_len)
			EVP_EncryptUpdate(ctx, NULL, &n, aad, (int)aad_len);
		EVP_EncryptUpdate(ctx, outbuf, &n, inbuf, (int)len);
		EVP_EncryptFinal_ex(ctx, outbuf + n, &n);
		EVP_CIPHER_CTX_ctrl(ctx, EVP_CTRL_AEAD_GET_TAG, 16, tag);
		memcpy(inbuf, outbuf, len);
		EVP_CIPHER_CTX_free(ctx);
	}
}

/* ---- ours ---- */

struct ours {
	struct ct_aes_key k1, k2;
	struct ct_aes_gcm gcm;
	uint8_t state[16], ecount[16];
	unsigned num;
};

__attribute__((noinline)) static void our_op(struct ours *o, enum bmode m, size_t len)
{
	switch (m) {
	case B_ECB:
		ct_aes_ecb_encrypt(&o->k1, inbuf, outbuf, len);
		break;
	case B_CBC_ENC:
		ct_aes_cbc_encrypt(&o->k1, o->state, inbuf, outbuf, len);
		break;
	case B_CBC_DEC:
		ct_aes_cbc_decrypt(&o->k1, o->state, inbuf, outbuf, len);
		break;
	case B_CTR:
		ct_aes_ctr128(&o->k1, o->state, o->ecount, &o->num, inbuf, outbuf, len);
		break;
	case B_CFB_ENC:
	case B_CFB_DEC:
		ct_aes_cfb128(&o->k1, o->state, &o->num, inbuf, outbuf, len, m == B_CFB_ENC);
		break;
	case B_OFB:
		ct_aes_ofb128(&o->k1, o->state, &o->num, inbuf, outbuf, len);
		break;
	case B_XTS_ENC:
	case B_XTS_DEC:
		ct_aes_xts(&o->k1, &o->k2, iv, inbuf, outbuf, len, m == B_XTS_ENC);
		break;
	case B_GCM_ENC:
		ct_aes_gcm_setiv(&o->gcm, iv, 12);
		if (aad_len)
			ct_aes_gcm_aad(&o->gcm, aad, aad_len);
		ct_aes_gcm_encrypt(&o->gcm, inbuf, outbuf, len);
		ct_aes_gcm_tag(&o->gcm, tag);
		break;
	case B_GCM_DEC:
		ct_aes_gcm_setiv(&o->gcm, iv, 12);
		if (aad_len)
			ct_aes_gcm_aad(&o->gcm, aad, aad_len);
		ct_aes_gcm_decrypt(&o->gcm, inbuf, outbuf, len);
		if (ct_aes_gcm_verify(&o->gcm, tag, 16) != 0) {
			fprintf(stderr, "gcm-dec: our backend rejected OpenSSL's tag\n");
			exit(1);
		}
		break;
	default:
		break;
	}
}

/* ---- timing ----
 * Requests are timed in batches of about 32 KiB, and the fastest batch counts: on a shared
 * machine most batches are unlucky (preempted, or the other hyperthread is busy) and the
 * minimum is the only statistic that is stable from run to run. Native and ours alternate
 * batch by batch, so drift (clock, temperature) hits both alike. */

enum impl { I_EVP, I_OURS };

static uint64_t run_batch(enum impl which, EVP_CIPHER_CTX *ctx, struct ours *o, enum bmode m, size_t len,
			  uint64_t ops)
{
	const uint64_t t0 = ct_rdtsc();
	for (uint64_t i = 0; i < ops; i++) {
		if (which == I_EVP)
			evp_op(ctx, m, len);
		else
			our_op(o, m, len);
	}
	return ct_rdtsc() - t0;
}

/* Best bytes per second of each implementation enabled in want[] (NULL ctx or o: skipped). */
/* --vs-level: our code at a second level, timed in the same rounds (the kernel table is chosen
 * per call, so the same context runs on either). CT_AESNI_NONE: no such column. */
static enum ct_aesni_level our_level, vs_level = CT_AESNI_NONE;

static void measure(EVP_CIPHER_CTX *ctx, struct ours *o, enum bmode m, size_t len, double *evp_bps,
		    double *our_bps, double *vs_bps)
{
	const uint64_t ops = len >= 32768 ? 1 : 32768 / len;
	uint64_t best[3] = { UINT64_MAX, UINT64_MAX, UINT64_MAX };
	const double start = now();
	for (int r = 0; r < 1000 && (r < 30 || now() - start < trial_ms * 1e-3); r++) {
		for (int w = 0; w < 3; w++) {
			if ((w == I_EVP && !ctx) || (w != I_EVP && !o) || (w == 2 && !vs_bps))
				continue;
			if (w == 2)
				ct_aesni_set_max_level(vs_level);
			const uint64_t t = run_batch(w == I_EVP ? I_EVP : I_OURS, ctx, o, m, len, ops);
			if (w == 2)
				ct_aesni_set_max_level(our_level);
			if (t < best[w])
				best[w] = t;
		}
	}
	if (ctx)
		*evp_bps = (double)ops * len * tsc_hz / best[I_EVP];
	if (o)
		*our_bps = (double)ops * len * tsc_hz / best[I_OURS];
	if (o && vs_bps)
		*vs_bps = (double)ops * len * tsc_hz / best[2];
}

/* A level by its name (ct_aesni_level_name), among this build's; exits on an unknown one. */
static enum ct_aesni_level level_by_name(const char *name)
{
	enum ct_aesni_level levels[4];
	const size_t n = ct_aesni_build_levels(levels, 4);
	for (size_t i = 0; i < n; i++)
		if (!strcmp(name, ct_aesni_level_name(levels[i])))
			return levels[i];
	fprintf(stderr, "unknown level %s (this build has:", name);
	for (size_t i = 0; i < n; i++)
		fprintf(stderr, " %s", ct_aesni_level_name(levels[i]));
	fprintf(stderr, ")\n");
	exit(2);
}

static EVP_CIPHER_CTX *evp_setup(enum bmode m)
{
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new();
	if (!ctx || !EVP_CipherInit_ex(ctx, evp_of(m), NULL, key, iv, is_enc(m))) {
		fprintf(stderr, "OpenSSL cannot set up %s\n", bname[m]);
		exit(1);
	}
	EVP_CIPHER_CTX_set_padding(ctx, 0);
	return ctx;
}

static void ours_setup(struct ours *o, enum bmode m)
{
	memset(o, 0, sizeof(*o));
	memcpy(o->state, iv, 16);
	if (m == B_GCM_ENC || m == B_GCM_DEC)
		ct_aes_gcm_init(&o->gcm, key, bits);
	ct_aes_set_key(&o->k1, key, bits);
	ct_aes_set_key(&o->k2, key + bits / 8, bits);
}

/* One cell: its input, OpenSSL's context and ours set up, measured (our_bps NULL: OpenSSL's
 * code alone, as the masked child runs it; vs_bps NULL: no second level), and freed. */
static void measure_cell(enum bmode m, size_t len, double *evp_bps, double *our_bps, double *vs_bps)
{
	struct ours o;
	prepare_input(m, len);
	EVP_CIPHER_CTX *ctx = evp_setup(m);
	if (our_bps)
		ours_setup(&o, m);
	measure(ctx, our_bps ? &o : NULL, m, len, evp_bps, our_bps, vs_bps);
	EVP_CIPHER_CTX_free(ctx);
	if (our_bps)
		ct_aes_gcm_wipe(&o.gcm);
}

/* The first cell measured once and dropped: a process's first measurement read 7 % slow in
 * both columns, OpenSSL's and ours alike, for the whole of its trial (60 ms or 1 s: not a clock
 * ramping up, which a 3-second spin before it did not change), and only the first (Intel Xeon,
 * 2026-12-05); whichever row came first printed low. with_ours: our code measured too (the
 * parent), or OpenSSL's alone (the masked child, a process of its own). */
static void warm_up_row(bool with_ours)
{
	for (int m = 0; m < B_COUNT; m++) {
		if (enabled[m]) {
			double evp_bps, our_bps;
			measure_cell(m, sizes[0], &evp_bps, with_ours ? &our_bps : NULL, NULL);
			return;
		}
	}
}

/* ---- this CPU's limits, measured ----
 * In seconds, not cycles: the core clock under turbo is not the TSC, and a bound measured in
 * the same conditions as the modes needs no clock at all. Fastest of many short runs. */

struct limits {
	double ghz;       /* core clock from a chain of dependent adds (information only) */
	double aes_lat_s; /* seconds per AESENC on a dependency chain */
	double ips[3];    /* independent AES instructions per second on xmm, ymm, zmm (0: absent) */
	int widest;       /* index into ips[] of the widest AES instruction this CPU runs, -1: none */
};

/* Widths of the AES instructions, in the order of limits.ips[]. */
static const unsigned width_bytes[3] = { 16, 32, 64 };
static const char *const width_name[3] = { "128-bit AES-NI (xmm)", "256-bit VAES (ymm)",
					   "512-bit VAES (zmm)" };
static const char *const width_needs[3] = { "AES-NI", "VAES with AVX state",
					    "AVX512F, AVX512VL and VAES with zmm state" };

/* The widest AES instruction this CPU and its OS can run: 2 (VAES on zmm: AVX512F, AVX512VL and
 * VAES, with the OS saving the zmm state, which CT_CPU_AVX512F includes), 1 (VAES on ymm), 0
 * (AES-NI), -1 (none). The limit of a parallel mode is that instruction's throughput, whatever
 * width our own code level uses: a ymm kernel on a zmm machine is measured against the zmm limit. */
static int widest_aes(void)
{
	const uint32_t f = ct_cpu_features();
	unsigned a, b = 0, c, d;
	if (!(f & CT_CPU_AES))
		return -1;
	const int vl = __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b >> 31) & 1;
	if ((f & CT_CPU_AVX512F) && vl && (f & CT_CPU_VAES))
		return 2;
	return (f & CT_CPU_VAES) ? 1 : 0;
}

static double chain_seconds(void (*fn)(uint64_t), uint64_t n)
{
	uint64_t best = UINT64_MAX;
	for (int r = 0; r < 200; r++) {
		const uint64_t t0 = ct_rdtsc();
		fn(n);
		const uint64_t t = ct_rdtsc() - t0;
		if (t < best)
			best = t;
	}
	return best / tsc_hz;
}

/* 100 dependent one-cycle adds per iteration: iterations x 100 = cycles. Register operands: an
 * immediate-add chain is folded at rename on recent Intel cores (Golden Cove), which made this
 * read 15 GHz there. */
static void add_chain(uint64_t n)
{
	uint64_t x = 0, one = 1;
	for (uint64_t i = 0; i < n; i++)
		__asm__ volatile(".rept 100\n\tadd %1, %0\n\t.endr" : "+r"(x) : "r"(one));
}

/* 100 dependent AESENCs per iteration, through ten round keys as a block's rounds are: a chain
 * that takes its key from one register every time runs a cycle slower per instruction on
 * Golden Cove (1.49 against 1.19 ns here), which made CBC encryption read 138 % of its limit. */
static void aes_chain(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		__asm__ volatile(
			".rept 10\n"
			".irp k, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11\n"
			"\taesenc %%xmm\\k, %%xmm1\n"
			".endr\n"
			".endr" ::
				: "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9",
				  "xmm10", "xmm11");
}

/* 12 independent accumulators: enough to cover latency x issue width on current cores; 120
 * instructions per iteration. ONE is the form: two operands (legacy SSE: key, state) or three
 * (VEX/EVEX: key, state, state). */
#define ONE2(op, r, i) "\t" op " %%" r "0, %%" r i "\n"
#define ONE3(op, r, i) "\t" op " %%" r "0, %%" r i ", %%" r i "\n"
#define INDEP(one, op, r)                                                                                    \
	".rept 10\n" one(op, r, "1") one(op, r, "2") one(op, r, "3") one(op, r, "4") one(op, r, "5")         \
		one(op, r, "6") one(op, r, "7") one(op, r, "8") one(op, r, "9") one(op, r, "10")             \
			one(op, r, "11") one(op, r, "12") ".endr\n"
#define CLOBBERS                                                                                             \
	"xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11",    \
		"xmm12"
#define OPS_PER_ITER 120.0

/* Legacy two-operand AESENC: runs on every AES-NI CPU, with or without AVX. */
static void aes_tput_xmm(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		__asm__ volatile(INDEP(ONE2, "aesenc", "xmm")::: CLOBBERS);
}

static void aes_tput_ymm(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		__asm__ volatile(INDEP(ONE3, "vaesenc", "ymm") "\tvzeroupper" ::: CLOBBERS);
}

/* Only called where widest_aes() says 2 (EVEX-encoded: it faults elsewhere). The ymm function
 * on zmm registers: it could not run on the AVX2-only machine it was written on (nor under
 * qemu-user, which has no AVX-512), so it is the ymm code with one letter changed. */
static void aes_tput_zmm(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		__asm__ volatile(INDEP(ONE3, "vaesenc", "zmm") "\tvzeroupper" ::: CLOBBERS);
}

static struct limits measure_limits(void)
{
	static void (*const tput[3])(uint64_t) = { aes_tput_xmm, aes_tput_ymm, aes_tput_zmm };
	struct limits l = { .widest = widest_aes() };
	const uint64_t n = 200;
	l.ghz = n * 100.0 / chain_seconds(add_chain, n) / 1e9;
	l.aes_lat_s = chain_seconds(aes_chain, n) / (n * 100.0);
	for (int w = 0; w <= l.widest; w++)
		l.ips[w] = n * OPS_PER_ITER / chain_seconds(tput[w], n);
	return l;
}

/* The limits as the fastest of two readings, the ones just before and just after a row: the
 * core's clock moves on a shared host (3.8-4.1 GHz within minutes on the Intel Xeon of
 * 2026-12-05), and a limit read once at the start put the rows timed later above 100 % of it. */
static struct limits faster_limits(struct limits l, const struct limits r)
{
	if (r.ghz > l.ghz)
		l.ghz = r.ghz;
	if (r.aes_lat_s > 0 && (l.aes_lat_s <= 0 || r.aes_lat_s < l.aes_lat_s))
		l.aes_lat_s = r.aes_lat_s;
	for (int w = 0; w < 3; w++)
		if (r.ips[w] > l.ips[w])
			l.ips[w] = r.ips[w];
	return l;
}

/* Bytes per second the AES instructions alone allow (0: not measured for this path): the
 * widest instruction's throughput for the parallel modes, one block per round latency for the
 * serial ones. */
static double limit_bps(const struct limits *l, enum bmode m)
{
	const unsigned rounds = bits / 32 + 6;
	if (serial[m])
		return 16 / (rounds * l->aes_lat_s);
	if (l->widest < 0)
		return 0;
	return l->ips[l->widest] * width_bytes[l->widest] / rounds;
}

/* ---- driver ---- */

static double results[4][B_COUNT][16]; /* [native, masked, ours, ours at vs_level] bytes/s */

static void bench_evp_all(int slot)
{
	warm_up_row(false); /* the masked child: OpenSSL's code only */
	for (int m = 0; m < B_COUNT; m++) {
		if (!enabled[m])
			continue;
		for (int s = 0; s < nsizes; s++)
			measure_cell(m, sizes[s], &results[slot][m][s], NULL, NULL);
	}
}

static void parse_list(const char *arg, int is_modes)
{
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", arg);
	if (is_modes)
		memset(enabled, 0, sizeof(enabled));
	else
		nsizes = 0;
	for (char *tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
		if (!is_modes) {
			const size_t v = strtoul(tok, NULL, 0);
			if (nsizes < 16 && v > 0 && v <= MAX_SIZE)
				sizes[nsizes++] = v;
			continue;
		}
		int found = 0;
		for (int m = 0; m < B_COUNT; m++)
			if (!strcmp(tok, bname[m]))
				enabled[m] = found = 1;
		if (!found) {
			fprintf(stderr, "unknown mode %s\n", tok);
			exit(2);
		}
	}
}

int main(int argc, char **argv)
{
	int child = 0, masked = 1, limits_only = 0;
	for (int m = 0; m < B_COUNT; m++)
		enabled[m] = 1;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--child"))
			child = 1;
		else if (!strcmp(argv[i], "--limits"))
			limits_only = 1;
		else if (!strcmp(argv[i], "--no-masked"))
			masked = 0;
		else if (!strcmp(argv[i], "--bits") && i + 1 < argc)
			bits = (unsigned)atoi(argv[++i]);
		else if (!strcmp(argv[i], "--modes") && i + 1 < argc)
			parse_list(argv[++i], 1);
		else if (!strcmp(argv[i], "--sizes") && i + 1 < argc)
			parse_list(argv[++i], 0);
		else if (!strcmp(argv[i], "--ms") && i + 1 < argc)
			trial_ms = atof(argv[++i]);
		else if (!strcmp(argv[i], "--level") && i + 1 < argc)
			ct_aesni_set_max_level(level_by_name(argv[++i]));
		else if (!strcmp(argv[i], "--vs-level") && i + 1 < argc)
			vs_level = level_by_name(argv[++i]);
		else if (!strcmp(argv[i], "--misalign") && i + 1 < argc)
			misalign = (unsigned)atoi(argv[++i]) & 63;
		else if (!strcmp(argv[i], "--in-place"))
			in_place = 1;
		else if (!strcmp(argv[i], "--aad") && i + 1 < argc &&
			 (unsigned)atoi(argv[i + 1]) <= sizeof(aad))
			aad_len = (unsigned)atoi(argv[++i]);
#if CT_AES_HAVE_X86_KERNELS
		else if (!strcmp(argv[i], "--ghash") && i + 1 < argc)
			ct_aes_vaes512_set_ghash_form(!strcmp(argv[++i], "schoolbook"));
		else if (!strcmp(argv[i], "--xts-keys") && i + 1 < argc)
			ct_aes_vaes512_set_xts_keys(!strcmp(argv[++i], "broadcast"));
#endif
		else {
			fprintf(stderr,
				"usage: %s [--bits 128|192|256] [--modes m,..] [--sizes s,..] "
				"[--ms N] [--level L] [--vs-level L] [--misalign N] [--in-place] [--aad N] [--no-masked] [--limits] "
				"[--ghash karatsuba|schoolbook] [--xts-keys held|broadcast]\nlevels: aesni vaes "
				"vaes512 (x86), armv8-ce\nmodes:",
				argv[0]);
			for (int m = 0; m < B_COUNT; m++)
				fprintf(stderr, " %s", bname[m]);
			fprintf(stderr, "\n");
			return 2;
		}
	}
	if (bits != 128 && bits != 192 && bits != 256) {
		fprintf(stderr, "--bits must be 128, 192 or 256\n");
		return 2;
	}
	if (bits == 192)
		enabled[B_XTS_ENC] = enabled[B_XTS_DEC] = 0;
	if (in_place && enabled[B_GCM_DEC]) {
		fprintf(stderr,
			"gcm-dec left out with --in-place: each request needs its ciphertext intact\n");
		enabled[B_GCM_DEC] = 0;
	}
	inbuf = inbuf_store + misalign;
	outbuf = in_place ? inbuf : outbuf_store + misalign;
	for (int i = 0; i < 64; i++)
		key[i] = (uint8_t)(i * 29 + 1);
	for (int i = 0; i < 16; i++)
		iv[i] = (uint8_t)(0xa0 + i);
	for (size_t i = 0; i < sizeof(aad); i++)
		aad[i] = (uint8_t)(i * 7 + 3);

	tsc_hz = (double)ct_tsc_hz();
	if (tsc_hz <= 0) {
		fprintf(stderr, "no usable TSC: cannot time\n");
		return 77;
	}
	if (!child && !ct_aesni_available()) {
		printf("no AES-NI on this CPU: nothing to compare\n");
		return 77;
	}

	if (child) {
		/* Masked OpenSSL: print raw results for the parent. */
		bench_evp_all(0);
		for (int m = 0; m < B_COUNT; m++)
			for (int s = 0; enabled[m] && s < nsizes; s++)
				printf("%d %d %.6e\n", m, s, results[0][m][s]);
		return 0;
	}
	our_level = ct_aesni_level();
	if (vs_level != CT_AESNI_NONE) {
		const bool there = ct_aesni_set_max_level(vs_level) == vs_level;
		ct_aesni_set_max_level(our_level);
		if (!there) {
			printf("level %s is not available on this CPU: nothing to compare\n",
			       ct_aesni_level_name(vs_level));
			return 77;
		}
	}
	struct limits lim = measure_limits();
	printf("AES-%u, single thread, our path: %s; core ~%.2f GHz, AESENC latency %.2f ns "
	       "(%.1f cycles)",
	       bits, ct_aesni_level_name(ct_aesni_level()), lim.ghz, lim.aes_lat_s * 1e9,
	       lim.aes_lat_s * lim.ghz * 1e9);
	printf("\n");
	for (int w = 0; w < 3; w++) {
		if (lim.ips[w] > 0)
			printf("  %s: %.2f G instructions/s (%.2f per cycle), %.2f GB/s of AES-%u\n",
			       width_name[w], lim.ips[w] / 1e9, lim.ips[w] / (lim.ghz * 1e9),
			       lim.ips[w] * width_bytes[w] / (bits / 32 + 6) / 1e9, bits);
		else
			printf("  %s: not on this CPU (needs %s), not measured\n", width_name[w],
			       width_needs[w]);
	}
	if (lim.widest >= 0)
		printf("parallel-mode limit: %s, the widest AES instruction here; our code level: %s\n",
		       width_name[lim.widest], ct_aesni_level_name(ct_aesni_level()));
#if CT_AES_HAVE_X86_KERNELS
	if (ct_aesni_level() == CT_AESNI_VAES512)
		printf("512-bit GHASH: %s multiplies; 512-bit XTS round keys: %s\n",
		       ct_aes_vaes512_ghash_form() ? "schoolbook (4)" : "Karatsuba (3)",
		       ct_aes_vaes512_xts_keys() ? "broadcast in every batch" : "held in registers");
#endif
	fflush(stdout);
	if (limits_only)
		return 0;

	if (masked) {
		/* The child re-runs this program with the mask in its environment from the start. */
		char cmd[4096];
		int len = snprintf(
			cmd, sizeof(cmd),
			"OPENSSL_ia32cap='%s' /proc/%d/exe --child --bits %u --ms %g --misalign %u --aad %u%s "
			"--sizes ",
			MASK, (int)getpid(), bits, trial_ms, misalign, aad_len,
			in_place ? " --in-place" : "");
		for (int s = 0; s < nsizes; s++)
			len += snprintf(cmd + len, sizeof(cmd) - len, "%s%zu", s ? "," : "", sizes[s]);
		len += snprintf(cmd + len, sizeof(cmd) - len, " --modes ");
		for (int m = 0, first = 1; m < B_COUNT; m++)
			if (enabled[m]) {
				len += snprintf(cmd + len, sizeof(cmd) - len, "%s%s", first ? "" : ",",
						bname[m]);
				first = 0;
			}
		FILE *p = popen(cmd, "r");
		int m, s;
		double v;
		while (p && fscanf(p, "%d %d %le", &m, &s, &v) == 3)
			if (m >= 0 && m < B_COUNT && s >= 0 && s < nsizes)
				results[1][m][s] = v;
		if (!p || pclose(p) != 0)
			fprintf(stderr, "masked run failed; masked column left empty\n");
	}

	if (aad_len && (enabled[B_GCM_ENC] || enabled[B_GCM_DEC]))
		printf("GCM messages: %u bytes of AAD each, in one call before the data\n", aad_len);
	/* Native and ours alternate per cell, so drift (thermals, turbo) hits both alike. */
	const bool vs = vs_level != CT_AESNI_NONE;
	char vs_name[32] = "", vs_ratio[32] = "";
	if (vs) {
		snprintf(vs_name, sizeof(vs_name), "%s", ct_aesni_level_name(vs_level));
		snprintf(vs_ratio, sizeof(vs_ratio), "ours/%s", ct_aesni_level_name(vs_level));
	}
	printf("\n%-8s %6s %8s %8s %8s %9s %9s %7s", "mode", "bytes", "native", "masked", "ours", "ours/nat",
	       "ours/mask", "%limit");
	if (vs)
		printf(" %8s %12s", vs_name, vs_ratio);
	printf("\n%-8s %6s %8s %8s %8s %9s %9s %7s", "", "", "GB/s", "GB/s", "GB/s", "", "", "");
	if (vs)
		printf(" %8s %12s", "GB/s", "");
	printf("\n");
	warm_up_row(true);
	for (int m = 0; m < B_COUNT; m++) {
		if (!enabled[m])
			continue;
		for (int s = 0; s < nsizes; s++) {
			measure_cell(m, sizes[s], &results[0][m][s], &results[2][m][s],
				     vs ? &results[3][m][s] : NULL);

			const struct limits after = measure_limits();
			const struct limits row_lim = faster_limits(lim, after);
			lim = after; /* the next row's reading before it */
			const double nat = results[0][m][s], msk = results[1][m][s];
			const double our = results[2][m][s], lb = limit_bps(&row_lim, m);
			printf("%-8s %6zu %8.2f ", bname[m], sizes[s], nat / 1e9);
			if (msk > 0)
				printf("%8.2f ", msk / 1e9);
			else
				printf("%8s ", "-");
			printf("%8.2f %8.2fx ", our / 1e9, our / nat);
			if (msk > 0)
				printf("%8.2fx ", our / msk);
			else
				printf("%9s ", "-");
			if (lb > 0)
				printf("%6.0f%%", 100.0 * our / lb);
			else
				printf("%7s", "-");
			if (vs)
				printf(" %8.2f %11.2fx", results[3][m][s] / 1e9, our / results[3][m][s]);
			printf("\n");
			fflush(stdout);
		}
	}
	if (lim.widest >= 0)
		printf("\n%%limit: ours (code level %s) against what the AES instructions alone allow on "
		       "this CPU, measured above and again after each row (each row against the faster "
		       "of the readings just before and just after it: they follow the core's clock): parallel modes %u "
		       "bytes per %u %s at its measured rate, serial modes 16 bytes per %u AESENC "
		       "latencies.\n",
		       ct_aesni_level_name(ct_aesni_level()), width_bytes[lim.widest], bits / 32 + 6,
		       width_name[lim.widest], bits / 32 + 6);
	return 0;
}
