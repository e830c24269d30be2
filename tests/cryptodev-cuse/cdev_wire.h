/* SPDX-License-Identifier: MIT */
/*
 * cdev_wire.h - the cryptodev structs as the CUSE server receives them: raw images in the
 * program's ABI. A 64-bit program sends the layouts of cryptodev_abi.h; a 32-bit one
 * (FUSE_IOCTL_COMPAT) the same fields with 4-byte pointers and 4-byte alignment. Decoding turns
 * either into one form with user addresses as plain numbers.
 */
#ifndef CDEV_WIRE_H
#define CDEV_WIRE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cryptodev_abi.h"

/* The 32-bit layouts: same fields, 4-byte pointers, 4-byte alignment. */
struct session_op32 {
	uint32_t cipher, mac, keylen, key, mackeylen, mackey, ses;
};
struct crypt_op32 {
	uint32_t ses;
	uint16_t op, flags;
	uint32_t len, src, dst, mac, iv;
};
struct crypt_auth_op32 {
	uint32_t ses;
	uint16_t op, flags;
	uint32_t len, auth_len, auth_src, src, dst, tag, tag_len, iv, iv_len;
};

_Static_assert(sizeof(struct session_op32) == 28, "i386 struct session_op");
_Static_assert(sizeof(struct crypt_op32) == 28, "i386 struct crypt_op");
_Static_assert(sizeof(struct crypt_auth_op32) == 44, "i386 struct crypt_auth_op");

/* Field values with user addresses as plain numbers, whatever the program's ABI. */
struct session_req {
	uint32_t cipher, mac, keylen, mackeylen;
	uint64_t key, mackey;
};
struct crypt_req {
	uint32_t ses, len;
	uint16_t op, flags;
	uint64_t src, dst, iv;
};
struct auth_req {
	uint32_t ses, len, auth_len, tag_len, iv_len;
	uint16_t op, flags;
	uint64_t auth_src, src, dst, iv;
};

#define CDEV_ABI_SIZE(compat, type) ((compat) ? sizeof(struct type##32) : sizeof(struct ct_cdev_##type))
#define CDEV_ABI_OFFSET(compat, type, field)                                                                 \
	((compat) ? offsetof(struct type##32, field) : offsetof(struct ct_cdev_##type, field))

void cdev_decode_session(const void *raw, bool compat, struct session_req *r);
void cdev_decode_crypt(const void *raw, bool compat, struct crypt_req *r);
void cdev_decode_auth(const void *raw, bool compat, struct auth_req *r);
/* Writes a user address into a struct image at off, in the program's pointer width. */
void cdev_put_uptr(uint8_t *raw, size_t off, bool compat, uint64_t addr);

#endif
