/* SPDX-License-Identifier: MIT */
/*
 * port_mix.c - which of the vector operations our AES kernels mix with the AES rounds take the AES
 * instruction's place on this CPU. The stitched GCM step and the XTS batch run, beside their AES
 * rounds, carry-less multiplies (GHASH, the tweak updates), byte shuffles (GHASH's byte order),
 * XORs and adds (whitening, the data, the sums, the counters). Where an operation executes on a
 * port the AES instruction needs, each one costs an AES slot, and the kernel's limit is the count
 * of both; where it has a port of its own, it is free until that port fills. Which is which
 * differs by core (an Intel Xeon runs 512-bit work on two ports only; on AMD Zen 3, docs/aesni.md
 * has it, the multiplies share the AES pipes) and cannot be read off the counters where perf has
 * no PMU (as on the hosts here), so it is measured: a loop of 8 independent AES instructions,
 * alone and with 6 (256-bit) or 8-16 (512-bit) independent operations of one kind or two beside
 * them, at each width the CPU has.
 *
 * Prints, per mix, the loop's time against AES alone, and that time in AES instructions: how many
 * of them the AES units issue meanwhile (8 x the ratio; 8: the extra operations ran beside the AES
 * ones for free; 8 + N: each took an AES instruction's place; N alone: they have a port of their
 * own and it bounds the loop). Ratios only (no clock rate needed), best of ROUNDS batches, the
 * mixes interleaved round by round.
 * bench/README.md ("The ports behind GCM's limit") has a reading on an Intel Xeon and what it
 * says of the GCM kernel's limit (docs/aesni.md).
 *
 * usage: port_mix [ROUNDS [LOOPS]]   (defaults 9, 2000000)
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cpu.h"
#include "trace_format.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/* Each chain's value kept in a register from one operation to the next, and never folded away
 * (x ^ k ^ k would be): an empty asm that may change it. */
#define KEEP(x) __asm__ volatile("" : "+v"(x))

/* The extra operations, by kind, on a chain c with the operand k. */
#define OP_CLMUL(W, c, k) c = W##_CLMUL(c, k)
#define OP_SHUF(W, c, k) c = W##_SHUF(c, k)
#define OP_XOR(W, c, k) c = W##_XOR(c, k)
#define OP_ADD(W, c, k) c = W##_ADD(c, k)
/* a 256-bit XOR on a 512-bit chain's low half (one VEX instruction): whether 256-bit work finds
 * a port of its own while 512-bit work is in flight */
#define OP_XOR256(W, c, k)                                                                                   \
	c = _mm512_castsi256_si512(_mm256_xor_si256(_mm512_castsi512_si256(c), _mm512_castsi512_si256(k)))

#define Y_T __m256i
#define Y_SET(i) _mm256_set1_epi32(i)
#define Y_AES(c, k) _mm256_aesenc_epi128(c, k)
#define Y_CLMUL(c, k) _mm256_clmulepi64_epi128(c, k, 0x00)
#define Y_SHUF(c, k) _mm256_shuffle_epi8(c, k)
#define Y_XOR(c, k) _mm256_xor_si256(c, k)
#define Y_ADD(c, k) _mm256_add_epi32(c, k)
#define Z_T __m512i
#define Z_SET(i) _mm512_set1_epi32(i)
#define Z_AES(c, k) _mm512_aesenc_epi128(c, k)
#define Z_CLMUL(c, k) _mm512_clmulepi64_epi128(c, k, 0x00)
#define Z_SHUF(c, k) _mm512_shuffle_epi8(c, k)
#define Z_XOR(c, k) _mm512_xor_si512(c, k)
#define Z_ADD(c, k) _mm512_add_epi32(c, k)

/* Extra chain i of a loop: operation A where i < NA, else B where i < NA + NB, else none (an
 * unused chain's variable is dead code). */
/* clang-format off */
#define CHAIN(W, i, NA, OPA, NB, OPB)                                                                        \
	if ((i) < (NA)) {                                                                                    \
		OPA(W, e##i, k);                                                                             \
		KEEP(e##i);                                                                                  \
	} else if ((i) < (NA) + (NB)) {                                                                      \
		OPB(W, e##i, k);                                                                             \
		KEEP(e##i);                                                                                  \
	}
#define DECL4(W, a, b, c, d)                                                                                 \
	W##_T e##a = W##_SET(a + 9), e##b = W##_SET(b + 9), e##c = W##_SET(c + 9), e##d = W##_SET(d + 9)
#define CHAIN4(W, a, b, c, d, NA, OPA, NB, OPB)                                                              \
	CHAIN(W, a, NA, OPA, NB, OPB) CHAIN(W, b, NA, OPA, NB, OPB)                                          \
	CHAIN(W, c, NA, OPA, NB, OPB) CHAIN(W, d, NA, OPA, NB, OPB)

/* A loop of 8 AES chains (8 independent instructions: enough to fill the AES units of every core
 * here, 1-2 a cycle at latencies of 3-5), and NA operations of kind A and NB of kind B, each on a
 * chain of its own, LOOPS times. At 256 bits (16 registers without AVX-512) at most 6 extra
 * chains, beside the 8 and the key; at 512, 16. Returns ns a loop. */
#define MIX_FN(name, W, isa, NA, OPA, NB, OPB)                                                               \
	__attribute__((target(isa), noinline)) static double name(long loops)                                \
	{                                                                                                    \
		W##_T a0 = W##_SET(1), a1 = W##_SET(2), a2 = W##_SET(3), a3 = W##_SET(4);                    \
		W##_T a4 = W##_SET(5), a5 = W##_SET(6), a6 = W##_SET(7), a7 = W##_SET(8);                    \
		DECL4(W, 0, 1, 2, 3);                                                                        \
		DECL4(W, 4, 5, 6, 7);                                                                        \
		DECL4(W, 8, 9, 10, 11);                                                                      \
		DECL4(W, 12, 13, 14, 15);                                                                    \
		static volatile int seed = 0x5a;                                                             \
		const W##_T k = W##_SET(seed);                                                               \
		const double t0 = now_ns();                                                                  \
		for (long i = 0; i < loops; i++) {                                                           \
			a0 = W##_AES(a0, k), a1 = W##_AES(a1, k), a2 = W##_AES(a2, k), a3 = W##_AES(a3, k);  \
			a4 = W##_AES(a4, k), a5 = W##_AES(a5, k), a6 = W##_AES(a6, k), a7 = W##_AES(a7, k);  \
			CHAIN4(W, 0, 1, 2, 3, NA, OPA, NB, OPB)                                              \
			CHAIN4(W, 4, 5, 6, 7, NA, OPA, NB, OPB)                                              \
			CHAIN4(W, 8, 9, 10, 11, NA, OPA, NB, OPB)                                            \
			CHAIN4(W, 12, 13, 14, 15, NA, OPA, NB, OPB)                                          \
			KEEP(a0); KEEP(a1); KEEP(a2); KEEP(a3); KEEP(a4); KEEP(a5); KEEP(a6); KEEP(a7);      \
		}                                                                                            \
		const double ns = (now_ns() - t0) / (double)loops;                                           \
		volatile W##_T sink = W##_XOR(W##_XOR(a0, a1), W##_XOR(a6, a7));                             \
		(void)sink;                                                                                  \
		return ns;                                                                                   \
	}
/* clang-format on */

#define T_YMM "avx2,vaes,vpclmulqdq"
#define T_ZMM "avx512f,avx512bw,avx512vl,vaes,vpclmulqdq"

/* clang-format off */
/* N: the extra operations of one kind (6 at 256 bits, 16 at 512); H: half of them */
#define MIXES(W, T, N, H)                                                                                   \
	MIX_FN(W##_alone, W, T, 0, OP_XOR, 0, OP_XOR)                                                       \
	MIX_FN(W##_clmul, W, T, N, OP_CLMUL, 0, OP_XOR)                                                     \
	MIX_FN(W##_shuf, W, T, N, OP_SHUF, 0, OP_XOR)                                                       \
	MIX_FN(W##_xor, W, T, N, OP_XOR, 0, OP_XOR)                                                         \
	MIX_FN(W##_add, W, T, N, OP_ADD, 0, OP_XOR)                                                         \
	MIX_FN(W##_clmul_shuf, W, T, H, OP_CLMUL, H, OP_SHUF)                                               \
	MIX_FN(W##_clmul_xor, W, T, H, OP_CLMUL, H, OP_XOR)
/* clang-format on */
MIXES(Y, T_YMM, 6, 3)
MIXES(Z, T_ZMM, 16, 8)
MIX_FN(Z_clmul_xor256, Z, T_ZMM, 8, OP_CLMUL, 8, OP_XOR256)
/* a stitched GCM register's proportions: per 10 AES, 4 multiplies and a shuffle on the other
 * port, ~6.5 operations for either (docs/aesni.md): 4 multiplies and 4, 6 or 8 XORs a loop */
MIX_FN(Z_gcm4, Z, T_ZMM, 4, OP_CLMUL, 4, OP_XOR)
MIX_FN(Z_gcm6, Z, T_ZMM, 4, OP_CLMUL, 6, OP_XOR)
MIX_FN(Z_gcm8, Z, T_ZMM, 4, OP_CLMUL, 8, OP_XOR)

struct mix {
	const char *what, *note;
	unsigned extra; /* the extra operations at 512 bits (at 256: 6); 0: the reference loop */
	double (*ymm)(long), (*zmm)(long); /* NULL: not at that width */
};

static const struct mix mixes[] = {
	{ "AES alone", "", 0, Y_alone, Z_alone },
	{ "+ carry-less multiplies", "", 16, Y_clmul, Z_clmul },
	{ "+ byte shuffles", "", 16, Y_shuf, Z_shuf },
	{ "+ XORs", "", 16, Y_xor, Z_xor },
	{ "+ adds (32-bit lanes)", "", 16, Y_add, Z_add },
	{ "+ multiplies and shuffles", "(half each)", 16, Y_clmul_shuf, Z_clmul_shuf },
	{ "+ multiplies and XORs", "(half each)", 16, Y_clmul_xor, Z_clmul_xor },
	{ "+ multiplies and 256-bit XORs", "(half each)", 16, NULL, Z_clmul_xor256 },
	{ "+ 4 multiplies, 4 XORs", "(GCM's mix)", 8, NULL, Z_gcm4 },
	{ "+ 4 multiplies, 6 XORs", "(GCM's mix)", 10, NULL, Z_gcm6 },
	{ "+ 4 multiplies, 8 XORs", "(GCM's mix)", 12, NULL, Z_gcm8 },
};
#define NMIX (sizeof(mixes) / sizeof(mixes[0]))

int main(int argc, char **argv)
{
	const int rounds = argc > 1 ? atoi(argv[1]) : 9;
	const long loops = argc > 2 ? atol(argv[2]) : 2000000;
	if (rounds < 1 || loops < 1000) {
		fprintf(stderr, "usage: port_mix [ROUNDS [LOOPS >= 1000]]\n");
		return 2;
	}
	/* CPUID with the OS's register-state checks (common/cpu.c), as the backend's dispatch asks */
	const uint32_t f = ct_cpu_features();
	const uint32_t ymm_bits = CT_CPU_AVX2 | CT_CPU_VAES | CT_CPU_VPCLMULQDQ,
		       zmm_bits = ymm_bits | CT_CPU_AVX512F | CT_CPU_AVX512VL | CT_CPU_AVX512BW;
	const int has_ymm = (f & ymm_bits) == ymm_bits, has_zmm = (f & zmm_bits) == zmm_bits;
	if (!has_ymm) {
		printf("port_mix: this CPU has no VAES + VPCLMULQDQ + AVX2: nothing to measure\n");
		return 77;
	}
	double best[2][NMIX];
	for (unsigned m = 0; m < NMIX; m++)
		best[0][m] = best[1][m] = 1e300;
	for (int r = 0; r < rounds; r++)
		for (int w = 0; w < 1 + has_zmm; w++)
			for (unsigned m = 0; m < NMIX; m++) {
				double (*const loop)(long) = w ? mixes[m].zmm : mixes[m].ymm;
				if (!loop)
					continue;
				const double ns = loop(loops);
				if (ns < best[w][m])
					best[w][m] = ns;
			}
	printf("# port_mix: best of %d rounds x %ld loops, the mixes interleaved; each loop 8 independent"
	       " AES instructions and, but the first, N independent operations beside them (N: 6 at 256 bits,"
	       " 8-16 at 512); in AES times: the loop's time as a count of AES instructions at the rate of AES"
	       " alone (8: the others ran beside them; 8 + N: each took an AES instruction's place; N:"
	       " a port of their own bounds the loop)\n",
	       rounds, loops);
	printf("%-6s %-44s %9s %11s %12s\n", "width", "loop", "ns/loop", "x AES alone", "in AES times");
	for (int w = 0; w < 1 + has_zmm; w++)
		for (unsigned m = 0; m < NMIX; m++) {
			if (!(w ? mixes[m].zmm : mixes[m].ymm))
				continue;
			const double ratio = best[w][m] / best[w][0];
			const unsigned n = w ? mixes[m].extra : 6;
			char what[64];
			snprintf(what, sizeof(what), "%s%s%s", mixes[m].what, *mixes[m].note ? " " : "",
				 mixes[m].note);
			printf("%-6s %-44s %9.3f %11.2f", w ? "512" : "256", what, best[w][m], ratio);
			printf(" %12.1f", ratio * 8);
			if (mixes[m].extra)
				printf("  (8 AES + %u)", n);
			printf("\n");
		}
	if (!has_zmm)
		printf("# no AVX-512 (F, BW, VL) here: the 512-bit rows are left out\n");
	return 0;
}
#else
int main(void)
{
	printf("port_mix: x86 only (VAES, VPCLMULQDQ)\n");
	return 77;
}
#endif
