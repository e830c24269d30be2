/* SPDX-License-Identifier: MIT */
/*
 * cdev_compat32.c - a 32-bit (i386) cryptodev client, so the CUSE server's FUSE_IOCTL_COMPAT path
 * meets a real 32-bit program: 4-byte pointers, other struct sizes, other ioctl request values.
 * The host has no 32-bit libc, so this is freestanding: raw int $0x80 system calls, its own
 * _start. It prints the CBC ciphertext of a fixed block (the test compares it with openssl enc),
 * the CIOCGSESSINFO driver, and checks a GCM round trip: the tag pointer written back as a 32-bit
 * pointer, the plaintext, and EBADMSG for a tampered tag. Exit 0 when all of that held.
 */
#include <stddef.h>
#include <stdint.h>

#include "cryptodev_abi.h" /* its sys/ioctl.h is freestanding/sys/ioctl.h */

_Static_assert(sizeof(void *) == 4, "build with -m32");
_Static_assert(sizeof(struct ct_cdev_session_op) == 28, "i386 session_op");
_Static_assert(sizeof(struct ct_cdev_crypt_op) == 28, "i386 crypt_op");
_Static_assert(sizeof(struct ct_cdev_crypt_auth_op) == 44, "i386 crypt_auth_op");

#define NR_exit 1
#define NR_write 4
#define NR_open 5
#define NR_ioctl 54
#define EBADMSG 74

static long sys3(long nr, long a, long b, long c)
{
	long r;

	__asm__ volatile("int $0x80" : "=a"(r) : "a"(nr), "b"(a), "c"(b), "d"(c) : "memory");
	return r;
}

/* The compiler may emit calls to these for struct copies and initialisers. */
void *memset(void *d, int c, size_t n)
{
	unsigned char *p = d;
	while (n--)
		*p++ = (unsigned char)c;
	return d;
}
void *memcpy(void *d, const void *s, size_t n)
{
	unsigned char *p = d;
	const unsigned char *q = s;
	while (n--)
		*p++ = *q++;
	return d;
}

static void put(const char *s)
{
	size_t n = 0;
	while (s[n])
		n++;
	sys3(NR_write, 1, (long)s, (long)n);
}

static void put_hex(const uint8_t *p, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	char buf[2];
	for (size_t i = 0; i < n; i++) {
		buf[0] = digits[p[i] >> 4];
		buf[1] = digits[p[i] & 15];
		sys3(NR_write, 1, (long)buf, 2);
	}
}

static int same(const uint8_t *a, const uint8_t *b, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (a[i] != b[i])
			return 0;
	return 1;
}

static int run(void)
{
	/* Fixed inputs; guest-cuse.sh uses the same ones with openssl enc. */
	static uint8_t key[16], iv[16], pt[64], ct[64], gct[64 + 16], back[64], aad[8];
	int fails = 0;

	for (int i = 0; i < 16; i++) {
		key[i] = (uint8_t)i;
		iv[i] = (uint8_t)(0xf0 + i);
	}
	for (int i = 0; i < 64; i++)
		pt[i] = (uint8_t)(i * 7);
	for (int i = 0; i < 8; i++)
		aad[i] = (uint8_t)(0xa0 + i);

	long fd = sys3(NR_open, (long)"/dev/crypto", 2 /* O_RDWR */, 0);
	if (fd < 0) {
		put("compat32: cannot open /dev/crypto\n");
		return 2;
	}

	struct ct_cdev_session_op s = { .cipher = CT_CRYPTO_AES_CBC, .keylen = 16, .key = key };
	long r = sys3(NR_ioctl, fd, (long)CT_CIOCGSESSION, (long)&s);
	if (r < 0) {
		put("compat32: CIOCGSESSION failed\n");
		return 1;
	}
	struct ct_cdev_session_info_op si = { .ses = s.ses };
	r = sys3(NR_ioctl, fd, (long)CT_CIOCGSESSINFO, (long)&si);
	put("compat32: driver ");
	put(r < 0 ? "(CIOCGSESSINFO failed)" : si.cipher_info.cra_driver_name);
	put("\n");
	fails += r < 0;
	struct ct_cdev_crypt_op c = {
		.ses = s.ses, .op = CT_COP_ENCRYPT, .len = 64, .src = pt, .dst = ct, .iv = iv
	};
	r = sys3(NR_ioctl, fd, (long)CT_CIOCCRYPT, (long)&c);
	fails += r < 0;
	put("compat32: cbc ");
	put_hex(ct, sizeof(ct));
	put("\n");
	sys3(NR_ioctl, fd, (long)CT_CIOCFSESSION, (long)&s.ses);

	s = (struct ct_cdev_session_op){ .cipher = CT_CRYPTO_AES_GCM, .keylen = 16, .key = key };
	if (sys3(NR_ioctl, fd, (long)CT_CIOCGSESSION, (long)&s) < 0) {
		put("compat32: GCM CIOCGSESSION failed\n");
		return 1;
	}
	struct ct_cdev_crypt_auth_op a = { .ses = s.ses,
					   .op = CT_COP_ENCRYPT,
					   .len = 64,
					   .auth_len = 8,
					   .auth_src = aad,
					   .src = pt,
					   .dst = gct,
					   .iv = iv,
					   .iv_len = 12 };
	r = sys3(NR_ioctl, fd, (long)CT_CIOCAUTHCRYPT, (long)&a);
	int tag_ok = r == 0 && a.tag == gct + 64 && a.tag_len == 16;
	put(tag_ok ? "compat32: gcm tag pointer ok\n" : "compat32: gcm tag pointer WRONG\n");
	fails += !tag_ok;
	a = (struct ct_cdev_crypt_auth_op){ .ses = s.ses,
					    .op = CT_COP_DECRYPT,
					    .len = 64 + 16,
					    .auth_len = 8,
					    .auth_src = aad,
					    .src = gct,
					    .dst = back,
					    .iv = iv,
					    .iv_len = 12 };
	r = sys3(NR_ioctl, fd, (long)CT_CIOCAUTHCRYPT, (long)&a);
	int rt = r == 0 && same(back, pt, 64);
	put(rt ? "compat32: gcm round trip ok\n" : "compat32: gcm round trip FAILED\n");
	fails += !rt;
	gct[70] ^= 1;
	r = sys3(NR_ioctl, fd, (long)CT_CIOCAUTHCRYPT, (long)&a);
	put(r == -EBADMSG ? "compat32: gcm tampered tag EBADMSG\n"
			  : "compat32: gcm tampered tag NOT refused\n");
	fails += r != -EBADMSG;
	return fails ? 1 : 0;
}

__attribute__((force_align_arg_pointer, noreturn)) void _start(void)
{
	sys3(NR_exit, run(), 0, 0);
	__builtin_unreachable();
}
