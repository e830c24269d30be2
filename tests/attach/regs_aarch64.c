/* SPDX-License-Identifier: MIT */
/*
 * regs_aarch64.c - a thread whose registers must come out of `cryptrace attach` as they went in
 * (tests/vm/attach.sh, in the arm64 guest). The main thread fills x2..x15, x19..x28 and
 * v0..v31 with values of its own (z0..z31 whole, at the vector length, where the CPU has SVE)
 * and spins checking them in assembly, with no call and no system call, until a line on stdin
 * (read by a second thread) sets the stop flag. Attached while it spins, this thread is the one
 * that makes the remote calls (dlopen, the library's set-up), stopped in user code: every
 * register those calls used, and the SVE state the kernel drops at their system calls, must be
 * put back. Prints "spinning sve|no-sve" once the loop runs, then "regs intact" (exit 0) or
 * "regs changed: x5" (exit 1).
 *
 * `regs_aarch64 --sleep` instead sleeps in its main thread (sleep(): clock_nanosleep with a
 * relative time, which the kernel restarts with restart_syscall for the time left), after
 * "sleeping"; the test reads /proc/PID/syscall after a detach to see which call it is back in.
 *
 * It links libcrypto (and calls it once) only so that attach finds something to trace.
 */
#include <openssl/evp.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <unistd.h>

#ifndef HWCAP_SVE
#define HWCAP_SVE (1 << 22)
#endif

#define SLEEP_S 600 /* --sleep: ended by the test's kill long before */

struct spin {
	volatile int stop;
	int pad;
	volatile unsigned long count; /* loop iterations: the loop runs once it moves */
};

/* 0 when stopped with every register intact, else the first changed: 2..28 xN, 100+N vN,
 * 200+N zN, 300 the all-true predicate p0 (which the z checks use) */
int spin_check(struct spin *s);
int spin_check_sve(struct spin *s);

/* clang-format off */
#define SPIN_PROLOGUE \
	"stp x29, x30, [sp, #-160]!\n mov x29, sp\n" \
	"stp x19, x20, [sp, #16]\n stp x21, x22, [sp, #32]\n stp x23, x24, [sp, #48]\n" \
	"stp x25, x26, [sp, #64]\n stp x27, x28, [sp, #80]\n" \
	"stp d8, d9, [sp, #96]\n stp d10, d11, [sp, #112]\n stp d12, d13, [sp, #128]\n" \
	"stp d14, d15, [sp, #144]\n" \
	".irp i, 2,3,4,5,6,7,8,9,10,11,12,13,14,15,19,20,21,22,23,24,25,26,27,28\n" \
	"mov x\\i, #(\\i * 256 + 0x5a)\n" \
	".endr\n"
#define SPIN_LOOP_HEAD \
	"1: ldr w16, [x0]\n cbnz w16, 2f\n" \
	"ldr x16, [x0, #8]\n add x16, x16, #1\n str x16, [x0, #8]\n" \
	".irp i, 2,3,4,5,6,7,8,9,10,11,12,13,14,15,19,20,21,22,23,24,25,26,27,28\n" \
	"mov x1, #\\i\n mov x16, #(\\i * 256 + 0x5a)\n cmp x\\i, x16\n b.ne 3f\n" \
	".endr\n"
#define SPIN_EPILOGUE \
	"b 1b\n" \
	"2: mov x1, #0\n" \
	"3: mov x0, x1\n" \
	"ldp x19, x20, [sp, #16]\n ldp x21, x22, [sp, #32]\n ldp x23, x24, [sp, #48]\n" \
	"ldp x25, x26, [sp, #64]\n ldp x27, x28, [sp, #80]\n" \
	"ldp d8, d9, [sp, #96]\n ldp d10, d11, [sp, #112]\n ldp d12, d13, [sp, #128]\n" \
	"ldp d14, d15, [sp, #144]\n" \
	"ldp x29, x30, [sp], #160\n ret\n"

__asm__(".text\n .p2align 2\n .globl spin_check\n .type spin_check, %function\n"
	"spin_check:\n"
	SPIN_PROLOGUE
	"mov x17, #0x0101010101010101\n"
	".irp i, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31\n"
	"mov x16, #(\\i + 1)\n mul x16, x16, x17\n dup v\\i\\().2d, x16\n"
	".endr\n"
	SPIN_LOOP_HEAD
	".irp i, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31\n"
	"mov x1, #(100 + \\i)\n mov x17, #0x0101010101010101\n mov x16, #(\\i + 1)\n mul x16, x16, x17\n"
	"umov x17, v\\i\\().d[0]\n cmp x16, x17\n b.ne 3f\n"
	"umov x17, v\\i\\().d[1]\n cmp x16, x17\n b.ne 3f\n"
	".endr\n"
	SPIN_EPILOGUE
	".size spin_check, .-spin_check\n");

__asm__(".text\n .arch_extension sve\n .p2align 2\n .globl spin_check_sve\n"
	".type spin_check_sve, %function\n"
	"spin_check_sve:\n"
	SPIN_PROLOGUE
	".irp i, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31\n"
	"dup z\\i\\().b, #(\\i - 16)\n"
	".endr\n"
	"ptrue p0.b\n"
	SPIN_LOOP_HEAD
	"mov x1, #300\n cntp x16, p0, p0.b\n cntb x17\n cmp x16, x17\n b.ne 3f\n"
	".irp i, 0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16,17,18,19,20,21,22,23,24,25,26,27,28,29,30,31\n"
	"mov x1, #(200 + \\i)\n cmpne p1.b, p0/z, z\\i\\().b, #(\\i - 16)\n b.any 3f\n"
	".endr\n"
	SPIN_EPILOGUE
	".size spin_check_sve, .-spin_check_sve\n");
/* clang-format on */

static struct spin spin;

static void *stopper(void *arg)
{
	char line[16];
	(void)arg;
	while (spin.count == 0)
		usleep(1000);
	printf("spinning %s\n", (getauxval(AT_HWCAP) & HWCAP_SVE) ? "sve" : "no-sve");
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		line[0] = 0;
	spin.stop = 1;
	return NULL;
}

int main(int argc, char **argv)
{
	pthread_t t;
	EVP_CIPHER_CTX *ctx = EVP_CIPHER_CTX_new(); /* libcrypto in use: something to trace */
	EVP_CIPHER_CTX_free(ctx);
	if (argc == 2 && !strcmp(argv[1], "--sleep")) {
		printf("sleeping\n");
		fflush(stdout);
		sleep(SLEEP_S);
		return 0;
	}
	if (pthread_create(&t, NULL, stopper, NULL))
		return 2;
	int changed = (getauxval(AT_HWCAP) & HWCAP_SVE) ? spin_check_sve(&spin) : spin_check(&spin);
	pthread_join(t, NULL);
	if (changed == 0)
		printf("regs intact\n");
	else
		printf("regs changed: %s%d\n",
		       changed >= 300   ? "p"
		       : changed >= 200 ? "z"
		       : changed >= 100 ? "v"
					: "x",
		       changed % 100);
	return changed ? 1 : 0;
}
