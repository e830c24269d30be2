/* SPDX-License-Identifier: MIT */
/*
 * unroll.h - Xn(m) expands m(0) .. m(n-1): the kernels name their block registers b0, b1, ... and
 * write each step once for all of them; the compiler sees straight-line code with every register
 * by name (a loop over registers kept them in memory).
 */
#ifndef CT_AES_UNROLL_H
#define CT_AES_UNROLL_H

#define X1(m) m(0)
#define X2(m) m(0) m(1)
#define X3(m) m(0) m(1) m(2)
#define X4(m) m(0) m(1) m(2) m(3)
#define X5(m) m(0) m(1) m(2) m(3) m(4)
#define X6(m) m(0) m(1) m(2) m(3) m(4) m(5)
#define X7(m) m(0) m(1) m(2) m(3) m(4) m(5) m(6)
#define X8(m) m(0) m(1) m(2) m(3) m(4) m(5) m(6) m(7)

/* A kernel instantiated once per register count (DEF(name, regs, ...) defines name##_##regs),
 * and the table of those instances by count - 1: a short input runs in exactly as many registers
 * as it needs, none doing work for nothing. */
#define FOR_REGS_1_8(DEF, name, ...)                                                                         \
	DEF(name, 1, __VA_ARGS__)                                                                            \
	DEF(name, 2, __VA_ARGS__)                                                                            \
	DEF(name, 3, __VA_ARGS__)                                                                            \
	DEF(name, 4, __VA_ARGS__)                                                                            \
	DEF(name, 5, __VA_ARGS__)                                                                            \
	DEF(name, 6, __VA_ARGS__)                                                                            \
	DEF(name, 7, __VA_ARGS__)                                                                            \
	DEF(name, 8, __VA_ARGS__)
#define REGS_1_8_TABLE(name)                                                                                 \
	{                                                                                                    \
		name##_1, name##_2, name##_3, name##_4, name##_5, name##_6, name##_7, name##_8               \
	}
/* by_regs[count - 1]: the instances, their parameter types given */
#define REGS_1_8_BY_COUNT(name, ...) static void (*const by_regs[8])(__VA_ARGS__) = REGS_1_8_TABLE(name);

#endif
